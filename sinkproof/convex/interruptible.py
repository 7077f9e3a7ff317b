"""CLARABEL through CVXPY, stoppable by Ctrl-C between two interior-point iterations.

Clarabel's solve is native code that holds the interpreter: a SIGINT waits for the whole
solve.  :data:`CLARABEL` is the same solver (same settings, same statuses) with a
termination callback that asks, at every iteration, whether a SIGINT arrived
(:func:`sinkproof.interrupts.deferred`); the solve then stops and ``KeyboardInterrupt`` is
raised as it returns.  SCS catches SIGINT itself (its own handler, for the length of a
solve) and returns "interrupted", which CVXPY reports as a failed solve: the signal was
lost; :data:`SCS` raises ``KeyboardInterrupt`` instead.  Pass ``solver=solver_for(name)``
to ``Problem.solve``, or call
:func:`solve`, which also answers Ctrl-C during CVXPY's compilation, Clarabel's set-up and
solvers with no callback (SCS): it runs the whole solve in a helper thread
(:func:`sinkproof.interrupts.abandonable`).
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from functools import cache
from importlib import import_module
from importlib.util import find_spec
from types import ModuleType
from typing import Any

from .. import interrupts

# CVXPY takes 0.5-2 s to import: it loads when a program is first built or solved, not when
# a module that can solve one is imported (a check proved by a theorem never pays it).


def import_cvxpy() -> ModuleType:
    """``cvxpy``, imported without JAX where JAX is not needed.

    CVXPY lists its installed solvers at import by importing each one's package; for MPAX
    (a JAX solver) that imports JAX first (about 1 s) even when MPAX itself is absent.
    When MPAX is not installed and JAX is not loaded yet, ``import jax`` is made to fail for
    the length of CVXPY's import (MPAX then counts as not installed, as it is); JAX stays
    importable afterwards.  ``sys.modules`` is shared by every thread, so this is done on
    the main thread only (a pool thread, as in a Dask worker, may import JAX meanwhile);
    with MPAX installed, JAX already loaded, or off the main thread: a plain import."""
    if ("cvxpy" in sys.modules or "jax" in sys.modules or find_spec("mpax") is not None
            or threading.current_thread() is not threading.main_thread()):
        return import_module("cvxpy")
    sys.modules["jax"] = None  # type: ignore[assignment]  # `import jax` fails meanwhile
    try:
        return import_module("cvxpy")
    finally:
        if "jax" in sys.modules and sys.modules["jax"] is None:
            del sys.modules["jax"]


class LazyModule:
    """A module imported on its first attribute access (``cvxpy``: :data:`cvxpy`)."""

    def __init__(self, name: str, load: Callable[[], ModuleType] | None = None) -> None:
        self._name = name
        self._load = load or (lambda: import_module(name))

    def __getattr__(self, attr: str) -> Any:
        return getattr(self._load(), attr)


cvxpy: Any = LazyModule("cvxpy", import_cvxpy)
"""``cvxpy``, imported on first use: ``from ..convex.interruptible import cvxpy as cp``."""


def _stop_requested(info: Any) -> bool:
    return interrupts.pending()


SCS_INTERRUPTED = -5
"""SCS's ``status_val`` when a SIGINT arrived during its solve."""


@cache
def _solvers() -> dict[str, Any]:
    """The two interruptible solver classes and their instances, built on first use."""
    import_cvxpy()
    import scipy.sparse as sp_sparse
    from cvxpy import settings as cvx_settings
    from cvxpy.reductions.solvers.conic_solvers import clarabel_conif, scs_conif
    from cvxpy.reductions.solvers.conic_solvers.conic_solver import ConicSolver

    class InterruptibleClarabel(clarabel_conif.CLARABEL):
        """CVXPY's CLARABEL interface with a termination callback polling for Ctrl-C."""

        def name(self) -> str:
            return "CLARABEL_INTERRUPTIBLE"

        def solve_via_data(self, data: dict, warm_start: bool, verbose: bool,
                           solver_opts: dict, solver_cache: dict | None = None) -> Any:
            import clarabel

            A, b, q = data[cvx_settings.A], data[cvx_settings.B], data[cvx_settings.C]
            P = data.get(cvx_settings.P)
            P = (sp_sparse.csc_array((q.size, q.size)) if P is None
                 else sp_sparse.triu(P).tocsc())
            cones = clarabel_conif.dims_to_solver_cones(data[ConicSolver.DIMS])
            settings = self.parse_solver_opts(verbose, solver_opts)
            solver = clarabel.DefaultSolver(P, q, A, b, cones, settings)
            solver.set_termination_callback(_stop_requested)
            with interrupts.deferred():
                return solver.solve()

    class InterruptibleSCS(scs_conif.SCS):
        """CVXPY's SCS interface raising ``KeyboardInterrupt`` when SCS caught a SIGINT."""

        def name(self) -> str:
            return "SCS_INTERRUPTIBLE"

        def solve_via_data(self, data: dict, warm_start: bool, verbose: bool,
                           solver_opts: dict, solver_cache: dict | None = None) -> Any:
            results = super().solve_via_data(data, warm_start, verbose, solver_opts,
                                             solver_cache)
            if results["info"].get("status_val") == SCS_INTERRUPTED:
                raise KeyboardInterrupt
            return results

    return dict(InterruptibleClarabel=InterruptibleClarabel, InterruptibleSCS=InterruptibleSCS,
                CLARABEL=InterruptibleClarabel(), SCS=InterruptibleSCS())


def __getattr__(name: str) -> Any:
    # ``CLARABEL`` (the solver instance to pass to ``Problem.solve(solver=...)``), ``SCS``
    # (SCS whose caught SIGINT is raised again as ``KeyboardInterrupt``) and their classes
    if name in ("CLARABEL", "SCS", "InterruptibleClarabel", "InterruptibleSCS"):
        return _solvers()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def solver_for(name: str) -> Any:
    """``name`` itself, except CLARABEL and SCS, which become :data:`CLARABEL` (polls for
    Ctrl-C) and :data:`SCS` (raises the Ctrl-C it caught)."""
    return _solvers().get(name, name) if name in ("CLARABEL", "SCS") else name


def solve(problem: Any, solver: str, callback: bool = True, **options: Any) -> Any:
    """``problem.solve(solver=solver_for(solver), **options)`` in a helper thread that Ctrl-C
    abandons at once (:func:`sinkproof.interrupts.abandonable`): the interruptible Clarabel
    then stops at its next iteration, any other solver (SCS) runs to its end unwatched.
    ``callback=False`` keeps CVXPY's own Clarabel interface (no termination callback)."""
    chosen = solver_for(solver) if callback or solver == "SCS" else solver
    return interrupts.abandonable(lambda: problem.solve(solver=chosen, **options))
