"""CLARABEL through CVXPY, stoppable by Ctrl-C between two interior-point iterations.

Clarabel's solve is native code that holds the interpreter: a SIGINT waits for the whole
solve.  :data:`CLARABEL` is the same solver (same settings, same statuses) with a
termination callback that asks, at every iteration, whether a SIGINT arrived
(:func:`sinkproof.interrupts.deferred`); the solve then stops and ``KeyboardInterrupt`` is
raised as it returns.  Pass ``solver=solver_for(name)`` to ``Problem.solve``.
"""

from __future__ import annotations

from typing import Any

import scipy.sparse as sp_sparse
from cvxpy import settings as cvx_settings
from cvxpy.reductions.solvers.conic_solvers import clarabel_conif
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


CLARABEL = InterruptibleClarabel()
"""The solver instance to pass to ``Problem.solve(solver=...)``."""


def solver_for(name: str) -> Any:
    """``name`` itself, except CLARABEL, which becomes :data:`CLARABEL` (interruptible)."""
    return CLARABEL if name == "CLARABEL" else name
