"""The statements and proofs of the theorems (docs/theory.md section 4), as text the registry uses.

Notation: ``v_b = U e(BOS)``, ``v_τ = U e(TRIG)``, ``v_c = U e(c)``;
``X^c_n = (BOS, c, …, c)`` (n copies); ``T^c_m = (BOS, c^m, TRIG)``.
"""

from __future__ import annotations

STATEMENTS = {
    "theorem1": (
        "Homogeneous sink",
        "If the error is <= ε at position 0 and at position n of X^c_n, then "
        "α_{n0}(X^c_n) >= 1 - 2ε/‖v_c‖; with fixed values (v_b = 0, v_c = c), "
        "α_{n0} >= 1 - ε/‖c‖.",
        "f_0 = v_b, so ‖v_b‖ <= ε. All content keys of X^c_n carry the same value, so "
        "f_n = α_0 v_b + (1-α_0) v_c and (1-α_0)‖v_c‖ <= ‖f_n‖ + α_0‖v_b‖ <= 2ε. ∎",
    ),
    "theorem2": (
        "Values must carry content: one of any two tokens sinks",
        "Let c, c' ∈ C, m >= 1, and let δ, δ' be the non-BOS masses at position m of "
        "X^c_m, X^{c'}_m. If the error is <= ε at position 0, at position m of X^c_m, "
        "X^{c'}_m and at position m+1 of T^c_m, T^{c'}_m, then min(δ, δ') <= 2ε/(g(c,c') - 2ε) "
        "whenever g(c,c') > 2ε, where the ray gap g(c,c') = min_{‖u‖=1} max(d(c, R_+u), "
        "d(c', R_+u)).",
        "At position m of X^c_m the output is f = α_0 v_b + δ v_c with ‖f‖ <= ε and "
        "‖v_b‖ = ‖f_0‖ <= ε, so δ‖v_c‖ <= 2ε, i.e. ‖v_c‖ <= 2ε/δ. At the trigger of T^c_m "
        "(target c), "
        "f = α'_0 v_b + α'_c v_c + α'_τ v_τ (α'_c the mass on the content keys) is within ε "
        "of c, so "
        "d(c, R_+ v_τ) <= ‖α'_τ v_τ - c‖ <= 2ε + 2ε/δ; the same for c'. Both points lie "
        "within 2ε + 2ε/min(δ,δ') of one ray, so g <= 2ε + 2ε/min(δ,δ'). ∎",
    ),
    "theorem3": (
        "Any sequence: the hull bound",
        "At a non-trigger position t of any X, if the error is <= ε at position 0 and at t, "
        "then α_{t0} >= 1 - 2ε/d_t with d_t = dist(0, conv{v_{x_j} : 1 <= j <= t}) "
        "(1 - ε/d_t with fixed values).",
        "f_t = α_0 v_b + (1-α_0) z with z in the hull, ‖z‖ >= d_t; the target is 0, so "
        "(1-α_0) d_t <= ‖f_t‖ + α_0‖v_b‖ <= 2ε (ε with v_b = 0). ∎ The argument uses only "
        "that the weights lie on the simplex.",
    ),
    "theorem4": (
        "ReLU needs no sink: explicit construction",
        "With the inverse positional scheme, one ReLU head with scores "
        "s_{tj} = (r_t - is_content_t)·(is_content_j + is_trigger_j) (a rank-one A, "
        "‖A‖_2 = 2) and fixed values U_fix has zero error on every sequence of every length "
        "(and on the multi-trigger variant), and α_{t0} = 0 at every position.",
        "BOS keys score 0. A content query scores r_t - 1 <= 0 on every non-BOS key, so all "
        "weights vanish and f_t = 0. A trigger query at t >= 2 scores r_t = 1/(t-1) on every "
        "content and trigger key; trigger values are 0, so f_t = Σ_{j<t} c(x_j)/(t-1) = y_t. "
        "At t = 1 the only non-BOS key is the trigger itself, of value 0. ∎",
    ),
    "theorem5": (
        "Softmax pays in weight norm",
        "With fixed values and ‖A‖_2 <= B, every logit gap obeys "
        "s_{tj} - s_{t0} >= -B‖φ_t‖‖φ_j - φ_0‖, so on X^c_n 1 - α_0 >= Q/(1+Q), "
        "Q = Σ_{j=1}^n exp(-B‖φ_n‖‖φ_j - φ_0‖), and E >= ε_min(B) := max_{c,n} ‖c‖Q/(1+Q). "
        "Reaching error ε needs B = Ω(log(1/ε)), whereas Theorem 4 reaches ε = 0 at B = 2.",
        "s_{tj} - s_{t0} = φ_t^T A (φ_j - φ_0) >= -‖A‖_2 ‖φ_t‖ ‖φ_j - φ_0‖ (Cauchy-Schwarz); "
        "1 - α_0 = Σ_j e^{s_j - s_0} / (1 + Σ_j e^{s_j - s_0}) is increasing in each gap; "
        "with fixed values f_n = (1 - α_0) c on X^c_n, whose target is 0. ∎",
    ),
    "theorem6": (
        "Logit sharing: a convex relaxation of every softmax head",
        "Single head, softmax, fixed values. Set u(x_t,t,x_j,j) = exp(s(x_t,t,x_j,j) - "
        "s(x_t,t,BOS,0)) >= 0, shared by every sequence with the same query and key token at "
        "the same positions. With Z = 1 + Σ_j u_j, error <= ε at (X,t) is the cone constraint "
        "‖v_b + Σ_j u_j v_{x_j} - Z y_t‖ <= εZ, so the least BOS mass of any ε-accurate "
        "head at (X*,t*) is at least 1/Z*, Z* = max Z_{X*,t*} subject to the cone constraints "
        "of the family (an SOCP).",
        "A model's scores depend only on (x_t, t, x_j, j), so its exponentiated logit gaps "
        "form one vector u >= 0; at every (X,t) its weights are u_j/Z and its BOS mass 1/Z, "
        "and its error constraint multiplied by Z > 0 is the cone constraint. So every "
        "ε-accurate model gives a feasible u, and Z* >= Z_{X*,t*} = 1/α_{t*0}. ∎ Any "
        "subfamily of constraints gives a valid, weaker bound.",
    ),
    "theorem7": (
        "Every fixed-value head sinks (a corollary of Theorem 3, found by this project)",
        "For any number H of normalised heads, each with fixed values U_fix and any score "
        "function: at a non-trigger position t of any X, if the error is <= ε at t, then "
        "every head has α^h_{t0} >= 1 - ε/d_t, d_t = dist(0, conv{c(x_j) : 1 <= j <= t}); "
        "indeed Σ_h (1 - α^h_{t0}) <= ε/d_t.",
        "With U_fix the BOS value is 0, so f_t = Σ_h (1 - α^h_0) z_h with each z_h in the "
        "hull. With S = Σ_h (1 - α^h_0) > 0, f_t = S·z̄ where z̄ = Σ_h (1 - α^h_0) z_h / S "
        "is a convex combination of points of the hull, so ‖z̄‖ >= d_t; the target is 0, "
        "so S·d_t <= ‖f_t‖ <= ε, and 1 - α^h_0 <= S for every head. ∎ With learned values "
        "the heads' value maps differ and their outputs can cancel, so the argument does not "
        "carry over.",
    ),
}
"""name -> (title, statement, proof sketch)."""
