"""sinkproof: proofs, certificates and counterexamples for attention sinks.

Softmax attention needs a sink for trigger-conditional behaviour; ReLU attention
does not.  The theory page states the mathematics, with every proof: `sinkproof theory`
(shipped with the package; docs/theory.md in the repository).

One rule for every top-level name (:data:`__all__`): it is **callable** -- a class
(``sp.TriggerTask``, ``sp.Claim``), a function (``sp.evaluate``, ``sp.check``,
``sp.sink_map``) or a package named by a verb that calls its main function
(``sp.search``, ``sp.sweep``, ``sp.report``, ``sp.variants``, ``sp.experiment``; its other
names stay reachable: ``sp.search.frontier``) -- except the namespaces of
:data:`NAMESPACES` (modules of functions: ``sp.convex.family_certificate``) and the
constant ``TRIG``.  A verb stays a callable package rather than a function because
``import sinkproof.report`` puts the package at ``sinkproof.report`` in any case.

Every result that is a table of records exports the same way
(:class:`sinkproof.tables.Tabular`): ``to_records``, ``to_dataframe``, ``to_csv``,
``to_latex``.

Every name here loads on first use (``sp.TriggerTask``, ``sp.evaluate`` ...), so
``import sinkproof`` costs almost nothing and a command such as ``sinkproof verify``
never loads the numerical layers it does not use.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from ._version import __version__ as __version__

# public name -> (module, attribute; None: the module itself)
_LAZY: dict[str, tuple[str, str | None]] = {
    "TRIG": ("sinkproof.task", "TRIG"),
    "TriggerTask": ("sinkproof.task", "TriggerTask"),
    "AttentionModel": ("sinkproof.model", "AttentionModel"),
    "fixed_values": ("sinkproof.model", "fixed_values"),
    "Evaluation": ("sinkproof.evaluation", "Evaluation"),
    "Stats": ("sinkproof.stats", "Stats"),
    "evaluate": ("sinkproof.measures", "evaluate"),
    "constructions": ("sinkproof.constructions", None),
    "symbolic": ("sinkproof.symbolic", None),
    "theorems": ("sinkproof.theorems", None),
    "convex": ("sinkproof.convex", None),
    "checker": ("sinkproof.checker", None),
    "search": ("sinkproof.search", None),  # a callable module: sp.search(...), sp.search.frontier
    "load_witness": ("sinkproof.search.witnessfile", "load_witness"),
    "check": ("sinkproof.claims", "check"),
    "Claim": ("sinkproof.claims", "Claim"),
    "sink_map": ("sinkproof.sinkmap", "sink_map"),
    "report": ("sinkproof.report", None),
    "strategies": ("sinkproof.strategies", None),
    "testing": ("sinkproof.testing", None),
    "experiment": ("sinkproof.experiment", None),
    "sweep": ("sinkproof.sweep", None),
    "variants": ("sinkproof.variants", None),
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


def __dir__() -> list[str]:
    return sorted([*__all__, "__version__"])


__all__ = list(_LAZY)

NAMESPACES = ("constructions", "symbolic", "theorems", "convex", "checker", "strategies",
              "testing")
"""The top-level names that are modules of functions, not callables (see the rule above)."""
CONSTANTS = ("TRIG",)
"""The top-level names that are values."""
