"""High-precision verification of a search witness, and witness files.

A model found in float64 is a *witness* only after the trusted checker (kind
``witness``) has re-run it on the whole family with its
parameters converted exactly from float64: exact rationals for ReLU, mpmath
interval arithmetic for softmax.  This module builds the checker's document from
a model and reports what the checker measured (``Verdict.figures``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np

from .. import checker
from .._validate import as_int, as_real
from ..certformat import FORMAT, VERSION, format_rational
from ..errors import CertificateError
from ..exact_numbers import Exact, bounded, show
from ..files import write_file
from ..model import AttentionModel
from .objective import WHERE


def _exact(x: float | Fraction) -> str:
    return format_rational(x if isinstance(x, Fraction) else Fraction(float(x)))


def _where_field(where: Any) -> Any:
    if isinstance(where, str):
        if where not in WHERE:
            raise ValueError(f"unknown where {where!r}; expected one of {', '.join(WHERE)} "
                             "or a set of (sequence, position) pairs")
        return where
    pairs = []
    for item in where:
        if not (isinstance(item, tuple) and len(item) == 2):
            raise TypeError(f"where: expected (sequence, position) pairs, got {item!r}")
        seq, pos = item
        pairs.append({"sequence": [int(x) for x in seq], "position": int(pos)})
    if not pairs:
        raise ValueError("where: the set of positions is empty")
    pairs.sort(key=lambda d: (d["sequence"], d["position"]))
    return pairs


def witness_document(model: AttentionModel, max_error: Exact, max_bos_mass: Exact,
                     where: Any = "nontrigger", dps: int = 50, measure: str = "weight"
                     ) -> dict[str, Any]:
    """The witness certificate (JSON object) claiming that ``model`` has error
    ``<= max_error`` on the family and BOS measure (``"weight"`` ``α_0`` or ``"share"``
    ``α_0 / Σ_j α_j``) ``<= max_bos_mass`` at ``where``; every float64 parameter (``A``,
    ``U``, the map's parameters, a gate) is written as the exact rational it is."""
    if not isinstance(model, AttentionModel):
        raise TypeError(f"model must be an AttentionModel, got {type(model).__name__}")
    # an exact threshold (a claim's ε) is written as it is; a float by its exact binary value
    eps = (as_real("max_error", max_error, minimum=0.0) if isinstance(max_error, float)
           else bounded(max_error, "max_error", 0))
    bos = (as_real("max_bos_mass", max_bos_mass, minimum=0.0) if isinstance(max_bos_mass, float)
           else bounded(max_bos_mass, "max_bos_mass", 0))
    dps = as_int("dps", dps, minimum=15)
    task = model.task
    values = model.values
    instance: dict[str, Any] = {"task": task.describe(), "values": values}
    if task.content_scheme != "signed":
        instance["content_vectors"] = [[_exact(x) for x in row] for row in task.content]
    where_field = _where_field(where)
    at = where_field if isinstance(where_field, str) else "the named"
    eps_text = show(eps) if isinstance(eps, Fraction) else format(eps, "g")
    bos_text = show(bos) if isinstance(bos, Fraction) else format(bos, "g")
    if measure not in ("weight", "share"):
        raise ValueError(f"measure must be 'weight' or 'share', got {measure!r}")
    what = "BOS mass" if measure == "weight" else "BOS share"
    statement = (f"a {model.H}-head {model.kind} model with {values} values has error <= "
                 f"{eps_text} on the family and {what} <= {bos_text} at {at} positions")
    data: dict[str, Any] = {
        "A": [[[_exact(x) for x in row] for row in a] for a in model.A],
        "U": "fixed" if values == "fixed" else
             [[[_exact(x) for x in row] for row in u] for u in model.U],
        "precision_digits": dps,
    }
    if model.map_params.shape[1]:
        data["map_params"] = [[_exact(x) for x in row] for row in model.map_params]
    if model.gate_w is not None:
        data["gate_w"] = [[_exact(x) for x in row] for row in model.gate_w]
        data["gate_c"] = [_exact(x) for x in model.gate_c]
    claim: dict[str, Any] = {
        "statement": statement,
        "model_class": {"kind": model.kind, "heads": model.H, "values": values},
        "max_error": _exact(eps),
        "max_bos_mass": _exact(bos),
        "where": where_field,
    }
    if measure != "weight":
        claim["bos_measure"] = measure
    return {
        "format": FORMAT,
        "version": VERSION,
        "kind": "witness",
        "instance": instance,
        "claim": claim,
        "data": data,
    }


@dataclass(frozen=True)
class WitnessReport:
    """The checker's verdict on a model as a witness.

    ``verified``: both conditions hold rigorously on the whole family.
    ``error``, ``bos_mass``: rigorous upper bounds (floats rounded up from the exact
    rational end points) on the largest error and the largest BOS mass at ``where``;
    ``error_margin = max_error - error``, ``bos_margin = max_bos_mass - bos_mass``.
    ``document``: the witness file's content (write it with :meth:`save`).
    """

    verified: bool
    error: float
    bos_mass: float
    max_error: float
    max_bos_mass: float
    error_at: tuple[tuple[int, ...], int]
    bos_at: tuple[tuple[int, ...], int] | None
    n_prefixes: int
    dps: int
    document: dict[str, Any]

    @property
    def error_margin(self) -> float:
        return self.max_error - self.error

    @property
    def bos_margin(self) -> float:
        return self.max_bos_mass - self.bos_mass

    def save(self, path: str | Path) -> Path:
        """Write the witness file (checked again by ``sinkproof verify FILE``)."""
        if not self.verified:
            raise CertificateError("refusing to save a witness that did not verify")
        return write_file(path, json.dumps(self.document, indent=1) + "\n", what="witness")

    def __repr__(self) -> str:
        state = "verified" if self.verified else "NOT verified"
        return (f"WitnessReport({state}: error <= {self.error:.10g} (bound {self.max_error:.10g}), "
                f"BOS mass <= {self.bos_mass:.10g} (bound {self.max_bos_mass:.10g}), "
                f"{self.n_prefixes} prefixes, {self.dps} digits)")

    def _repr_markdown_(self) -> str:
        state = "**verified**" if self.verified else "**not verified**"
        return "\n".join([
            f"Witness {state} on {self.n_prefixes} prefixes ({self.dps}-digit intervals)", "",
            "| quantity | rigorous upper bound | claimed bound | margin |",
            "|---|---|---|---|",
            f"| max error | {self.error:.6g} | {self.max_error:g} | {self.error_margin:.3g} |",
            f"| max BOS mass | {self.bos_mass:.6g} | {self.max_bos_mass:g} | "
            f"{self.bos_margin:.3g} |",
        ])


def _float_up(x: Fraction) -> float:
    f = float(x)
    return f if Fraction(f) >= x else float(np.nextafter(f, np.inf))


def _sqrt_up(x: Fraction) -> float:
    """A float ``>= sqrt(x)``."""
    r = float(np.sqrt(float(x)))
    while Fraction(r) ** 2 < x:
        r = float(np.nextafter(r, np.inf))
    return r


def rigorous_measures(model: AttentionModel, where: Any = "nontrigger", dps: int = 50,
                      measure_name: str = "weight") -> tuple[float, float]:
    """Floats ``>=`` the true largest error on the family and the true largest BOS measure
    (``"weight"`` or ``"share"``) over heads at ``where``, from the trusted checker's exact
    or interval evaluation."""
    fig = checker.verify(witness_document(model, 0.0, 0.0, where, dps, measure_name)).figures
    return _sqrt_up(fig.error_sq), float("nan") if fig.bos is None else _float_up(fig.bos)


def verify_witness(model: AttentionModel, max_error: Exact, max_bos_mass: Exact,
                   where: Any = "nontrigger", dps: int = 50, measure: str = "weight"
                   ) -> WitnessReport:
    """Re-evaluate ``model`` on the whole family with its parameters taken exactly
    (rational maps: exact rationals; others: ``dps``-digit interval arithmetic) and report
    whether error ``<= max_error`` everywhere and the BOS ``measure`` (``"weight"`` or
    ``"share"``) is ``<= max_bos_mass`` at ``where``."""
    doc = witness_document(model, max_error, max_bos_mass, where, dps, measure)
    verdict = checker.verify(doc)
    fig, verified = verdict.figures, verdict.ok
    bos = float("nan") if fig.bos is None else _float_up(fig.bos)
    return WitnessReport(
        verified=verified, error=_sqrt_up(fig.error_sq), bos_mass=bos,
        max_error=float(Fraction(doc["claim"]["max_error"])),
        max_bos_mass=float(Fraction(doc["claim"]["max_bos_mass"])),
        error_at=fig.error_at, bos_at=fig.bos_at, n_prefixes=fig.n_prefixes, dps=dps,
        document=doc)
