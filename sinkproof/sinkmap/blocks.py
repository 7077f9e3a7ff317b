"""The constraint data of Theorem 6 for one query block.

A *block* is a (query token ``q``, query position ``t``) pair.  Its variables are
the shared logit ratios ``u(q, t, b, j) = exp(s(q,t,b,j) - s(q,t,BOS,0)) >= 0`` for
key tokens ``b`` (content or trigger) at key positions ``1 <= j < t``, plus the
query's own key ``u(q, t, q, t)``.  Every prefix ``x_1..x_t`` of the family with
``x_t = q`` gives one second-order-cone constraint on them:

    || r0 + R u || <= eps (1 + a·u),   r0 = v_b - y,   R[:, (b,j)] = v_b' - y,

where ``a`` is the 0/1 indicator of the variables the prefix uses.  Variables of
different blocks never meet in a constraint, so the relaxation of the whole family
splits into independent blocks.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp_sparse

from ..task import TriggerTask


def variable_index(k: int, b: int, j: int, t: int) -> int:
    """Column of ``u(q, t, b, j)`` in a block at position ``t`` (``k`` content tokens).

    Keys at ``j < t`` take ``(j-1)(k+1) + b`` (``b`` in ``0..k``, ``k`` the trigger);
    the query's own key (``j = t``) is the last column.
    """
    return (t - 1) * (k + 1) if j == t else (j - 1) * (k + 1) + b


def n_variables(k: int, t: int) -> int:
    """Number of shared variables of a block at position ``t``."""
    return (t - 1) * (k + 1) + 1


@dataclass(frozen=True)
class Block:
    """The cone constraints of one block over a chosen set of prefixes.

    ``prefixes``: ``(m, t)`` codes (last column ``q``); ``A``: ``(m, n)`` 0/1 indicator;
    ``R``: ``(m*p, n)`` sparse, rows ``i*p .. i*p+p-1`` belong to prefix ``i``;
    ``r0``: ``(m*p,)``.  ``eps`` is the error bound.
    """

    q: int
    t: int
    k: int
    prefixes: np.ndarray
    A: sp_sparse.csr_matrix
    R: sp_sparse.csr_matrix
    r0: np.ndarray
    eps: float

    @property
    def m(self) -> int:
        return self.prefixes.shape[0]

    @property
    def n(self) -> int:
        return self.A.shape[1]

    def indicator(self, prefix: tuple[int, ...]) -> np.ndarray:
        """``a`` of a prefix (codes ``x_1..x_t``): the variables its BOS mass ``1/Z`` uses."""
        a = np.zeros(self.n)
        for j, b in enumerate(prefix, start=1):
            a[variable_index(self.k, int(b), j, self.t)] = 1.0
        return a


def build_block(task: TriggerTask, values: np.ndarray, q: int, t: int,
                prefixes: np.ndarray, eps: float) -> Block:
    """Assemble :class:`Block` for prefixes ``(m, t-1)`` of codes (the query ``q`` is appended).

    ``values``: value vectors per code ``(k+2, p)``.
    """
    k, p = task.k, task.p
    m = prefixes.shape[0]
    full = np.concatenate([prefixes.reshape(m, t - 1), np.full((m, 1), q)], axis=1).astype(np.int64)
    n = n_variables(k, t)
    cols = np.empty((m, t), dtype=np.int64)
    for j in range(1, t + 1):
        cols[:, j - 1] = [variable_index(k, int(b), j, t) for b in full[:, j - 1]]
    rows = np.repeat(np.arange(m), t)
    A = sp_sparse.csr_matrix((np.ones(m * t), (rows, cols.ravel())), shape=(m, n))
    y = task.prefix_targets(full)
    vb = values[task.bos_code]
    r0 = (vb[None, :] - y).ravel()
    # R: for prefix i, coordinate c, variable cols[i, j]: values[x_j][c] - y[i][c]
    vals = values[full][:, :, :] - y[:, None, :]  # (m, t, p)
    r_rows = (np.arange(m)[:, None, None] * p + np.arange(p)[None, None, :])
    r_rows = np.broadcast_to(r_rows, (m, t, p))
    r_cols = np.broadcast_to(cols[:, :, None], (m, t, p))
    R = sp_sparse.csr_matrix((vals.ravel(), (r_rows.ravel(), r_cols.ravel())), shape=(m * p, n))
    return Block(q=q, t=t, k=k, prefixes=full, A=A, R=R, r0=r0, eps=float(eps))
