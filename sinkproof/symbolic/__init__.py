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

from typing import TYPE_CHECKING

from .._lazy import lazy_dir, lazy_getattr

if TYPE_CHECKING:  # the names below, for type checkers and the API pages (not imported here)
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

# Every name loads its submodule on first use: a caller that needs exact family
# enumeration (:mod:`.exact`) does not load SymPy (:mod:`.bounds`, :mod:`.theorem4`).
_LAZY: dict[str, str] = {
    "Formula": "bounds",
    "HullDistance": "bounds",
    "RayGap": "bounds",
    "hull_distance": "bounds",
    "norm_exact": "bounds",
    "ray_gap": "bounds",
    "ExactFamilyCheck": "exact",
    "ExactModel": "exact",
    "exact_check": "exact",
    "NormNeeded": "normbound",
    "eps_min": "normbound",
    "eps_min_enclosure": "normbound",
    "eps_min_expr": "normbound",
    "log_eps_min": "normbound",
    "norm_needed": "normbound",
    "norm_needed_closed_form": "normbound",
    "theorem5_terms": "normbound",
    "GROUPS": "stack",
    "ExactStack": "stack",
    "ExactStackCheck": "stack",
    "PaperReluVerification": "stack",
    "StackReluVerification": "stack",
    "verify_paper_relu_symbolic": "stack",
    "verify_stack_exact": "stack",
    "verify_stack_relu_symbolic": "stack",
    "Identity": "theorem4",
    "Theorem4Verification": "theorem4",
    "exact_relu_solution": "theorem4",
    "verify_relu_symbolic": "theorem4",
    "verify_theorem4": "theorem4",
}

__getattr__ = lazy_getattr(__name__, _LAZY, globals())

__dir__ = lazy_dir(globals())


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
