"""The proof rules: each checks one kind of argument over any Family it is handed.

:mod:`.hull` (Theorem 3: a separating direction per token set), :mod:`.dual` (SOCP weak
duality for logit sharing) and :mod:`.gated` (its gate split), :mod:`.tree` and
:mod:`.treeheads` (branch-and-bound trees of dual multipliers), :mod:`.witness` and
:mod:`.stackwitness` (a counterexample model re-run on the whole family, one head at a
time by :mod:`.heads`).  ``KIND_MODULES`` maps each certificate kind to its rule.
"""
