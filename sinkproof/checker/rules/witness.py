"""Checker for witness files (kind ``witness``): explicit parameters that satisfy a claim.

A witness states: *this* model (score matrices ``A_h``, values ``U_h`` or ``U_fix``,
exact rationals) has error ``<= ε`` at every position of the family ``S_T``
(position 0 included) and BOS mass ``<= b`` in every head at the positions named by
``where``.  The checker re-runs the model on every prefix of the family
(docs/theory.md sections 1-3) using only the standard library and mpmath:

- ReLU: every score is rational, so outputs, errors and BOS masses are computed
  exactly in :class:`fractions.Fraction` arithmetic;
- softmax: scores are exact rationals; each weight ``exp(s_j - s_0)`` and every
  later operation is enclosed by mpmath interval arithmetic at ``precision_digits``
  digits, and the decision compares the interval's end points (converted exactly
  to rationals) with the claimed bounds.  The check is therefore rigorous: a model
  that meets the bounds only up to float64 rounding is rejected;
- every other map (sink logit ``b``, softmax1, sparsemax, entmax-1.5, sigmoid ``b``,
  ReLU/length, gated softmax with gate ``g_t = σ(w·φ_t + c)``): the weights of
  :mod:`sinkproof.checker.maps` (exact rationals for sparsemax and ReLU/length,
  outward intervals otherwise), the gate's interval, and interval sums of ``g α_j v_j``
  with rational end points.  A gated head's BOS weight is ``g_t α_0``; its share
  ``α_0 / Σ_j α_j`` (the gate cancels).

Layout (inside the common envelope, ``docs/certificates.md``)::

    instance: {task: {...}, content_vectors?: [[q]], values: "fixed" | "learned"}
    claim:    {statement, model_class: {kind, heads, values},
               max_error: q, max_bos_mass: q,
               where: "nontrigger" | "trigger" | "all" | [{sequence: [...], position: t}]}
    data:     {A: [H][D][D] q, U: "fixed" | [H][p][p+3] q, precision_digits?: int,
               map_params: [H][P] q (maps with parameters: sink_logit, sigmoid ``b``),
               gate_w: [H][D] q, gate_c: [H] q (gated_softmax)}
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from ...errors import CertificateError
from ..exact import InequalityFailed, common_denominator, dot, show
from ..family.trigger import (
    BOS,
    TRIGGER,
    Instance,
    count_prefixes,
    position_features,
    prefixes,
    read_instance,
    read_tokens,
    token_features,
)
from ..interval import FixedPoint as _Intervals
from ..limits import current, require
from ..maps import MAP_NAMES, RATIONAL_MAPS, gate_interval, interval_weights
from ..schema import (
    as_list,
    check_fields,
    child,
    format_rational,
    need,
    need_dict,
    need_int,
    need_list,
    need_rational,
    need_str,
    rational_matrix,
)
from ..verdict import Verdict
from .heads import head_extras

KINDS = MAP_NAMES
SIMPLEX_MAPS = ("softmax", "sparsemax", "entmax15")
"""Maps whose weights sum to 1 (their BOS weight is their BOS share)."""
WHERE = ("nontrigger", "trigger", "all")
MEASURES = ("weight", "share")
"""``claim.bos_measure``: the BOS weight ``α_0`` (default) or the BOS share ``α_0 / Σ_j α_j``
(0 when every weight is 0).  Softmax weights sum to 1, so the two coincide there."""
DEFAULT_DIGITS = 50
EXP_COST = 50
"""Exact operations one interval exponential is counted as, in the work estimate."""
PREFIX_COST = 4
"""Operations per key and output coordinate of a prefix, in the work estimate (measured by
``benchmarks/bench_checker_limits.py``: rational additions, products and bookkeeping)."""
MAX_LOGIT_GAP = 100_000
"""Largest ``s_j - s_0`` accepted: ``exp`` of it is held as an integer of ~1.44·gap bits."""


@dataclass(frozen=True)
class Witness:
    """A parsed witness: the instance, the model (exact) and the claimed bounds."""

    inst: Instance
    positions: str
    kind: str
    A: list[list[list[Fraction]]]
    U: list[list[list[Fraction]]] | None
    max_error: Fraction
    max_bos_mass: Fraction
    where: str | frozenset[tuple[int, ...]]
    digits: int
    measure: str = "weight"
    map_params: list[list[Fraction]] | None = None
    gate_w: list[list[Fraction]] | None = None
    gate_c: list[Fraction] | None = None

    @property
    def heads(self) -> int:
        return len(self.A)


@dataclass(frozen=True)
class WitnessFigures:
    """What the checker measured: rigorous upper bounds and where they occur.

    ``error_sq``: upper bound on ``max ||f_t - y_t||²`` over every position;
    ``bos``: upper bound on the largest BOS mass over heads at the ``where`` positions
    (``None`` when there are none); ``*_at``: ``(sequence, position)`` of the maximum.
    """

    error_sq: Fraction
    error_at: tuple[tuple[int, ...], int]
    bos: Fraction | None
    bos_at: tuple[tuple[int, ...], int] | None
    n_prefixes: int
    n_constrained: int


# ----------------------------------------------------------------- parsing
def _read_where(claim: dict[str, Any], inst: Instance) -> str | frozenset[tuple[int, ...]]:
    where = need(claim, "where", "claim")
    if isinstance(where, list):
        require("prefixes", len(where), "claim.where: named positions")
    if isinstance(where, str):
        if where not in WHERE:
            raise CertificateError(f"claim.where: {where!r} is not one of {', '.join(WHERE)}")
        return where
    items = as_list(where, "claim.where", min_length=1)
    prefixes = set()
    for i, item in enumerate(items):
        path = child("claim.where", i)
        check_fields(item, path, ("sequence", "position"))
        seq = read_tokens(need(item, "sequence", path), inst, child(path, "sequence"))
        pos = need_int(item, "position", path, minimum=1)
        if pos > len(seq):
            raise CertificateError(f"{path}.position: {pos} exceeds the sequence length {len(seq)}")
        prefixes.add(tuple(seq[:pos]))
    return frozenset(prefixes)


def _read_model(data: dict[str, Any], inst: Instance, D: int, heads: int, values: str
                ) -> tuple[list[list[list[Fraction]]], list[list[list[Fraction]]] | None]:
    A_raw = need_list(data, "A", "data", length=heads)
    A = [rational_matrix(a, child("data.A", h), columns=D) for h, a in enumerate(A_raw)]
    for h, a in enumerate(A):
        if len(a) != D:
            raise CertificateError(f"data.A[{h}]: expected {D} rows, got {len(a)}")
    U_raw = need(data, "U", "data")
    if U_raw == "fixed":
        return A, None
    U_list = as_list(U_raw, "data.U", length=heads)
    U = [rational_matrix(u, child("data.U", h), columns=inst.p + 3) for h, u in enumerate(U_list)]
    for h, u in enumerate(U):
        if len(u) != inst.p:
            raise CertificateError(f"data.U[{h}]: expected {inst.p} rows, got {len(u)}")
    if values == "fixed":
        fixed = [[Fraction(int(i == j)) for j in range(inst.p + 3)] for i in range(inst.p)]
        if any(u != fixed for u in U):
            raise CertificateError("data.U: the claim is about fixed values but U is not U_fix")
    return A, U


def read_witness(cert: dict[str, Any]) -> Witness:
    """Parse and check the fields of a witness certificate (raises CertificateError)."""
    instance = check_fields(need_dict(cert, "instance", ""), "instance",
                            ("task", "content_vectors", "values"))
    values = need_str(instance, "values", "instance", ("fixed", "learned"))
    inst = read_instance({**instance, "values": "fixed"})
    positions = inst.positions
    claim = check_fields(need_dict(cert, "claim", ""), "claim",
                         ("statement", "model_class", "max_error", "max_bos_mass", "where",
                          "bos_measure"))
    mc = check_fields(need_dict(claim, "model_class", "claim"), "claim.model_class",
                      ("kind", "heads", "values"))
    kind = need_str(mc, "kind", "claim.model_class", KINDS)
    heads = need_int(mc, "heads", "claim.model_class", minimum=1)
    if need_str(mc, "values", "claim.model_class", ("fixed", "learned")) != values:
        raise CertificateError("claim.model_class.values: differs from instance.values")
    max_error, max_bos, measure = read_bounds(claim)
    data = check_fields(need_dict(cert, "data", ""), "data",
                        ("A", "U", "precision_digits", "map_params", "gate_w", "gate_c"))
    digits = read_digits(data)
    n_prefixes = count_prefixes(inst, current().prefixes)
    require("prefixes", n_prefixes, "instance: distinct prefixes of the family", partial=True)
    D = inst.p + 3 + len(position_features(positions, inst.T, 0))
    require("work", estimate_work(inst, D, heads, kind, n_prefixes, digits),
            "instance and model: exact operations to evaluate the witness")
    A, U = _read_model(data, inst, D, heads, values)
    common_denominator((x for m in (*A, *(U or ())) for row in m for x in row), "data.A and data.U")
    map_params, gate_w, gate_c = _read_head_extras(data, kind, heads, D)
    return Witness(inst, positions, kind, A, U, max_error, max_bos,
                   _read_where(claim, inst), digits, measure, map_params, gate_w, gate_c)


def read_bounds(claim: dict[str, Any]) -> tuple[Fraction, Fraction, str]:
    """A witness claim's ``max_error``, ``max_bos_mass`` (both ``>= 0``) and ``bos_measure``."""
    max_error = need_rational(claim, "max_error", "claim")
    max_bos = need_rational(claim, "max_bos_mass", "claim")
    if max_error < 0 or max_bos < 0:
        raise CertificateError("claim: max_error and max_bos_mass must be >= 0")
    measure = claim.get("bos_measure", "weight")
    if measure not in MEASURES:
        raise CertificateError(f"claim.bos_measure: {measure!r} is not one of "
                               f"{', '.join(MEASURES)}")
    return max_error, max_bos, measure


def read_digits(data: dict[str, Any]) -> int:
    """``data.precision_digits`` (default 50): an integer in ``[15, 1000]``."""
    digits = data.get("precision_digits", DEFAULT_DIGITS)
    if isinstance(digits, bool) or not isinstance(digits, int) or not 15 <= digits <= 1000:
        raise CertificateError("data.precision_digits: expected an integer in [15, 1000]")
    return digits


def _read_head_extras(data: dict[str, Any], kind: str, heads: int, D: int
                      ) -> tuple[list[list[Fraction]] | None, list[list[Fraction]] | None,
                                 list[Fraction] | None]:
    """``map_params`` ``[H][P]`` (exactly for the maps with parameters) and the gate
    ``gate_w`` ``[H][D]``, ``gate_c`` ``[H]`` (exactly for ``gated_softmax``)."""
    names, gated = head_extras(data, kind)
    params = None
    if names:
        raw = need_list(data, "map_params", "data", length=heads)
        params = [rational_matrix([row], child("data.map_params", h), columns=len(names))[0]
                  for h, row in enumerate(raw)]
    if not gated:
        return params, None, None
    w = rational_matrix(need_list(data, "gate_w", "data", length=heads), "data.gate_w",
                        columns=D)
    c = rational_matrix([need_list(data, "gate_c", "data", length=heads)], "data.gate_c",
                        columns=heads)[0]
    return params, w, c


def estimate_work(inst: Instance, D: int, heads: int, kind: str, n_prefixes: int,
                  digits: int) -> int:
    """Exact operations (roughly) of :func:`measure`: the score table of every
    (query, key) token-position pair with ``j <= t``, its exponentials (softmax), and
    ``PREFIX_COST·T·(p + 1)`` per prefix and head for the outputs and errors."""
    rows = (inst.k + 2) * (inst.T + 1)
    pairs = (inst.k + 2) ** 2 * (inst.T + 1) * (inst.T + 2) // 2
    scale = EXP_COST * max(1, digits // DEFAULT_DIGITS)
    if kind == "softmax":
        exp = pairs * scale
    elif kind in RATIONAL_MAPS:
        exp = 0
    else:  # interval weights per prefix: up to (t+1)² exponentials (sigmoid: t+1)
        exp = n_prefixes * (inst.T + 1) ** 2 * scale
    outputs = PREFIX_COST * n_prefixes * inst.T * (inst.p + 1)
    return heads * (rows * D * D + pairs * D + exp + outputs)


# --------------------------------------------------------------- the model
class _Model:
    """Scores, values and (softmax) interval weights of a witness, tabulated once."""

    def __init__(self, w: Witness) -> None:
        inst = w.inst
        self.w = w
        self.iv = _Intervals(w.digits)
        self.generic = w.kind not in ("softmax", "relu")
        tokens = [*range(inst.k), TRIGGER, BOS]
        rows = {(b, j): token_features(inst, b) + position_features(w.positions, inst.T, j)
                for b in tokens for j in range(inst.T + 1)}
        self.gates: list[dict[tuple[int, int], tuple[Fraction, Fraction]]] = []
        if w.gate_w is not None and w.gate_c is not None:
            for gw, gc in zip(w.gate_w, w.gate_c):
                self.gates.append({key: gate_interval(dot(gw, phi) + gc, w.digits)
                                   for key, phi in rows.items()})
        self.values = [self._value_table(h, tokens) for h in range(w.heads)]
        self.scores: list[dict[tuple[int, int, int, int], Fraction]] = []
        for A in w.A:
            keyed = {key: [dot(row, phi) for row in A] for key, phi in rows.items()}
            table = {}
            for (a, t), phi in rows.items():
                for (b, j), Aphi in keyed.items():
                    if j <= t:
                        table[a, t, b, j] = dot(phi, Aphi)
            self.scores.append(table)
        # softmax: per key, the interval weight e = exp(s_j - s_0) and e·v_j
        self.terms: list[dict[tuple[int, int, int, int], tuple[Any, list[Any]]]] = []
        if w.kind == "softmax":
            for h, table in enumerate(self.scores):
                vals = self.values[h]
                terms = {}
                for key, s in table.items():
                    gap = s - table[key[0], key[1], BOS, 0]
                    if gap > MAX_LOGIT_GAP:
                        raise CertificateError(
                            f"data.A[{h}]: a score exceeds the BOS score by more than "
                            f"{MAX_LOGIT_GAP} (the checker's range for exp)")
                    e = self.iv.exp(gap)
                    terms[key] = (e, [self.iv.scale(e, x) for x in vals[key[2]]])
                self.terms.append(terms)

    def _value_table(self, h: int, tokens: list[int]) -> dict[int, list[Fraction]]:
        inst = self.w.inst
        if self.w.U is None:
            return {b: (list(inst.content[b]) if b >= 0 else [Fraction(0)] * inst.p)
                    for b in tokens}
        return {b: [dot(row, token_features(inst, b)) for row in self.w.U[h]] for b in tokens}

    def _generic_output(self, q: int, t: int, seq: list[int]
                        ) -> tuple[list[tuple[Fraction, Fraction]], list[Fraction]]:
        """Any map: interval weights (points for rational maps) from :mod:`.maps`, times
        the head's gate; output intervals with rational end points; BOS bound per head."""
        w = self.w
        p = w.inst.p
        lo, hi = [Fraction(0)] * p, [Fraction(0)] * p
        masses: list[Fraction] = []
        one = (Fraction(1), Fraction(1))
        for h in range(w.heads):
            table, vals = self.scores[h], self.values[h]
            s = [table[q, t, b, j] for j, b in enumerate(seq)]
            params = [] if w.map_params is None else w.map_params[h]
            if w.kind not in RATIONAL_MAPS:
                spread = max(abs(x) for x in [*s, *params]) * 2
                if spread > MAX_LOGIT_GAP:
                    raise CertificateError(
                        f"data.A[{h}]: a score or map parameter exceeds {MAX_LOGIT_GAP // 2} "
                        "in absolute value (the checker's range for exp)")
            alphas = interval_weights(w.kind, s, t, params, w.digits)
            g0, g1 = self.gates[h][q, t] if self.gates else one
            for (a0, a1), b in zip(alphas, seq):
                e0, e1 = a0 * g0, a1 * g1  # weights >= 0 and gate > 0
                for c, v in enumerate(vals[b]):
                    if v >= 0:
                        lo[c] += e0 * v
                        hi[c] += e1 * v
                    else:
                        lo[c] += e1 * v
                        hi[c] += e0 * v
            if w.measure == "weight":
                masses.append(alphas[0][1] * g1)
            else:  # the share α_0 / Σ_j α_j (the gate cancels), 0 when every weight is 0
                top = alphas[0][1]
                rest = sum((a0 for a0, _ in alphas[1:]), Fraction(0))
                masses.append(top / (top + rest) if top else Fraction(0))
        return list(zip(lo, hi)), masses

    def output(self, keys: list[int]) -> tuple[list[Any], list[Any]]:
        """Output at the last position of ``BOS, keys`` and the BOS mass per head.

        ReLU: exact rationals.  Softmax: fixed-point intervals.  Other maps: rational
        intervals (:meth:`_generic_output`).
        """
        t = len(keys)
        q = keys[-1] if t else BOS
        seq = [BOS, *keys]
        p = self.w.inst.p
        masses: list[Fraction] = []
        if self.generic:
            return self._generic_output(q, t, seq)
        if self.w.kind == "relu":
            out: list[Any] = [Fraction(0)] * p
            for h in range(self.w.heads):
                vals, table = self.values[h], self.scores[h]
                alphas = [max(table[q, t, b, j], Fraction(0)) for j, b in enumerate(seq)]
                for a, b in zip(alphas, seq):
                    if a:
                        out = [o + a * vc for o, vc in zip(out, vals[b])]
                if self.w.measure == "weight":
                    masses.append(alphas[0])
                else:  # the BOS share, 0 when every weight is 0
                    total = sum(alphas, Fraction(0))
                    masses.append(alphas[0] / total if total else Fraction(0))
            return out, masses
        iv = self.iv
        out = [(0, 0)] * p
        for h in range(self.w.heads):
            terms = self.terms[h]
            (z0, z1), num = terms[q, t, BOS, 0]
            for j in range(1, t + 1):
                (e0, e1), ev = terms[q, t, seq[j], j]
                z0, z1 = z0 + e0, z1 + e1
                num = [(n0 + x0, n1 + x1) for (n0, n1), (x0, x1) in zip(num, ev)]
            for c in range(p):
                lo, hi = iv.div(num[c], (z0, z1))
                out[c] = (out[c][0] + lo, out[c][1] + hi)
            masses.append(1 / iv.lower((z0, z1)))  # α_0 = 1/Z <= 1/lower(Z)
        return out, masses

    def error_sq(self, out: list[Any], target: list[Fraction]) -> Fraction:
        """``||f - y||²`` exactly (ReLU) or its rigorous upper bound (softmax)."""
        if self.w.kind == "relu":
            return sum(((o - y) ** 2 for o, y in zip(out, target)), Fraction(0))
        if self.generic:
            return sum((max((o0 - y) ** 2, (o1 - y) ** 2) for (o0, o1), y in zip(out, target)),
                       Fraction(0))
        total = Fraction(0)
        for (o0, o1), y in zip(out, target):
            y0, y1 = self.iv.of(y)
            total += self.iv.square_upper((o0 - y1, o1 - y0))
        return total


def _constrained(where: str | frozenset[tuple[int, ...]], prefix: list[int]) -> bool:
    if where == "all":
        return True
    if where == "trigger":
        return prefix[-1] == TRIGGER
    if where == "nontrigger":
        return prefix[-1] != TRIGGER
    return tuple(prefix) in where


def measure(w: Witness) -> WitnessFigures:
    """Run the witness's model on every prefix of the family; rigorous upper bounds."""
    model = _Model(w)
    out0, _ = model.output([])
    worst_err, err_at = model.error_sq(out0, [Fraction(0)] * w.inst.p), ((), 0)
    worst_bos: Fraction | None = None
    bos_at = None
    n_prefixes, n_constrained = 1, 0
    for prefix, target in prefixes(w.inst):
        n_prefixes += 1
        out, masses = model.output(prefix)
        e = model.error_sq(out, target)
        if e > worst_err:
            worst_err, err_at = e, (tuple(prefix), len(prefix))
        if _constrained(w.where, prefix):
            n_constrained += 1
            m = max(masses)
            if worst_bos is None or m > worst_bos:
                worst_bos, bos_at = m, (tuple(prefix), len(prefix))
    if not isinstance(w.where, str) and n_constrained < len(w.where):
        raise CertificateError("claim.where: some named positions are not in the family")
    return WitnessFigures(worst_err, err_at, worst_bos, bos_at, n_prefixes, n_constrained)


def _where_text(where: str | frozenset[tuple[int, ...]]) -> str:
    if isinstance(where, str):
        return {"all": "every position t >= 1", "trigger": "every trigger position",
                "nontrigger": "every non-trigger position t >= 1"}[where]
    return f"the {len(where)} named position(s)"


def _instance_text(w: Witness) -> str:
    return (f"p={w.inst.p}, T={w.inst.T}, {w.inst.describe_content()}, "
            f"{w.inst.triggers}-trigger family")


def _measure_text(w: Witness) -> str:
    if w.kind == "softmax":
        return "BOS mass α_0"
    if w.measure == "share":
        return "BOS share α_0/Σ_j α_j"
    return "BOS weight g_t α_0" if w.gate_w is not None else "BOS weight α_0"


def _rationals(matrix: list[list[Fraction]]) -> list[list[str]]:
    return [[format_rational(x) for x in row] for row in matrix]


def witness_statement(w: Witness) -> dict[str, Any]:
    """What a verified witness states, as canonical data."""
    instance = {k: v for k, v in w.inst.statement().items() if k != "values"}
    where: Any = w.where if isinstance(w.where, str) else sorted(list(x) for x in w.where)
    model: dict[str, Any] = {"kind": w.kind, "heads": w.heads,
                             "values": "fixed" if w.U is None else "learned",
                             "A": [_rationals(a) for a in w.A],
                             "U": "fixed" if w.U is None else [_rationals(u) for u in w.U]}
    if w.map_params is not None:
        model["map_params"] = _rationals(w.map_params)
    if w.gate_w is not None and w.gate_c is not None:
        model["gate_w"] = _rationals(w.gate_w)
        model["gate_c"] = [format_rational(x) for x in w.gate_c]
    return {"kind": "witness", "instance": {**instance, "positions": w.positions},
            "model": model,
            "max_error": format_rational(w.max_error),
            "error_at": "every position t >= 0 of every sequence of the family",
            "bos_measure": "weight" if w.kind in SIMPLEX_MAPS else w.measure,
            "max_bos": format_rational(w.max_bos_mass),
            "bos_at": where, "bos_heads": "every"}


def _at(at: tuple[tuple[int, ...], int]) -> str:
    seq, pos = at
    return f"{list(seq)}, t={pos}"


def verify(cert: dict[str, Any]) -> Verdict:
    """Check a witness certificate: both bounds hold rigorously on the whole family."""
    w = read_witness(cert)
    return decide(w, measure(w))


def decide(w: Witness, fig: WitnessFigures) -> Verdict:
    """The verdict on measured figures; raises :class:`InequalityFailed` when a bound fails."""
    if not fig.error_sq <= w.max_error**2:
        raise InequalityFailed(
            f"error at {_at(fig.error_at)}: ||f - y||² <= ε² fails: upper bound "
            f"{show(fig.error_sq)} > {show(w.max_error**2)}")
    measure = _measure_text(w)
    if fig.bos is not None and not fig.bos <= w.max_bos_mass:
        raise InequalityFailed(
            f"{measure} at {_at(fig.bos_at)}: <= {show(w.max_bos_mass)} fails: upper bound "
            f"{show(fig.bos)}")
    values = "fixed" if w.U is None else "learned"
    method = ("exact rationals" if w.kind in RATIONAL_MAPS
              else f"{w.digits}-digit interval arithmetic")
    claim = (f"a {w.heads}-head {w.kind} model with {values} values ({w.positions} positions) "
             f"has error <= {show(w.max_error)} at all {fig.n_prefixes} distinct prefixes of "
             f"the family ({_instance_text(w)}) and {measure} <= {show(w.max_bos_mass)} in "
             f"every head at {_where_text(w.where)} ({fig.n_constrained} prefixes); checked "
             f"with {method}")
    details = {"max error² (upper bound)": show(fig.error_sq),
               f"max {measure} (upper bound)": "none" if fig.bos is None else show(fig.bos)}
    return Verdict(ok=True, kind="witness", claim=claim, details=details,
                   statement=witness_statement(w))
