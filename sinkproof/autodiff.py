"""The attention layer's differentiable forward over a batch of prefixes, in JAX.

A causal layer's output at position ``t`` depends only on the prefix ``x_0..x_t``
(``x_0`` = BOS), so a batch is a set of prefixes ``n``, each padded to ``K`` keys
with a mask of the ``t_n + 1`` visible ones.  With ``φ(a, t)`` the input row of
token ``a`` at position ``t`` and ``Φ`` the table of all of them, head ``h`` scores

    s_{hnj} = φ(x_{t_n}, t_n)^T A_h φ(x_j, j)        (A_h = W_Q,h^T W_K,h when factored)

turns the visible scores into weights ``α_{hn·}`` with its attention map (zero at
hidden keys), and the output at the prefix's last position is

    f_n = Σ_h g_{hn} Σ_j α_{hnj} U_h e(x_j),   g_{hn} = sigmoid(w_h · φ(x_{t_n}, t_n) + c_h)

with ``g = 1`` for heads without a gate.  :func:`forward` is a pure function of the
parameters (``jit``-compiled, ``vmap``-ped over heads), so ``jax.grad`` of any loss
built on it is the exact gradient; the search and the training take every gradient
from here.  Float64 holds only inside :func:`x64` (a scoped setting, not a global
switch); the numpy evaluator of :mod:`sinkproof.kernel` stays the reference.

:func:`stack_forward` is the same mathematics for a stack of layers on whole sequences of
input rows (``x ← x + layer(x)`` with residuals, ``W_O`` combining full-width heads); the
one-layer :func:`forward` over padded prefixes is its fast path for a single layer of
token-only values (scores gathered from a table, one row per distinct prefix).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from .attention import MAPS

CACHE_VARIABLE = "SINKPROOF_JAX_CACHE"
"""The environment variable that turns on JAX's persistent compilation cache for sinkproof's
programs: unset, empty, ``0`` or ``off`` (the default): no cache; ``1`` or ``on``: the user
cache folder (:func:`compilation_cache_dir`); any other value: that folder."""


def compilation_cache_dir(environ: Mapping[str, str] = os.environ) -> Path | None:
    """The folder :data:`CACHE_VARIABLE` names for JAX's compiled programs, or ``None`` (off).

    ``1``/``on`` means ``$XDG_CACHE_HOME/sinkproof/jax`` (``~/.cache/sinkproof/jax`` when
    ``XDG_CACHE_HOME`` is unset); a compiled program does not change any result, only the
    time the first call of a fresh interpreter spends compiling it."""
    value = environ.get(CACHE_VARIABLE, "").strip()
    if value.lower() in ("", "0", "off", "no", "false"):
        return None
    if value.lower() in ("1", "on", "yes", "true"):
        base = environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
        return Path(base) / "sinkproof" / "jax"
    return Path(value).expanduser()


def use_compilation_cache(environ: Mapping[str, str] = os.environ) -> Path | None:
    """Point JAX's persistent compilation cache at :func:`compilation_cache_dir` (every
    program, however short its compilation) and return the folder; ``None`` when the
    variable is off or JAX's own cache folder is already set (``JAX_COMPILATION_CACHE_DIR``
    or ``jax.config``: the user's setting wins and is left as it is).  JAX has one cache per
    process: with it on, the process's other JAX programs are cached there too."""
    path = compilation_cache_dir(environ)
    if path is None or jax.config.jax_compilation_cache_dir is not None:
        return None
    jax.config.update("jax_compilation_cache_dir", str(path))
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    return path


use_compilation_cache()  # every JAX path of sinkproof imports this module first

Params = dict[str, Any]
"""Head parameters: ``A`` ``(H, D, D)`` or ``WQ``, ``WK`` ``(H, r, D)``; ``U`` ``(H, p, p+3)``;
optional ``map_params`` ``(H, P)``; optional gate ``gate_w`` ``(H, D)``, ``gate_c`` ``(H,)``."""


def x64() -> Any:
    """Context manager under which JAX computes in float64 (scoped: the global setting
    and other threads are untouched).  Arrays made inside keep their dtype outside."""
    return jax.enable_x64(True)


@dataclass(frozen=True)
class PaddedPrefixes:
    """A batch of ``N`` prefixes padded to ``K`` keys (numpy; :meth:`device` for JAX).

    ``flat`` ``(N, K)``: index of ``s(query, t, key_j, j)`` in the flattened table
    ``Φ A Φ^T`` (``R·R`` entries, ``R`` rows of ``Φ``); ``keys`` ``(N, K)``: token codes;
    ``valid`` ``(N, K)``: key visible (key 0 always); ``depth`` ``(N,)``: ``t_n``;
    ``query_row`` ``(N,)``: row of ``Φ`` of the query; ``weight``, ``target``,
    ``constrained``: multiplicity, ``y_t`` ``(N, p)`` and where the BOS condition
    applies; ``real``: false on rows added only to round ``N`` up (weight 0).
    """

    flat: np.ndarray
    keys: np.ndarray
    valid: np.ndarray
    depth: np.ndarray
    query_row: np.ndarray
    weight: np.ndarray
    target: np.ndarray
    constrained: np.ndarray
    real: np.ndarray

    def device(self) -> dict[str, jax.Array]:
        """The arrays as JAX arrays (float64; call inside :func:`x64`)."""
        return {name: jnp.asarray(getattr(self, name)) for name in self.__dataclass_fields__}


def padded_size(n: int) -> int:
    """``n`` rounded up to one of a few sizes (at most 1/8 more), so that batches of
    similar size share one compiled function."""
    if n <= 64:
        return 64
    step = 1 << max(0, n.bit_length() - 4)
    return -(-n // step) * step


# ---------------------------------------------------------------------- forward
class Forward(NamedTuple):
    """Scores and weights ``(H, N, K)``, per-head gates ``(H, N)`` and outputs ``(N, p)``."""

    scores: jax.Array
    weights: jax.Array
    gates: jax.Array
    output: jax.Array


def score_matrices(params: Params) -> jax.Array:
    """``A`` ``(H, D, D)``, or ``W_Q^T W_K`` per head for factored scores."""
    if "A" in params:
        return params["A"]
    return jnp.einsum("hrd,hre->hde", params["WQ"], params["WK"])


def forward(params: Params, data: dict[str, jax.Array], phi: jax.Array, tokens: jax.Array,
            kind: str, leak: Any = 0.0) -> Forward:
    """The layer on the padded prefixes ``data`` (:meth:`PaddedPrefixes.device`).

    ``phi``: ``Φ`` ``(R, D)``; ``tokens``: ``e(x)`` per code ``(k+2, p+3)``.  ``leak``
    (maps ``c_t max(0, s)``: ReLU, ReLU/length) adds ``leak · c_t min(s, 0)`` to the
    weights: the leaky surrogate that has a gradient where every score is negative.  A
    pure function of ``params``.
    """
    A = score_matrices(params)
    H = A.shape[0]
    amap = MAPS[kind]
    mp = params.get("map_params")
    if mp is None:
        mp = jnp.broadcast_to(jnp.asarray(amap.default_params(), dtype=A.dtype),
                              (H, len(amap.param_names)))
    gated = "gate_w" in params
    gate_w = params["gate_w"] if gated else jnp.zeros((H, phi.shape[1]), dtype=A.dtype)
    gate_c = params["gate_c"] if gated else jnp.zeros((H,), dtype=A.dtype)
    weights_of = amap.weights_jax
    valid, depth = data["valid"], data["depth"]

    def head(A_h: jax.Array, U_h: jax.Array, mp_h: jax.Array, w_h: jax.Array, c_h: jax.Array
             ) -> tuple[jax.Array, jax.Array, jax.Array, jax.Array]:
        table = (phi @ A_h @ phi.T).reshape(-1)
        s = table[data["flat"]]  # (N, K)
        w = weights_of(s, valid, depth, mp_h)
        if amap.factorisation == "sum":  # c_t max(s, 0) - leak c_t max(-s, 0)
            w = w - leak * weights_of(-s, valid, depth, mp_h)
        values = (tokens @ U_h.T)[data["keys"]]  # (N, K, p)
        out = jnp.einsum("nk,nkp->np", w, values)
        if gated:
            g = jax.nn.sigmoid(phi[data["query_row"]] @ w_h + c_h)
        else:
            g = jnp.ones(s.shape[0], dtype=s.dtype)
        return s, w, g, g[:, None] * out

    s, w, g, out = jax.vmap(head)(A, params["U"], mp, gate_w, gate_c)
    return Forward(s, w, g, out.sum(axis=0))


def masked_logsumexp(x: jax.Array, mask: jax.Array) -> jax.Array:
    """``log Σ_{mask} exp(x)`` over the last axis, ``-inf`` for an empty mask, with a
    finite (zero) gradient there: the shift is the row's own maximum."""
    any_ = mask.any(axis=-1)
    safe = jnp.where(mask, x, -jnp.inf)
    m = jnp.where(any_, safe.max(axis=-1), 0.0)
    total = jnp.where(mask, jnp.exp(safe - m[..., None]), 0.0).sum(axis=-1)
    return jnp.where(any_, m + jnp.log(jnp.where(any_, total, 1.0)), -jnp.inf)


def bos_log_odds(s: jax.Array, valid: jax.Array) -> jax.Array:
    """Softmax BOS log-odds ``log α_0 - log(1 - α_0) = s_0 - logsumexp(s_{1:t})``, in the
    log domain (``+inf`` where no non-BOS key is visible)."""
    rest = valid.at[..., 0].set(False)
    return s[..., 0] - masked_logsumexp(s, rest)


def model_params(model: Any) -> Params:
    """The parameters of an :class:`~sinkproof.model.AttentionModel` as a :data:`Params`
    dict of numpy arrays (the gate only for gated maps)."""
    params = {"A": model.A, "U": model.U, "map_params": model.map_params}
    if model.gate_w is not None:
        params.update(gate_w=model.gate_w, gate_c=model.gate_c)
    return params


# ------------------------------------------------------------ stack forward
def stack_forward_details(params: dict, x: Any, kind: str, residual: bool
                          ) -> tuple[Any, Any, Any]:
    """:func:`stack_forward` plus the value norms ``||W_V x_k||`` ``(B, layers, heads, L)``.

    Besides ``wq, wk, wv, wo``: ``mp`` ``(layers, heads, P)``, the map's parameters (the
    sink logit or sigmoid bias ``b``; default the map's defaults), and for a gated map
    ``gw`` ``(layers, heads, n)``, ``gc`` ``(layers, heads)``: the gate
    ``g_i = σ(w_h·x_i + c_h)`` scales head ``h``'s weights (effective weights) at row ``i``.
    """
    amap = MAPS[kind]
    L = x.shape[-2]
    valid = jnp.tril(jnp.ones((L, L), dtype=bool))
    t = jnp.arange(L, dtype=x.dtype)
    weights, norms = [], []
    for layer in range(params["wq"].shape[0]):
        q = jnp.einsum("hij,blj->bhli", params["wq"][layer], x)
        k = jnp.einsum("hij,blj->bhli", params["wk"][layer], x)
        v = jnp.einsum("hij,blj->bhli", params["wv"][layer], x)
        s = jnp.einsum("bhid,bhkd->bhik", q, k)
        mp = params["mp"][layer][None, :, None, :] if "mp" in params else None
        w = amap.weights_jax(s, valid, t, mp)
        if "gw" in params:
            g = jax.nn.sigmoid(jnp.einsum("hj,blj->bhl", params["gw"][layer], x)
                               + params["gc"][layer][None, :, None])
            w = w * g[..., None]
        o = jnp.einsum("bhik,bhkd->bhid", w, v)
        o = jnp.transpose(o, (0, 2, 1, 3)).reshape(x.shape[0], L, -1)
        y = o @ params["wo"][layer].T
        x = x + y if residual else y
        weights.append(w)
        norms.append(jnp.sqrt((v * v).sum(axis=-1)))
    return x, jnp.stack(weights, axis=1), jnp.stack(norms, axis=1)


def stack_forward(params: dict, x: Any, kind: str, residual: bool) -> tuple[Any, Any]:
    """A layer stack of full-width heads on input rows ``x`` ``(B, L, n)`` in JAX:
    ``(out (B, L, n), w (B, layers, heads, L, L))``; the differentiable forward of stacks
    (``params``: ``wq, wk, wv`` ``(layers, heads, n, n)``, ``wo`` ``(layers, n, heads·n)``;
    optional map parameters and gate: :func:`paper_forward_details`)."""
    out, w, _ = stack_forward_details(params, x, kind, residual)
    return out, w


compiled_forward = jax.jit(forward, static_argnames=("kind",))
""":func:`forward`, compiled once per map, parameter structure and batch shape."""
