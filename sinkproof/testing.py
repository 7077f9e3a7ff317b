"""Pytest-friendly assertions about models and certificates, with informative failure messages.

A user's construction is checked in three lines::

    from sinkproof.testing import assert_no_sink, assert_solves
    model = my_construction(task)
    assert_solves(model, eps=1e-9); assert_no_sink(model, max_bos_mass=0.0)

Each assertion raises :class:`AssertionError` whose message names the worst
sequence and position (and the target and output, or the BOS mass there), so a
failing property test reads like a counterexample.  ``assert_obeys`` holds a model
against an instantiated theorem.  By default every check runs
over the task's whole family (``S_T``); ``sequences=`` restricts it.

*BOS mass* means ``α_{t0}`` for softmax heads, computed from ``1 - α_{t0}`` in the
log domain (so levels like ``delta=1e-30`` are meaningful), and the BOS *share*
``α_{t0} / Σ_j α_{tj}`` for ReLU heads (0 where every weight vanishes).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np

from . import checker
from ._validate import as_int, choice
from .errors import CertificateError
from .exact_numbers import bos_mass, bounded, show
from .kernel import forward_prefixes
from .measures import Evaluation, evaluate, explicit_prefix_blocks, family_prefix_blocks
from .model import AttentionModel
from .progress import Progress
from .task import show_sequence

__all__ = ["assert_certificate_verifies", "assert_has_sink", "assert_no_sink", "assert_obeys",
           "assert_solves"]

WHERE = ("nontrigger", "trigger", "all")


def _show_vector(v: np.ndarray) -> str:
    return np.array2string(np.asarray(v, dtype=float), precision=6, separator=", ")


def _check_model(model: Any) -> AttentionModel:
    if not isinstance(model, AttentionModel):
        raise TypeError(f"model must be an AttentionModel, got {type(model).__name__}")
    return model


def _family_note(model: AttentionModel, sequences: Any) -> str:
    if sequences is None:
        family = "multi-trigger family" if model.task.triggers == "multi" else "family S_T"
        return f"every sequence of the {family} ({model.task.n_sequences} sequences)"
    return "the given sequences"


def assert_solves(
    model: AttentionModel,
    eps: float,
    sequences: Iterable[Sequence[int]] | None = None,
) -> Evaluation:
    """Assert ``max_{X, t} ||f_t(X) - y_t(X)|| <= eps``; returns the :class:`Evaluation`.

    ``eps`` may be exact (``Fraction``, ``Decimal``, ``"1/20"``): the measured float error
    is compared with it exactly; a float is compared as the float it is.  The failure
    message shows the worst sequence, position, target and output.
    """
    __tracebackhide__ = True  # pytest shows the caller's line, not ours
    model = _check_model(model)
    eps_q = bounded(eps, "eps", 0)
    shown = show(eps_q)
    if isinstance(eps, float):  # a float (a measured error, say) is compared as the float it is
        eps_q, shown = Fraction(eps), f"{eps:g}"
    seqs = None if sequences is None else list(sequences)
    ev = evaluate(model, seqs)
    if not (math.isfinite(ev.max_error) and Fraction(ev.max_error) <= eps_q):  # exactly
        seq, t = ev.worst
        raise AssertionError(
            f"model does not solve the task to eps={shown}: error {ev.max_error:.6g} "
            f"at position t={t} of {show_sequence(seq)}\n"
            f"  target y_t = {_show_vector(ev.worst_target)}\n"
            f"  output f_t = {_show_vector(ev.worst_output)}\n"
            f"  model: {model!r}\n"
            f"  checked: {_family_note(model, seqs)}"
        )
    return ev


@dataclass
class _Extremes:
    """Per head: the largest and smallest log non-BOS measure over the checked positions."""

    hi: np.ndarray
    hi_at: list[tuple[tuple[int, ...], int] | None]
    lo: np.ndarray
    lo_at: list[tuple[tuple[int, ...], int] | None]
    count: int = 0
    max_output: float = 0.0
    """Largest ``|f_t|`` entry at every position ``t >= 1`` of the checked sequences, whatever
    ``where`` says (0: the model outputs nothing)."""
    max_target: float = 0.0
    """The same for the targets ``y_t`` (0 on ``T = 1``, where nothing follows a trigger)."""


def _blocks(model: AttentionModel, sequences: list | None) -> Iterator[tuple[int, np.ndarray]]:
    if sequences is None:
        for t, codes, _ in family_prefix_blocks(model.task):
            yield t, codes
    else:
        for t, codes, _ in explicit_prefix_blocks(model.task, sequences)[0]:
            yield t, codes


def _log_nonbos(model: AttentionModel, fw: Any) -> np.ndarray:
    """``log(1 - BOS mass)`` (maps on the simplex, log domain) or ``log(1 - BOS share)``
    (other maps), ``(H, N)``."""
    if model.attention_map.properties.on_simplex:
        return fw.log_nonbos
    w = fw.weights
    total = w.sum(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(total > 0, w[..., 1:].sum(axis=-1) / np.where(total > 0, total, 1), 1.0)
        return np.log(ratio)


def _scan(model: AttentionModel, sequences: list | None, where: str,
          progress: bool | None) -> _Extremes:
    task, H = model.task, model.H
    ex = _Extremes(np.full(H, -np.inf), [None] * H, np.full(H, np.inf), [None] * H)
    work = task.n_positions if sequences is None else sum(len(s) for s in sequences)
    with Progress(work, "sink check", progress) as bar:
        for t, codes in _blocks(model, sequences):
            fw = forward_prefixes(model, codes)
            is_trig = fw.query == task.trig_code
            mask = {"nontrigger": ~is_trig, "trigger": is_trig, "all": np.ones_like(is_trig)}[where]
            bar.update(codes.size)
            ex.max_output = max(ex.max_output, float(np.abs(fw.output).max(initial=0.0)))
            ex.max_target = max(ex.max_target, float(np.abs(fw.target).max(initial=0.0)))
            if not np.any(mask):
                continue
            rows = np.flatnonzero(mask)
            lnb = _log_nonbos(model, fw)[:, rows]
            ex.count += rows.size
            for h in range(H):
                i, j = int(np.argmax(lnb[h])), int(np.argmin(lnb[h]))
                if lnb[h, i] > ex.hi[h] or ex.hi_at[h] is None:
                    ex.hi[h], ex.hi_at[h] = lnb[h, i], (task.decode(codes[rows[i]]), t)
                if lnb[h, j] < ex.lo[h] or ex.lo_at[h] is None:
                    ex.lo[h], ex.lo_at[h] = lnb[h, j], (task.decode(codes[rows[j]]), t)
    return ex


def _bos_from_log_nonbos(lnb: float) -> float:
    return float(-math.expm1(lnb)) + 0.0 if lnb > -math.inf else 1.0


def _measure_name(model: AttentionModel) -> str:
    return "BOS mass" if model.attention_map.properties.on_simplex else "BOS share"


def _heads(model: AttentionModel, head: int | None) -> list[int]:
    if head is None:
        return list(range(model.H))
    head = as_int("head", head, minimum=0)
    if head >= model.H:
        raise ValueError(f"head {head} does not exist: the model has {model.H} head(s)")
    return [head]


def _prepare(model: Any, sequences: Any, where: str) -> tuple[AttentionModel, list | None]:
    model = _check_model(model)
    choice("where", where, WHERE)
    seqs = None if sequences is None else list(sequences)
    if seqs is not None and not seqs:
        raise ValueError("sequences is empty: give at least one sequence")
    return model, seqs


def _at(loc: tuple[tuple[int, ...], int] | None) -> str:
    if loc is None:
        return "nowhere"
    seq, t = loc
    return f"t={t} of {show_sequence(seq)}"


def assert_has_sink(
    model: AttentionModel,
    delta: float,
    sequences: Iterable[Sequence[int]] | None = None,
    *,
    head: int | None = None,
    where: str = "nontrigger",
    progress: bool | None = None,
) -> None:
    """Assert a sink at level ``delta``: BOS mass ``>= 1 - delta`` at every checked position.

    ``head=None``: at least one head has the sink; an int: that head must.
    ``where``: ``"nontrigger"`` (positions ``t >= 1`` that are not a trigger, the
    spec's sink), ``"trigger"`` or ``"all"``.  The comparison ``1 - α_0 <= delta`` is
    made in the log domain.
    """
    __tracebackhide__ = True  # pytest shows the caller's line, not ours
    model, seqs = _prepare(model, sequences, where)
    delta = float(bounded(delta, "delta", 0, 1,
                          why="1 - BOS mass is a share of attention, between 0 and 1"))
    heads = _heads(model, head)
    ex = _scan(model, seqs, where, progress)
    if ex.count == 0:
        raise AssertionError(f"no {where} positions to check in {_family_note(model, seqs)}")
    log_delta = math.log(delta) if delta > 0 else -math.inf
    if any(ex.hi[h] <= log_delta for h in heads):
        return
    name = _measure_name(model)
    lines = [
        f"head {h}: {name} {_bos_from_log_nonbos(ex.hi[h]):.6g} "
        f"(1 - {name} = {math.exp(ex.hi[h]):.6g} > delta) at {_at(ex.hi_at[h])}"
        for h in heads
    ]
    who = f"head {head} has no sink" if head is not None else "no head has a sink"
    raise AssertionError(
        f"{who} at level delta={delta:g} ({name} >= {1 - delta:g} at every "
        f"{where} position):\n  " + "\n  ".join(lines)
        + f"\n  model: {model!r}\n  checked: {_family_note(model, seqs)}"
    )


def assert_no_sink(
    model: AttentionModel,
    max_bos_mass: float = 0.5,
    sequences: Iterable[Sequence[int]] | None = None,
    *,
    head: int | None = None,
    where: str = "nontrigger",
    progress: bool | None = None,
    allow_silent: bool = False,
) -> None:
    """Assert BOS mass ``<= max_bos_mass`` at every checked position of every head (or ``head``).

    ``max_bos_mass=0`` demands exactly zero weight on BOS (Theorem 4's ReLU head); it is
    read exactly, in ``[0, 1]``.  A model whose output is 0 at every position of the
    checked sequences, trigger positions included, where some target is not (a dead
    ReLU head attends nowhere, so its BOS share is 0 trivially; its error is the size of
    the targets) fails with a message that says so, unless ``allow_silent``: having no
    sink is only interesting for a model that does something.
    """
    __tracebackhide__ = True  # pytest shows the caller's line, not ours
    model, seqs = _prepare(model, sequences, where)
    max_bos_mass = float(bos_mass(max_bos_mass, "max_bos_mass"))
    heads = _heads(model, head)
    ex = _scan(model, seqs, where, progress)
    # BOS <= m  <=>  1 - BOS >= 1 - m, compared in the log domain
    log_floor = math.log1p(-max_bos_mass) if max_bos_mass < 1 else -math.inf
    bad = [h for h in heads if ex.lo[h] < log_floor]
    if not bad:
        if ex.count and ex.max_output == 0.0 < ex.max_target and not allow_silent:
            raise AssertionError(
                "model outputs nothing: f_t = 0 at every position of the checked sequences "
                "(the targets are not), so it has no sink only because it attends nowhere "
                "(a dead head; pass allow_silent=True to accept it)"
                f"\n  model: {model!r}\n  checked: {_family_note(model, seqs)}")
        return
    name = _measure_name(model)
    lines = [f"head {h}: {name} {_bos_from_log_nonbos(ex.lo[h]):.6g} at {_at(ex.lo_at[h])}"
             for h in bad]
    raise AssertionError(
        f"model has a sink: {name} above max_bos_mass={max_bos_mass:g} at a {where} position:\n  "
        + "\n  ".join(lines)
        + f"\n  model: {model!r}\n  checked: {_family_note(model, seqs)}"
    )


def assert_obeys(model: AttentionModel, bound: Any, rtol: Any = 1e-9) -> Any:
    """Assert ``model`` obeys an instantiated theorem (``theorems.theorem(k).instantiate(...)``).

    Wherever the model meets the theorem's error hypothesis, its BOS mass must be at
    least the bound (compared through ``1 - α_0`` in the log domain, with relative
    tolerance ``rtol``).  Returns the ``BoundCheck``.  A failure is either a bug or a
    counterexample to the theorem: the message lists the violated items.
    """
    __tracebackhide__ = True  # pytest shows the caller's line, not ours
    model = _check_model(model)
    rtol = float(bounded(rtol, "rtol", 0, 1))
    check = getattr(bound, "check", None)
    if not callable(check):
        raise TypeError("bound must be an instantiated theorem (theorems.theorem(k).instantiate"
                        f"(task, eps)), got {type(bound).__name__}")
    result = check(model, rtol=rtol)
    if not result.holds:
        shown = result.violations[:5]
        lines = [f"{v.item!r}: measured 1 - BOS mass {v.nonbos:.6g} > allowed "
                 f"{v.item.slack:.6g} (error {v.error:.3g} where the theorem needs it)"
                 for v in shown]
        more = len(result.violations) - len(shown)
        raise AssertionError(
            f"model violates {result.theorem} at {len(result.violations)} of "
            f"{len(result.applicable)} items whose error hypothesis it meets "
            "(a bug, or a counterexample to the theorem):\n  " + "\n  ".join(lines)
            + (f"\n  (+{more} more)" if more > 0 else "") + f"\n  model: {model!r}"
        )
    return result


def assert_certificate_verifies(certificate: str | Path | dict[str, Any]) -> Any:
    """Assert a certificate (a file path or its parsed JSON) verifies in exact arithmetic.

    Uses the trusted checker :mod:`sinkproof.checker`; returns its ``Verdict``.  A
    malformed certificate fails too, with the checker's one-line reason.
    """
    __tracebackhide__ = True  # pytest shows the caller's line, not ours
    if isinstance(certificate, (str, Path)):
        source, run = f"certificate file {str(certificate)!r}", checker.verify_file
    elif isinstance(certificate, dict):
        source, run = "certificate", checker.verify
    else:
        raise TypeError("certificate must be a path or a parsed certificate (dict), "
                        f"got {type(certificate).__name__}")
    try:
        verdict = run(certificate)
    except CertificateError as exc:
        raise AssertionError(f"{source} is malformed: {exc}") from exc
    if not verdict.ok:
        raise AssertionError(
            f"{source} does not verify ({verdict.kind}): first failing inequality: "
            f"{verdict.failure}\n  claim: {verdict.claim}"
        )
    return verdict
