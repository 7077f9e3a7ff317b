"""The tightness tables and the sandwich figure: both sides computed, never crossing."""

from __future__ import annotations

import math

import matplotlib
import numpy as np
import pytest

import sinkproof as sp
from sinkproof.report import SECTIONS, build_report
from sinkproof.report.tightness import (
    plot_theorem5_sandwich,
    sandwich_curve,
    theorem1_tightness_section,
    theorem5_sandwich_section,
)

matplotlib.use("Agg")
TASKS = [sp.TriggerTask(2, 4), sp.TriggerTask(1, 3, positions="onehot"),
         sp.TriggerTask(2, 3, content="gaussian", k=3, seed=4)]


@pytest.mark.parametrize("task", TASKS)
def test_theorem5_sandwich_never_crosses(task):
    (table,) = theorem5_sandwich_section(task, Ls=(0.5, 2.0, 6.0))
    for L, B, floor, err, ratio, needed, over in table.rows:
        assert pytest.approx(L * (1 + math.sqrt(5)) / 2) == B  # ‖A‖_2 = golden ratio · L
        assert 0 < floor <= err and ratio >= 1
        assert needed <= B and over >= 1  # the construction uses at least the certified norm


@pytest.mark.parametrize("task", TASKS)
def test_theorem1_table_is_below_one_and_attained(task):
    (table,) = theorem1_tightness_section(task, Ls=(1.0, 5.0))
    for _L, _eps, bound, bos_min, allowed, measured, tightness in table.rows:
        assert measured <= allowed * (1 + 1e-9) and bos_min >= bound - 1e-12
        assert tightness <= 1 + 1e-9
    signed = sp.TriggerTask(2, 4)
    (table,) = theorem1_tightness_section(signed, Ls=(1.0, 5.0))
    # the construction's worst error sits on X^c_T: Theorem 1 is attained exactly
    assert all(row[-1] == pytest.approx(1.0, rel=1e-9) for row in table.rows)


def test_sandwich_closes_at_zero_norm_and_opens_after():
    task = sp.TriggerTask(2, 6)
    data = sandwich_curve(task, [0.0, 1.0, 4.0])
    assert data["log10_eps_min"][0] == pytest.approx(math.log10(6 / 7))  # Q = T at B = 0
    assert data["log10_error"][0] == pytest.approx(math.log10(6 / 7))
    assert np.all(data["log10_eps_min"] <= data["log10_error"] + 1e-12)
    assert np.all(np.diff(data["log10_error"] - data["log10_eps_min"]) > 0)


def test_sandwich_plot_draws():
    ax = plot_theorem5_sandwich(sp.TriggerTask(1, 3), Ls=[0.0, 2.0, 4.0])
    assert len(ax.lines) >= 2 and ax.get_xlabel() == "B = ‖A‖_2"
    import matplotlib.pyplot as plt

    plt.close(ax.figure)


def test_report_gains_the_tightness_tables():
    assert theorem5_sandwich_section in SECTIONS and theorem1_tightness_section in SECTIONS
    titles = [t.title for t in build_report(sp.TriggerTask(1, 3)).tables]
    assert "Theorem 5 sandwich (norm vs error)" in titles
    assert "Theorem 1 vs the softmax construction" in titles
