"""Attention maps as objects: score vector -> attention weights, with declared properties.

A head at query position ``t`` has scores ``s_0..s_t`` on keys ``0..t`` (key 0 is
BOS) and turns them into weights ``α_0..α_t`` by one of the maps below.  Each map
states its mathematics as data (:class:`MapProperties`), so code that needs, say,
``Σ_j α_j = 1`` asks ``properties.on_simplex`` instead of naming maps:

==============  ==========================================================  ============
name            weights ``α_j``, ``j <= t``                                 parameters
==============  ==========================================================  ============
softmax         ``exp(s_j) / Σ_k exp(s_k)``                                 --
sink_logit      ``exp(s_j) / (exp(b) + Σ_k exp(s_k))``; a zero-valued       ``b``
                virtual slot takes the rest ``1 - Σ_j α_j``
softmax1        ``sink_logit`` with ``b = 0``                               --
sparsemax       Euclidean projection of ``s`` onto the simplex              --
entmax15        1.5-entmax: ``[s_j/2 - τ]_+^2`` with ``τ`` making the sum 1  --
sigmoid         ``σ(s_j + b)``                                              ``b``
relu            ``max(0, s_j)``                                             --
relu_length     ``max(0, s_j) / max(t, 1)``                                 --
gated_softmax   softmax; the head multiplies its output by a gate           -- (gate on
                ``g_t = σ(w·φ_t + c)`` computed from the query row ``φ_t``    the head)
stick_breaking  ``σ(s_j) Π_{j<l<=t} (1 - σ(s_l))``: keys from ``t`` down     --
                to 0 each take a share of what the more recent keys left;
                the remainder ``Π_{l<=t} (1 - σ(s_l))`` is a zero-valued null
==============  ==========================================================  ============

The float forward works in the log domain where it matters: the non-BOS mass
``Σ_{j>=1} α_j`` is returned as its logarithm, accurate when the BOS score
exceeds the rest by hundreds (where ``1 - α_0`` is far below float64 resolution
of ``α_0``), and no map overflows at scores of ``±1000``.  This module imports
numpy only; JAX is imported inside :meth:`AttentionMap.weights_jax` and mpmath inside
:meth:`AttentionMap.weights_mpmath` (the high-precision form, from the definition).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["MAPS", "AttentionMap", "MapProperties", "bos_measure", "get_map",
           "softmax_with_log_nonbos"]


@dataclass(frozen=True)
class MapProperties:
    """What a map guarantees, for every finite score vector.

    ``on_simplex``: ``Σ_{j<=t} α_j = 1``.  ``virtual_null``: a zero-valued virtual
    slot takes the mass ``1 - Σ_j α_j`` (which is then in ``(0, 1]``).
    ``exact_zeros``: some finite scores give weight exactly 0.  ``needs_positions``:
    averaging a prefix uniformly needs positional score features.  ``gated``: the
    head's output is multiplied by a query gate ``g_t = σ(w·φ_t + c)`` in ``(0, 1)``.
    ``own_key_local``: the query's own key gets a weight ``α_tt`` that is a function of its
    score ``s_tt`` (and the map's parameters) alone, whatever the other keys and ``t``.
    ``key_local``: so does every key (``α_tj`` a function of ``s_tj`` alone).
    ``sigmoid_bounded``: ``α_tj <= σ(s_tj + b)`` for every key, with equality at the query's
    own key (``b`` the map's parameter ``b``, 0 if it has none).
    ``stick_process``: the weights are the stick-breaking process from the most recent key
    down, ``α_tj = σ(s_tj) Π_{j<l<=t} (1 - σ(s_tl))`` (what the recency error floor needs).
    """

    on_simplex: bool
    virtual_null: bool
    exact_zeros: bool
    needs_positions: bool
    gated: bool
    own_key_local: bool = False
    key_local: bool = False
    sigmoid_bounded: bool = False
    stick_process: bool = False

    @property
    def null_slot(self) -> bool:
        """The head's effective weights sum to less than 1 and the rest acts as a zero value.

        True for a virtual slot and for a gate: ``g·Σ_j α_j v_j`` equals the output of
        weights ``g·α`` plus a slot of mass ``1 - g`` whose value is 0.
        """
        return self.virtual_null or self.gated


# --------------------------------------------------------------------- float helpers

def _log_sum_exp(s: np.ndarray) -> np.ndarray:
    """``log Σ exp`` over the last axis, shifted by the row maximum (``-inf`` for no entries)."""
    if s.shape[-1] == 0:
        return np.full(s.shape[:-1], -np.inf)
    m = s.max(axis=-1)
    safe_m = np.where(np.isfinite(m), m, 0.0)
    with np.errstate(divide="ignore"):
        return safe_m + np.log(np.exp(s - safe_m[..., None]).sum(axis=-1))


def softmax_with_log_nonbos(s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Softmax over the last axis and ``log Σ_{j>=1} α_j`` in the log domain.

    One pass of ``exp`` serves both; rows where the non-BOS sum falls below
    float64's normal range (a BOS logit hundreds above the rest) are redone with
    their own shift, so ``log(1 - α_0)`` stays accurate however strong the sink.
    Entries of ``-inf`` are masked keys (weight 0).
    """
    m = s.max(axis=-1, keepdims=True)
    e = np.exp(s - m)
    z = e.sum(axis=-1)
    rest = e[..., 1:].sum(axis=-1)
    w = e / z[..., None]
    with np.errstate(divide="ignore"):
        log_nonbos = np.log(rest) - np.log(z)
    tiny = rest < 1e-290
    if np.any(tiny):  # rows whose non-BOS keys are all masked have the right -inf already
        tiny &= np.isfinite(s[..., 1:]).any(axis=-1)
        if np.any(tiny):
            log_nonbos[tiny] = _log_sum_exp(s[tiny][..., 1:]) - _log_sum_exp(s[tiny])
    return w, log_nonbos


def _log_sum(w: np.ndarray) -> np.ndarray:
    """``log Σ_{j>=1} w_j`` for nonnegative weights (``-inf`` where the sum is 0)."""
    with np.errstate(divide="ignore"):
        return np.log(w[..., 1:].sum(axis=-1))


def _log_sigmoid(x: np.ndarray) -> np.ndarray:
    """``log σ(x) = -log(1 + e^{-x})`` without overflow (``-inf`` at ``x = -inf``)."""
    return -np.logaddexp(0.0, -x)


def _head_param(params: np.ndarray, i: int, ndim: int) -> np.ndarray:
    """Column ``i`` of ``(H, P)`` parameters, shaped to broadcast against ``(H, ...)``."""
    return params[:, i].reshape((-1,) + (1,) * (ndim - 1))


def _projection_threshold(z: np.ndarray, power: int) -> np.ndarray:
    """``τ`` with ``Σ_j [z_j - τ]_+^power = 1`` over the last axis (power 1 or 2).

    Sort-based and exact up to rounding: the support is the largest ``k`` whose
    threshold computed from the ``k`` largest entries lies below the ``k``-th
    entry; ``τ`` is then recomputed from the support with centred sums.  ``z``
    must hold no ``-inf``; entries below ``max z - 1`` never enter the support.
    """
    srt = -np.sort(-z, axis=-1)
    k = np.arange(1, z.shape[-1] + 1, dtype=float)
    csum = np.cumsum(srt, axis=-1)
    if power == 1:
        tau = (csum - 1.0) / k
    else:
        mean = csum / k
        ss = np.cumsum(srt * srt, axis=-1) - k * mean * mean
        tau = mean - np.sqrt(np.maximum((1.0 - ss) / k, 0.0))
    support = (tau <= srt).sum(axis=-1, keepdims=True)  # >= 1: tau_1 = max - 1
    inside = k <= support
    n = support[..., 0].astype(float)
    mean = np.where(inside, srt, 0.0).sum(axis=-1) / n
    if power == 1:
        return mean - 1.0 / n
    dev = np.where(inside, srt - mean[..., None], 0.0)
    ss = (dev * dev).sum(axis=-1)
    return mean - np.sqrt(np.maximum((1.0 - ss) / n, 0.0))


def _filled(s: np.ndarray, gap: float) -> tuple[np.ndarray, np.ndarray]:
    """Scores shifted so their maximum is 0, masked (``-inf``) keys set to ``-gap``."""
    m = s.max(axis=-1, keepdims=True)
    valid = np.isfinite(s)
    return np.where(valid, s - m, -gap), valid


# --------------------------------------------------------------------- the maps

class AttentionMap:
    """One attention map: float forward (numpy), differentiable forward (JAX), properties.

    Subclasses set ``name``, ``properties``, ``param_names`` and implement
    :meth:`_forward` and :meth:`_forward_jax`.
    """

    name: str = ""
    properties: MapProperties
    param_names: tuple[str, ...] = ()
    factorisation: str | None = None
    """How a row's weights split into per-key terms (for the tree evaluator):
    ``"normalised"``: ``α_j = exp(ℓ_j) / (Σ_k exp(ℓ_k) [+ exp(b)])``; ``"log_sum"``:
    ``α_j = exp(ℓ_j)``; ``"sum"``: ``α_j = w_j``; ``None``: the weights need the whole
    row (sparsemax, entmax: a sort)."""

    def default_params(self) -> np.ndarray:
        """Default per-head parameters, shape ``(len(param_names),)`` (all zero)."""
        return np.zeros(len(self.param_names))

    def check_params(self, params: Any, heads: int) -> np.ndarray:
        """``params`` as a fresh ``(heads, P)`` float array; ``None`` gives the defaults."""
        P = len(self.param_names)
        if isinstance(params, np.ndarray) and params.shape == (heads, P) and \
                params.dtype == np.float64 and not params.flags.writeable and \
                np.all(np.isfinite(params)):
            return params  # read-only and valid (a model's parameters): no copy needed
        if params is None:
            return np.broadcast_to(self.default_params(), (heads, P)).copy()
        try:
            arr = np.array(params, dtype=float)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"map_params for {self.name} must be numeric: {exc}") from None
        if arr.ndim == 1 and arr.shape[0] == P:
            arr = np.broadcast_to(arr, (heads, P)).copy()
        if arr.shape != (heads, P):
            names = ", ".join(self.param_names) or "none"
            raise ValueError(f"map_params for {self.name} must have shape ({heads}, {P}) "
                             f"(parameters: {names}), got {arr.shape}")
        if not np.all(np.isfinite(arr)):
            raise ValueError(f"map_params for {self.name} contain non-finite values")
        return arr

    def weights(self, s: np.ndarray, t: Any, params: np.ndarray | None = None
                ) -> tuple[np.ndarray, np.ndarray]:
        """Float forward at query position ``t`` (an int, or an array broadcasting to ``(N,)``).

        ``s``: scores ``(H, N, K)`` on keys ``0..K-1`` (key 0 = BOS; ``-inf`` marks a
        masked key); ``params``: ``(H, P)`` (default: the map's defaults).  Returns
        the weights ``(H, N, K)`` (0 at masked keys) and ``log Σ_{j>=1} α_j``
        ``(H, N)``, computed in the log domain (``-inf`` where that mass is 0).
        """
        s = np.asarray(s, dtype=float)
        if s.ndim != 3:
            raise ValueError(f"scores must have shape (H, N, K), got {s.shape}")
        params = self.check_params(params, s.shape[0])
        t = np.asarray(t, dtype=float)
        return self._forward(s, t, params)

    def weights_only(self, s: np.ndarray, t: Any, params: np.ndarray | None = None
                     ) -> np.ndarray:
        """The weights of :meth:`weights` alone (maps may skip the log-domain mass)."""
        return self.weights(s, t, params)[0]

    def _forward(self, s: np.ndarray, t: np.ndarray, params: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray]:
        raise NotImplementedError

    def key_terms(self, s: np.ndarray, t: int, params: np.ndarray) -> np.ndarray:
        """Per-key terms of scores ``s`` ``(H, ...)`` at query position ``t``: log-weights
        ``ℓ_j`` (``"normalised"``, ``"log_sum"``) or weights ``w_j`` (``"sum"``)."""
        raise NotImplementedError(f"the {self.name} map has no per-key factorisation")

    def null_logit(self, params: np.ndarray) -> np.ndarray | None:
        """Logit ``b`` ``(H,)`` of a zero-valued virtual slot in the normaliser, if any."""
        return None

    def weights_jax(self, s: Any, valid: Any, t: Any, params: Any = None) -> Any:
        """Differentiable JAX forward.

        ``s``: ``(..., K)`` scores over padded keys; ``valid``: boolean ``(..., K)`` causal
        mask (key 0 always valid); ``t``: ``(...)`` query position; ``params``:
        ``(..., P)`` broadcastable (default: the map's defaults).  Returns weights
        ``(..., K)``, exactly 0 at invalid keys.  Runs in the caller's JAX precision.
        """
        import jax.numpy as jnp

        s = jnp.asarray(s)
        valid = jnp.asarray(valid, dtype=bool)
        if params is None:
            params = jnp.asarray(self.default_params(), dtype=s.dtype)
        params = jnp.asarray(params, dtype=s.dtype)
        t = jnp.asarray(t, dtype=s.dtype)
        w = self._forward_jax(jnp, s, valid, t, params)
        return jnp.where(valid, w, 0.0)

    def _forward_jax(self, jnp: Any, s: Any, valid: Any, t: Any, params: Any) -> Any:
        raise NotImplementedError

    def log_weights_jax(self, s: Any, valid: Any, t: Any, params: Any = None) -> Any:
        """``log α_j`` in JAX, arguments as :meth:`weights_jax` (``-inf`` at invalid keys and
        at exact zeros).  This default takes the log of the weights; maps whose weights can
        fall below float range at finite scores override it with their log-domain form."""
        import jax.numpy as jnp

        w = self.weights_jax(s, valid, t, params)
        return jnp.where(w > 0, jnp.log(jnp.where(w > 0, w, 1.0)), -jnp.inf)

    def weights_mpmath(self, s: list[Any], t: int, params: list[Any]) -> list[Any]:
        """The weights ``α_0..α_t`` (before any gate) at mpmath scores ``s`` of keys
        ``0..t`` and mpmath parameters, from the map's definition at the caller's precision."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<attention map {self.name}>"


def _jax_masked_max(jnp: Any, s: Any, valid: Any) -> Any:
    return jnp.max(jnp.where(valid, s, -jnp.inf), axis=-1, keepdims=True)


def _jax_softmax(jnp: Any, s: Any, valid: Any, extra: Any = None) -> Any:
    """Masked softmax; ``extra`` (broadcasting to ``(...)``) is one more logit, a virtual slot."""
    m = _jax_masked_max(jnp, s, valid)
    if extra is not None:
        m = jnp.maximum(m, extra[..., None])
    e = jnp.where(valid, jnp.exp(jnp.where(valid, s, m) - m), 0.0)
    z = e.sum(axis=-1, keepdims=True)
    if extra is not None:
        z = z + jnp.exp(extra[..., None] - m)
    return e / z


def _jax_threshold_map(jnp: Any, s: Any, valid: Any, power: int) -> Any:
    """Sparsemax (power 1) or 1.5-entmax (power 2, on ``s/2``) with masked keys."""
    z = s - _jax_masked_max(jnp, s, valid)
    if power == 2:
        z = z / 2.0
    z = jnp.where(valid, z, -2.0)  # below max - 1: never in the support
    srt = -jnp.sort(-z, axis=-1)
    k = jnp.arange(1, z.shape[-1] + 1, dtype=z.dtype)
    csum = jnp.cumsum(srt, axis=-1)
    if power == 1:
        tau_k = (csum - 1.0) / k
    else:
        mean = csum / k
        ss = jnp.cumsum(srt * srt, axis=-1) - k * mean * mean
        tau_k = mean - jnp.sqrt(jnp.maximum((1.0 - ss) / k, 0.0))
    support = jnp.sum(tau_k <= srt, axis=-1, keepdims=True)
    inside = k <= support
    n = support.astype(z.dtype)
    mean = jnp.sum(jnp.where(inside, srt, 0.0), axis=-1, keepdims=True) / n
    if power == 1:
        tau = mean - 1.0 / n
        return jnp.maximum(z - tau, 0.0)
    dev = jnp.where(inside, srt - mean, 0.0)
    ss = jnp.sum(dev * dev, axis=-1, keepdims=True)
    tau = mean - jnp.sqrt(jnp.maximum((1.0 - ss) / n, 1e-300))
    return jnp.maximum(z - tau, 0.0) ** 2


def _mp_softmax(s: list[Any], extra: list[Any]) -> list[Any]:
    """``exp(s_j) / Σ exp`` over ``s`` and ``extra`` (virtual slots, dropped), in mpmath."""
    import mpmath

    m = max([*s, *extra])
    z = mpmath.fsum(mpmath.exp(x - m) for x in [*s, *extra])
    return [mpmath.exp(x - m) / z for x in s]


def _mp_threshold(x: list[Any], power: int) -> Any:
    """``τ`` with ``Σ_j [x_j - τ]_+^power = 1`` (power 1: sparsemax; 2: entmax-1.5 on
    ``s/2``), from the largest support whose threshold lies below its smallest member."""
    import mpmath

    srt = sorted(x, reverse=True)
    tau = srt[0] - 1
    total = sq = mpmath.mpf(0)
    for k, v in enumerate(srt, start=1):
        total += v
        sq += v * v
        mean = total / k
        if power == 1:
            cand = mean - mpmath.mpf(1) / k
        else:
            delta = (1 - (sq - k * mean * mean)) / k
            if delta < 0:
                break
            cand = mean - mpmath.sqrt(delta)
        if cand <= v:
            tau = cand
    return tau


class Softmax(AttentionMap):
    name = "softmax"
    properties = MapProperties(on_simplex=True, virtual_null=False, exact_zeros=False,
                               needs_positions=False, gated=False)

    factorisation = "normalised"

    def _forward(self, s, t, params):
        return softmax_with_log_nonbos(s)

    def key_terms(self, s, t, params):
        return s

    def weights_only(self, s, t, params=None):
        s = np.asarray(s, dtype=float)
        e = np.exp(s - s.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)

    def _forward_jax(self, jnp, s, valid, t, params):
        return _jax_softmax(jnp, s, valid)

    def weights_mpmath(self, s, t, params):
        return _mp_softmax(s, [])


class GatedSoftmax(Softmax):
    """Softmax weights; the output gate ``g_t`` is a parameter of the head, applied by the model."""

    name = "gated_softmax"
    properties = MapProperties(on_simplex=False, virtual_null=False, exact_zeros=False,
                               needs_positions=False, gated=True)


class SinkLogit(AttentionMap):
    """Softmax over ``(b, s_0, ..., s_t)`` with the slot of logit ``b`` dropped (its value is 0)."""

    name = "sink_logit"
    properties = MapProperties(on_simplex=False, virtual_null=True, exact_zeros=False,
                               needs_positions=False, gated=False)
    param_names = ("b",)

    def _logit(self, params: np.ndarray, ndim: int) -> np.ndarray:
        return _head_param(params, 0, ndim)

    factorisation = "normalised"

    def key_terms(self, s, t, params):
        return s

    def null_logit(self, params):
        return self._logit(params, 1)

    def _forward(self, s, t, params):
        b = self._logit(params, s.ndim)[..., 0]
        m = np.maximum(s.max(axis=-1), b)  # finite: b is finite
        e = np.exp(s - m[..., None])
        z = e.sum(axis=-1) + np.exp(b - m)  # >= 1: the largest term is exp(0)
        # log Σ_{j>=1} α_j = LSE(s_1..t) - LSE(b, s_0..t)
        return e / z[..., None], _log_sum_exp(s[..., 1:]) - (m + np.log(z))

    def _forward_jax(self, jnp, s, valid, t, params):
        b = jnp.broadcast_to(params[..., 0], s.shape[:-1]) if params.shape[-1] else \
            jnp.zeros(s.shape[:-1], s.dtype)
        return _jax_softmax(jnp, s, valid, extra=b)

    def weights_mpmath(self, s, t, params):
        return _mp_softmax(s, [params[0]])


class Softmax1(SinkLogit):
    """The sink logit fixed at ``b = 0``: ``exp(s_j) / (1 + Σ_k exp(s_k))``."""

    name = "softmax1"
    param_names = ()

    def _logit(self, params, ndim):
        return np.zeros((params.shape[0],) + (1,) * (ndim - 1))

    def weights_mpmath(self, s, t, params):
        import mpmath

        return _mp_softmax(s, [mpmath.mpf(0)])


class Sparsemax(AttentionMap):
    name = "sparsemax"
    properties = MapProperties(on_simplex=True, virtual_null=False, exact_zeros=True,
                               needs_positions=False, gated=False)
    power = 1
    scale = 1.0

    def _forward(self, s, t, params):
        z, valid = _filled(s, 4.0)
        z = z / self.scale
        tau = _projection_threshold(z, self.power)
        w = np.where(valid, np.maximum(z - tau[..., None], 0.0) ** self.power, 0.0)
        return w, _log_sum(w)

    def _forward_jax(self, jnp, s, valid, t, params):
        return _jax_threshold_map(jnp, s, valid, self.power)

    def weights_mpmath(self, s, t, params):
        import mpmath

        x = [v / self.scale for v in s]
        tau = _mp_threshold(x, self.power)
        return [max(mpmath.mpf(0), v - tau) ** self.power for v in x]


class Entmax15(Sparsemax):
    """``α_j = [s_j/2 - τ]_+^2`` with ``Σ_j α_j = 1`` (the 1.5-entmax of Peters et al.)."""

    name = "entmax15"
    power = 2
    scale = 2.0


class Sigmoid(AttentionMap):
    name = "sigmoid"
    properties = MapProperties(on_simplex=False, virtual_null=False, exact_zeros=False,
                               needs_positions=False, gated=False, own_key_local=True,
                               key_local=True, sigmoid_bounded=True)
    param_names = ("b",)

    factorisation = "log_sum"

    def key_terms(self, s, t, params):
        return _log_sigmoid(s + _head_param(params, 0, s.ndim))

    def _forward(self, s, t, params):
        log_w = _log_sigmoid(s + _head_param(params, 0, s.ndim))
        return np.exp(log_w), _log_sum_exp(log_w[..., 1:])

    def _forward_jax(self, jnp, s, valid, t, params):
        import jax

        return jax.nn.sigmoid(jnp.where(valid, s, 0.0) + params[..., 0, None])

    def weights_mpmath(self, s, t, params):
        import mpmath

        return [1 / (1 + mpmath.exp(-(x + params[0]))) for x in s]


class Relu(AttentionMap):
    name = "relu"
    properties = MapProperties(on_simplex=False, virtual_null=False, exact_zeros=True,
                               needs_positions=True, gated=False, own_key_local=True,
                               key_local=True)

    factorisation = "sum"

    def key_terms(self, s, t, params):
        return np.maximum(s, 0.0)

    def _forward(self, s, t, params):
        w = np.maximum(s, 0.0)  # max(-inf, 0) = 0 at masked keys
        return w, _log_sum(w)

    def _forward_jax(self, jnp, s, valid, t, params):
        return jnp.maximum(jnp.where(valid, s, 0.0), 0.0)

    def weights_mpmath(self, s, t, params):
        import mpmath

        return [max(mpmath.mpf(0), x) for x in s]


class ReluLength(AttentionMap):
    """``max(0, s_j) / max(t, 1)``: ReLU divided by the number of non-BOS keys."""

    name = "relu_length"
    properties = MapProperties(on_simplex=False, virtual_null=False, exact_zeros=True,
                               needs_positions=False, gated=False)

    factorisation = "sum"

    def key_terms(self, s, t, params):
        return np.maximum(s, 0.0) / max(t, 1)

    def _forward(self, s, t, params):
        length = np.maximum(np.broadcast_to(t, s.shape[1:-1]), 1.0)[..., None]
        w = np.maximum(s, 0.0) / length
        return w, _log_sum(w)

    def _forward_jax(self, jnp, s, valid, t, params):
        return jnp.maximum(jnp.where(valid, s, 0.0), 0.0) / jnp.maximum(t, 1.0)[..., None]

    def weights_mpmath(self, s, t, params):
        import mpmath

        return [max(mpmath.mpf(0), x) / max(t, 1) for x in s]


class StickBreaking(AttentionMap):
    """Stick-breaking attention (Tan et al., 2025, the query's own key included).

    With keys taken from the most recent, ``t``, down to BOS, key ``j`` takes the share
    ``σ(s_j)`` of what the keys after it left: ``α_j = σ(s_j) Π_{j<l<=t} (1 - σ(s_l))``.
    The weights lie under the simplex, ``Σ_j α_j = 1 - Π_{l<=t} (1 - σ(s_l))``, and the
    remainder acts as a zero-valued null slot (never exactly 0 at finite scores).  Computed
    in the log domain: ``log α_j = log σ(s_j) + Σ_{j<l<=t} log σ(-s_l)``.  A key's weight
    depends on the scores of the keys after it, so the weights do not split into per-key
    terms (``factorisation = None``); only the query's own key is weighed by its own score
    alone (``α_t = σ(s_t)``).
    """

    name = "stick_breaking"
    # uniform averaging needs σ(s_tl) = 1/l on the content key at position l: the key's
    # absolute position, which recency alone does not give
    properties = MapProperties(on_simplex=False, virtual_null=True, exact_zeros=False,
                               needs_positions=True, gated=False, own_key_local=True,
                               sigmoid_bounded=True, stick_process=True)

    @staticmethod
    def _log_weights(s: np.ndarray) -> np.ndarray:
        """``log α_j`` over the last axis (masked keys, ``-inf``, get ``-inf`` and leave
        the others' shares untouched: ``log σ(+inf) = 0``)."""
        keep = _log_sigmoid(-s)  # log(1 - σ(s_l)), 0 at masked keys
        after = np.cumsum(keep[..., ::-1], axis=-1)[..., ::-1]  # Σ_{l >= j}
        later = np.concatenate([after[..., 1:], np.zeros_like(after[..., :1])], axis=-1)
        return _log_sigmoid(s) + later  # Σ_{l > j}, without a subtraction

    def _forward(self, s, t, params):
        log_w = self._log_weights(s)
        return np.exp(log_w), _log_sum_exp(log_w[..., 1:])

    @staticmethod
    def _log_weights_jax(jnp: Any, s: Any, valid: Any) -> Any:
        import jax

        s = jnp.where(valid, s, 0.0)
        keep = jnp.where(valid, jax.nn.log_sigmoid(-s), 0.0)
        after = jnp.cumsum(keep[..., ::-1], axis=-1)[..., ::-1]
        later = jnp.concatenate([after[..., 1:], jnp.zeros_like(after[..., :1])], axis=-1)
        return jax.nn.log_sigmoid(s) + later

    def _forward_jax(self, jnp, s, valid, t, params):
        return jnp.exp(self._log_weights_jax(jnp, s, valid))

    def log_weights_jax(self, s, valid, t, params=None):
        import jax.numpy as jnp

        valid = jnp.asarray(valid, dtype=bool)
        return jnp.where(valid, self._log_weights_jax(jnp, jnp.asarray(s), valid), -jnp.inf)

    def weights_mpmath(self, s, t, params):
        import mpmath

        sig = [1 / (1 + mpmath.exp(-x)) for x in s]
        out, left = [], mpmath.mpf(1)
        for g in reversed(sig):  # from key t down to BOS
            out.append(g * left)
            left *= 1 - g
        return out[::-1]


MAPS: dict[str, AttentionMap] = {
    m.name: m
    for m in (Softmax(), SinkLogit(), Softmax1(), Sparsemax(), Entmax15(), Sigmoid(), Relu(),
              ReluLength(), GatedSoftmax(), StickBreaking())
}
"""Every attention map, by name."""


def get_map(name: Any) -> AttentionMap:
    """The map called ``name``, or a ValueError listing the names."""
    if not isinstance(name, str) or name not in MAPS:
        raise ValueError(f"unknown attention kind {name!r}; expected one of {', '.join(MAPS)}")
    return MAPS[name]


def bos_measure(kind: str) -> str:
    """``"weight"`` (``α_t0``, the mass) for a map on the simplex, ``"share"``
    (``α_t0 / Σ_k α_tk``) off it: the BOS measure of claims and witnesses."""
    return "weight" if MAPS[kind].properties.on_simplex else "share"
