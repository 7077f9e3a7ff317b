"""The pytest plugin: its fixtures and assertions work in a user's test file (run by
``pytester``), it is declared as a ``pytest11`` entry point, and loading it is light."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import sinkproof

pytest_plugins = ["pytester"]

ROOT = Path(sinkproof.__file__).resolve().parent.parent
# ``-p no:sinkproof`` keeps an installed entry point from loading the plugin a second time
PLUGIN = ("-p", "no:sinkproof", "-p", "sinkproof.pytest_plugin", "-p", "no:benchmark")

USER_TESTS = '''
import pytest

def test_softmax_construction_solves_with_a_sink(sinkproof_softmax_model, sinkproof_assert):
    sinkproof_assert.assert_solves(sinkproof_softmax_model, eps="1/1000")
    sinkproof_assert.assert_has_sink(sinkproof_softmax_model, delta=0.01)

def test_relu_construction_solves_with_no_sink(sinkproof_relu_model, sinkproof_assert):
    sinkproof_assert.assert_solves(sinkproof_relu_model, eps=0)
    sinkproof_assert.assert_no_sink(sinkproof_relu_model, max_bos_mass=0)

def test_the_task_is_small(sinkproof_task):
    assert (sinkproof_task.p, sinkproof_task.T) == (1, 3)

def test_a_dead_head_is_no_exemplar_of_no_sink(sinkproof_dead_relu_model, sinkproof_assert):
    with pytest.raises(AssertionError, match="outputs nothing"):
        sinkproof_assert.assert_no_sink(sinkproof_dead_relu_model)
    with pytest.raises(AssertionError, match="does not solve"):
        sinkproof_assert.assert_solves(sinkproof_dead_relu_model, eps=0.5)

def test_a_failing_assertion_names_the_worst_position(sinkproof_softmax_model,
                                                      sinkproof_assert):
    sinkproof_assert.assert_no_sink(sinkproof_softmax_model, max_bos_mass=0.5)  # it sinks
'''


def test_fixtures_and_assertions_work_in_a_user_test_file(pytester):
    pytester.makepyfile(test_user=USER_TESTS)
    result = pytester.runpytest(*PLUGIN)
    result.assert_outcomes(passed=4, failed=1)
    result.stdout.fnmatch_lines(["*model has a sink: BOS mass above max_bos_mass=0.5*",
                                 "*head 0: BOS mass *at t=* of *"])


def test_overriding_the_task_fixture_moves_every_model_fixture(pytester):
    pytester.makeconftest('''
import pytest, sinkproof as sp

@pytest.fixture
def sinkproof_task():
    return sp.TriggerTask(p=2, T=2, positions="onehot")
''')
    pytester.makepyfile(test_user='''
def test_models_follow_the_task(sinkproof_task, sinkproof_relu_model, sinkproof_assert):
    assert sinkproof_relu_model.task is sinkproof_task and sinkproof_task.p == 2
    sinkproof_assert.assert_solves(sinkproof_relu_model, eps=0)
''')
    pytester.runpytest(*PLUGIN).assert_outcomes(passed=1)


def test_the_header_names_the_version(pytester):
    pytester.makepyfile(test_user="def test_nothing():\n    pass\n")
    result = pytester.runpytest(*PLUGIN)
    result.stdout.fnmatch_lines([f"sinkproof {sinkproof.__version__} (plugin *)"])


def test_pyproject_declares_the_pytest11_entry_point():
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    points = meta["project"]["entry-points"]["pytest11"]
    assert points == {"sinkproof": "sinkproof.pytest_plugin"}
    module = points["sinkproof"]
    assert (ROOT / Path(*module.split("."))).with_suffix(".py").is_file()


def test_loading_the_plugin_imports_no_numerical_layer():
    code = ("import sys, sinkproof.pytest_plugin; "
            "print(sorted(m for m in ('numpy', 'hypothesis', 'sinkproof.task') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, check=True)
    assert out.stdout.strip() == "[]"
