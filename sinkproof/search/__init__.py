"""Search layer: parameters that solve the task without a sink, verified in high precision.

One engine, :func:`search`: the optimiser (L-BFGS-B on prefix batches, Adam over stacks),
the model's shape, the BOS measure and the objective are its options;
:func:`search_stack` is ``search(optimiser="adam")`` under its earlier name.

``sinkproof.search`` is both this package and its main function: the module is
callable, so ``sp.search(task, ...)`` works whether or not a submodule such as
:mod:`sinkproof.search.objective` was imported first.
"""

from __future__ import annotations

from .._callable import make_callable
from .._lazy import lazy_getattr
from .engine import SearchBudgetError, StackSearchResult, available_cores, search, search_stack
from .result import SearchResult, TracePoint

# Names a search does not need load on first use: the frontier (theorems, sympy), the
# witness files (the convex layer, CVXPY) and the objective's helpers, so that the first
# ``sp.search(...)`` of a script pays only for what a search runs.
_LAZY: dict[str, str] = {
    "CertifiedBound": "frontier", "Frontier": "frontier", "FrontierPoint": "frontier",
    "certified_bound": "frontier", "frontier": "frontier",
    "BatchMeasures": "objective", "PrefixBatch": "objective", "batch_measures": "objective",
    "feature_rows": "objective", "prefix_batch": "objective", "value_and_grad": "objective",
    "value_grad_measures": "objective",
    "WitnessReport": "verify", "rigorous_measures": "verify", "verify_witness": "verify",
    "witness_document": "verify",
    "WitnessInfo": "witnessfile", "load_witness": "witnessfile",
}


__getattr__ = lazy_getattr(__name__, _LAZY, globals())


# ``sp.search`` is this module (callable), whichever submodule was imported first; the
# function answers ``.search`` too, for code that holds it rather than the module.
search.search = search  # type: ignore[attr-defined]

__all__ = [
    "SearchBudgetError",
    "StackSearchResult",
    "search_stack",
    "BatchMeasures",
    "CertifiedBound",
    "Frontier",
    "FrontierPoint",
    "PrefixBatch",
    "SearchResult",
    "TracePoint",
    "WitnessInfo",
    "WitnessReport",
    "available_cores",
    "batch_measures",
    "certified_bound",
    "feature_rows",
    "frontier",
    "load_witness",
    "prefix_batch",
    "search",
    "value_and_grad",
    "value_grad_measures",
    "rigorous_measures",
    "verify_witness",
    "witness_document",
]

make_callable(__name__, "search", _LAZY)
