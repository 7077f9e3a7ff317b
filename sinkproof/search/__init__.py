"""Search layer: parameters that solve the task without a sink, verified in high precision.

``sinkproof.search`` is both this package and its main function: the module is
callable, so ``sp.search(task, ...)`` works whether or not a submodule such as
:mod:`sinkproof.search.objective` was imported first.
"""

from __future__ import annotations

from .._callable import make_callable
from .engine import SearchBudgetError, available_cores, search
from .frontier import CertifiedBound, Frontier, FrontierPoint, certified_bound, frontier
from .objective import (
    BatchMeasures,
    PrefixBatch,
    batch_measures,
    feature_rows,
    prefix_batch,
    value_and_grad,
    value_grad_measures,
)
from .result import SearchResult, TracePoint
from .verify import WitnessReport, rigorous_measures, verify_witness, witness_document
from .witnessfile import WitnessInfo, load_witness

# ``sp.search`` is this module (callable), whichever submodule was imported first; the
# function answers ``.search`` too, for code that holds it rather than the module.
search.search = search  # type: ignore[attr-defined]

__all__ = [
    "SearchBudgetError",
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

make_callable(__name__, "search")
