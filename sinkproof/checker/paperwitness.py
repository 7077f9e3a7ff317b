"""Checker for kind ``paper-witness``: one explicit model of the paper's setting, checked on
its whole finite family.

The paper's task has token vectors ``x ∈ R^n``: coordinate 0 the BOS indicator, 1 the
trigger indicator, ``2..n-2`` content, ``n-1`` an is-content bias channel.  With the
content vectors ``c_0..c_{m-1}`` listed exactly in ``instance.content_vectors`` the
checker builds every token itself: content token ``i`` is ``(0, 0, c_i, 1)``, the trigger
carrying ``c_i`` is ``(0, 1, c_i, 0)``, BOS is ``e_0``.  A sequence has length ``L`` and
exactly one trigger at ``j ∈ 2..L-1``; its targets are ``y_t = [t = j] (1/j) Σ_{k=1..j} x_k``,
plus ``x_t`` itself when the model is residual.

The model: ``layers`` layers of ``heads`` heads, head ``h`` of layer ``l`` scores
``s_ik = (W_Q r_i)·(W_K r_k)`` over ``k <= i`` (causal, no scaling), weights them by
softmax or by ReLU normalised by length, ``α_ik = max(0, s_ik)/max(i, 1)``, and values
``W_V r_k``; the layer writes ``W_O [o^1; ...; o^H]``, added to its input ``r`` when
residual.  Every weight is an exact rational; every computation is enclosed by mpmath
interval arithmetic at ``precision_digits`` digits, so the decision (on the intervals'
end points, converted exactly to rationals) is rigorous.

Checked: ``||f_t - y_t||² <= max_error²`` at every position ``t = 0..L-1`` of every
sequence of the family (a causal model's output at ``t`` depends only on the prefix, so
every distinct prefix is run once), and ``α_t0 <= max_bos_mass`` at the ``where``
positions: ``"nontrigger"`` (every non-trigger position ``t >= 1``, every head of every
layer) or a list of prefixes ``{content: [c_1..c_t], trigger_at: j | null, heads:
"every" | [[l, h], ...]}`` (the position is the prefix's last, ``t != j``).  With
``model_class.values = "fixed"`` (one layer, one head) the checker also verifies
``W_O W_V = I - e_0 e_0^T`` exactly.

Layout (inside the common envelope)::

    instance: {task: {setting: "paper", n, L, content, residual, grid?},
               content_vectors: [[q]]}
    claim:    {statement, model_class: {kind, heads, layers, residual, values},
               max_error: q, max_bos_mass: q, where}
    data:     {W_Q, W_K, W_V: [layers][heads][n][n] q, W_O: [layers][n][heads·n] q,
               precision_digits?: int}
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from mpmath import iv

from ..errors import CertificateError
from .exact import approx, show
from .limits import current, require
from .maps import MAP_NAMES
from .paperheads import (
    HeadOutput,
    HeadParams,
    Row,
    as_iv,
    head_extras,
    head_output,
    is_exact,
    ivq,
    matvec,
    upper,
)
from .schema import (
    as_list,
    check_fields,
    child,
    format_rational,
    need,
    need_bool,
    need_dict,
    need_int,
    need_list,
    need_rational,
    need_str,
    rational_matrix,
)
from .verdict import Verdict

KIND = "paper-witness"
KINDS = MAP_NAMES
MEASURES = ("weight", "share")
"""``claim.bos_measure``: the effective BOS weight ``g_t α_t0`` (default; ``α_t0`` for an
ungated head) or the BOS share ``α_t0 / Σ_k α_tk`` (0 when every weight is 0; a gate
cancels in it).  On the simplex (softmax, sparsemax, entmax-1.5) the two coincide."""
DEFAULT_DIGITS = 50
TASK_FIELDS = ("setting", "n", "L", "content", "residual", "grid")
CLASS_FIELDS = ("kind", "heads", "layers", "residual", "values")
Prefix = tuple[int, ...]
"""Token codes ``x_1..x_t``: content ``i`` is ``i``, the trigger carrying ``c_i`` is ``m + i``."""


@dataclass(frozen=True)
class PaperWitness:
    """A parsed witness (exact weights, the instance, the claimed bounds)."""

    n: int
    L: int
    content: list[list[Fraction]]
    kind: str
    residual: bool
    fixed: bool
    W: dict[str, list]
    max_error: Fraction
    max_bos_mass: Fraction
    where: str | dict[Prefix, frozenset[tuple[int, int]] | None]
    digits: int
    measure: str = "weight"
    map_params: list[list[list[Fraction]]] | None = None
    gate_w: list[list[list[Fraction]]] | None = None
    gate_c: list[list[Fraction]] | None = None

    @property
    def m(self) -> int:
        return len(self.content)

    @property
    def layers(self) -> int:
        return len(self.W["W_Q"])

    @property
    def heads(self) -> int:
        return len(self.W["W_Q"][0])


# ---------------------------------------------------------------- reading
def _weights(data: dict[str, Any], name: str, shape: tuple[int, ...]) -> list:
    def read(value: Any, path: str, dims: tuple[int, ...]) -> Any:
        if len(dims) == 2:
            rows = rational_matrix(value, path, columns=dims[1])
            if len(rows) != dims[0]:
                raise CertificateError(f"{path}: expected {dims[0]} rows, got {len(rows)}")
            return rows
        items = as_list(value, path, length=dims[0])
        return [read(v, child(path, i), dims[1:]) for i, v in enumerate(items)]

    return read(need(data, name, "data"), f"data.{name}", shape)


def _read_where(claim: dict[str, Any], m: int, L: int, layers: int, heads: int
                ) -> str | dict[Prefix, frozenset[tuple[int, int]] | None]:
    where = need(claim, "where", "claim")
    if where == "nontrigger":
        return where
    items = as_list(where, "claim.where", min_length=1)
    out: dict[Prefix, frozenset[tuple[int, int]] | None] = {}
    for i, item in enumerate(items):
        path = child("claim.where", i)
        if not isinstance(item, dict):
            raise CertificateError(f"{path}: must be an object")
        check_fields(item, path, ("content", "trigger_at", "heads"))
        content = need_list(item, "content", path, min_length=1)
        t = len(content)
        if t > L - 1:
            raise CertificateError(f"{path}.content: longer than L-1 = {L - 1}")
        for k, c in enumerate(content):
            if isinstance(c, bool) or not isinstance(c, int) or not 0 <= c < m:
                raise CertificateError(f"{path}.content[{k}]: {c!r} is not a content index < {m}")
        j = need(item, "trigger_at", path)
        if j is None:
            if t > L - 2:
                raise CertificateError(f"{path}: a prefix of length {t} without its trigger "
                                       "is not in the family")
            prefix = tuple(content)
        else:
            if isinstance(j, bool) or not isinstance(j, int) or not 2 <= j < t:
                raise CertificateError(f"{path}.trigger_at: must be null or an integer in "
                                       f"2..{t - 1} (before the non-trigger position {t})")
            prefix = tuple(c + m if k + 1 == j else c for k, c in enumerate(content))
        hs = need(item, "heads", path)
        if hs == "every":
            chosen = None
        else:
            pairs = as_list(hs, f"{path}.heads", min_length=1)
            chosen = frozenset()
            for q, pair in enumerate(pairs):
                lh = as_list(pair, child(f"{path}.heads", q), length=2)
                if not all(isinstance(v, int) and not isinstance(v, bool) for v in lh) or not (
                        0 <= lh[0] < layers and 0 <= lh[1] < heads):
                    raise CertificateError(f"{path}.heads[{q}]: not a [layer, head] of the model")
                chosen = chosen | {(lh[0], lh[1])}
        if prefix in out:
            raise CertificateError(f"{path}: prefix listed twice")
        out[prefix] = chosen
    return out


def read_witness(cert: dict[str, Any]) -> PaperWitness:
    """Parse and check the shape of a ``paper-witness`` file."""
    need_str(cert, "kind", "", choices=(KIND,))
    instance = check_fields(cert["instance"], "instance", ("task", "content_vectors"))
    task = check_fields(need_dict(instance, "task", "instance"), "instance.task", TASK_FIELDS)
    if need_str(task, "setting", "instance.task") != "paper":
        raise CertificateError("instance.task.setting: must be 'paper'")
    n = need_int(task, "n", "instance.task", minimum=4)
    L = need_int(task, "L", "instance.task", minimum=3)
    if need(task, "content", "instance.task") == "uniform":
        raise CertificateError("instance.task.content: a witness is checked on a finite "
                               "content set; continuous content has none")
    raw = need(instance, "content_vectors", "instance")
    if isinstance(raw, list):
        require("content", len(raw) * (n - 3), "instance.content_vectors: entries m·(n-3)")
    content = rational_matrix(raw, "instance.content_vectors", columns=n - 3, min_rows=1)
    if len({tuple(c) for c in content}) != len(content):
        raise CertificateError("instance.content_vectors: repeated content vector")
    _require_prefixes(len(content), L)
    claim = check_fields(need_dict(cert, "claim", ""), "claim",
                         ("statement", "model_class", "max_error", "max_bos_mass", "where",
                          "bos_measure"))
    measure = claim.get("bos_measure", "weight")
    if measure not in MEASURES:
        raise CertificateError(f"claim.bos_measure: {measure!r} is not one of "
                               f"{', '.join(MEASURES)}")
    mc = check_fields(need_dict(claim, "model_class", "claim"), "claim.model_class",
                      CLASS_FIELDS)
    kind = need_str(mc, "kind", "claim.model_class", choices=KINDS)
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
    max_error = need_rational(claim, "max_error", "claim")
    max_bos = need_rational(claim, "max_bos_mass", "claim")
    if max_error < 0 or max_bos < 0:
        raise CertificateError("claim.max_error and claim.max_bos_mass must be >= 0")
    data = check_fields(need_dict(cert, "data", ""), "data",
                        ("W_Q", "W_K", "W_V", "W_O", "precision_digits", "map_params",
                         "gate_w", "gate_c"))
    digits = data.get("precision_digits", DEFAULT_DIGITS)
    if isinstance(digits, bool) or not isinstance(digits, int) or not 15 <= digits <= 1000:
        raise CertificateError("data.precision_digits: expected an integer in [15, 1000]")
    require("content", 4 * layers * heads * n * n, "data: weight entries")
    W = {name: _weights(data, name, (layers, heads, n, n)) for name in ("W_Q", "W_K", "W_V")}
    W["W_O"] = _weights(data, "W_O", (layers, n, heads * n))
    where = _read_where(claim, len(content), L, layers, heads)
    params, gate_w, gate_c = _read_extras(data, kind, layers, heads, n)
    return PaperWitness(n, L, content, kind, residual, fixed, W, max_error, max_bos, where,
                        digits, measure, params, gate_w, gate_c)


def _read_extras(data: dict[str, Any], kind: str, layers: int, heads: int, n: int
                 ) -> tuple[Any, Any, Any]:
    """``map_params`` ``[layers][heads][P]`` (exactly for the maps with parameters), and
    ``gate_w`` ``[layers][heads][n]``, ``gate_c`` ``[layers][heads]`` (exactly for a gated
    map)."""
    names, gated = head_extras(data, kind)
    params = _weights(data, "map_params", (layers, heads, len(names))) if names else None
    if not gated:
        return params, None, None
    return params, _weights(data, "gate_w", (layers, heads, n)), \
        _gate_bias(data, layers, heads)


def _gate_bias(data: dict[str, Any], layers: int, heads: int) -> list[list[Fraction]]:
    rows = as_list(need(data, "gate_c", "data"), "data.gate_c", length=layers)
    return [rational_matrix([row], child("data.gate_c", i), columns=heads)[0]
            for i, row in enumerate(rows)]


# ---------------------------------------------------------------- family
def n_prefixes(m: int, L: int, cap: int | None = None) -> int:
    """Distinct non-empty prefixes of the family: without the trigger at depth ``t <= L-2``
    (``m^t``), with the trigger at one of ``2..t`` (``(t-1) m^t``), for ``1 <= t <= L-1``.

    In closed form, never a loop over ``L``; with ``cap``, a count past it is returned as
    ``cap + 1`` as soon as ``m^(L-2)`` alone passes it (no integer of ``L·log m`` bits is
    built for a file that says ``L = 10^6``)."""
    if L < 3:
        return 0
    if cap is not None and m >= 2 and (L - 2) * (m.bit_length() - 1) > cap.bit_length():
        return cap + 1
    if m == 1:
        return (L - 2) + (L - 2) * (L - 1) // 2
    geometric = (m ** (L - 1) - m) // (m - 1)  # Σ_{t=1}^{L-2} m^t
    weighted = ((L - 2) * m ** (L + 1) - (L - 1) * m**L + m**2) // (m - 1) ** 2
    return geometric + weighted  # Σ_{t=1}^{L-1} (t-1) m^t


def _require_prefixes(m: int, L: int) -> int:
    """The family's prefix count, refused past the ``prefixes`` limit (before any table)."""
    cap = current().prefixes
    count = n_prefixes(m, L, cap)
    require("prefixes", count, f"instance: prefixes of m={m}, L={L}", partial=count > cap)
    return count


def _children(prefix: Prefix, m: int, L: int) -> Iterator[Prefix]:
    t = len(prefix)
    if t == L - 1:
        return
    has_trigger = any(c >= m for c in prefix)
    for c in range(m):
        if has_trigger or t + 1 <= L - 2:
            yield (*prefix, c)
    if not has_trigger and t + 1 >= 2:
        for c in range(m):
            yield (*prefix, m + c)


def _token(w: PaperWitness, code: int | None) -> list[Fraction]:
    x = [Fraction(0)] * w.n
    if code is None:
        x[0] = Fraction(1)
        return x
    trig = code >= w.m
    x[1] = Fraction(int(trig))
    x[2: w.n - 1] = w.content[code - w.m if trig else code]
    x[w.n - 1] = Fraction(int(not trig))
    return x


# ---------------------------------------------------------------- the run
@dataclass
class _Figures:
    error_sq: Fraction
    error_at: tuple[Prefix, int]
    bos: Fraction
    bos_at: tuple[Prefix, int, int] | None
    n_prefixes: int
    n_constrained: int
    exact: bool = True


def _heads(w: PaperWitness) -> list[list[HeadParams]]:
    out = []
    for layer in range(w.layers):
        row = []
        for h in range(w.heads):
            params = [] if w.map_params is None else w.map_params[layer][h]
            gw = None if w.gate_w is None else w.gate_w[layer][h]
            gc = Fraction(0) if w.gate_c is None else w.gate_c[layer][h]
            row.append(HeadParams(w.W["W_Q"][layer][h], w.W["W_K"][layer][h],
                                  w.W["W_V"][layer][h], params, gw, gc))
        out.append(row)
    return out


def _measure(w: PaperWitness, o: HeadOutput) -> Fraction:
    return o.share_upper if w.measure == "share" else upper(o.bos)


def _add(a: Any, b: Any) -> Any:
    if isinstance(a, Fraction) and isinstance(b, Fraction):
        return a + b
    return as_iv(a) + as_iv(b)


def _run(w: PaperWitness) -> _Figures:
    """Every prefix once (depth-first): the largest error² and constrained BOS measure."""
    heads = _heads(w)
    fig = _Figures(Fraction(0), ((), 0), Fraction(0), None, 0, 0)
    # per layer: keys[h], values[h] of the rows so far (a stack for the DFS)
    keys: list[list[list[Row]]] = [[[] for _ in range(w.heads)] for _ in range(w.layers)]
    vals: list[list[list[Row]]] = [[[] for _ in range(w.heads)] for _ in range(w.layers)]
    exact_rows: list[list[Fraction]] = []

    def add(prefix: Prefix, code: int | None) -> None:
        t = len(prefix)
        x = _token(w, code)
        exact_rows.append(x)
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
        target = _target(w, prefix, exact_rows)
        if is_exact(r):
            e_up = sum(((a - b) ** 2 for a, b in zip(r, target)), Fraction(0))
        else:
            fig.exact = False
            e_up = upper(sum(((as_iv(a) - ivq(b)) ** 2 for a, b in zip(r, target)),
                             iv.mpf(0)))
        if e_up > fig.error_sq:
            fig.error_sq, fig.error_at = e_up, (prefix, t)
        if t >= 1 and not (code is not None and code >= w.m):
            chosen = _constrained(w, prefix)
            if chosen is not False:
                fig.n_constrained += 1
                for layer in range(w.layers):
                    for h in range(w.heads):
                        if chosen is None or (layer, h) in chosen:
                            b = _measure(w, bos_row[layer][h])
                            if fig.bos_at is None or b > fig.bos:
                                fig.bos, fig.bos_at = b, (prefix, layer, h)
        fig.n_prefixes += 1

    def pop() -> None:
        exact_rows.pop()
        for layer in range(w.layers):
            for h in range(w.heads):
                keys[layer][h].pop()
                vals[layer][h].pop()

    def visit(prefix: Prefix) -> None:
        for child_ in _children(prefix, w.m, w.L):
            add(child_, child_[-1])
            visit(child_)
            pop()

    add((), None)
    visit(())
    return fig


def _constrained(w: PaperWitness, prefix: Prefix) -> frozenset[tuple[int, int]] | None | bool:
    """Heads constrained at the prefix's last position (``None`` = every head), or False."""
    if w.where == "nontrigger":
        return None
    return w.where.get(prefix, False)


def _target(w: PaperWitness, prefix: Prefix, rows: list[list[Fraction]]) -> list[Fraction]:
    t = len(prefix)
    y = list(rows[-1]) if w.residual else [Fraction(0)] * w.n
    if t >= 1 and prefix[-1] >= w.m:
        for d in range(w.n):
            y[d] += sum((rows[k][d] for k in range(1, t + 1)), Fraction(0)) / t
    return y


def _fixed_values_ok(w: PaperWitness) -> None:
    WO, WV = w.W["W_O"][0], w.W["W_V"][0][0]
    for i in range(w.n):
        for k in range(w.n):
            got = sum((WO[i][d] * WV[d][k] for d in range(w.n)), Fraction(0))
            want = Fraction(int(i == k and i != 0))
            if got != want:
                raise CertificateError(f"data: W_O W_V [{i}][{k}] = {show(got)}, but fixed "
                                       f"values need I - e_0 e_0^T (= {show(want)})")


def verify(cert: dict[str, Any]) -> Verdict:
    """Kind ``paper-witness``: the model's error and BOS weights on the whole family."""
    w = read_witness(cert)
    count = _require_prefixes(w.m, w.L)
    per = w.layers * w.heads * (3 * w.n * w.n + 2 * w.L * w.n) + w.layers * w.n * w.heads * w.n
    require("work", count * per * 4, f"instance: interval operations of {count} prefixes")
    if w.fixed:
        _fixed_values_ok(w)
    fig = measure(w)
    what = _measure_text(w)
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
    vectors = [[format_rational(x) for x in c] for c in w.content]
    values = "fixed (W_O W_V = I - e_0 e_0^T)" if w.fixed else "learned"
    statement = {
        "kind": KIND, "setting": "paper",
        "instance": {"n": w.n, "L": w.L, "content": {"scheme": "custom", "vectors": vectors}},
        "model_class": {"kind": w.kind, "heads": w.heads, "layers": w.layers,
                        "residual": w.residual, "values": "fixed" if w.fixed else "learned"},
        "max_error": format_rational(w.max_error),
        "max_bos_mass": format_rational(w.max_bos_mass), "where": where,
        "bos_measure": w.measure,
    }
    if w.map_params is not None:
        statement["map_params"] = [[[format_rational(x) for x in h] for h in layer]
                                   for layer in w.map_params]
    text = (f"a {w.kind} model of {w.layers} layer(s) x {w.heads} head(s) "
            f"({'residual' if w.residual else 'no residual'}, {values} values) on the paper's "
            f"task [n={w.n}, L={w.L}, the m={w.m} content vectors listed] has error <= "
            f"{show(w.max_error)} at every position of all {count} prefixes of the family and "
            f"{what} <= {show(w.max_bos_mass)} in "
            + ("every head at every non-trigger position" if w.where == "nontrigger"
               else f"the named heads at {len(w.where)} listed non-trigger positions"))
    return Verdict(True, KIND, text, details={
        "prefixes": fig.n_prefixes, "constrained": fig.n_constrained,
        "error_sq_upper": show(fig.error_sq), "bos_upper": show(fig.bos),
        "exact": fig.exact},
        statement=statement)


def measure(w: PaperWitness) -> _Figures:
    """The checker's figures on a parsed witness: upper bounds on the largest error² over
    the family and on the BOS measure at the constrained positions (``exact``: every
    output was computed in rationals, so the error² bound is the exact value)."""
    saved = iv.prec
    try:
        iv.dps = w.digits
        return _run(w)
    finally:
        iv.prec = saved


def _measure_text(w: PaperWitness) -> str:
    if w.measure == "share":
        return "BOS share α_t0 / Σ_k α_tk"
    return "BOS weight g_t α_t0" if w.gate_w is not None else "BOS weight α_t0"


def _fail(w: PaperWitness, why: str) -> Verdict:
    return Verdict(False, KIND, f"paper witness ({w.kind}, {w.layers}x{w.heads})", failure=why)


__all__ = ["DEFAULT_DIGITS", "KIND", "KINDS", "MEASURES", "PaperWitness", "measure",
           "n_prefixes", "read_witness", "verify"]
