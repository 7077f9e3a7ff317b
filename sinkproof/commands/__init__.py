"""CLI subcommands: one module each, listed in :data:`COMMANDS` (the module named after the
command, or the one :data:`MODULES` names: a module is named by what it does, never by a
setting).

``sinkproof --help`` is built from this table alone; a command's module is imported only
when that command runs (or its own ``--help`` is asked for).  Each module exposes
``register(subparsers)``, which adds its parser with the same one-line help as here and
sets ``func(args) -> int``.  A module missing from the table is not reachable from the
CLI; ``tests/test_architecture.py`` fails when the table and the modules disagree.
"""

from __future__ import annotations

COMMANDS: dict[str, str] = {
    "certify": "write an exact certificate of Theorem 3's sink bound",
    "check": "prove, refute or report open a claim file (TOML or JSON)",
    "experiment": "train softmax and ReLU layers from random init and measure sinks",
    "paper": "reproduce the paper's attention-map figures with its training protocol",
    "report": "evaluate the constructions and bounds on an instance",
    "schema": "print the JSON Schema of a claim, sweep or certificate file",
    "sinkmap": "certified least BOS (or null) mass of any eps-accurate head, per position",
    "sweep": "run a grid of checks, certificates, sink maps, searches or trainings",
    "theory": "print the theory page: the task, the models, the theorems, the proofs",
    "variants": "sink verdicts for every attention map, each proved or refuted",
    "verify": "re-check a certificate file with exact rational arithmetic",
}
"""Command name -> the one-line help ``sinkproof --help`` shows."""

MODULES: dict[str, str] = {"paper": "reproduce"}
"""Commands whose module has another name than the command (the command is the user's word;
the module says what it does)."""


def module_of(command: str) -> str:
    """The module (under ``sinkproof.commands``) of a command."""
    return MODULES.get(command, command)
