"""The symbolic layer: exact, checkable mathematics (SymPy and rationals).

* :func:`verify_theorem4`: Theorem 4 for every length at once, symbolically in ``t``.
* :class:`ExactModel`, :func:`exact_check`: any model with rational parameters,
  evaluated with no floating point (ReLU exactly; softmax by exact scores and
  rigorous interval enclosures).
* :class:`Formula`, :func:`ray_gap`, :func:`hull_distance`, :func:`norm_exact`: closed-form
  bounds and the exact constants they take.
* :func:`eps_min`, :func:`norm_needed` ...: Theorem 5's error floor ``ε_min(B)``.
* :func:`verify_stack_exact`, :func:`verify_stack_relu_symbolic`: ReLU-family stacks
  exactly on any finite family, and symbolically in the length (the paper's (P3)).

The theorems themselves (statements, hypotheses, instances) are :mod:`sinkproof.theorems`.
"""

from __future__ import annotations

from .bounds import Formula, HullDistance, RayGap, hull_distance, norm_exact, ray_gap
from .exact import ExactFamilyCheck, ExactModel, exact_check
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
from .stack import (
    GROUPS,
    ExactStack,
    ExactStackCheck,
    PaperReluVerification,
    StackReluVerification,
    verify_paper_relu_symbolic,
    verify_stack_exact,
    verify_stack_relu_symbolic,
)
from .theorem4 import (
    Identity,
    Theorem4Verification,
    exact_relu_solution,
    verify_relu_symbolic,
    verify_theorem4,
)

__all__ = [
    "GROUPS", "ExactFamilyCheck", "ExactModel", "ExactStack", "ExactStackCheck",
    "PaperReluVerification", "StackReluVerification", "verify_paper_relu_symbolic",
    "verify_stack_exact", "verify_stack_relu_symbolic", "Formula", "HullDistance", "Identity",
    "NormNeeded",
    "RayGap", "Theorem4Verification", "eps_min", "eps_min_enclosure", "eps_min_expr",
    "exact_check", "exact_relu_solution", "hull_distance", "log_eps_min", "norm_exact",
    "norm_needed", "norm_needed_closed_form", "ray_gap", "theorem5_terms",
    "verify_relu_symbolic", "verify_theorem4",
]
