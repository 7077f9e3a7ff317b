"""The cancelling two-head construction as a refutation route: it settles the two-head
learned-value claim at once, whatever the machine's load (issue 24, item 5)."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest

import sinkproof as sp
from sinkproof.claims import Refuted, check, load_claim
from sinkproof.constructions import cancelling_pair_solution

CLAIMS = Path(__file__).resolve().parents[1] / "examples" / "claims"
TWO_HEADS = CLAIMS / "two_heads_learned_nontrigger.toml"


@pytest.mark.parametrize("heads", [2, 3])
def test_the_pair_cancels_off_the_trigger_and_needs_no_sink(heads):
    task = sp.TriggerTask(p=2, T=3, content="signed", positions="inverse")
    model = cancelling_pair_solution(task, 0.05, heads)
    ev = sp.evaluate(model)
    assert ev.max_error <= 0.05 / 4
    nontrigger = [s for s in task.sequences() if sp.TRIG not in s]
    assert nontrigger
    for seq in nontrigger:
        assert np.all(model.bos_mass(seq)[:, 1:] < 0.01)  # e^{-L} / (e^{-L} + t)
        out, _ = model.forward(seq)
        assert np.abs(out[1:]).max() <= 1e-15  # the two outputs cancel


def _slow_clock(monkeypatch, factor: float = 10.0) -> None:
    """Every clock the code reads runs ``factor`` times fast: each real second counts as
    ``factor`` seconds of budget, as on a machine ``factor`` times slower."""
    for name in ("perf_counter", "monotonic", "time"):
        real = getattr(time, name)
        start = real()
        monkeypatch.setattr(time, name, lambda real=real, start=start: start + factor *
                            (real() - start))


def test_the_two_head_claim_is_refuted_by_the_construction_under_a_slow_clock(monkeypatch):
    _slow_clock(monkeypatch)
    start = time.perf_counter()
    out = check(load_claim(TWO_HEADS))
    assert isinstance(out, Refuted) and "cancelling" in out.detail
    assert sp.checker.verify_file(out.witness).ok
    assert time.perf_counter() - start < 10 * 30  # far below its own budget, slowed


@pytest.mark.parametrize("p, T, content, positions", [
    (1, 3, "signed", "inverse"), (2, 3, "signed", "inverse"), (2, 4, "signed", "onehot"),
    (1, 4, "gaussian", "inverse"), (2, 3, "signed", "none")])
@pytest.mark.parametrize("eps, bos", [(0.05, 0.05), (0.01, 0.001)])
def test_the_trigger_takes_the_sink_after_it(p, T, content, positions, eps, bos):
    """:func:`trigger_sink_solution`: accurate to ``eps / 4`` on the whole family, and at
    every position after the trigger its BOS mass is below ``bos`` while the null mass
    (BOS + the zero-valued trigger) is near 1 — the head rests on the trigger, not BOS."""
    from sinkproof.constructions import trigger_sink_solution

    task = sp.TriggerTask(p=p, T=T, content=content, positions=positions)
    model = trigger_sink_solution(task, eps, bos)
    assert sp.evaluate(model).max_error <= eps / 4
    after = 0
    for seq in task.sequences():
        if sp.TRIG not in seq:
            continue
        masses = model.bos_mass(seq)[0]  # position 0 is BOS, position t holds seq[t - 1]
        for t in range(seq.index(sp.TRIG) + 2, len(seq) + 1):
            after += 1
            assert masses[t] < bos
    assert after > 0


def test_the_after_trigger_claim_is_refuted_by_construction_at_once():
    start = time.process_time()
    outcome = check(CLAIMS / "after_trigger.toml")
    assert isinstance(outcome, Refuted) and "zero-valued trigger" in outcome.detail
    assert time.process_time() - start < 30  # no search ran


def test_a_search_cut_by_its_wall_time_is_open_for_time_and_says_so():
    """The wall-time budget only stops a search early, and an outcome it decided says so:
    status "open (for time)" in the text, the repr and the JSON (issue 24.5)."""
    from sinkproof.claims import Open

    outcome = check(CLAIMS / "learned_values_homogeneous_onehot.toml", budget=0.01, bnb=False)
    assert isinstance(outcome, Open) and outcome.for_time
    assert outcome.status == "open (for time)" and "for time" in repr(outcome)
    assert outcome.to_dict()["for_time"] is True and "open for time:" in outcome.render()
    assert outcome.render().startswith("OPEN (FOR TIME):")
