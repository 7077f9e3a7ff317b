"""A pytest plugin: fixtures for tests about attention sinks, and sinkproof's assertions.

Installed with the package (entry point ``pytest11: sinkproof``), so any test suite in
an environment that has sinkproof gets these fixtures without importing anything:

- ``sinkproof_task``: a small trigger task (``p = 1, T = 3``, signed content, inverse
  positions, one trigger); override it in your ``conftest.py`` to run the model
  fixtures on your own task;
- ``sinkproof_softmax_model``: the one-head softmax construction (Theorem 5's head at
  ``L = 20``), accurate on ``sinkproof_task`` and with a sink at every non-trigger
  position;
- ``sinkproof_relu_model``: Theorem 4's ReLU head, which solves ``sinkproof_task``
  exactly with no weight on BOS;
- ``sinkproof_dead_relu_model``: a ReLU head whose every score is negative, so it
  attends nowhere and outputs 0 (error 1): the case a "no sink" check must not accept;
- ``sinkproof_assert``: the module :mod:`sinkproof.testing` (``assert_solves``,
  ``assert_has_sink``, ``assert_no_sink``, ``assert_obeys``,
  ``assert_certificate_verifies``).

Loading the plugin costs nothing: each fixture imports sinkproof when it is first used.
Without the entry point (a source checkout), load it with ``-p sinkproof.pytest_plugin``
or ``pytest_plugins = ["sinkproof.pytest_plugin"]`` in a ``conftest.py``.
"""

from __future__ import annotations

from typing import Any

import pytest

SOFTMAX_LEVEL = 20.0
"""The construction's level ``L``: its error on ``p = 1, T = 3`` is about ``6e-9``."""
DEAD_SCALE = 10.0
"""``A = -DEAD_SCALE · 1 1ᵀ``: every score ``-DEAD_SCALE (Σ x_t)(Σ x_j)`` is negative."""


def pytest_report_header(config: pytest.Config) -> str:
    from ._version import __version__

    return f"sinkproof {__version__} (plugin sinkproof.pytest_plugin)"


@pytest.fixture
def sinkproof_task() -> Any:
    """A small trigger task: ``TriggerTask(p=1, T=3)``."""
    from .task import TriggerTask

    return TriggerTask(p=1, T=3)


@pytest.fixture
def sinkproof_softmax_model(sinkproof_task: Any) -> Any:
    """The one-head softmax construction at level ``L = 20`` on ``sinkproof_task``."""
    from .constructions import softmax_solution

    return softmax_solution(sinkproof_task, SOFTMAX_LEVEL)


@pytest.fixture
def sinkproof_relu_model(sinkproof_task: Any) -> Any:
    """Theorem 4's ReLU head on ``sinkproof_task``: exact, no weight on BOS."""
    from .constructions import relu_solution

    return relu_solution(sinkproof_task)


@pytest.fixture
def sinkproof_dead_relu_model(sinkproof_task: Any) -> Any:
    """A ReLU head that attends nowhere (every score negative): output 0, error 1."""
    import numpy as np

    from .model import AttentionModel

    D = sinkproof_task.D
    return AttentionModel(sinkproof_task, "relu", -DEAD_SCALE * np.ones((1, D, D)))


@pytest.fixture
def sinkproof_assert() -> Any:
    """The assertion helpers: the module :mod:`sinkproof.testing`."""
    from . import testing

    return testing
