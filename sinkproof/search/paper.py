"""Search in the paper's setting: a stack that is accurate with no BOS sink, by gradient
descent (float64, JAX).

The paper's models (every head full width, ``W_Q, W_K, W_V ∈ R^{n×n}`` per head, one
``W_O ∈ R^{n×Hn}`` per layer, no biases, no ``1/√d``, causal, residual connections when
there are several layers) are trained on the task's family -- every sequence when the
content set is finite and the family small enough (:data:`MAX_FAMILY`), else a stated
number of seeded sequences -- to minimise

    mean_t ||f_t - y_t||² / ε²  +  10 · mean_t max(0, ||f_t - y_t||²/ε² - 1/4)
        +  β · mean_{t non-trigger, l, h} max(0, α^{lh}_t0 - b/2)²

so that every position's error falls below ``ε/2`` while every head keeps its BOS measure
below half the claimed threshold ``b``.  Every map of ``MAPS`` trains: a map's own
parameters (the sink logit or sigmoid bias ``b``, from 0) and a gated map's gate
``σ(w·x + c)`` (``w`` seeded, ``c`` from 0) are learned with the weights.  The BOS
measure is :func:`bos_measure`: the BOS weight ``α_t0`` on the simplex, the BOS share
``α_t0 / Σ_k α_tk`` off it (0 when every weight is 0; a slot and a gate cancel in it), as
claims in both settings measure it.  Nothing found here is a proof of anything: a
found model becomes a refutation only after the trusted checker has verified it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import optax

from .._validate import as_int, as_real
from ..attention import MAPS
from ..autodiff import x64
from ..tasks.paper import BOS, TRIGGER, PaperTask
from ..tasks.protocol import require_setting
from ..work import SEARCH_MAX_WORK, product, refuse_beyond

MAX_FAMILY = 4096
"""Largest finite family trained on whole; beyond it a seeded sample is used."""
KINDS = tuple(MAPS)
CHUNK = 100
"""Steps between budget checks."""


def paper_forward_details(params: dict, x: Any, kind: str, residual: bool
                          ) -> tuple[Any, Any, Any]:
    """:func:`paper_forward` plus the value norms ``||W_V x_k||`` ``(B, layers, heads, L)``.

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


def paper_forward(params: dict, x: Any, kind: str, residual: bool) -> tuple[Any, Any]:
    """The paper's stack on token matrices ``x`` ``(B, L, n)`` in JAX: ``(out (B, L, n),
    w (B, layers, heads, L, L))``; the one differentiable forward of the paper's models
    (``params``: ``wq, wk, wv`` ``(layers, heads, n, n)``, ``wo`` ``(layers, n, heads·n)``;
    optional map parameters and gate: :func:`paper_forward_details`)."""
    out, w, _ = paper_forward_details(params, x, kind, residual)
    return out, w


@dataclass(frozen=True)
class PaperSearchResult:
    """The best model found: ``params`` (float64 weights, ``None`` if no restart ran),
    its largest error ``error`` over the training family and its largest BOS weight
    ``bos`` over non-trigger positions and heads; ``frontier``: ``(error, bos)`` of every
    restart; ``source``: ``"exhaustive"`` (the whole finite family) or ``"sampled"``."""

    params: dict[str, np.ndarray] | None
    error: float
    bos: float
    frontier: tuple[tuple[float, float], ...]
    restarts: int
    seconds: float
    source: str
    n_sequences: int

    def found(self, eps: float, b: float) -> bool:
        """Whether the best model meets ``error <= eps`` with BOS ``< b`` (in floats)."""
        return self.params is not None and self.error <= eps and self.bos < b


def training_family(task: PaperTask, samples: int, seed: int) -> tuple[np.ndarray, str]:
    """Token matrices ``(N, L, n)``: the whole finite family when small, else ``samples``
    seeded sequences; and which of the two (``"exhaustive"`` / ``"sampled"``)."""
    if task.finite and task.n_sequences <= MAX_FAMILY:
        m, L = task.m, task.L
        idx = np.indices((m,) * (L - 1)).reshape(L - 1, -1).T
        xs = [task.content[idx] for _ in range(L - 2)]
        rows = np.concatenate(xs)
        j = np.repeat(np.arange(2, L), idx.shape[0])
        return _assemble(task, rows, j), "exhaustive"
    return task.sample(samples, seed=seed), "sampled"


def _assemble(task: PaperTask, rows: np.ndarray, j: np.ndarray) -> np.ndarray:
    x = np.zeros((rows.shape[0], task.L, task.n))
    x[:, 0, BOS] = 1.0
    x[:, 1:, task.content_slice] = rows
    trig = np.arange(1, task.L)[None, :] == j[:, None]
    x[:, 1:, TRIGGER] = trig
    x[:, 1:, task.bias_index] = ~trig
    return x


def bos_measure(kind: str) -> str:
    """``"weight"`` (``α_t0``, the mass) for a map on the simplex, ``"share"``
    (``α_t0 / Σ_k α_tk``) off it: the BOS measure of claims and witnesses."""
    return "weight" if MAPS[kind].properties.on_simplex else "share"


def bos_values(w: Any, kind: str) -> Any:
    """The BOS measure of :func:`bos_measure` from weights ``(..., L, L)``: ``(..., L)``."""
    bos = w[..., 0]
    if bos_measure(kind) == "weight":
        return bos
    total = jnp.sum(w, axis=-1)
    pos = total > 0
    return jnp.where(pos, bos / jnp.where(pos, total, 1.0), 0.0)


def init_head_extras(key: Any, kind: str, layers: int, heads: int, n: int, std: float
                     ) -> dict[str, Any]:
    """A map's parameters ``mp`` ``(layers, heads, P)`` at its defaults, and a gated map's
    gate ``gw`` ``(layers, heads, n)`` N(0, std²) and ``gc`` ``(layers, heads)`` 0."""
    amap = MAPS[kind]
    out: dict[str, Any] = {}
    if amap.param_names:
        out["mp"] = jnp.broadcast_to(jnp.asarray(amap.default_params()),
                                     (layers, heads, len(amap.param_names)))
    if amap.properties.gated:
        out["gw"] = std * jax.random.normal(key, (layers, heads, n))
        out["gc"] = jnp.zeros((layers, heads))
    return out


def _fixed(n: int) -> tuple[np.ndarray, np.ndarray]:
    drop = np.eye(n)
    drop[BOS, BOS] = 0.0
    return drop[None, None], np.eye(n)[None]


def paper_search(task: PaperTask, kind: str, layers: int, heads: int, *, max_error: float,
                 max_bos_mass: float, values: str = "learned", restarts: int = 4,
                 steps: int = 1500, seed: int = 0, budget: float = 30.0, samples: int = 256,
                 lr: float = 1e-2, init_std: float = 0.3,
                 max_work: int | None = None) -> PaperSearchResult:
    """Look for a paper model with error ``<= max_error`` and BOS weight ``< max_bos_mass``
    at every non-trigger position, in every head (see the module docstring); at most
    ``restarts`` seeded restarts of ``steps`` Adam steps, stopping after ``budget``
    seconds.  ``values = "fixed"`` trains ``W_Q, W_K`` only (one head, one layer).
    ``max_work``: the most head evaluations (restarts x steps x positions x layers x heads;
    default :data:`~sinkproof.work.SEARCH_MAX_WORK`) before it refuses to start."""
    require_setting(task, "paper")
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}, got {kind!r}")
    layers = as_int("layers", layers, minimum=1)
    heads = as_int("heads", heads, minimum=1)
    restarts = as_int("restarts", restarts, minimum=1)
    steps = as_int("steps", steps, minimum=1)
    refuse_beyond("head evaluations of the search (restarts x steps x positions x layers x "
                  "heads)", product(restarts, steps, max(MAX_FAMILY, int(samples)), task.L,
                                    layers, heads), max_work, SEARCH_MAX_WORK)
    eps = as_real("max_error", max_error, minimum=0.0, strict=True)
    b = as_real("max_bos_mass", max_bos_mass, minimum=0.0, strict=True)
    fixed = values == "fixed"
    residual = layers > 1
    task = task.replace(residual=residual) if task.residual != residual else task
    x_np, source = training_family(task, samples, seed)
    y_np = task.row_targets(x_np)
    nontrig = (x_np[:, :, TRIGGER] == 0)
    nontrig[:, 0] = False
    start = time.perf_counter()
    frontier: list[tuple[float, float]] = []
    best: tuple[float, float, dict[str, np.ndarray]] | None = None
    done = 0
    with x64():
        x, y, mask = jnp.asarray(x_np), jnp.asarray(y_np), jnp.asarray(nontrig, dtype=x_np.dtype)
        fv, fo = (jnp.asarray(a) for a in _fixed(task.n))

        def full(p: dict) -> dict:
            return {**p, "wv": fv, "wo": fo} if fixed else p

        def measures(p: dict) -> tuple[Any, Any]:
            out, w = paper_forward(full(p), x, kind, residual)
            err = jnp.sum((out - y) ** 2, axis=-1)
            bos = bos_values(w, kind)  # (B, layers, heads, L)
            bos = jnp.transpose(bos, (1, 2, 0, 3)) * mask
            return err, bos

        def loss(p: dict) -> Any:
            err, bos = measures(p)
            e = err / eps**2
            sink = jnp.maximum(0.0, bos - b / 2) ** 2
            return (jnp.mean(e) + 10.0 * jnp.mean(jnp.maximum(0.0, e - 0.25))
                    + 100.0 * jnp.sum(sink) / jnp.maximum(1.0, jnp.sum(mask)))

        opt = optax.adam(lr)

        @jax.jit
        def chunk(p: dict, state: Any) -> tuple[dict, Any]:
            def body(_: int, c: tuple) -> tuple:
                prm, st = c
                g = jax.grad(loss)(prm)
                upd, st = opt.update(g, st, prm)
                return optax.apply_updates(prm, upd), st
            return jax.lax.fori_loop(0, CHUNK, body, (p, state))

        @jax.jit
        def summary(p: dict) -> tuple[Any, Any]:
            err, bos = measures(p)
            return jnp.sqrt(jnp.max(err)), jnp.max(bos)

        for r in range(restarts):
            if time.perf_counter() - start > budget:
                break
            key = jax.random.PRNGKey(seed * 1000 + r)
            ks = jax.random.split(key, 5)
            shape = (layers, heads, task.n, task.n)
            p = {"wq": init_std * jax.random.normal(ks[0], shape),
                 "wk": init_std * jax.random.normal(ks[1], shape),
                 **init_head_extras(ks[4], kind, layers, heads, task.n, init_std)}
            if not fixed:
                p["wv"] = init_std * jax.random.normal(ks[2], shape)
                p["wo"] = init_std * jax.random.normal(ks[3], (layers, task.n, heads * task.n))
            state = opt.init(p)
            for _ in range(max(1, steps // CHUNK)):
                p, state = chunk(p, state)
                if time.perf_counter() - start > budget:
                    break
            e, bmax = (float(v) for v in summary(p))
            done += 1
            if not np.isfinite(e):
                continue
            frontier.append((e, bmax))
            host = {k: np.asarray(v, dtype=float) for k, v in full(p).items()}
            rank = (0 if e <= eps else 1, bmax if e <= eps else e)
            if best is None or rank < (0 if best[0] <= eps else 1,
                                       best[1] if best[0] <= eps else best[0]):
                best = (e, bmax, host)
    frontier.sort()
    return PaperSearchResult(params=None if best is None else best[2],
                             error=np.inf if best is None else best[0],
                             bos=np.inf if best is None else best[1],
                             frontier=tuple(frontier), restarts=done,
                             seconds=round(time.perf_counter() - start, 2), source=source,
                             n_sequences=int(x_np.shape[0]))


__all__ = ["KINDS", "MAX_FAMILY", "PaperSearchResult", "bos_measure", "bos_values",
           "init_head_extras", "paper_forward", "paper_search", "training_family"]
