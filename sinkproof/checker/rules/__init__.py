"""The proof rules: each checks one kind of argument over any Family it is handed.

:mod:`.hull` (Theorem 3: a separating direction per token set), :mod:`.dual` (SOCP weak
duality for logit sharing, and its split over a gate), :mod:`.tree` (branch-and-bound trees
of dual multipliers, one head or ``H``), :mod:`.witness` (a counterexample model, one layer
or a stack, re-run on the whole family).  ``KIND_MODULES`` maps each certificate kind to its
rule.
"""
