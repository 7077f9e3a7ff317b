"""A block's dual SOCP in Clarabel's standard form, assembled once and solved directly.

The program (see :mod:`sinkproof.sinkmap.solve`) over ``x = (w, z)``, ``w`` ``(m,)`` and
``z`` ``(m·p,)`` (prefix ``i``'s multipliers at ``z[i·p : (i+1)·p]``), is

    minimise  eps·Σ w_i + r0·z
    s.t.      eps·Aᵀw + Rᵀz + s = -a* - η·c,  s >= 0           (n rows, multipliers u)
              -(w_i, z_i) + s_i = 0,          s_i in SOC(p+1)   (one cone per prefix)

which is Clarabel's ``min qᵀx s.t. Gx + s = h, s in K``.  Only ``h`` depends on the target
``a*`` and the margin ``η``, so ``G``, ``q`` and the cones are built once per block and
every target costs one solve -- no modelling layer compiles anything.  The multipliers of
the first ``n`` rows are the primal shared variables ``u``.  A Ctrl-C stops the solve at
its next iteration (:func:`sinkproof.interrupts.deferred`) and raises ``KeyboardInterrupt``;
a program of at least :data:`HELPER_ROWS` cone rows, whose set-up (before the first
iteration) alone can take a second, is solved in a helper thread
(:func:`sinkproof.interrupts.abandonable`), so that Ctrl-C is answered during its set-up
too.
"""

from __future__ import annotations

import clarabel
import numpy as np
import scipy.sparse as sp_sparse

from .. import interrupts
from .blocks import Block

SOLVED = ("Solved",)
INACCURATE = ("AlmostSolved",)
SETTINGS = {"tol_gap_abs": 1e-10, "tol_gap_rel": 1e-10}
"""Duality-gap tolerances of the direct solve: Clarabel's defaults (1e-8) stop ~2e-8 short
of the optimal bound on this unscaled form (through CVXPY they stopped closer); these keep
every bound at least as tight as the CVXPY path's on the reference instances."""
HELPER_ROWS = 2048
"""Programs with this many cone rows or more are solved in a helper thread: their set-up
takes tens of milliseconds to seconds (``benchmarks/bench_ctrl_c.py``); smaller ones solve
in the calling thread, where starting a thread would cost more than their set-up."""


def _stop_requested(info: object) -> bool:
    return interrupts.pending()


class ConicDual:
    """The fixed data ``(G, q, cones)`` of one block's dual program."""

    def __init__(self, block: Block) -> None:
        m, n = block.m, block.n
        p = block.R.shape[0] // m
        self.m, self.n, self.p = m, n, p
        lin = sp_sparse.hstack([block.eps * block.A.T, block.R.T], format="csc")
        # cone i reads (w_i, z_i): row i(p+1) is w_i, rows i(p+1)+1.. are z_i
        rows = np.arange(m * (p + 1))
        cone, slot = np.divmod(rows, p + 1)
        cols = np.where(slot == 0, cone, m + cone * p + slot - 1)
        soc = sp_sparse.csc_matrix((-np.ones(rows.size), (rows, cols)),
                                   shape=(rows.size, m * (p + 1)))
        self.G = sp_sparse.vstack([lin, soc], format="csc")
        self.G.sort_indices()
        self.q = np.concatenate([np.full(m, block.eps), block.r0])
        self.P = sp_sparse.csc_matrix((m * (p + 1), m * (p + 1)))
        self.cones = [clarabel.NonnegativeConeT(n)] + [clarabel.SecondOrderConeT(p + 1)] * m

    def solve(self, rhs: np.ndarray, settings: dict[str, float | int] | None = None,
              ) -> tuple[str, float, np.ndarray | None, np.ndarray | None, np.ndarray | None]:
        """Solve with ``eps·Aᵀw + Rᵀz <= rhs``: ``(status, value, w, z (m, p), u)``.

        ``status`` is Clarabel's (``"Solved"``, ``"AlmostSolved"``, ``"PrimalInfeasible"``, ...);
        the arrays are ``None`` unless a solution is present.
        """
        opts = clarabel.DefaultSettings()
        opts.verbose = False
        for key, value in {**SETTINGS, **(settings or {})}.items():
            setattr(opts, key, value)
        h = np.concatenate([rhs, np.zeros(self.m * (self.p + 1))])

        def run() -> object:
            solver = clarabel.DefaultSolver(self.P, self.q, self.G, h, self.cones, opts)
            solver.set_termination_callback(_stop_requested)  # Ctrl-C between iterations
            return solver.solve()

        try:
            if self.G.shape[0] >= HELPER_ROWS:  # set-up included: Ctrl-C answered at once
                sol = interrupts.abandonable(run)
            else:
                with interrupts.deferred():
                    sol = run()
        except BaseException as exc:  # a Rust panic surfaces as PanicException(BaseException)
            if isinstance(exc, (KeyboardInterrupt, SystemExit)):
                raise
            return "NumericalError", np.nan, None, None, None
        status = str(sol.status)
        if status not in SOLVED + INACCURATE:
            return status, np.nan, None, None, None
        x = np.asarray(sol.x)
        w, z = x[:self.m], x[self.m:].reshape(self.m, self.p)
        u = np.maximum(np.asarray(sol.z)[:self.n], 0.0)
        return status, float(sol.obj_val), w, z, u
