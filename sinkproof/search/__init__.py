"""Search layer: parameters that solve the task without a sink, verified in high precision.

``sinkproof.search`` is both this package and its main function: the module is
callable, so ``sp.search(task, ...)`` works whether or not a submodule such as
:mod:`sinkproof.search.objective` was imported first.
"""

from __future__ import annotations

import sys
from types import ModuleType
from typing import Any

from .objective import (
    BatchMeasures,
    PrefixBatch,
    batch_measures,
    feature_rows,
    prefix_batch,
    value_and_grad,
)

__all__ = [
    "BatchMeasures",
    "PrefixBatch",
    "batch_measures",
    "feature_rows",
    "prefix_batch",
    "value_and_grad",
]


class _CallableModule(ModuleType):
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.search(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
