"""Bounds from reduced families: (P1) in the paper's setting at its own size, and over
continuous content.

Two reductions make the paper's one-head (P1) programs small (both stated and proved in
``docs/theory.md``, "Reductions of the family"):

- **multiset reduction**: without positional encoding, a head's output at the last
  position of a prefix, and the prefix's target, depend only on the query token and the
  multiset of visible tokens, so the family's constraints are one per (query, multiset)
  class (:meth:`sinkproof.PaperTask.prefix_classes`): 864 classes for the 884,738 prefixes
  of ``L = 16`` with two content vectors;
- **sub-family reduction**: accuracy on the family implies accuracy on any set of its
  prefixes, so a bound proved from a sub-family's constraints holds for the whole family.

:func:`prove_subfamily` runs the branch-and-bound engine (:mod:`sinkproof.bnb`) over a
sub-family of a finite family (by default one representative per multiset class, so the
bound is the whole family's); :func:`prove_uniform` proves bounds for **every** content
vector of the box ``[-1, 1]^(n-3)`` from multipliers that never touch a content
coordinate; :func:`prove_position` asks one position, named by the content vectors of
its prefix (the claim interface's ``at`` and ``trigger``).  All write
``paper-subfamily-bnb`` certificates, which the trusted checker
(:mod:`sinkproof.checker.rules.subfamily`) verifies.
"""

from __future__ import annotations

from .position import prove_position, target_codes
from .subfamily import (
    KIND,
    ReducedResult,
    multiset_subfamily,
    nontrigger_classes,
    prove_subfamily,
)
from .uniform import pattern_targets, prove_uniform, symbol_task

__all__ = ["KIND", "ReducedResult", "multiset_subfamily", "nontrigger_classes",
           "pattern_targets", "prove_position", "prove_subfamily", "prove_uniform",
           "symbol_task", "target_codes"]
