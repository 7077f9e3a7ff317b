"""Hypothesis strategies for property-testing statements about attention sinks.

Every strategy draws small, valid objects with bounded finite parameters and
shrinks towards the simplest case (``p = 1``, ``T = 1``, signed content, inverse
positions, a single trigger family, zero parameters)::

    from hypothesis import given
    import sinkproof as sp
    from sinkproof import strategies as sps

    @given(sps.task_model_sequence(kind="softmax"))
    def test_weights_on_simplex(tms):
        task, model, seq = tms
        _, w = model.forward(seq)
        assert abs(w.sum(axis=-1) - 1).max() < 1e-9

Options that name a scheme (``content``, ``positions``, ``triggers``, ``kind``,
``values``) take one name, a list of names to choose from (the first is where
shrinking goes), a Hypothesis strategy, or ``None`` for every option.  The ``task``
of :func:`sequences`, :func:`models` and :func:`near_solutions` may be a task or a
strategy of tasks (``models(tasks(max_p=2))``); the sequences drawn from a strategy
of tasks come with their task, as ``(task, sequence)``.

Importing this module registers strategies for :func:`hypothesis.strategies.from_type`
(and so for ``st.builds`` and ``@given(x=...)`` inference): :class:`TriggerTask`
(:func:`tasks`), :class:`~sinkproof.PaperTask` (:func:`paper_tasks`),
:class:`AttentionModel` (a model on a drawn task) and
:class:`~sinkproof.modelclass.ModelClass` (:func:`model_classes`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

try:
    from hypothesis import strategies as st
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError("sinkproof.strategies needs Hypothesis: "
                      "pip install 'sinkproof[testing]'") from exc

from ._validate import as_int, as_real
from .attention import MAPS
from .constructions import relu_solution, softmax_solution
from .model import AttentionModel
from .modelclass import ModelClass
from .task import POSITION_SCHEMES, TRIG, TRIGGER_FAMILIES, TriggerTask
from .tasks import PaperTask
from .tasks.protocol import require

__all__ = [
    "CONTENT_OPTIONS",
    "VALUE_OPTIONS",
    "content_sets",
    "model_classes",
    "models",
    "near_solutions",
    "paper_tasks",
    "reproducible_repr",
    "sequences",
    "task_model_sequence",
    "tasks",
]

CONTENT_OPTIONS = ("signed", "gaussian", "custom")
"""Content sets ``tasks`` can draw: the signed basis, seeded gaussians, or drawn vectors."""

VALUE_OPTIONS = ("learned", "fixed")
"""Value maps ``models`` can draw: any bounded ``U``, or ``U_fix`` in every head."""

Option = str | Iterable[str] | st.SearchStrategy | None
TaskArg = TriggerTask | st.SearchStrategy
"""A task, or a strategy that draws tasks."""


def _task(draw: st.DrawFn, task: Any) -> TriggerTask:
    """``task`` itself, or one drawn from it when it is a strategy."""
    if isinstance(task, st.SearchStrategy):
        task = draw(task)
    if not isinstance(task, TriggerTask):
        require(task, "has_positions", "sinkproof.strategies (sequences of a trigger task)")
    return task

CLASSIC_KINDS = ("softmax", "relu")
"""The default kinds drawn (the two maps of the main result; pass ``kind`` for others)."""


def _option(name: str, value: Option, allowed: Sequence[str]) -> st.SearchStrategy:
    """A strategy over scheme names: ``None`` = all of ``allowed``; a name; names; a strategy."""
    if isinstance(value, st.SearchStrategy):
        return value
    names = list(allowed) if value is None else [value] if isinstance(value, str) else list(value)
    if not names:
        raise ValueError(f"{name}: give at least one option")
    for v in names:
        if not isinstance(v, str) or v not in allowed:
            raise ValueError(f"unknown {name} {v!r}; expected one of {', '.join(allowed)}")
    return st.sampled_from(names)


def _bounded_floats(bound: float) -> st.SearchStrategy[float]:
    return st.floats(-bound, bound, allow_nan=False, allow_infinity=False,
                     allow_subnormal=False)


def _bounded_arrays(shape: tuple[int, ...], bound: float) -> st.SearchStrategy[np.ndarray]:
    """Dense arrays with entries in ``[-bound, bound]``; each entry shrinks to 0 on its own."""
    size = int(np.prod(shape))
    return st.lists(_bounded_floats(bound), min_size=size, max_size=size).map(
        lambda xs: np.array(xs, dtype=np.float64).reshape(shape))


def _int_range(name: str, value: int | tuple[int, int]) -> tuple[int, int]:
    if isinstance(value, tuple):
        if len(value) != 2:
            raise ValueError(f"{name} must be an int or a (min, max) pair, got {value!r}")
        lo, hi = (as_int(name, v, minimum=1) for v in value)
    else:
        lo = hi = as_int(name, value, minimum=1)
    if lo > hi:
        raise ValueError(f"{name}: min {lo} exceeds max {hi}")
    return lo, hi


def content_sets(p: int, max_k: int = 4, bound: float = 2.0) -> st.SearchStrategy[np.ndarray]:
    """Custom content sets: ``(k, p)`` arrays, ``k <= max_k``, entries in ``[-bound, bound]``."""
    p = as_int("p", p, minimum=1)
    max_k = as_int("max_k", max_k, minimum=1)
    bound = as_real("bound", bound, minimum=0.0)
    return st.integers(1, max_k).flatmap(lambda k: _bounded_arrays((k, p), bound))


@st.composite
def tasks(
    draw: st.DrawFn,
    max_p: int = 3,
    max_T: int = 5,
    content: Option = None,
    positions: Option = None,
    triggers: Option = None,
    min_p: int = 1,
    min_T: int = 1,
) -> TriggerTask:
    """Trigger tasks with ``min_p <= p <= max_p`` and ``min_T <= T <= max_T``.

    ``content``: ``"signed"``, ``"gaussian"`` (k in ``1..2p``, a drawn seed) or
    ``"custom"`` (drawn vectors, see :func:`content_sets`).  ``positions``: a
    scheme of ``POSITION_SCHEMES``; ``triggers``: ``"single"`` or ``"multi"``.
    Keep ``max_p`` and ``max_T`` small when tests evaluate exhaustively: the
    family has about ``(2p+1)^T`` sequences.
    """
    min_p = as_int("min_p", min_p, minimum=1)
    min_T = as_int("min_T", min_T, minimum=1)
    max_p = as_int("max_p", max_p, minimum=min_p)
    max_T = as_int("max_T", max_T, minimum=min_T)
    p = draw(st.integers(min_p, max_p))
    T = draw(st.integers(min_T, max_T))
    scheme = draw(_option("content scheme", content, CONTENT_OPTIONS))
    pos = draw(_option("positional scheme", positions, POSITION_SCHEMES))
    trig = draw(_option("trigger family", triggers, TRIGGER_FAMILIES))
    if scheme == "gaussian":
        k = draw(st.integers(1, 2 * p))
        seed = draw(st.integers(0, 2**16))
        return TriggerTask(p, T, "gaussian", pos, trig, k=k, seed=seed)
    vectors: Any = draw(content_sets(p)) if scheme == "custom" else "signed"
    return TriggerTask(p, T, vectors, pos, trig)


@st.composite
def sequences(
    draw: st.DrawFn,
    task: TaskArg,
    min_length: int = 1,
    max_length: int | None = None,
    trigger: bool | None = None,
) -> Any:
    """Sequences of ``task``'s family (tokens after BOS, ``sp.TRIG`` for the trigger).

    Lengths lie in ``[min_length, max_length]`` (default ``max_length = T``).
    ``trigger``: ``True`` = at least one trigger, ``False`` = none, ``None`` = either.
    The single-trigger family gets at most one; the multi-trigger family any number.
    Shrinks towards ``(0,)`` (or ``(TRIG,)`` when a trigger is required).  With a
    strategy of tasks (``sequences(tasks())``) each example is ``(task, sequence)``
    (``max_length`` is then capped at the drawn ``T``).
    """
    if isinstance(task, st.SearchStrategy):
        drawn = _task(draw, task)
        cap = None if max_length is None else min(as_int("max_length", max_length, minimum=1),
                                                  drawn.T)
        return drawn, draw(sequences(drawn, min(min_length, drawn.T), cap, trigger))
    require(task, "has_positions", "sinkproof.strategies (sequences of a trigger task)")
    lo = as_int("min_length", min_length, minimum=1)
    hi = task.T if max_length is None else as_int("max_length", max_length, minimum=1)
    if not lo <= hi <= task.T:
        raise ValueError(f"lengths must satisfy 1 <= min_length <= max_length <= T={task.T}, "
                         f"got ({lo}, {hi})")
    if trigger is not None and not isinstance(trigger, bool):
        raise TypeError(f"trigger must be True, False or None, got {trigger!r}")
    content = st.integers(0, task.k - 1)
    if task.triggers == "multi" and trigger is not False:
        tokens = draw(st.lists(st.one_of(content, st.just(TRIG)), min_size=lo, max_size=hi))
        if trigger and TRIG not in tokens:
            tokens[draw(st.integers(0, len(tokens) - 1))] = TRIG
        return tuple(tokens)
    tokens = draw(st.lists(content, min_size=lo, max_size=hi))
    if trigger is None:
        where = draw(st.one_of(st.none(), st.integers(0, len(tokens) - 1)))
    elif trigger:
        where = draw(st.integers(0, len(tokens) - 1))
    else:
        where = None
    if where is not None:
        tokens[where] = TRIG
    return tuple(tokens)


@st.composite
def models(
    draw: st.DrawFn,
    task: TaskArg,
    kind: Option = None,
    heads: int | tuple[int, int] = 1,
    values: Option = None,
    scale: float | Sequence[float] = 3.0,
    value_scale: float = 2.0,
    model_class: ModelClass | None = None,
) -> AttentionModel:
    """Attention models on ``task`` with every score entry in ``[-scale, scale]``.

    ``kind``: a map name or names (default ``"softmax"``/``"relu"``); ``heads``: a count
    or an inclusive ``(min, max)`` range; ``values``: ``"learned"`` (entries of ``U`` in
    ``[-value_scale, value_scale]``) or ``"fixed"`` (``U_fix``).  ``scale`` may be
    a list of bounds to choose from, e.g. ``scale=(3.0, 200.0)`` mixes ordinary
    models with large-logit ones (logits up to ``scale * ||φ||_1^2``), which is
    where a sink's ``1 - α_0`` falls below float64 resolution.  ``model_class``
    (a :class:`~sinkproof.modelclass.ModelClass`) fixes kind, heads and values at once.
    ``task`` may be a strategy of tasks (``models(tasks())``; the model's ``task`` is the
    one drawn).
    """
    task = _task(draw, task)
    if model_class is not None:
        if not isinstance(model_class, ModelClass):
            raise TypeError(f"model_class must be a ModelClass, got {type(model_class).__name__}")
        kind, heads, values = model_class.maps, model_class.heads, model_class.values
    lo, hi = _int_range("heads", heads)
    scales = [scale] if isinstance(scale, (int, float)) else list(scale)
    if not scales:
        raise ValueError("scale: give at least one bound")
    scales = [as_real("scale", s, minimum=0.0) for s in scales]
    value_scale = as_real("value_scale", value_scale, minimum=0.0)
    the_kind = draw(_option("attention kind", CLASSIC_KINDS if kind is None else kind,
                            tuple(MAPS)))
    the_values = draw(_option("values", values, VALUE_OPTIONS))
    H = draw(st.integers(lo, hi))
    bound = draw(st.sampled_from(scales))
    A = draw(_bounded_arrays((H, task.D, task.D), bound))
    U = None
    if the_values == "learned":
        U = draw(_bounded_arrays((H, task.p, task.p + 3), value_scale))
    return AttentionModel(task, the_kind, A, U)


def model_classes(
    kind: Option = None,
    heads: int | tuple[int, int] = (1, 2),
    values: Option = None,
    positions: Option = None,
) -> st.SearchStrategy[ModelClass]:
    """Model classes (:class:`~sinkproof.modelclass.ModelClass`) with token-only values.

    ``positions`` ranges over the positional schemes and ``"any"``; shrinks to a
    one-head softmax class with learned values and inverse positions.
    """
    lo, hi = _int_range("heads", heads)
    return st.builds(
        ModelClass,
        kind=_option("attention kind", kind, CLASSIC_KINDS),
        heads=st.integers(lo, hi),
        values=_option("values", values, VALUE_OPTIONS),
        positions=_option("positions", positions, (*POSITION_SCHEMES, "any")),
    )


@st.composite
def near_solutions(
    draw: st.DrawFn,
    task: TaskArg,
    kind: Option = None,
    noise: float = 1e-3,
    max_L: float = 20.0,
) -> AttentionModel:
    """The explicit constructions with every entry of ``A`` moved by at most ``noise``.

    ``relu``: Theorem 4's head (needs ``inverse`` or ``onehot`` positions);
    ``softmax``: Theorem 5's head at a drawn ``L`` in ``[0, max_L]``.  These are the
    accurate models that make the sink bounds bite (random models have large error).
    ``task`` may be a strategy of tasks.
    """
    task = _task(draw, task)
    noise = as_real("noise", noise, minimum=0.0)
    max_L = as_real("max_L", max_L, minimum=0.0)
    allowed = CLASSIC_KINDS if task.positions != "none" else ("softmax",)
    the_kind = draw(_option("attention kind", kind, allowed))
    if the_kind == "relu":
        base = relu_solution(task)
    else:
        L = draw(st.floats(0.0, max_L, allow_nan=False, allow_subnormal=False))
        base = softmax_solution(task, L)
    delta = draw(_bounded_arrays(base.A.shape, noise))
    return base.replace(A=base.A + delta)


@st.composite
def task_model_sequence(
    draw: st.DrawFn,
    kind: Option = None,
    heads: int | tuple[int, int] = 1,
    values: Option = None,
    scale: float | Sequence[float] = 3.0,
    trigger: bool | None = None,
    **task_options: Any,
) -> tuple[TriggerTask, AttentionModel, tuple[int, ...]]:
    """A ``(task, model, sequence)``: ``task_options`` (``max_p``, ``max_T``, ``content``, ...)
    go to :func:`tasks`, the model options to :func:`models`, ``trigger`` to :func:`sequences`."""
    task = draw(tasks(**task_options))
    model = draw(models(task, kind=kind, heads=heads, values=values, scale=scale))
    seq = draw(sequences(task, trigger=trigger))
    return task, model, seq


@st.composite
def paper_tasks(
    draw: st.DrawFn,
    max_n: int = 6,
    max_L: int = 6,
    content: Option = None,
    residual: bool | None = None,
) -> PaperTask:
    """Tasks of the paper's setting: token dimension ``4 <= n <= max_n``, length
    ``3 <= L <= max_L``; ``content``: ``"uniform"``, ``"grid"`` (2 or 3 points per
    coordinate) or ``"custom"`` (1 to 3 drawn vectors in ``[-1, 1]``); ``residual``:
    ``None`` draws it.  Shrinks to ``n = 4, L = 3`` with uniform content."""
    max_n = as_int("max_n", max_n, minimum=4)
    max_L = as_int("max_L", max_L, minimum=3)
    n = draw(st.integers(4, max_n))
    L = draw(st.integers(3, max_L))
    scheme = draw(_option("content scheme", content, ("uniform", "grid", "custom")))
    res = draw(st.booleans()) if residual is None else bool(residual)
    if scheme == "grid":
        return PaperTask(n=n, L=L, content="grid", grid=draw(st.integers(2, 3)), residual=res)
    if scheme == "custom":
        vectors = draw(content_sets(n - 3, max_k=3, bound=1.0))
        return PaperTask(n=n, L=L, content=vectors, residual=res)
    return PaperTask(n=n, L=L, residual=res)


def reproducible_repr(model: AttentionModel) -> str:
    """Python text that rebuilds ``model`` exactly: ``AttentionModel.from_dict({...})``
    with every float written in full (``repr`` round-trips a float), so that a falsifying
    example can be pasted back into a shell."""
    return f"AttentionModel.from_dict({model.to_dict()!r})"


def _register() -> None:
    """Strategies for ``st.from_type``: small tasks and models, as :func:`tasks` and
    :func:`models` draw them; and a falsifying example's model printed by
    :func:`reproducible_repr` (the plain repr shows norms, not weights)."""
    from hypothesis.vendor.pretty import for_type_by_name

    st.register_type_strategy(TriggerTask, tasks())
    st.register_type_strategy(PaperTask, paper_tasks())
    st.register_type_strategy(AttentionModel, models(tasks()))
    st.register_type_strategy(ModelClass, model_classes())
    for_type_by_name(AttentionModel.__module__, AttentionModel.__qualname__,
                     lambda model, printer, cycle: printer.text(reproducible_repr(model)))


_register()
