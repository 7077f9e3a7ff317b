"""Theorem 6 (logit sharing): the least BOS mass of any ε-accurate single softmax head with
``U_fix`` at a target is ``>= 1/Z*``, ``Z*`` the optimum of a second-order-cone program over
the shared exponentiated logit gaps ``u >= 0``.  Instantiated by the sink map
(:func:`sinkproof.sinkmap.sink_map`), whose certificates the trusted checker re-verifies.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import sympy

from ..errors import SinkproofError
from ..task import TriggerTask
from .base import ONE_SOFTMAX_HEAD_FIXED, Theorem

TITLE = "Logit sharing: a convex relaxation of every softmax head"
STATEMENT = (
    "Single head, softmax, fixed values. Set u(x_t,t,x_j,j) = exp(s(x_t,t,x_j,j) - "
    "s(x_t,t,BOS,0)) >= 0, shared by every sequence with the same query and key "
    "token at the same positions. With Z = 1 + Σ_j u_j, error <= ε at (X,t) is the "
    "cone constraint ‖v_b + Σ_j u_j v_{x_j} - Z y_t‖ <= εZ, so the least BOS mass "
    "of any ε-accurate head at (X*,t*) is at least 1/Z*, Z* = max Z_{X*,t*} subject "
    "to the cone constraints of the family (an SOCP).")
PROOF = (
    "A model's scores depend only on (x_t, t, x_j, j), so its exponentiated logit "
    "gaps form one vector u >= 0; at every (X,t) its weights are u_j/Z and its BOS "
    "mass 1/Z, and its error constraint multiplied by Z > 0 is the cone constraint. "
    "So every ε-accurate model gives a feasible u, and Z* >= Z_{X*,t*} = 1/α_{t*0}. "
    "∎ Any subfamily of constraints gives a valid, weaker bound.")


def instantiate(task: TriggerTask, eps: sympy.Expr, **options: Any) -> Any:
    """The sink map of ``task`` at ``eps`` with ``U_fix`` (options go to ``sink_map``)."""
    try:  # the sink map needs CVXPY, an optional layer
        from ..sinkmap import sink_map
    except ImportError as exc:
        raise SinkproofError(f"Theorem 6 is instantiated by sinkproof.sink_map, "
                             f"which is not available: {exc}") from None
    return sink_map(task, Fraction(int(eps.p), int(eps.q)), values="fixed", **options)


THEOREM = Theorem(
    "theorem6", 6, TITLE, STATEMENT, PROOF, "bos_lower_bound", (ONE_SOFTMAX_HEAD_FIXED,),
    "every (sequence, position) of the family in the program", (), (), instantiate)
