"""sinkproof: proofs, certificates and counterexamples for attention sinks.

Softmax attention needs a sink for trigger-conditional behaviour; ReLU attention
does not.  docs/theory.md states the mathematics, with every proof.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from .measures import Evaluation, Stats, evaluate
from .model import AttentionModel, fixed_values
from .task import TRIG, TriggerTask

__version__: str = import_module("sinkproof._version").__version__  # set in sinkproof/_version.py

# Layers beyond the core load on first use, so ``import sinkproof`` stays fast
# (CVXPY and SymPy are heavy).
_LAZY = {
    "constructions": ("sinkproof.constructions", None),
    "symbolic": ("sinkproof.symbolic", None),
    "convex": ("sinkproof.convex", None),
    "checker": ("sinkproof.checker", None),
    "search": ("sinkproof.search", "search"),
    "check": ("sinkproof.claims", "check"),
    "Claim": ("sinkproof.claims", "Claim"),
    "sink_map": ("sinkproof.sinkmap", "sink_map"),
    "strategies": ("sinkproof.strategies", None),
    "testing": ("sinkproof.testing", None),
    "experiment": ("sinkproof.experiment", None),
    "sweep": ("sinkproof.sweep", None),
    "PaperTask": ("sinkproof.tasks", "PaperTask"),
    "paper_model": ("sinkproof.stack", "paper_model"),
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        module, attr = _LAZY[name]
        mod = import_module(module)
        value = mod if attr is None else getattr(mod, attr)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'sinkproof' has no attribute {name!r}")


__all__ = [
    "TRIG",
    "AttentionModel",
    "Evaluation",
    "Stats",
    "TriggerTask",
    "evaluate",
    "fixed_values",
    *_LAZY,
]
