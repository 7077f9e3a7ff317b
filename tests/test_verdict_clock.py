"""The same verdict on a loaded and an idle machine: every example claim recorded in
docs/findings.md keeps its outcome when every clock of the command (and of its worker
processes) runs ten times fast — a machine ten times slower, as far as any wall-time budget
can tell.  A verdict must come from deterministic work (theorems, certificates, the
engine's node budget, constructions, search restarts × steps); wall time may only stop a
search early, and then the outcome says so."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_findings import EXIT, recorded

ROOT = Path(__file__).resolve().parent.parent
SLOW_CLOCK = Path(__file__).resolve().parent / "data" / "slowclock"
SLOWDOWN = 10


def _slow_clock_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(SLOW_CLOCK), str(ROOT), *filter(None, [env.get("PYTHONPATH")])])
    env["SINKPROOF_TEST_SLOWDOWN"] = str(SLOWDOWN)
    env["SINKPROOF_TEST_EPOCH"] = repr(time.time())
    return env


def test_the_slow_clock_runs_fast_in_every_process():
    """The harness itself: a child sees its clocks run ``SLOWDOWN`` times fast."""
    code = ("import time; a, b = time.time(), time.perf_counter(); "
            "t = time.process_time()\nwhile time.process_time() - t < 0.2: pass\n"
            "print(time.time() - a, time.perf_counter() - b)")
    out = subprocess.run([sys.executable, "-c", code], env=_slow_clock_env(),
                         capture_output=True, text=True, check=True, timeout=60).stdout
    wall, perf = map(float, out.split())
    assert wall > 0.2 * SLOWDOWN * 0.9 and perf > 0.2 * SLOWDOWN * 0.9


NOT_IN_FINDINGS = {
    "paper_p1_one_head_every": "Proved",
    "paper_p1_position": "Proved",
    "paper_p1_uniform": "Proved",
    "paper_p1_uniform_position": "Proved",
    "paper_p1_one_head_too_strong": "Refuted",
    "paper_sink_logit_slot": "Refuted",
    "paper_sparsemax_fixed": "Proved",
    "sink_logit_homogeneous": "Refuted",
    "sparsemax_homogeneous": "Proved",
    "two_heads_fixed_before_trigger": "Proved",
    "paper_p1_paper_size": "Proved",
}
"""The verdicts of the example claims docs/findings.md does not record (docs/variants.md
and docs/paper.md use them), each as ``sinkproof check`` gives it at full speed."""

LONG = {"paper_p1_paper_size"}
"""Examples that take minutes (no clock in their route, so a slow machine cannot change
their verdict): their own slow test runs them (tests/test_paperclaims_classes.py), not
this loop."""


def every_example() -> list[tuple[str, str]]:
    """``(command, outcome)`` for every claim of examples/claims (each exactly once)."""
    cases = dict(recorded())
    for name, outcome in NOT_IN_FINDINGS.items():
        cases.setdefault(f"sinkproof check examples/claims/{name}.toml", outcome)
    return sorted(cases.items())


def test_every_example_claim_has_a_recorded_verdict():
    named = {shlex.split(c)[2] for c, _ in every_example()}
    shipped = {f"examples/claims/{p.name}" for p in (ROOT / "examples" / "claims").glob("*.toml")}
    assert named == shipped


def timed_examples() -> list[tuple[str, str]]:
    """:func:`every_example` without the :data:`LONG` ones."""
    return [(c, o) for c, o in every_example() if Path(c.split()[2]).stem not in LONG]


@pytest.mark.slow
@pytest.mark.parametrize("command, outcome", timed_examples(),
                         ids=[c.split("/")[-1] for c, _ in timed_examples()])
def test_every_example_claim_keeps_its_verdict_on_a_ten_times_slower_machine(
        command, outcome, tmp_path):
    argv = shlex.split(command)[1:]  # "sinkproof check FILE ..." -> "check FILE ..."
    argv = [str(ROOT / a) if a.startswith("examples/") else a for a in argv]
    done = subprocess.run(
        [sys.executable, "-m", "sinkproof", *argv, "--witness", str(tmp_path / "w.json"),
         "--certificate-out", str(tmp_path / "c.json"), "--force"],
        env=_slow_clock_env(), cwd=tmp_path, capture_output=True, text=True, timeout=900)
    assert done.returncode == EXIT[outcome], (
        f"{command}: {outcome} at full speed, exit {done.returncode} on a machine "
        f"{SLOWDOWN}x slower\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
