"""The one result of ``evaluate(model)``: error and attention measures over a family.

The measures are defined on the family of sequences, whatever model or path computed
them (the tabulated prefix kernels of a one-layer
:class:`~sinkproof.model.AttentionModel`, or the batched forward of any stack): the
maximum error over every position, and per head the BOS weight statistics over
non-trigger and trigger positions ``t >= 1``.  Both paths build this one type with the
same fields; the one figure only a path computes (an adversarial search) is marked.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .adversary import WorstCase
from .stack import StackModel
from .stats import SinkSummary, Stats
from .task import show_sequence


def head_shape(model: StackModel) -> tuple[int, ...]:
    """How a per-head measure is indexed: ``(H,)`` for a model with the one-layer API
    (:class:`~sinkproof.model.AttentionModel`, ``tabulated``), ``(layers, H)`` for any
    other stack; the index is the model's, whichever path evaluated it."""
    return (model.H,) if model.tabulated else (model.n_layers, model.H)


@dataclass(frozen=True)
class Evaluation(SinkSummary):
    """Error and attention measures of a model over a family (exhaustive) or a sample of it.

    Shared by every model and path:

    - ``max_error``: ``max ||f_t - y_t||_2`` over every position evaluated (0 included);
      ``worst`` = ``(sequence, t)`` where it occurs (the sequence in the task's
      user-facing form: on the family, its prefix through ``t``, on which the causal
      output at ``t`` alone depends); ``worst_output`` / ``worst_target`` there.
    - per head (arrays of :func:`head_shape`: ``(H,)`` for an
      :class:`~sinkproof.model.AttentionModel`, ``(layers, H)`` for a stack), at
      non-trigger / trigger positions ``t >= 1``, as :class:`~sinkproof.stats.Stats`
      (min, mean, max over (sequence, position) pairs): ``bos_*`` the BOS weight
      ``α_{t0}``; ``log_nonbos_*`` ``log Σ_{j>=1} α_tj`` (log domain, ``log(1 - α_{t0})``
      on the simplex); ``bos_share_*`` ``α_{t0} / Σ_j α_tj`` (equal to the BOS weight
      on the simplex; 0 where every weight vanishes); ``null_mass_*`` the weight on keys
      whose value ``v_j`` has norm ``<= eta`` (BOS included) plus the null slot of maps
      that have one (virtual slot, closed gate); for unnormalised maps, its share of the
      total weight.
    - ``n_sequences``; ``n_positions`` (float: (sequence, position) pairs, position 0
      included); ``n_prefixes``: prefix forwards run (the distinct prefixes, the empty
      one included, where the path deduplicates: the whole family on either path, given
      sequences on the tabulated path; on a stack's given or sampled sequences every
      position is run, so it equals their number of positions).
    - ``source``: ``"exhaustive"`` (the whole family), ``"sampled"`` (``n_sequences``
      seeded draws, ``seed``) or ``"given"``; off the whole family ``max_error`` is only a
      lower estimate of the worst case (see :attr:`method`).

    The one path-specific extra (``None`` elsewhere): ``adversarial`` (the stack path on
    continuous content, on request), the worst sequence an adversarial content search
    found (a lower estimate; :attr:`worst_error` is the larger of the two).

    ``StackEvaluation`` (:mod:`sinkproof.stackeval`) is this class under its earlier name.
    """

    model: StackModel
    max_error: float
    worst: tuple[Any, int]
    worst_output: np.ndarray
    worst_target: np.ndarray
    bos_nontrigger: Stats
    bos_trigger: Stats
    log_nonbos_nontrigger: Stats
    log_nonbos_trigger: Stats
    bos_share_nontrigger: Stats
    bos_share_trigger: Stats
    null_mass_nontrigger: Stats
    null_mass_trigger: Stats
    n_sequences: int
    n_positions: float
    n_prefixes: int
    source: str = "exhaustive"
    seed: int | None = None
    eta: float = field(default=1e-9)
    adversarial: WorstCase | None = None

    SHARED = ("max_error", "worst", "worst_output", "worst_target", "bos_nontrigger",
              "bos_trigger", "log_nonbos_nontrigger", "log_nonbos_trigger",
              "bos_share_nontrigger", "bos_share_trigger", "null_mass_nontrigger",
              "null_mass_trigger", "n_sequences", "n_positions", "n_prefixes", "source",
              "seed", "eta")
    """The fields every path fills with the same meaning (``adversarial`` alone may be
    ``None``: it is the one path-specific extra)."""

    # ----------------------------------------------------------- shared figures
    @property
    def worst_error(self) -> float:
        """The largest error found, by the evaluation or the adversarial search."""
        extra = self.adversarial.max_error if self.adversarial is not None else -1.0
        return max(self.max_error, extra)

    @property
    def exhaustive(self) -> bool:
        """The whole family was evaluated (``source == "exhaustive"``)."""
        return self.source == "exhaustive"

    @property
    def method(self) -> str:
        """What the figures are: exhaustive over the family, a seeded sample, or given."""
        if self.exhaustive:
            return f"exhaustive over the family ({self.n_sequences} sequences)"
        what = (f"sampled: {self.n_sequences} seeded sequences (seed {self.seed})"
                if self.source == "sampled" else f"{self.n_sequences} given sequences")
        if self.adversarial is not None:
            what += f" plus an {self.adversarial.method.split(':')[0]}"
        return f"{what}; the max error is a lower estimate of the worst case, not certified"

    @property
    def max_nonbos_nontrigger(self) -> np.ndarray:
        """Per head, the largest ``1 - α_{t0}`` at non-trigger positions (from the log domain;
        resolves deep sinks where ``sink_score`` rounds to 1)."""
        return np.exp(self.log_nonbos_nontrigger.max)

    @property
    def head_shape(self) -> tuple[int, ...]:
        """The shape of every per-head array (see :func:`head_shape`)."""
        return head_shape(self.model)

    def summary(self) -> dict[str, Any]:
        """The figures as plain Python values (for JSON): the shared ones, then the model's
        (``values``/``norm`` of an AttentionModel, ``residual`` of a stack)."""
        m = self.model
        seq, pos = self.worst
        out: dict[str, Any] = dict(kind=m.kind, layers=m.n_layers, heads=m.H)
        if m.tabulated:
            out.update(values=m.values, norm=m.spectral_norms.tolist())
        else:
            out.update(residual=m.residual)
        out.update(max_error=self.max_error, source=self.source, method=self.method,
                   seed=self.seed, worst_error=self.worst_error, worst_position=pos)
        if isinstance(seq, tuple) and all(isinstance(x, (int, np.integer)) for x in seq):
            out.update(worst=dict(sequence=[int(x) for x in seq], position=pos))
        out.update(
            sink_score=self.sink_score.tolist(),
            bos_nontrigger=self.bos_nontrigger.to_dict(),
            bos_trigger=self.bos_trigger.to_dict(),
            log_nonbos_nontrigger=self.log_nonbos_nontrigger.to_dict(),
            bos_share_nontrigger=self.bos_share_nontrigger.to_dict(),
            null_mass_nontrigger=self.null_mass_nontrigger.to_dict(),
        )
        out.update(n_sequences=self.n_sequences, n_positions=self.n_positions,
                   n_prefixes=self.n_prefixes)
        return out

    # ------------------------------------------------------------------ display
    def _props(self) -> Any:
        """The map's properties, or ``None`` for a stack of mixed maps."""
        return None if self.model.kind == "mixed" else self.model.attention_map.properties

    def __repr__(self) -> str:
        m = self.model
        seq, pos = self.worst
        f = lambda a: np.array2string(np.asarray(a), precision=6)  # noqa: E731
        props = self._props()
        deep = (f", max 1-α0={np.array2string(self.max_nonbos_nontrigger, precision=3)}"
                if props is not None and props.on_simplex else "")
        share = (f", BOS share={f(self.bos_share_nontrigger.mean)}"
                 if props is not None and _unnormalised(props) else "")
        layers = "" if m.tabulated else f", layers={m.n_layers}"
        where = f"{show_sequence(seq)}[t={pos}]" if m.tabulated else f"t={pos}"
        method = "" if self.exhaustive else f"; {self.method}"
        return (
            f"Evaluation({m.kind}, H={m.H}{layers}: max_error={self.max_error:.6g} "
            f"at {where}, sink_score={f(self.sink_score)}{deep}{share}, "
            f"BOS at triggers max={f(self.bos_trigger.max)}, "
            f"{self.n_sequences} sequences / {self.n_positions:g} positions{method})"
        )

    def _repr_markdown_(self) -> str:
        m = self.model
        props = self._props()
        relu = props is not None and _unnormalised(props)
        # Unnormalised weights (ReLU, sigmoid): the comparable figure is the BOS share.
        bos = self.bos_share_nontrigger if relu else self.bos_nontrigger
        trig = self.bos_share_trigger if relu else self.bos_trigger
        label = "BOS share" if relu else "BOS mass"
        null = self.null_mass_nontrigger
        rows = [f"| head | sink score | {label} min (non-trig) | max 1-α0 (non-trig) | "
                f"{label} max (trigger) | null mass |", "|---|---|---|---|---|---|"]
        deep = self.max_nonbos_nontrigger
        for idx in np.ndindex(*self.head_shape):
            name = ".".join(str(i) for i in idx)
            rows.append(
                f"| {name} | {self.sink_score[idx]:.6g} | {bos.min[idx]:.6g} | "
                f"{deep[idx]:.3g} | {trig.max[idx]:.6g} | {null.mean[idx]:.6g} |")
        seq, pos = self.worst
        where = f"`{show_sequence(seq)}`, t={pos}" if m.tabulated else f"t={pos}"
        layers = "" if m.tabulated else f", layers={m.n_layers}"
        method = "" if self.exhaustive else f"; {self.method}"
        runs = ("distinct prefixes" if self.exhaustive or m.tabulated else "prefix forwards")
        head = (f"**{m.kind}**, H={m.H}{layers}: max error **{self.max_error:.6g}** "
                f"at {where}; {self.n_sequences} sequences, "
                f"{self.n_positions:g} positions ({self.n_prefixes} {runs}){method}\n\n")
        return head + "\n".join(rows)


def _unnormalised(props: Any) -> bool:
    """Weights neither on the simplex nor completed by a null slot (ReLU, sigmoid)."""
    return not props.on_simplex and not props.null_slot


def _null_share(nm: np.ndarray, total: np.ndarray, properties: Any,
                positive: bool = False) -> np.ndarray:
    """Null mass from the mass on null keys ``nm`` and the total weight (see
    :func:`sinkproof.measures.null_mass`); ``positive``: every total is known to be positive."""
    if properties.on_simplex:
        return nm
    if properties.null_slot:
        return nm + np.maximum(1.0 - total, 0.0)
    if positive:
        return nm / total
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total > 0, nm / np.where(total > 0, total, 1.0), 0.0)
