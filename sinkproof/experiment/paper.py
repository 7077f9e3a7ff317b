"""The paper's training protocol, in its own setting (float32, JAX).

Models are the paper's stacks (every head full width, ``W_Q, W_K, W_V ∈ R^{n×n}`` per
head, one ``W_O ∈ R^{n×Hn}`` per layer, no biases, no ``1/√d``, causal; residual
connections when there is more than one layer).  Protocol: weights N(0, 0.02²); Adam
with betas (0.9, 0.95), no weight decay; lr ``1e-3`` (one layer) or ``1e-4``;
MSE; 128 fresh sequences per step (trigger position uniform in ``2..L-1``, content
Uniform(-1, 1)); at most 50 000 steps; stop as soon as a batch's largest absolute
error is below ``5e-3`` (measured before the update); seed 0.

Evaluation: ``n_eval`` seeded test sequences with the trigger at index 7 (position 8
counted from 1; ``L-1`` when ``L <= 8``): the largest absolute error, the mean and
standard deviation of every head's attention map, ``bos_nontrigger[l][h]``, the
mean BOS weight over the non-trigger rows ``i >= 1`` (row 0 sees BOS only), and
``bos_trigger[l][h]``, the mean BOS weight of the trigger row.

Every map of ``MAPS`` trains here: a map's own parameters (``mp``, ``(layers, heads, P)``:
the sink logit or sigmoid bias ``b``, starting at 0) and a gated map's gate (``gw``
``(layers, heads, n)``, ``gc`` ``(layers, heads)``, starting at 0) are learned with the
rest.  Weights are effective weights (a gated head's ``g_i α_ik``).  Off the simplex the
figures also give the BOS *share* ``α_i0 / Σ_k α_ik`` and the **null mass**: the null
slot (``1 - Σ_k α_ik`` of a virtual slot or a gate) plus the weight on keys whose value
``W_V x_k`` has norm ``<= NULL_ETA`` (as a share of the total weight for maps without a
slot whose weights need not sum to 1).
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from ..attention import MAPS
from ..autodiff import stack_forward as forward
from ..autodiff import stack_forward_details as forward_details
from ..tasks.paper import BOS, PaperTask
from .paperbounds import bound_check

KINDS = tuple(MAPS)
"""Every map trains in the paper's setting; the paper's own are :data:`PAPER_KINDS`."""
PAPER_KINDS = ("softmax", "relu_length")
SINK_LEVEL = 0.97
"""A head *sinks* when its mean BOS weight over non-trigger rows is at least this."""
NULL_ETA = 0.05
"""A key is null when its value ``W_V x_k`` has norm at most this."""


@dataclass(frozen=True)
class Protocol:
    """The paper's training protocol (defaults) and the evaluation set."""

    n: int = 16
    L: int = 16
    batch: int = 128
    max_steps: int = 50_000
    tol: float = 5e-3
    init_std: float = 0.02
    betas: tuple[float, float] = (0.9, 0.95)
    n_eval: int = 1000
    eval_seed: int = 12345

    def lr(self, layers: int) -> float:
        """``1e-3`` for one layer, ``1e-4`` for several."""
        return 1e-3 if layers == 1 else 1e-4

    @property
    def eval_trigger(self) -> int:
        return min(7, self.L - 1)


QUICK = Protocol(n=6, L=8, max_steps=40, n_eval=64)
CONFIGS = ((1, 1), (2, 2), (4, 4))
"""``(layers, heads)`` of the paper's figures."""


@dataclass
class Run:
    """One trained model: its configuration, stop and evaluation figures, its weights."""

    kind: str
    layers: int
    heads: int
    seed: int
    steps: int
    stopped: bool
    stop_batch_error: float
    max_abs_error: float
    bos_nontrigger: list[list[float]]
    bos_trigger: list[list[float]]
    sinks_per_layer: list[int]
    wall_s: float
    lr: float
    bound_check: dict[str, Any] = field(default_factory=dict)
    bos_share_nontrigger: list[list[float]] = field(default_factory=list)
    null_nontrigger: list[list[float]] = field(default_factory=list)
    params: dict[str, np.ndarray] = field(repr=False, default_factory=dict)
    mean_maps: np.ndarray | None = field(repr=False, default=None)
    std_maps: np.ndarray | None = field(repr=False, default=None)
    one_maps: np.ndarray | None = field(repr=False, default=None)

    def summary(self) -> dict[str, Any]:
        """The JSON-friendly record (no arrays)."""
        d = asdict(self)
        for key in ("params", "mean_maps", "std_maps", "one_maps"):
            d.pop(key)
        return d


def init_params(key: Any, layers: int, heads: int, n: int, std: float = 0.02,
                kind: str = "softmax") -> dict:
    """Weights N(0, std²): ``wq, wk, wv`` ``(layers, heads, n, n)``, ``wo`` ``(layers, n, Hn)``;
    for a map with parameters ``mp`` ``(layers, heads, P)`` at the map's defaults, and for a
    gated map ``gw`` ``(layers, heads, n)`` N(0, std²) and ``gc`` ``(layers, heads)`` 0."""
    import jax
    import jax.numpy as jnp

    kq, kk, kv, ko, kg = jax.random.split(key, 5)
    shape = (layers, heads, n, n)
    params = {"wq": std * jax.random.normal(kq, shape), "wk": std * jax.random.normal(kk, shape),
              "wv": std * jax.random.normal(kv, shape),
              "wo": std * jax.random.normal(ko, (layers, n, heads * n))}
    amap = MAPS[kind]
    if amap.param_names:
        params["mp"] = jnp.broadcast_to(jnp.asarray(amap.default_params(), jnp.float32),
                                        (layers, heads, len(amap.param_names)))
    if amap.properties.gated:
        params["gw"] = std * jax.random.normal(kg, (layers, heads, n))
        params["gc"] = jnp.zeros((layers, heads))
    return params


def batch(key: Any, size: int, n: int, L: int, residual: bool) -> tuple[Any, Any]:
    """``size`` fresh sequences and their targets (JAX): trigger uniform in ``2..L-1``."""
    import jax

    kj, kc = jax.random.split(key)
    j = jax.random.randint(kj, (size,), 2, L)
    content = jax.random.uniform(kc, (size, L - 1, n - 3), minval=-1.0, maxval=1.0)
    return assemble(content, j, n, L, residual)


def assemble(content: Any, j: Any, n: int, L: int, residual: bool) -> tuple[Any, Any]:
    """Token matrices and targets from content ``(B, L-1, n-3)`` and trigger positions."""
    import jax.numpy as jnp

    B = content.shape[0]
    is_trig = (jnp.arange(1, L)[None, :] == j[:, None]).astype(content.dtype)
    body = jnp.concatenate([jnp.zeros((B, L - 1, 1), content.dtype), is_trig[..., None],
                            content, (1.0 - is_trig)[..., None]], axis=-1)
    bos = jnp.zeros((B, 1, n), content.dtype).at[:, 0, BOS].set(1.0)
    x = jnp.concatenate([bos, body], axis=1)
    mean = jnp.cumsum(body, axis=1) / jnp.arange(1, L, dtype=content.dtype)[None, :, None]
    y_body = mean * is_trig[..., None]
    y = jnp.concatenate([jnp.zeros((B, 1, n), content.dtype), y_body], axis=1)
    return x, (x + y if residual else y)


def train(kind: str, layers: int, heads: int, seed: int = 0,
          protocol: Protocol = Protocol()) -> Run:
    """Train one model with the paper's protocol and evaluate it."""
    import jax
    import jax.numpy as jnp
    import optax

    if kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}, got {kind!r}")
    p = protocol
    residual = layers > 1
    lr = p.lr(layers)
    opt = optax.adam(lr, b1=p.betas[0], b2=p.betas[1])
    key = jax.random.PRNGKey(seed)
    key, kinit = jax.random.split(key)
    params = init_params(kinit, layers, heads, p.n, p.init_std, kind)

    def loss_fn(prm, x, y):
        out, _ = forward(prm, x, kind, residual)
        err = out - y
        return jnp.mean(err**2), jnp.max(jnp.abs(err))

    grad_fn = jax.value_and_grad(loss_fn, has_aux=True)

    def body(carry):
        prm, state, k, step, _, _ = carry
        k, kb = jax.random.split(k)
        x, y = batch(kb, p.batch, p.n, p.L, residual)
        (_, err), grads = grad_fn(prm, x, y)
        done = err < p.tol
        updates, new_state = opt.update(grads, state, prm)
        new_prm = optax.apply_updates(prm, updates)
        keep = lambda a, b: jax.tree_util.tree_map(  # noqa: E731
            lambda u, v: jnp.where(done, u, v), a, b)
        return (keep(prm, new_prm), keep(state, new_state), k,
                step + jnp.where(done, 0, 1), done, err)

    def cond(carry):
        return (~carry[4]) & (carry[3] < p.max_steps)

    start = time.perf_counter()
    init = (params, opt.init(params), key, jnp.asarray(0), jnp.asarray(False),
            jnp.asarray(jnp.inf, dtype=jnp.float32))
    params, _, _, steps, done, err = jax.jit(lambda c: jax.lax.while_loop(cond, body, c))(init)
    steps = int(steps)
    wall = time.perf_counter() - start
    host = {k: np.asarray(v) for k, v in params.items()}
    return evaluate(kind, layers, heads, seed, host, protocol, steps=steps,
                    stopped=bool(done), stop_error=float(err), wall_s=wall, lr=lr)


def null_figures(kind: str, w: np.ndarray, vnorm: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean BOS share and null mass per layer and head ``(layers, heads)`` over the rows of
    ``w`` ``(B, layers, heads, rows, L)`` (effective weights), by the map's properties."""
    props = MAPS[kind].properties
    total = w.sum(axis=-1)
    safe = np.where(total > 0, total, 1.0)
    share = np.where(total > 0, w[..., 0] / safe, 0.0)
    on_null = (w * (vnorm[:, :, :, None, :] <= NULL_ETA)).sum(axis=-1)
    if props.on_simplex or props.null_slot:  # the slot (if any) takes 1 - Σ_k α_ik
        null = on_null + (1.0 - total if props.null_slot else 0.0)
    else:
        null = np.where(total > 0, on_null / safe, 0.0)
    return share.mean(axis=(0, 3)), null.mean(axis=(0, 3))


def eval_set(protocol: Protocol) -> np.ndarray:
    """The seeded test sequences, float32 ``(n_eval, L, n)``, trigger at ``eval_trigger``."""
    task = PaperTask(n=protocol.n, L=protocol.L)
    return task.sample(protocol.n_eval, seed=protocol.eval_seed,
                       trigger_at=protocol.eval_trigger).astype(np.float32)


def evaluate(kind: str, layers: int, heads: int, seed: int, params: dict[str, np.ndarray],
             protocol: Protocol, *, steps: int, stopped: bool, stop_error: float,
             wall_s: float, lr: float) -> Run:
    """Error, attention maps and BOS statistics of trained weights on the test set."""
    import jax.numpy as jnp

    residual = layers > 1
    x = eval_set(protocol)
    task = PaperTask(n=protocol.n, L=protocol.L, residual=residual)
    y = task.row_targets(x.astype(float))
    out, w, vnorm = forward_details({k: jnp.asarray(v) for k, v in params.items()},
                                    jnp.asarray(x), kind, residual)
    out, w, vnorm = (np.asarray(a, dtype=float) for a in (out, w, vnorm))
    rows = [i for i in range(1, protocol.L) if i != protocol.eval_trigger]
    bos = w[:, :, :, rows, 0].mean(axis=(0, 3))
    share, null = null_figures(kind, w[:, :, :, rows], vnorm)
    held = bound_check(kind, layers, heads, params, x.astype(float), out, w, y,
                       protocol.eval_trigger)
    return Run(kind=kind, layers=layers, heads=heads, seed=seed, steps=steps, stopped=stopped,
               stop_batch_error=stop_error, max_abs_error=float(np.abs(out - y).max()),
               bos_nontrigger=bos.tolist(),
               bos_trigger=w[:, :, :, protocol.eval_trigger, 0].mean(axis=0).tolist(),
               sinks_per_layer=[int(np.sum(b >= SINK_LEVEL)) for b in bos],
               wall_s=wall_s, lr=lr, bound_check=held, bos_share_nontrigger=share.tolist(),
               null_nontrigger=null.tolist(), params=params, mean_maps=w.mean(axis=0),
               std_maps=w.std(axis=0), one_maps=w[0])


__all__ = ["CONFIGS", "KINDS", "NULL_ETA", "PAPER_KINDS", "QUICK", "SINK_LEVEL", "Protocol",
           "Run", "assemble", "batch", "eval_set", "evaluate", "forward", "forward_details",
           "init_params", "null_figures", "train"]
