"""Witness rules (``witness`` on the trigger Family, ``paper-witness`` on the paper Family): one
explicit model, re-run on every prefix of its family, has error ``<= ε`` at every position and
BOS measure ``<= b`` where ``where`` says.  Why it is sound: ``docs/soundness.md``."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property
from typing import Any

from mpmath import iv, libmp

from ...errors import CertificateError
from ..exact import InequalityFailed, approx, common_denominator, dot, show
from ..family.paper import PaperFamily, Prefix, read_paper
from ..family.trigger import (
    BOS,
    TRIGGER,
    Instance,
    count_prefixes,
    fixed_matrix,
    position_features,
    prefixes,
    read_instance,
    read_tokens,
    token_features,
)
from ..interval import FixedPoint as _Intervals
from ..interval import as_iv, ivq, lower, precision, upper
from ..limits import current, require
from ..maps import (
    MAP_NAMES,
    MAP_PARAMETERS,
    RATIONAL_MAPS,
    RULES,
    gate_interval,
    interval_weights,
    row_weights,
)
from ..schema import (
    as_int,
    as_list,
    check_fields,
    child,
    format_rational,
    need,
    need_bool,
    need_int,
    need_rational,
    need_str,
    rational_matrix,
    rational_vector,
    section,
)
from ..verdict import Verdict

KIND = "paper-witness"

KINDS = MAP_NAMES
SIMPLEX_MAPS = ("softmax", "sparsemax", "entmax15")
"""Maps whose weights sum to 1 (their BOS weight is their BOS share)."""
WHERE = ("nontrigger", "trigger", "all")
MEASURES = ("weight", "share")
"""``claim.bos_measure``: the BOS weight ``α_0`` (default) or share ``α_0 / Σ_j α_j``."""
DEFAULT_DIGITS = 50
EXP_COST = 50
"""Exact operations one interval exponential is counted as, in the work estimate."""
PREFIX_COST = 4
"""Operations per key and output coordinate of a prefix (``benchmarks/bench_checker_limits.py``)."""
MAX_LOGIT_GAP = 100_000
"""Largest ``s_j - s_0`` accepted: ``exp`` of it is held as an integer of ~1.44·gap bits."""
CLASS_FIELDS = ("kind", "heads", "layers", "residual", "values")
CLAIM_FIELDS = ("statement", "model_class", "max_error", "max_bos_mass", "where", "bos_measure")


@dataclass(frozen=True, kw_only=True)
class Claimed:
    """What either witness claims: its map ``kind``, ``ε = max_error``, ``b = max_bos_mass``,
    the BOS ``measure``, the working ``digits`` and the heads' map parameters and gates."""

    kind: str
    max_error: Fraction
    max_bos_mass: Fraction
    measure: str = "weight"
    digits: int = DEFAULT_DIGITS
    map_params: list | None = None
    gate_w: list | None = None
    gate_c: list | None = None


@dataclass(frozen=True, kw_only=True)
class Witness(Claimed):
    """A parsed witness: the instance, the model (exact) and the claimed bounds."""

    inst: Instance
    positions: str
    A: list[list[list[Fraction]]]
    U: list[list[list[Fraction]]] | None
    where: str | frozenset[tuple[int, ...]]

    @property
    def heads(self) -> int:
        return len(self.A)


@dataclass
class WitnessFigures:
    """Rigorous upper bounds on ``max ||f_t - y_t||²`` and on the largest BOS measure at the
    constrained positions (``None``: none), where each maximum occurs (``bos_at`` of a stack
    names the layer and head too), and ``exact``: every output was a rational."""

    error_sq: Fraction
    error_at: tuple[tuple[int, ...], int]
    bos: Fraction | None
    bos_at: tuple[Any, ...] | None
    n_prefixes: int
    n_constrained: int
    exact: bool = True


# ----------------------------------------------------------------- shared reading
def read_claim(cert: dict[str, Any], class_fields: tuple[str, ...], model: tuple[str, ...]
               ) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any], dict[str, Any]]:
    """A witness's claim, its model class and data sections (``model``: the data's weight
    fields), and the :class:`Claimed` fields: ``max_error``, ``max_bos_mass`` (``>= 0``),
    ``bos_measure``, ``precision_digits`` (default 50, in ``[15, 1000]``)."""
    claim = section(cert, "claim", CLAIM_FIELDS)
    mc = section(claim, "model_class", class_fields, "claim")
    kind = need_str(mc, "kind", "claim.model_class", KINDS)
    max_error = need_rational(claim, "max_error", "claim")
    max_bos = need_rational(claim, "max_bos_mass", "claim")
    if max_error < 0 or max_bos < 0:
        raise CertificateError("claim: max_error and max_bos_mass must be >= 0")
    data = section(cert, "data", (*model, "precision_digits", "map_params", "gate_w", "gate_c"))
    digits = as_int(data.get("precision_digits", DEFAULT_DIGITS), "data.precision_digits", 15,
                    1001, "an integer in [15, 1000]")
    return claim, mc, data, dict(
        kind=kind, max_error=max_error, max_bos_mass=max_bos, digits=digits,
        measure=need_str(claim, "bos_measure", "claim", MEASURES, "weight"))


def _tensor(data: dict[str, Any], name: str, shape: tuple[int, ...]) -> list:
    """``data.name``: nested arrays of exact rationals of exactly ``shape``."""
    def read(value: Any, path: str, dims: tuple[int, ...]) -> Any:
        if len(dims) == 1:
            return rational_vector(value, path, dims[0])
        items = as_list(value, path, length=dims[0])
        if len(dims) == 2:
            return rational_matrix(items, path, columns=dims[1])
        return [read(v, child(path, i), dims[1:]) for i, v in enumerate(items)]

    return read(need(data, name, "data"), f"data.{name}", shape)


def _extras(data: dict[str, Any], kind: str, lead: tuple[int, ...], width: int
            ) -> dict[str, Any]:
    """``map_params`` ``[*lead][P]`` (exactly for the maps with parameters) and the gate
    ``gate_w`` ``[*lead][width]``, ``gate_c`` ``[*lead]`` (exactly for a gated map), ``lead``
    the heads' index shape."""
    names = MAP_PARAMETERS.get(kind, ())
    if not names and "map_params" in data:
        raise CertificateError(f"data.map_params: the {kind} map has no parameters")
    gated = RULES[kind].gated
    if not gated and ("gate_w" in data or "gate_c" in data):
        raise CertificateError(f"data.gate_w/gate_c: the {kind} map has no gate")
    params = _tensor(data, "map_params", (*lead, len(names))) if names else None
    if not gated:
        return {"map_params": params}
    return {"map_params": params, "gate_w": _tensor(data, "gate_w", (*lead, width)),
            "gate_c": _tensor(data, "gate_c", lead)}


# ----------------------------------------------------------------- the trigger witness
def _read_where(claim: dict[str, Any], inst: Instance) -> str | frozenset[tuple[int, ...]]:
    if isinstance(need(claim, "where", "claim"), str):
        return need_str(claim, "where", "claim", WHERE)
    items = as_list(claim["where"], "claim.where", min_length=1)
    require("prefixes", len(items), "claim.where: named positions")
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
    A = _tensor(data, "A", (heads, D, D))
    if need(data, "U", "data") == "fixed":
        return A, None
    U = _tensor(data, "U", (heads, inst.p, inst.p + 3))
    if values == "fixed" and any(u != fixed_matrix(inst.p) for u in U):
        raise CertificateError("data.U: the claim is about fixed values but U is not U_fix")
    return A, U


def read_witness(cert: dict[str, Any]) -> Witness:
    """Parse and check the fields of a witness certificate (raises CertificateError)."""
    instance = section(cert, "instance", ("task", "content_vectors", "values"))
    values = need_str(instance, "values", "instance", ("fixed", "learned"))
    inst = read_instance({**instance, "values": "fixed"})
    positions = inst.positions
    claim, mc, data, claimed = read_claim(cert, ("kind", "heads", "values"), ("A", "U"))
    kind, digits = claimed["kind"], claimed["digits"]
    heads = need_int(mc, "heads", "claim.model_class", minimum=1)
    if need_str(mc, "values", "claim.model_class", ("fixed", "learned")) != values:
        raise CertificateError("claim.model_class.values: differs from instance.values")
    n_prefixes = count_prefixes(inst, current().prefixes)
    require("prefixes", n_prefixes, "instance: distinct prefixes of the family", partial=True)
    D = inst.p + 3 + len(position_features(positions, inst.T, 0))
    require("work", estimate_work(inst, D, heads, kind, n_prefixes, digits),
            "instance and model: exact operations to evaluate the witness")
    A, U = _read_model(data, inst, D, heads, values)
    common_denominator((x for m in (*A, *(U or ())) for row in m for x in row), "data.A and data.U")
    return Witness(inst=inst, positions=positions, A=A, U=U, where=_read_where(claim, inst),
                   **claimed, **_extras(data, kind, (heads,), D))


def estimate_work(inst: Instance, D: int, heads: int, kind: str, n_prefixes: int,
                  digits: int) -> int:
    """Exact operations (roughly) of :func:`measure`: the score table of every
    (query, key) token-position pair with ``j <= t``, its exponentials (softmax), and
    ``PREFIX_COST·T·(p + 1)`` per prefix and head for the outputs and errors."""
    rows = (inst.k + 2) * (inst.T + 1)
    pairs = (inst.k + 2) ** 2 * (inst.T + 1) * (inst.T + 2) // 2
    scale = EXP_COST * max(1, digits // DEFAULT_DIGITS)
    if RULES[kind].grid:
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
        self.generic = not RULES[w.kind].grid
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
        if not self.generic:
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

        Softmax: fixed-point intervals.  Other maps: rational intervals, points for the
        rational maps (:meth:`_generic_output`).
        """
        t = len(keys)
        q = keys[-1] if t else BOS
        seq = [BOS, *keys]
        p = self.w.inst.p
        masses: list[Fraction] = []
        if self.generic:
            return self._generic_output(q, t, seq)
        iv = self.iv
        out: list[Any] = [(0, 0)] * p
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
        """A rigorous upper bound on ``||f - y||²`` (exact where the output is a point)."""
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
    fig = WitnessFigures(model.error_sq(out0, [Fraction(0)] * w.inst.p), ((), 0), None, None,
                         1, 0)
    for prefix, target in prefixes(w.inst):
        fig.n_prefixes += 1
        out, masses = model.output(prefix)
        e = model.error_sq(out, target)
        if e > fig.error_sq:
            fig.error_sq, fig.error_at = e, (tuple(prefix), len(prefix))
        if _constrained(w.where, prefix):
            fig.n_constrained += 1
            if fig.bos is None or max(masses) > fig.bos:
                fig.bos, fig.bos_at = max(masses), (tuple(prefix), len(prefix))
    if not isinstance(w.where, str) and fig.n_constrained < len(w.where):
        raise CertificateError("claim.where: some named positions are not in the family")
    return fig


def _where_text(where: str | frozenset[tuple[int, ...]]) -> str:
    if isinstance(where, str):
        return {"all": "every position t >= 1", "trigger": "every trigger position",
                "nontrigger": "every non-trigger position t >= 1"}[where]
    return f"the {len(where)} named position(s)"


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
    """Check a witness certificate (``witness`` or ``paper-witness``): both bounds hold
    rigorously on the whole family."""
    if need_str(cert, "kind", "", choices=("witness", KIND)) == KIND:
        return verify_stack(cert)
    w = read_witness(cert)
    return decide(w, measure(w))


def decide(w: Witness, fig: WitnessFigures) -> Verdict:
    """The verdict on measured figures; raises :class:`InequalityFailed` when a bound fails."""
    if not fig.error_sq <= w.max_error**2:
        raise InequalityFailed(
            f"error at {_at(fig.error_at)}: ||f - y||² <= ε² fails: upper bound "
            f"{show(fig.error_sq)} > {show(w.max_error**2)}", fig)
    measure = _measure_text(w)
    if fig.bos is not None and not fig.bos <= w.max_bos_mass:
        raise InequalityFailed(
            f"{measure} at {_at(fig.bos_at)}: <= {show(w.max_bos_mass)} fails: upper bound "
            f"{show(fig.bos)}", fig)
    values = "fixed" if w.U is None else "learned"
    method = ("exact rationals" if w.kind in RATIONAL_MAPS
              else f"{w.digits}-digit interval arithmetic")
    claim = (f"a {w.heads}-head {w.kind} model with {values} values ({w.positions} positions) "
             f"has error <= {show(w.max_error)} at all {fig.n_prefixes} distinct prefixes of "
             f"the family (p={w.inst.p}, T={w.inst.T}, {w.inst.describe_content()}, "
             f"{w.inst.triggers}-trigger family) and {measure} <= {show(w.max_bos_mass)} in "
             f"every head at {_where_text(w.where)} ({fig.n_constrained} prefixes); checked "
             f"with {method}")
    details = {"max error² (upper bound)": show(fig.error_sq),
               f"max {measure} (upper bound)": "none" if fig.bos is None else show(fig.bos)}
    return Verdict(ok=True, kind="witness", claim=claim, details=details,
                   statement=witness_statement(w), figures=fig)


# ----------------------------------------------------------------- the stack witness
Row = list[Any]
"""A row of Fractions (exact) or of mpmath intervals."""


def is_exact(row: Sequence[Any]) -> bool:
    return all(isinstance(x, Fraction) for x in row)


def matvec(M: list[list[Fraction]], v: Row) -> Row:
    """``M v`` exactly when ``v`` is exact, else in intervals."""
    if is_exact(v):
        return [sum((a * b for a, b in zip(row, v) if a and b), Fraction(0)) for row in M]
    return [sum((ivq(a) * b for a, b in zip(row, v) if a), iv.mpf(0)) for row in M]


def _dot(a: Row, b: Row) -> Any:
    if is_exact(a) and is_exact(b):
        return sum((x * y for x, y in zip(a, b)), Fraction(0))
    return sum((as_iv(x) * as_iv(y) for x, y in zip(a, b)), iv.mpf(0))


@dataclass(frozen=True)
class HeadParams:
    """One head's exact weights: ``W_Q, W_K, W_V`` ``(n, n)``, the map's parameters, and a
    gate ``(w, c)`` (gated maps only)."""

    W_Q: list[list[Fraction]]
    W_K: list[list[Fraction]]
    W_V: list[list[Fraction]]
    params: list[Fraction]
    gate_w: list[Fraction] | None = None
    gate_c: Fraction = Fraction(0)


@dataclass
class HeadOutput:
    """A head at one query: its output (exact or intervals), effective BOS weight
    ``g α_0`` (an exact Fraction or an interval) and an upper bound on its BOS share
    ``α_0 / Σ_j α_j`` (0 when every weight is 0)."""

    out: Row
    bos: Any
    share_upper: Fraction


def _share_upper(w: list[Any]) -> Fraction:
    """An upper bound on ``α_0 / Σ_j α_j`` (increasing in ``α_0``, decreasing in the rest)."""
    top = upper(w[0])
    if top <= 0:
        return Fraction(0)
    rest = sum((max(lower(x), Fraction(0)) for x in w[1:]), Fraction(0))
    return top / (top + rest)


def head_output(kind: str, head: HeadParams, query: Row, keys: list[Row], values: list[Row],
                t: int) -> HeadOutput:
    """The head's output at query row ``query`` over ``keys``/``values`` of rows ``0..t``."""
    q = matvec(head.W_Q, query)
    scores = [_dot(q, k) for k in keys]
    w = row_weights(kind, scores, t, head.params)
    share = _share_upper(w)
    if head.gate_w is not None:
        g = 1 / (1 + iv.exp(-(as_iv(_dot(head.gate_w, query)) + ivq(head.gate_c))))
        w = [as_iv(x) * g for x in w]
    exact = all(isinstance(x, Fraction) for x in w) and all(is_exact(v) for v in values)
    d = len(values[0])
    if exact:
        out: Row = [sum((a * v[i] for a, v in zip(w, values) if a), Fraction(0))
                    for i in range(d)]
    else:
        out = [sum((as_iv(a) * as_iv(v[i]) for a, v in zip(w, values)), iv.mpf(0))
               for i in range(d)]
    return HeadOutput(out, w[0], share)


@dataclass(frozen=True, kw_only=True)
class PaperWitness(Claimed):
    """A parsed stack witness (exact weights, the instance, the claimed bounds)."""

    n: int
    L: int
    content: list[list[Fraction]]
    residual: bool
    fixed: bool
    W: dict[str, list]
    where: str | dict[Prefix, frozenset[tuple[int, int]] | None]

    @property
    def m(self) -> int:
        return len(self.content)

    @cached_property
    def family(self) -> PaperFamily:
        return PaperFamily(self.n, self.L, self.content, self.residual)

    @property
    def layers(self) -> int:
        return len(self.W["W_Q"])

    @property
    def heads(self) -> int:
        return len(self.W["W_Q"][0])


def _read_stack_where(claim: dict[str, Any], family: PaperFamily, layers: int, heads: int
                ) -> str | dict[Prefix, frozenset[tuple[int, int]] | None]:
    where, m = need(claim, "where", "claim"), family.m
    if where in ("nontrigger", "all"):
        return where
    items = as_list(where, "claim.where", min_length=1)
    out: dict[Prefix, frozenset[tuple[int, int]] | None] = {}
    for i, item in enumerate(items):
        path = child("claim.where", i)
        check_fields(item, path, ("content", "trigger_at", "heads"))
        content = family.read_content(item, path)
        j, t = need(item, "trigger_at", path), len(content)
        if j is not None:
            as_int(j, f"{path}.trigger_at", 2, t, f"null or in 2..{t - 1} (before position {t})")
        prefix = family.read_prefix([c + m if k + 1 == j else c for k, c in enumerate(content)],
                                    f"{path}.content")
        hs = need(item, "heads", path)
        chosen: frozenset[tuple[int, int]] | None = None if hs == "every" else frozenset()
        for q, pair in enumerate([] if chosen is None else as_list(hs, f"{path}.heads", 1)):
            at = child(f"{path}.heads", q)
            layer, head = as_list(pair, at, length=2)
            chosen |= {(as_int(layer, at, 0, layers, "a layer of the model"),
                        as_int(head, at, 0, heads, "a head of the model"))}
        if prefix in out:
            raise CertificateError(f"{path}: prefix listed twice")
        out[prefix] = chosen
    return out


def read_stack_witness(cert: dict[str, Any]) -> PaperWitness:
    """Parse and check the shape of a ``paper-witness`` file."""
    need_str(cert, "kind", "", choices=(KIND,))
    task, family = read_paper(cert["instance"], ("task", "content_vectors"), one_layer=False)
    n, L, content = family.n, family.L, family.content
    family.count_prefixes()
    claim, mc, data, claimed = read_claim(cert, CLASS_FIELDS, ("W_Q", "W_K", "W_V", "W_O"))
    layers = need_int(mc, "layers", "claim.model_class", minimum=1)
    heads = need_int(mc, "heads", "claim.model_class", minimum=1)
    residual = need_bool(mc, "residual", "claim.model_class")
    if need_bool(task, "residual", "instance.task") != residual:
        raise CertificateError("instance.task.residual: must equal claim.model_class.residual "
                               "(residual targets go with residual connections)")
    fixed = need_str(mc, "values", "claim.model_class", choices=("learned", "fixed")) == "fixed"
    if fixed and (layers, heads) != (1, 1):
        raise CertificateError("claim.model_class.values: fixed values are defined for one "
                               "layer of one head")
    require("content", 4 * layers * heads * n * n, "data: weight entries")
    W = {name: _tensor(data, name, (layers, heads, n, n)) for name in ("W_Q", "W_K", "W_V")}
    W["W_O"] = _tensor(data, "W_O", (layers, n, heads * n))
    return PaperWitness(n=n, L=L, content=content, residual=residual, fixed=fixed, W=W,
                        where=_read_stack_where(claim, family, layers, heads), **claimed,
                        **_extras(data, claimed["kind"], (layers, heads), n))


# ---------------------------------------------------------------- the run
def _head(w: PaperWitness, layer: int, h: int) -> HeadParams:
    """Head ``h`` of layer ``layer``: its weights, map parameters and gate."""
    return HeadParams(*(w.W[name][layer][h] for name in ("W_Q", "W_K", "W_V")),
                      [] if w.map_params is None else w.map_params[layer][h],
                      None if w.gate_w is None else w.gate_w[layer][h],
                      Fraction(0) if w.gate_c is None else w.gate_c[layer][h])


def _add(a: Any, b: Any) -> Any:
    if isinstance(a, Fraction) and isinstance(b, Fraction):
        return a + b
    return as_iv(a) + as_iv(b)


def _run(w: PaperWitness) -> WitnessFigures:
    """Every prefix once (depth-first): the largest error² and constrained BOS measure."""
    heads = [[_head(w, layer, h) for h in range(w.heads)] for layer in range(w.layers)]
    fig = WitnessFigures(Fraction(0), ((), 0), Fraction(0), None, 0, 0)
    # per layer: keys[h], values[h] of the rows so far (a stack for the DFS)
    keys: list[list[list[Row]]] = [[[] for _ in range(w.heads)] for _ in range(w.layers)]
    vals: list[list[list[Row]]] = [[[] for _ in range(w.heads)] for _ in range(w.layers)]

    def add(prefix: Prefix, code: int | None) -> None:
        t = len(prefix)
        x = w.family.token(code)
        r: Row = list(x)
        bos_row: list[list[HeadOutput]] = []
        for layer in range(w.layers):
            outs: Row = []
            per = []
            for h, head in enumerate(heads[layer]):
                keys[layer][h].append(matvec(head.W_K, r))
                vals[layer][h].append(matvec(head.W_V, r))
                o = head_output(w.kind, head, r, keys[layer][h], vals[layer][h], t)
                per.append(o)
                outs.extend(o.out)
            y = matvec(w.W["W_O"][layer], outs)
            r = [_add(a, b) for a, b in zip(r, y)] if w.residual else y
            bos_row.append(per)
        target = w.family.target(prefix)
        if is_exact(r):
            e_up = sum(((a - b) ** 2 for a, b in zip(r, target)), Fraction(0))
        else:
            fig.exact = False
            e_up = upper(sum(((as_iv(a) - ivq(b)) ** 2 for a, b in zip(r, target)),
                             iv.mpf(0)))
        if e_up > fig.error_sq:
            fig.error_sq, fig.error_at = e_up, (prefix, t)
        # where "all": every head at every t >= 1, the trigger row included
        chosen = None if isinstance(w.where, str) else w.where.get(prefix, False)
        if t >= 1 and (w.where == "all" or code < w.m) and chosen is not False:
            fig.n_constrained += 1
            for layer in range(w.layers):
                for h in range(w.heads):
                    if chosen is None or (layer, h) in chosen:
                        o = bos_row[layer][h]
                        b = o.share_upper if w.measure == "share" else upper(o.bos)
                        if fig.bos_at is None or b > fig.bos:
                            fig.bos, fig.bos_at = b, (prefix, layer, h)
        fig.n_prefixes += 1

    def pop() -> None:
        for layer in range(w.layers):
            for h in range(w.heads):
                keys[layer][h].pop()
                vals[layer][h].pop()

    def visit(prefix: Prefix) -> None:
        for child_ in w.family.children(prefix):
            add(child_, child_[-1])
            visit(child_)
            pop()

    add((), None)
    visit(())
    return fig


def _fixed_values_ok(w: PaperWitness) -> None:
    WO, WV = w.W["W_O"][0], w.W["W_V"][0][0]
    for i in range(w.n):
        for k in range(w.n):
            got = sum((WO[i][d] * WV[d][k] for d in range(w.n)), Fraction(0))
            want = Fraction(int(i == k and i != 0))
            if got != want:
                raise CertificateError(f"data: W_O W_V [{i}][{k}] = {show(got)}, but fixed "
                                       f"values need I - e_0 e_0^T (= {show(want)})")


def verify_stack(cert: dict[str, Any]) -> Verdict:
    """Kind ``paper-witness``: the model's error and BOS weights on the whole family."""
    w = read_stack_witness(cert)
    count = w.family.count_prefixes()
    per = w.layers * w.heads * (3 * w.n * w.n + 2 * w.L * w.n) + w.layers * w.n * w.heads * w.n
    require("work", count * per * 4, f"instance: interval operations of {count} prefixes")
    if w.fixed:
        _fixed_values_ok(w)
    fig = measure_stack(w)
    what = _stack_measure_text(w)
    if fig.error_sq > w.max_error**2:
        return _fail(w, f"error² {approx(fig.error_sq)} > max_error² = "
                        f"{show(w.max_error**2)} at prefix {list(fig.error_at[0])}")
    if fig.bos_at is not None and fig.bos > w.max_bos_mass:
        prefix, layer, h = fig.bos_at
        return _fail(w, f"{what} {approx(fig.bos)} > max_bos_mass = "
                        f"{show(w.max_bos_mass)} (layer {layer}, head {h}, prefix {list(prefix)})")
    if fig.n_constrained == 0:
        return _fail(w, "claim.where names no non-trigger position of the family")
    where = (w.where if isinstance(w.where, str) else
             [{"prefix": list(p), "heads": "every" if hs is None else sorted(map(list, hs))}
              for p, hs in sorted(w.where.items())])
    values = "fixed (W_O W_V = I - e_0 e_0^T)" if w.fixed else "learned"
    statement = {
        "kind": KIND, "setting": "paper",
        "instance": {"n": w.n, "L": w.L,
                     "content": {"scheme": "custom", "vectors": w.family.vectors()}},
        "model_class": {"kind": w.kind, "heads": w.heads, "layers": w.layers,
                        "residual": w.residual, "values": "fixed" if w.fixed else "learned"},
        "max_error": format_rational(w.max_error),
        "max_bos_mass": format_rational(w.max_bos_mass), "where": where,
        "bos_measure": w.measure,
    }
    if w.map_params is not None:
        statement["map_params"] = [_rationals(layer) for layer in w.map_params]
    text = (f"a {w.kind} model of {w.layers} layer(s) x {w.heads} head(s) "
            f"({'residual' if w.residual else 'no residual'}, {values} values) on the paper's "
            f"task [n={w.n}, L={w.L}, the m={w.m} content vectors listed] has error <= "
            f"{show(w.max_error)} at every position of all {count} prefixes of the family and "
            f"{what} <= {show(w.max_bos_mass)} in "
            + ("every head at every non-trigger position" if w.where == "nontrigger"
               else "every head at every position t >= 1, the trigger row included"
               if w.where == "all"
               else f"the named heads at {len(w.where)} listed non-trigger positions"))
    return Verdict(True, KIND, text, details={
        "prefixes": fig.n_prefixes, "constrained": fig.n_constrained,
        "error_sq_upper": show(fig.error_sq), "bos_upper": show(fig.bos),
        "exact": fig.exact},
        statement=statement)


def measure_stack(w: PaperWitness) -> WitnessFigures:
    """The checker's figures on a parsed stack witness, at its working precision."""
    _require_row_digits(w)
    with precision(libmp.dps_to_prec(w.digits)):
        return _run(w)


EXACT_ROW_MAPS = tuple(m for m, r in RULES.items() if r.exact or r.partial)
"""Maps whose weights at exact scores can be exact, so that a layer's exact rows feed the
next layer as exact rows."""


def _bits(x: Fraction) -> int:
    return x.numerator.bit_length() + x.denominator.bit_length()


def _require_row_digits(w: PaperWitness) -> None:
    """Refuse, before any prefix is run, a stack whose exact rows would outgrow the
    ``denominator_digits`` limit.  Per layer a row's numbers grow about threefold in bits:
    ``s = (W_Q r)·(W_K r)`` is quadratic in the row, the output ``α W_V r`` cubic, and
    ``W_O`` adds the weights' bits once more; every sum of ``n·L·H`` terms adds their
    logarithm.  The weights are first put on one common denominator (also limited)."""
    if w.kind not in EXACT_ROW_MAPS or w.gate_w is not None or w.layers < 2:
        return
    weights = [x for name in ("W_Q", "W_K", "W_V") for layer in w.W[name] for head in layer
               for row in head for x in row]
    weights += [x for layer in w.W["W_O"] for row in layer for x in row]
    common_denominator(weights, "data: the weights W_Q, W_K, W_V, W_O")
    wb = max(map(_bits, weights), default=1)
    rb = max((_bits(x) for c in w.content for x in c), default=1)
    terms = (w.n * w.L * w.heads).bit_length() + 2
    for layer in range(1, w.layers):
        rb = 3 * rb + 4 * wb + 4 * terms
        digits = int(rb * 0.30103) + 1
        require("denominator_digits", digits,
                f"data: the exact rows entering layer {layer} (about 3x the bits per layer)")


def _stack_measure_text(w: PaperWitness) -> str:
    if w.measure == "share":
        return "BOS share α_t0 / Σ_k α_tk"
    return "BOS weight g_t α_t0" if w.gate_w is not None else "BOS weight α_t0"


def _fail(w: PaperWitness, why: str) -> Verdict:
    return Verdict(False, KIND, f"paper witness ({w.kind}, {w.layers}x{w.heads})", failure=why)
