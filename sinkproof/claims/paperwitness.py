"""Witnesses in the paper's setting: a found model written as a ``paper-witness`` file,
verified by the trusted checker, and read back as a refutation of a paper claim.

The file states the model's weights exactly (each float's exact binary value; a map's
parameters and a gate too), the claim's ε, and a BOS bound ``m_w`` just above the largest
BOS measure taken in floats at the positions it names: the BOS weight ``α_t0`` on the
simplex, the BOS share ``α_t0 / Σ_k α_tk`` off it (``bos_measure = "share"``), as the
claim measures it.  A claim is refuted only by what the checker verified: the
verified statement's instance equals the claim's, its model class lies in the claim's,
``ε_w <= ε`` and ``m_w < b`` as rationals, and its positions are the ones the claim's
quantifiers need (every non-trigger position for ``positions = "some"``; one position
with every head, or one head, for ``positions = "every"``).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np

from .. import checker
from ..attention import MAPS
from ..certformat import format_rational
from ..checker import Verdict
from ..convex.certfile import envelope, save_json
from ..search.engine import bos_measure
from ..stack import StackModel, paper_model
from ..tasks.paper import PaperTask
from .paperclaim import PaperClaim

KIND = "paper-witness"
SLACK = Fraction(1, 10**6)
"""Relative slack of the stated BOS bound over the float measurement."""


@dataclass(frozen=True)
class PaperWitness:
    """A checked witness: the file, the checker's verdict, the refuting facts."""

    path: Path
    verdict: Verdict
    error: float
    bos: float
    where: str

    @property
    def digest(self) -> str | None:
        return self.verdict.digest


def stack_weights(model: StackModel) -> dict[str, np.ndarray]:
    """``W_Q, W_K, W_V`` ``(layers, heads, n, n)`` and ``W_O`` ``(layers, n, heads·n)`` of a
    paper stack (its heads' factored score and value matrices); ``map_params``
    ``(layers, heads, P)`` for a map with parameters, ``gate_w`` ``(layers, heads, n)`` and
    ``gate_c`` ``(layers, heads)`` for a gated map."""
    layers = model.layers
    WQ = np.array([[h.W_Q for h in layer.heads] for layer in layers])
    WK = np.array([[h.W_K for h in layer.heads] for layer in layers])
    WV = np.array([[h.V for h in layer.heads] for layer in layers])
    WO = np.array([layer.W_O for layer in layers])
    out = dict(W_Q=WQ, W_K=WK, W_V=WV, W_O=WO)
    amap = layers[0].heads[0].map
    if amap.param_names:
        out["map_params"] = np.array([[h.map_params for h in layer.heads] for layer in layers])
    if amap.properties.gated:
        out["gate_w"] = np.array([[h.gate_w for h in layer.heads] for layer in layers])
        out["gate_c"] = np.array([[h.gate_c for h in layer.heads] for layer in layers])
    return out


def model_from_params(task: PaperTask, kind: str, params: dict[str, np.ndarray]) -> StackModel:
    """The paper stack of search parameters (``wq, wk, wv, wo``; ``mp``, ``gw``, ``gc``)."""
    return paper_model(task, kind, W_Q=params["wq"], W_K=params["wk"], W_V=params["wv"],
                       W_O=params["wo"], map_params=params.get("mp"),
                       gate_w=params.get("gw"), gate_c=params.get("gc"))


def family_bos(model: StackModel) -> tuple[float, list[tuple[tuple[int, ...], np.ndarray]]]:
    """Float measurement over the whole finite family: the largest error, and per distinct
    non-trigger prefix its BOS measure ``(layers, heads)`` at the last position (the weight
    on the simplex, the share off it: :func:`sinkproof.search.engine.bos_measure`)."""
    share = bos_measure(model.kind) == "share"
    task = model.task
    worst = 0.0
    per: list[tuple[tuple[int, ...], np.ndarray]] = []
    empty = np.zeros((1, 0), dtype=np.int64)
    fw = model.forward_batch(task.prefix_features(empty))
    worst = float(np.linalg.norm(fw.out[0, -1] - task.prefix_targets(empty)[0]))
    for t in range(1, task.L):
        for block in task.prefix_blocks(t):
            codes = block.codes
            fw = model.forward_batch(task.prefix_features(codes))
            err = np.linalg.norm(fw.out[:, -1] - task.prefix_targets(codes), axis=-1)
            worst = max(worst, float(err.max()))
            bos = fw.w[:, :, :, -1, 0]  # (layers, heads, N)
            if share:
                total = fw.w[:, :, :, -1, :].sum(axis=-1)
                bos = np.where(total > 0, bos / np.where(total > 0, total, 1.0), 0.0)
            for i in np.flatnonzero(~task.is_trigger(codes[:, -1])):
                per.append((tuple(int(c) for c in codes[i]), bos[:, :, i]))
    return worst, per


def _rationals(a: np.ndarray) -> Any:
    if a.ndim == 0:
        return format_rational(Fraction(float(a)))
    return [_rationals(x) for x in a]


def _where_item(task: PaperTask, prefix: tuple[int, ...], heads: Any) -> dict[str, Any]:
    m = task.m
    j = next((k + 1 for k, c in enumerate(prefix) if c >= m), None)
    return {"content": [c - m if c >= m else c for c in prefix], "trigger_at": j,
            "heads": heads}


def _choose(claim: PaperClaim, per: list[tuple[tuple[int, ...], np.ndarray]]
            ) -> tuple[Any, float]:
    """What the witness states: ``"nontrigger"`` (every position, every head) when the
    claim's quantifiers need it or the model allows it, else the best single position."""
    b = float(claim.conclusion.min_bos_mass)
    overall = max(float(v.max()) for _, v in per)
    con = claim.conclusion
    if con.positions == "some" or overall < b:
        return "nontrigger", overall
    if con.heads == "some":  # one position with every head below b
        prefix, v = min(per, key=lambda pv: float(pv[1].max()))
        return [_where_item(claim.task, prefix, "every")], float(v.max())
    prefix, v = min(per, key=lambda pv: float(pv[1].min()))
    layer, head = np.unravel_index(int(np.argmin(v)), v.shape)
    return [_where_item(claim.task, prefix, [[int(layer), int(head)]])], float(v.min())


def witness_document(claim: PaperClaim, model: StackModel) -> tuple[dict[str, Any], float, float]:
    """The ``paper-witness`` file for ``model`` and the claim (its ε, and a BOS bound just
    above the float measurement), with the measured error and BOS weight."""
    task = claim.task
    error, per = family_bos(model)
    where, bos = _choose(claim, per)
    m_w = Fraction(float(bos)) * (1 + SLACK) + Fraction(1, 10**15)
    mc = claim.model_class
    W = stack_weights(model)
    inst_task = task.describe()
    instance = {"task": inst_task,
                "content_vectors": [[format_rational(Fraction(float(v))) for v in c]
                                    for c in task.content]}
    at = "every non-trigger position" if isinstance(where, str) else "one listed position"
    what = "BOS share" if bos_measure(mc.kind) == "share" else "BOS weight"
    statement = (f"a {mc} model with error <= {format_rational(claim.hypothesis.max_error)} "
                 f"and {what} <= {float(m_w):.6g} at {at}")
    claim_part = {"statement": statement,
                  "model_class": {"kind": mc.kind, "heads": mc.heads, "layers": mc.layers,
                                  "residual": mc.residual, "values": _values_of(W)},
                  "max_error": format_rational(claim.hypothesis.max_error),
                  "max_bos_mass": format_rational(_round_up(m_w)), "where": where,
                  "bos_measure": bos_measure(mc.kind)}
    data = {name: _rationals(W[name]) for name in W}
    return envelope(KIND, instance, claim_part, data), error, bos


def _values_of(W: dict[str, np.ndarray]) -> str:
    if W["W_Q"].shape[:2] != (1, 1):
        return "learned"
    n = W["W_V"].shape[-1]
    drop = np.eye(n)
    drop[0, 0] = 0.0
    return "fixed" if np.array_equal(W["W_O"][0] @ W["W_V"][0, 0], drop) else "learned"


def _round_up(q: Fraction) -> Fraction:
    """A short rational ``>= q`` (12 significant digits)."""
    scale = 10**12
    return Fraction(-((-q.numerator * scale) // q.denominator), scale)


def refuting(claim: PaperClaim, verdict: Verdict) -> str | None:
    """Why the verified statement refutes the claim (``None`` when it does not)."""
    if not verdict.ok or verdict.kind != KIND:
        return None
    st = verdict.statement
    if not claim.same_instance(st["instance"]):
        return None
    mc = st["model_class"]
    if mc["residual"] != claim.model_class.residual or not claim.model_class.contains(
            mc["kind"], mc["heads"], mc["layers"], mc["values"]):
        return None
    if st.get("bos_measure", "weight") != bos_measure(claim.model_class.kind) and \
            not MAPS[claim.model_class.kind].properties.on_simplex:
        return None  # the claim speaks of the BOS share off the simplex
    eps_w, m_w = Fraction(st["max_error"]), Fraction(st["max_bos_mass"])
    b = claim.conclusion.min_bos_mass
    if eps_w > claim.hypothesis.max_error or not m_w < b:
        return None
    where, con = st["where"], claim.conclusion
    what = "BOS share" if st.get("bos_measure") == "share" else "BOS weight"
    if where == "nontrigger":
        return (f"error <= {st['max_error']} and {what} <= {st['max_bos_mass']} < "
                f"{format_rational(b)} in every head at every non-trigger position")
    if con.positions == "some":
        return None
    item = where[0]
    if con.heads == "some" and item["heads"] != "every":
        return None
    heads = "every head" if item["heads"] == "every" else f"head [layer, head] = {item['heads'][0]}"
    return (f"error <= {st['max_error']} and {what} <= {st['max_bos_mass']} < "
            f"{format_rational(b)} in {heads} at the last position of prefix {item['prefix']}")


def write_witness(claim: PaperClaim, model: StackModel, path: Path) -> PaperWitness | None:
    """Write ``model``'s witness file, verify it with the trusted checker; the witness when
    its verified statement refutes the claim, else ``None`` (the file is removed)."""
    doc, error, bos = witness_document(claim, model)
    if Path(path).exists():  # it removes what it wrote, so it writes nothing over a file
        raise FileExistsError(f"{path} exists: a witness is made at a fresh path")
    path.parent.mkdir(parents=True, exist_ok=True)
    save_json(doc, path)
    verdict = checker.verify_file(path)
    why = refuting(claim, verdict)
    if why is None:
        path.unlink(missing_ok=True)
        return None
    return PaperWitness(path, verdict, error, bos, why)


__all__ = ["KIND", "PaperWitness", "family_bos", "model_from_params", "refuting",
           "stack_weights", "witness_document", "write_witness"]
