"""Convex layer: Theorem 3's hull bound as CVXPY programs, with exact certificates.

- :func:`position_certificate` / :func:`position_certificates`: the bound
  ``α_t0 >= 1 - f·ε/d_t`` at given positions, ``d_t`` the distance from 0 to the
  hull of the values seen so far (a QP) and its dual separating direction;
- :func:`family_certificate`: every non-trigger position of ``S_T`` at once, one
  entry per distinct token set;
- :func:`paper_family_certificate`: :func:`family_certificate` on a paper-setting task (whole-vector
  tokens with a bias channel, fixed values ``v_BOS = 0``), before and after the trigger;
- :func:`simplex_pair` / :func:`simplex_pair_at`: the normalised program (lower
  bound on BOS mass) next to the non-normalised one (a sink-free witness).

Certificates are written with ``.save(path)`` and re-checked by the trusted
checker :mod:`sinkproof.checker` (``sinkproof verify FILE``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_dir, lazy_getattr

if TYPE_CHECKING:  # the names below, for type checkers and the API pages (not imported here)
    from .family import (
        FamilyCertificate,
        PaperFamilyCertificate,
        family_certificate,
        paper_family_certificate,
    )
    from .minnorm import MinNorm, min_norm_point, min_norm_points
    from .pair import SimplexPair, simplex_pair, simplex_pair_at
    from .position import PositionCertificate, position_certificate, position_certificates
    from .situations import Situation
    from .values import ValueTable, value_table

# Every name loads its submodule on first use: a module that only reads or writes
# certificate files (:mod:`.certfile`) does not load the programs (SciPy, CVXPY).
_LAZY: dict[str, str] = {
    "FamilyCertificate": "family", "PaperFamilyCertificate": "family",
    "family_certificate": "family", "paper_family_certificate": "family",
    "MinNorm": "minnorm", "min_norm_point": "minnorm", "min_norm_points": "minnorm",
    "SimplexPair": "pair", "simplex_pair": "pair", "simplex_pair_at": "pair",
    "PositionCertificate": "position", "position_certificate": "position",
    "position_certificates": "position",
    "Situation": "situations",
    "ValueTable": "values", "value_table": "values",
}

__getattr__ = lazy_getattr(__name__, _LAZY, globals())

__dir__ = lazy_dir(globals())


__all__ = [
    "FamilyCertificate",
    "MinNorm",
    "PaperFamilyCertificate",
    "PositionCertificate",
    "SimplexPair",
    "Situation",
    "ValueTable",
    "family_certificate",
    "min_norm_point",
    "min_norm_points",
    "paper_family_certificate",
    "position_certificate",
    "position_certificates",
    "simplex_pair",
    "simplex_pair_at",
    "value_table",
]
