"""The theorems: one module per statement, one calling convention, one registry.

Each ``theoremN`` module holds the statement and proof sketch as text, its closed-form
bound (a :class:`~sinkproof.symbolic.bounds.Formula`), the model classes it holds for
(its hypotheses as data, matched by properties), and the functions that instantiate it.

* :data:`THEOREMS`, :func:`theorem`: the registry, by name or number.
* :meth:`Theorem.applies_to`, :func:`covering`: which theorems cover a model class.
* :meth:`Theorem.instantiate`, :meth:`Theorem.bound`: exact bounds on a task.
* :func:`best_bound`: the strongest bound the registry knows for a class.
"""

from __future__ import annotations

from .base import (
    ANY_SOFTMAX_HEADS_FIXED,
    ONE_SOFTMAX_HEAD,
    ONE_SOFTMAX_HEAD_FIXED,
    CertifiedBound,
    Theorem,
)
from .instance import BosBound, BoundCheck, InstantiatedBound
from .registry import FORMULAS, THEOREMS, best_bound, covering, theorem
from .theorem1 import THEOREM1_FIXED, THEOREM1_LEARNED
from .theorem2 import THEOREM2_NONBOS, THEOREM2_PAIR
from .theorem3 import THEOREM3_FIXED, THEOREM3_LEARNED
from .theorem4 import WitnessInstance
from .theorem5 import NormBoundInstance

__all__ = [
    "ANY_SOFTMAX_HEADS_FIXED", "FORMULAS", "ONE_SOFTMAX_HEAD", "ONE_SOFTMAX_HEAD_FIXED",
    "THEOREM1_FIXED", "THEOREM1_LEARNED", "THEOREM2_NONBOS", "THEOREM2_PAIR", "THEOREM3_FIXED",
    "THEOREM3_LEARNED", "THEOREMS", "BosBound", "BoundCheck", "CertifiedBound",
    "InstantiatedBound", "NormBoundInstance", "Theorem", "WitnessInstance", "best_bound",
    "covering", "theorem",
]
