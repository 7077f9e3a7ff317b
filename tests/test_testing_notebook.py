"""Shell and notebook friendliness of the results objects users meet in the tutorial.

Each is built quietly (nothing on stdout or stderr unless asked), prints as a
compact summary, and renders as Markdown in a notebook.
"""

from __future__ import annotations

import pytest

import sinkproof as sp
from sinkproof import checker, convex, theorems
from sinkproof.constructions import relu_solution, softmax_solution

TASK = sp.TriggerTask(p=1, T=2)
MAX_LINES, MAX_WIDTH = 15, 400


def _claim(heads: int) -> dict:
    return {"title": "one softmax head sinks on homogeneous sequences", "task": {"p": 1, "T": 2},
            "model": {"kind": "softmax", "heads": heads, "values": "fixed"},
            "hypothesis": {"max_error": 0.01},
            "conclusion": {"min_bos_mass": 0.99, "at": "homogeneous"}}


BUILDERS = {
    "evaluation": lambda: sp.evaluate(softmax_solution(TASK, 8.0)),
    "instantiated bound": lambda: theorems.theorem(1).instantiate(TASK, eps="1/100"),
    "bound check": lambda: theorems.theorem(1).instantiate(TASK, eps="1/100").check(
        softmax_solution(TASK, 8.0)),
    "family certificate": lambda: convex.family_certificate(TASK, eps="1/100"),
    "verdict": lambda: checker.verify(convex.family_certificate(TASK, eps="1/100").to_dict()),
    "simplex pair": lambda: convex.simplex_pair_at(TASK, [0, 0], 2, eps="1/100"),
    "sink map": lambda: sp.sink_map(TASK, eps="1/100"),
    "proved": lambda: sp.check(_claim(1), search=False),
    "open": lambda: sp.check(_claim(2), search=False),
    "search result": lambda: sp.search(TASK, kind="relu", values="fixed", max_error=0.05,
                                       max_bos_mass=0.05, restarts=1, budget=5, processes=1),
}


@pytest.mark.parametrize("name", BUILDERS)
def test_results_are_quiet_compact_and_render_in_notebooks(name, capsys):
    obj = BUILDERS[name]()
    out, err = capsys.readouterr()
    assert out == "" and err == "", f"building a {name} printed:\n{out}{err}"
    text = repr(obj)
    lines = text.splitlines()
    assert 1 <= len(lines) <= MAX_LINES, f"{name} repr has {len(lines)} lines:\n{text}"
    assert max(len(line) for line in lines) <= MAX_WIDTH, f"{name} repr is too wide:\n{text}"
    assert not text.startswith("<"), f"{name} has no readable repr: {text}"
    markdown = obj._repr_markdown_()
    assert isinstance(markdown, str) and markdown.strip()


def test_evaluation_keeps_arrays_as_attributes():
    ev = sp.evaluate(relu_solution(TASK))
    assert ev.sink_score.shape == (1,) and ev.worst_output.shape == (TASK.p,)
    assert ev.bos_nontrigger.mean.shape == (1,)
