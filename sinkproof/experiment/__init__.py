"""The empirical side: train softmax and ReLU attention from random initialisation and
measure whether they sink (docs/theory.md §6): one-layer models on a task with positions
(:func:`run`, :class:`ExperimentConfig`), and stacks trained with a protocol preset on a
task without them (:func:`run_protocol`, :class:`Protocol`, :data:`PROTOCOLS`: the paper's
own protocol and a quick one).

The package is callable as :func:`run`: ``sp.experiment(ExperimentConfig.smoke())``.

>>> from sinkproof.experiment import ExperimentConfig, run
>>> result = run(ExperimentConfig.smoke())          # doctest: +SKIP
"""

from .._callable import make_callable
from .config import PROTOCOLS, ExperimentConfig, Protocol
from .measure import RunResult, StackRun, measure
from .optim import adam
from .runner import ExperimentResult, run, run_protocol, train_stack
from .theory import hull_distance_lower, sink_bound, theorem1_check, theorem3_check
from .train import History, TrainedModel, initial_parameters, train

load = ExperimentResult.load

__all__ = [
    "adam",
    "ExperimentConfig",
    "ExperimentResult",
    "History",
    "PROTOCOLS",
    "Protocol",
    "RunResult",
    "StackRun",
    "TrainedModel",
    "hull_distance_lower",
    "initial_parameters",
    "load",
    "measure",
    "run",
    "run_protocol",
    "sink_bound",
    "theorem1_check",
    "theorem3_check",
    "train",
    "train_stack",
]

make_callable(__name__, "run")
