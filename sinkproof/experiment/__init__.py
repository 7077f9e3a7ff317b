"""The paper's empirical side: train softmax and ReLU attention from random
initialisation on the trigger task and measure whether they sink (docs/theory.md §6).

The package is callable as :func:`run`: ``sp.experiment(ExperimentConfig.smoke())``.

>>> from sinkproof.experiment import ExperimentConfig, run
>>> result = run(ExperimentConfig.smoke())          # doctest: +SKIP
"""

from .._callable import make_callable
from .config import ExperimentConfig
from .measure import RunResult, measure
from .optim import adam
from .runner import ExperimentResult, run
from .theory import hull_distance_lower, sink_bound, theorem1_check, theorem3_check
from .train import History, TrainedModel, initial_parameters, train

load = ExperimentResult.load

__all__ = [
    "adam",
    "ExperimentConfig",
    "ExperimentResult",
    "History",
    "RunResult",
    "TrainedModel",
    "hull_distance_lower",
    "initial_parameters",
    "load",
    "measure",
    "run",
    "sink_bound",
    "theorem1_check",
    "theorem3_check",
    "train",
]

make_callable(__name__, "run")
