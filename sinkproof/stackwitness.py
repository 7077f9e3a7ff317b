"""A stack model of the paper's setting as a ``paper-witness`` file, verified by the trusted
checker: a model with error ``<= ε`` on the whole finite family and BOS weight ``<= b`` at
every non-trigger position of every head of every layer.

It reuses the claim route's writer (:func:`sinkproof.claims.witness.stack_witness_document`)
through a minimal stand-in for a claim, so that a construction or a search result of any
shape (a pure composition included, which claim files cannot name yet) is written and
checked the same way as a refutation of a claim.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np

from . import checker
from ._validate import choice
from .certformat import format_rational
from .checker import Verdict
from .claims.refute import family_bos
from .claims.witness import SLACK
from .claims.witness import stack_witness_document as witness_document
from .convex.certfile import save_json
from .exact_numbers import error_level
from .stack import StackModel
from .tasks.protocol import require


@dataclass(frozen=True)
class _Shape:
    kind: str
    heads: int
    layers: int
    residual: bool

    def __str__(self) -> str:
        form = "residual" if self.residual else "pure composition"
        return (f"paper {self.kind} ({self.layers} layer(s) x {self.heads} head(s), {form}, "
                "learned values)")


@dataclass(frozen=True)
class _Conclusion:
    min_bos_mass: Fraction
    positions: str = "some"
    heads: str = "every"


@dataclass(frozen=True)
class _Hypothesis:
    max_error: Fraction


@dataclass(frozen=True)
class _Claim:
    task: Any
    model_class: _Shape
    hypothesis: _Hypothesis
    conclusion: _Conclusion


@dataclass(frozen=True)
class StackWitness:
    """A verified witness document: the checker's verdict, the float error and the largest
    BOS weight (every non-trigger position, head and layer) measured before writing."""

    document: dict[str, Any]
    verdict: Verdict
    error: float
    bos: float

    def save(self, path: str | Path) -> Path:
        """Write the document as JSON (``sinkproof verify PATH`` re-checks it)."""
        return save_json(self.document, path)


def stack_witness(model: StackModel, max_error: Any, at: Sequence[int] | None = None,
                  rows: str = "nontrigger") -> StackWitness:
    """The ``paper-witness`` document of ``model`` (a stack on a finite paper task) stating
    error ``<= max_error`` on the whole family and BOS weight at most just above the largest
    measured at every non-trigger position (``rows="all"``: at every position ``t >= 1``, the
    trigger rows included; ``at``: at the last position of that one prefix of content codes,
    every head of every layer, instead); verified by :func:`sinkproof.checker.verify`
    (``verdict.ok`` false when the model does not meet ``max_error`` exactly)."""
    if not isinstance(model, StackModel):
        raise TypeError(f"model must be a StackModel, got {type(model).__name__}")
    task = model.task
    require(task, "finite", "a stack witness (the checker runs the whole family)")
    require(task, "fixed_length", "a stack witness")
    heads = {len(layer.heads) for layer in model.layers}
    if len(heads) != 1:
        raise ValueError("a stack witness needs the same number of heads in every layer")
    shape = _Shape(model.kind, heads.pop(), model.n_layers, model.residual)
    claim = _Claim(task, shape, _Hypothesis(error_level(max_error, "max_error")),
                   _Conclusion(Fraction(1)))
    rows = choice("rows", rows, ("nontrigger", "all"))
    doc, error, bos = witness_document(claim, model)
    if at is not None:
        doc, bos = _at_prefix(doc, model, tuple(int(c) for c in at))
    elif rows == "all":
        doc, bos = _at_every_row(doc, model)
    return StackWitness(doc, checker.verify(doc), error, bos)


def _bound_above(bos: float) -> Fraction:
    """A short rational just above a float BOS measurement (12 decimals, rounded up)."""
    bound = Fraction(bos) * (1 + SLACK) + Fraction(1, 10**15)
    return Fraction(-((-bound.numerator * 10**12) // bound.denominator), 10**12)


def _at_every_row(doc: dict[str, Any], model: StackModel) -> tuple[dict[str, Any], float]:
    """The document restated at every position ``t >= 1`` (``where = "all"``, the trigger
    rows included): the BOS bound just above the largest weight there."""
    _, per = family_bos(model, trigger_rows=True)
    bos = max(float(v.max()) for _, v in per)
    bound = _bound_above(bos)
    claim = dict(doc["claim"], where="all", max_bos_mass=format_rational(bound))
    claim["statement"] = (claim["statement"].split(" and BOS weight")[0]
                          + f" and BOS weight <= {float(bound):.9g} at every position t >= 1, "
                          "the trigger rows included, every head")
    return {**doc, "claim": claim}, bos


def _at_prefix(doc: dict[str, Any], model: StackModel, prefix: tuple[int, ...]
               ) -> tuple[dict[str, Any], float]:
    """The document restated at one prefix (content codes, no trigger): the BOS bound just
    above the largest weight there over every head of every layer."""
    task = model.task
    if not prefix or len(prefix) > task.L - 2 or any(not 0 <= c < task.m for c in prefix):
        raise ValueError(f"at must be 1..{task.L - 2} content codes in [0, {task.m})")
    fw = model.forward_batch(task.prefix_features(np.array([prefix])))
    bos = float(fw.w[:, :, 0, -1, 0].max())
    bound = _bound_above(bos)
    claim = dict(doc["claim"])
    claim["where"] = [{"content": list(prefix), "trigger_at": None, "heads": "every"}]
    claim["max_bos_mass"] = format_rational(bound)
    claim["statement"] = (claim["statement"].split(" and BOS weight")[0]
                          + f" and BOS weight <= {float(bound):.9g} at the last position of "
                          f"the prefix {list(prefix)} (content codes), every head")
    return {**doc, "claim": claim}, bos


__all__ = ["StackWitness", "stack_witness"]
