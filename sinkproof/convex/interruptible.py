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

from typing import Any

import scipy.sparse as sp_sparse
from cvxpy import settings as cvx_settings
from cvxpy.reductions.solvers.conic_solvers import clarabel_conif, scs_conif
from cvxpy.reductions.solvers.conic_solvers.conic_solver import ConicSolver

from .. import interrupts


def _stop_requested(info: Any) -> bool:
    return interrupts.pending()


class InterruptibleClarabel(clarabel_conif.CLARABEL):
    """CVXPY's CLARABEL interface with a termination callback polling for Ctrl-C."""

    def name(self) -> str:
        return "CLARABEL_INTERRUPTIBLE"

    def solve_via_data(self, data: dict, warm_start: bool, verbose: bool, solver_opts: dict,
                       solver_cache: dict | None = None) -> Any:
        import clarabel

        A, b, q = data[cvx_settings.A], data[cvx_settings.B], data[cvx_settings.C]
        P = data.get(cvx_settings.P)
        P = sp_sparse.csc_array((q.size, q.size)) if P is None else sp_sparse.triu(P).tocsc()
        cones = clarabel_conif.dims_to_solver_cones(data[ConicSolver.DIMS])
        settings = self.parse_solver_opts(verbose, solver_opts)
        solver = clarabel.DefaultSolver(P, q, A, b, cones, settings)
        solver.set_termination_callback(_stop_requested)
        with interrupts.deferred():
            return solver.solve()


SCS_INTERRUPTED = -5
"""SCS's ``status_val`` when a SIGINT arrived during its solve."""


class InterruptibleSCS(scs_conif.SCS):
    """CVXPY's SCS interface raising ``KeyboardInterrupt`` when SCS caught a SIGINT."""

    def name(self) -> str:
        return "SCS_INTERRUPTIBLE"

    def solve_via_data(self, data: dict, warm_start: bool, verbose: bool, solver_opts: dict,
                       solver_cache: dict | None = None) -> Any:
        results = super().solve_via_data(data, warm_start, verbose, solver_opts, solver_cache)
        if results["info"].get("status_val") == SCS_INTERRUPTED:
            raise KeyboardInterrupt
        return results


CLARABEL = InterruptibleClarabel()
"""The solver instance to pass to ``Problem.solve(solver=...)``."""
SCS = InterruptibleSCS()
"""SCS whose caught SIGINT is raised again as ``KeyboardInterrupt``."""


def solver_for(name: str) -> Any:
    """``name`` itself, except CLARABEL and SCS, which become :data:`CLARABEL` (polls for
    Ctrl-C) and :data:`SCS` (raises the Ctrl-C it caught)."""
    return {"CLARABEL": CLARABEL, "SCS": SCS}.get(name, name)


def solve(problem: Any, solver: str, callback: bool = True, **options: Any) -> Any:
    """``problem.solve(solver=solver_for(solver), **options)`` in a helper thread that Ctrl-C
    abandons at once (:func:`sinkproof.interrupts.abandonable`): the interruptible Clarabel
    then stops at its next iteration, any other solver (SCS) runs to its end unwatched.
    ``callback=False`` keeps CVXPY's own Clarabel interface (no termination callback)."""
    chosen = solver_for(solver) if callback or solver == "SCS" else solver
    return interrupts.abandonable(lambda: problem.solve(solver=chosen, **options))
