"""Checker for ``paper-composition``: an instance of the pure-composition theorem.

Theorem (docs/theory.md, "(P2) as the paper states it"): in a pure composition of ``N``
one-head layers whose weight rows lie on the simplex, with any linear value/output maps,
error ``<= ε`` at position 0 and at positions 1 and ``j`` of ``S_u = (BOS, u^{j-1}, τ)``
for ``u = a, b`` implies ``Π_ℓ (1 - α^ℓ_10) <= 2ε/g`` at position 1 of ``S_a`` or of
``S_b``, when the ray gap ``g`` of the trigger-row targets ``m_u = ((j-1) x(u) + x(τ))/j``
exceeds ``2ε``.  Checked exactly: the named tokens and ``j`` belong to the family, ``g²``
recomputed from the family's token vectors, ``g² > 4ε²``, and the claimed ``b <= 1``
with ``4ε² <= (1 - b)^{2N} g²`` (so some layer has ``α^ℓ_10 >= b``)."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from ...errors import CertificateError
from ..exact import check_leq, check_lt, dot, show
from ..family.paper import read_paper
from ..limits import require
from ..schema import as_int, format_rational, need, need_eps, need_int, need_rational, section
from ..verdict import Verdict

KIND = "paper-composition"


def ray_gap_squared(c: list[Fraction], d: list[Fraction]) -> Fraction:
    """``g(c, d)²``, ``g = min_{|u|=1} max(d(c, R_+u), d(d, R_+u))``, in closed form."""
    cc, dd, cd = dot(c, c), dot(d, d), dot(c, d)
    if cc + cd < 0 or cc + dd + 2 * cd == 0:
        return cc
    if dd + cd < 0:
        return dd
    return (cc * dd - cd * cd) / (cc + dd + 2 * cd)


def verify(cert: dict[str, Any]) -> Verdict:
    """Check a ``paper-composition`` certificate; returns a :class:`Verdict`."""
    inst = cert["instance"]
    _, fam = read_paper(inst, ("task", "content_vectors", "eps", "layers"))
    eps, m = need_eps(inst, strict=False), fam.m
    layers = need_int(inst, "layers", "instance", minimum=1)
    data = section(cert, "data", ("a", "b", "trigger", "j"))
    a, b, tau = (as_int(need(data, k, "data"), f"data.{k}", 0, m)
                 for k in ("a", "b", "trigger"))
    if a == b:
        raise CertificateError("data.b: the two content tokens must differ")
    j = as_int(need(data, "j", "data"), "data.j", 2, fam.L)
    bound = need_rational(section(cert, "claim", ("statement", "min_bound")), "min_bound", "claim")
    one_minus = 1 - bound
    require("denominator_digits", 2 * layers * len(str(max(abs(one_minus.numerator),
                                                           one_minus.denominator))),
            "instance.layers: digits of (1 - b)^(2N)")
    target = [[((j - 1) * p + q) / j for p, q in zip(fam.token(u), fam.token(m + tau))]
              for u in (a, b)]
    g2 = ray_gap_squared(*target)
    check_lt(4 * eps * eps, g2, "the theorem applies: 4 eps^2 < g^2")
    check_leq(bound, Fraction(1), "claim.min_bound <= 1")
    check_leq(4 * eps * eps, one_minus ** (2 * layers) * g2, "4 eps^2 <= (1 - b)^(2N) g^2")
    rows = [[u] * (j - 1) + [m + tau] for u in (a, b)]
    statement = {
        "kind": KIND, "theorem": "pure composition", "setting": "paper",
        "instance": {"n": fam.n, "L": fam.L, "content": {"scheme": "custom",
                                                         "vectors": fam.vectors()}},
        "eps": format_rational(eps),
        "model_class": {"attention": "normalised", "heads": 1, "layers": layers,
                        "residual": False, "values": "any linear value and output maps"},
        "hypothesis": "error (Euclidean) <= eps at position 0 and at the last position of "
                      "each hypothesis prefix",
        "hypothesis_prefixes": [[a], [b], *rows],
        "conclusion": {"either": [[a], [b]], "layers": "some", "g_squared": format_rational(g2),
                       "min_bound": format_rational(bound)},
    }
    text = (f"pure-composition theorem, paper setting [n={fam.n}, L={fam.L}, the m={m} content "
            f"vectors listed]: every pure composition of {layers} single-head layers with weights "
            f"on the simplex and any linear value and output maps, with error <= ε = {show(eps)} "
            f"at position 0 and at positions 1 and {j} of (BOS, c{a}^{j - 1}, TRIG) and of "
            f"(BOS, c{b}^{j - 1}, TRIG), the trigger carrying c{tau}, has BOS weight >= "
            f"{show(bound)} in some layer at position 1 of (BOS, c{a}) or of (BOS, c{b}) "
            f"(c_i: the i-th content vector; g² = {show(g2)})")
    return Verdict(True, KIND, text, details={"g_squared": show(g2), "j": j},
                   statement=statement)


__all__ = ["KIND", "ray_gap_squared", "verify"]
