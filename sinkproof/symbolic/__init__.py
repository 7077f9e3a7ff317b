"""The symbolic layer: docs/theory.md section 4 as exact, checkable objects (SymPy and rationals).

* :func:`verify_theorem4`: Theorem 4 for every length at once, symbolically in ``t``.
* :class:`ExactModel`, :func:`exact_check`: any model with rational parameters,
  evaluated with no floating point (ReLU exactly; softmax by exact scores and
  rigorous interval enclosures).
* :data:`FORMULAS`, :func:`ray_gap`, :func:`hull_distance`, :func:`eps_min` ...: the
  bounds of Theorems 1, 2, 3 and 5 as SymPy expressions and numeric functions.
* :data:`THEOREMS`: the registry (hypotheses as data, ``applies_to``, ``instantiate``).
* :func:`theorem5_sandwich_section`, :func:`theorem1_tightness_section`,
  :func:`plot_theorem5_sandwich`: the bounds next to what the constructions achieve.
"""

from __future__ import annotations

from .bounds import (
    FORMULAS,
    THEOREM1_FIXED,
    THEOREM1_LEARNED,
    THEOREM2_NONBOS,
    THEOREM2_PAIR,
    THEOREM3_FIXED,
    THEOREM3_LEARNED,
    Formula,
    HullDistance,
    RayGap,
    hull_distance,
    norm_exact,
    ray_gap,
)
from .exact import ExactFamilyCheck, ExactModel, exact_check
from .instances import BosBound, BoundCheck, InstantiatedBound
from .normbound import (
    NormNeeded,
    eps_min,
    eps_min_enclosure,
    eps_min_expr,
    log_eps_min,
    norm_needed,
    norm_needed_closed_form,
    theorem5_terms,
)
from .registry import THEOREMS, NormBoundInstance, Theorem, WitnessInstance, theorem
from .theorem4 import (
    Identity,
    Theorem4Verification,
    exact_relu_solution,
    verify_relu_symbolic,
    verify_theorem4,
)
from .tightness import (
    plot_theorem5_sandwich,
    sandwich_curve,
    theorem1_tightness_section,
    theorem5_sandwich_section,
)

__all__ = [
    "FORMULAS", "THEOREM1_FIXED", "THEOREM1_LEARNED", "THEOREM2_NONBOS", "THEOREM2_PAIR",
    "THEOREM3_FIXED", "THEOREM3_LEARNED", "THEOREMS", "BosBound", "BoundCheck",
    "ExactFamilyCheck", "ExactModel", "Formula", "HullDistance", "Identity",
    "InstantiatedBound", "NormBoundInstance", "NormNeeded", "RayGap", "Theorem",
    "Theorem4Verification", "WitnessInstance", "eps_min", "eps_min_enclosure", "eps_min_expr",
    "exact_check", "exact_relu_solution", "hull_distance", "log_eps_min", "norm_exact",
    "norm_needed", "norm_needed_closed_form", "ray_gap", "theorem", "theorem5_terms",
    "verify_relu_symbolic", "verify_theorem4", "plot_theorem5_sandwich", "sandwich_curve",
    "theorem1_tightness_section", "theorem5_sandwich_section",
]
