"""The settings of one experiment: task instances, models, seeds, optimiser, data sizes; and
the training protocol of stacks on a task without positional features (:class:`Protocol`,
with the paper's protocol and a quick one as presets), as data."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields, replace
from typing import Any

from .._validate import as_int, as_real, choice
from ..model import KINDS
from ..task import CONTENT_SCHEMES, TriggerTask
from ..work import product

DEFAULT_KINDS = ("softmax", "relu")
"""The kinds of the documented experiment (any of :data:`~sinkproof.model.KINDS` may be run)."""

HELDOUT_SEED = 10_100
"""Seed of the held-out sequences (shared by every run; never used for training, nor looked
at while choosing settings: pilot runs used seeds 10_000 and 10_001)."""
LONGER_SEED = 10_101
"""Seed of the longer-than-trained sequences."""
PROBE_SEED = 20_000
"""Seed of the probe sequences on which BOS mass is recorded during training."""
TRAIN_SEED_OFFSET = 1_000
"""Training sequences of seed ``s`` use ``TRAIN_SEED_OFFSET + s``; initialisation uses ``s``."""


@dataclass(frozen=True)
class ExperimentConfig:
    """Every knob of :func:`sinkproof.experiment.run`; the presets are :meth:`default`,
    :meth:`quick` and :meth:`smoke`.

    Task: content dimension ``p``, trained length ``T``, content sets ``contents``
    (gaussian sets have ``2p`` vectors drawn with ``content_seed``), inverse positions;
    lengths ``T+1..longer_T`` test length generalisation.  Models: ``kinds`` x ``heads``,
    learned values, one run per seed in ``seeds``.  Optimiser: Adam with learning rate
    ``lr`` for ``steps`` steps on mini-batches of ``batch_size`` sequences drawn from a
    fixed training set of ``n_train`` sequences; initial entries of ``A`` and ``U`` are
    N(0, init_scale^2).  Measurement: ``n_heldout`` held-out sequences (lengths 1..T),
    ``n_longer`` longer ones, ``n_probe`` probe sequences for the BOS-mass history
    recorded every ``record_every`` steps; null mass counts keys whose value has norm
    ``<= eta``.
    """

    p: int = 4
    T: int = 16
    contents: tuple[str, ...] = ("signed", "gaussian")
    kinds: tuple[str, ...] = DEFAULT_KINDS
    heads: tuple[int, ...] = (1, 4)
    seeds: tuple[int, ...] = (0, 1, 2, 3, 4)
    steps: int = 500
    lr: float = 0.01
    batch_size: int = 32
    n_train: int = 2048
    init_scale: float = 0.02
    n_heldout: int = 512
    longer_T: int = 32
    n_longer: int = 256
    n_probe: int = 64
    record_every: int = 25
    eta: float = 0.05
    content_seed: int = 0

    def __post_init__(self) -> None:
        for name in ("p", "T", "steps", "batch_size", "n_train", "n_heldout", "n_longer",
                     "n_probe", "record_every"):
            as_int(name, getattr(self, name), minimum=1)
        as_int("content_seed", self.content_seed, minimum=0)
        if as_int("longer_T", self.longer_T, minimum=1) <= self.T:
            raise ValueError(f"longer_T must exceed T={self.T}, got {self.longer_T}")
        for name in ("lr", "init_scale"):
            as_real(name, getattr(self, name), minimum=0.0, strict=True)
        as_real("eta", self.eta, minimum=0.0)
        for name, options in (("contents", CONTENT_SCHEMES), ("kinds", KINDS)):
            values = getattr(self, name)
            if isinstance(values, str) or not tuple(values):
                raise TypeError(f"{name} must be a non-empty tuple of names")
            for v in values:
                choice(name[:-1], v, options)
            object.__setattr__(self, name, tuple(values))
        for name in ("heads", "seeds"):
            values = getattr(self, name)
            if isinstance(values, (str, int)) or not tuple(values):
                raise TypeError(f"{name} must be a non-empty tuple of integers")
            minimum = 1 if name == "heads" else 0
            object.__setattr__(self, name, tuple(as_int(name, v, minimum) for v in values))
        if self.batch_size > self.n_train:
            raise ValueError(f"batch_size {self.batch_size} exceeds n_train {self.n_train}")

    # ---------------------------------------------------------------- presets
    @classmethod
    def default(cls) -> ExperimentConfig:
        """The documented run: p=4, T=16, signed and gaussian content, H=1 and 4, 5 seeds."""
        return cls()

    @classmethod
    def quick(cls) -> ExperimentConfig:
        """A reduced run (signed content, 2 seeds, T=8, 300 steps) for examples."""
        return cls(T=8, contents=("signed",), seeds=(0, 1), steps=300, n_train=512,
                   n_heldout=256, longer_T=16, n_longer=128)

    @classmethod
    def smoke(cls) -> ExperimentConfig:
        """The smallest meaningful run (seconds), for tests."""
        return cls(p=2, T=4, contents=("signed",), heads=(1, 2), seeds=(0,), steps=40,
                   n_train=64, batch_size=16, n_heldout=32, longer_T=6, n_longer=16,
                   n_probe=8, record_every=10)

    # -------------------------------------------------------------- utilities
    def task(self, content: str, T: int | None = None) -> TriggerTask:
        """The task instance of a content set (at length ``T``, default the trained one)."""
        return TriggerTask(p=self.p, T=self.T if T is None else T, content=content,
                           positions="inverse", seed=self.content_seed)

    @property
    def n_runs(self) -> int:
        """Number of trained models."""
        return len(self.contents) * len(self.kinds) * len(self.heads) * len(self.seeds)

    def replace(self, **changes: Any) -> ExperimentConfig:
        """A copy with some settings changed."""
        return replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        for key, value in d.items():
            if isinstance(value, tuple):
                d[key] = list(value)
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ExperimentConfig:
        if not isinstance(d, dict):
            raise TypeError("an experiment configuration must be a mapping")
        known = {f.name for f in fields(cls)}
        unknown = set(d) - known
        if unknown:
            raise ValueError(f"unknown experiment settings: {', '.join(sorted(unknown))}")
        return cls(**{k: tuple(v) if isinstance(v, list) else v for k, v in d.items()})


@dataclass(frozen=True)
class Protocol:
    """A training protocol for stacks on a task without positional features, as data: the
    task's size (``n``, ``L``), fresh batches of ``batch`` sequences a step, at most
    ``max_steps`` steps, stop as soon as a batch's largest absolute error is below ``tol``
    (measured before the update), initial weights N(0, ``init_std``²), Adam with ``betas``
    and the learning rate of :meth:`lr`; evaluated on ``n_eval`` sequences seeded
    ``eval_seed``.  The defaults are the paper's protocol (:data:`PROTOCOLS`)."""

    n: int = 16
    L: int = 16
    batch: int = 128
    max_steps: int = 50_000
    tol: float = 5e-3
    init_std: float = 0.02
    betas: tuple[float, float] = (0.9, 0.95)
    n_eval: int = 1000
    eval_seed: int = 12345
    lr_one_layer: float = 1e-3
    lr_layers: float = 1e-4

    def lr(self, layers: int) -> float:
        """The learning rate: ``lr_one_layer`` for one layer (the paper's ``1e-3``),
        ``lr_layers`` for several (``1e-4``)."""
        return self.lr_one_layer if layers == 1 else self.lr_layers

    @property
    def eval_trigger(self) -> int:
        return min(7, self.L - 1)


QUICK = Protocol(n=6, L=8, max_steps=400, n_eval=64, lr_one_layer=1e-2, lr_layers=1e-3)
"""The quick preset (``sinkproof paper --quick``): a small task (``n = 6``, ``L = 8``), at
most 400 steps, learning rates ten times the paper's (``1e-2`` for one layer, ``1e-3`` for
several); one layer then stops at the tolerance within about 300 steps, the softmax head
sinking (mean non-trigger BOS weight about 0.999 over seeds 0..3) and ReLU/length not (0)."""
PAPER_PROTOCOL = Protocol()
"""The paper's protocol (the defaults)."""
PROTOCOLS: dict[str, Protocol] = {"paper": PAPER_PROTOCOL, "quick": QUICK}
"""The protocol presets by name: the paper's own, and the quick one."""
CONFIGS = ((1, 1), (2, 2), (4, 4))
"""``(layers, heads)`` of the paper's figures."""
QUICK_CONFIGS = ((1, 1),)
"""``(layers, heads)`` of the quick preset: the one layer of one head where the phenomenon
shows (``--configs 1x1,2x2`` adds the 2x2 figures, about half a minute more here)."""
PAPER_KINDS = ("softmax", "relu_length")
"""The paper's own attention maps (every map of ``MAPS`` trains)."""


def token_steps(config: ExperimentConfig) -> int:
    """Work of an experiment in token-steps: every run's training batches and evaluation
    sequences, counted token by token (saturated: no size makes it loop)."""
    c = config
    per_run = (product(c.steps, c.batch_size, c.T) + product(c.n_heldout + c.n_train, c.T)
               + product(c.n_longer, c.longer_T))
    return product(c.n_runs, per_run)
