"""The proof rules, each over any Family it is handed: :mod:`.hull` (Theorem 3),
:mod:`.dual` (logit sharing), :mod:`.tree` (branch and bound), :mod:`.subfamily` (trees over
a named sub-family), :mod:`.witness` (a counterexample model re-run on the whole family)."""
