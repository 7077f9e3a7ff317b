"""Executors: one abstraction for sweeps and search restarts; the same results wherever
jobs run; a failed or dead job never stops the others; a stopped run stops its jobs."""

from __future__ import annotations

import os
import time
from contextlib import closing
from pathlib import Path

import numpy as np
import pytest

import sinkproof as sp
from sinkproof.executor import (
    DaskExecutor,
    ProcessExecutor,
    SerialExecutor,
    cancelled,
    shared_processes,
)
from sinkproof.search.engine import _outcomes
from sinkproof.search.restart import SearchSettings

SETTINGS = SearchSettings(sp.TriggerTask(p=1, T=2), "softmax", 1, "learned", 0.05, 0.9,
                          "nontrigger", seed=7, maxiter=12)


def _restarts(executor, n=3):
    with closing(_outcomes(SETTINGS, n, executor.workers, executor)) as it:
        return list(it)


def _same(a, b):
    assert [o.index for o in a] == [o.index for o in b] == list(range(len(a)))
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x.A, y.A)
        np.testing.assert_array_equal(x.U, y.U)
        assert (x.error, x.bos_mass, x.penalty, x.points) == (y.error, y.bos_mass, y.penalty,
                                                              y.points)


@pytest.mark.slow  # 2-7 s of subprocesses/compiles: CI runs it
def test_search_restarts_are_identical_serial_in_1_and_2_processes_and_on_dask():
    serial = _restarts(SerialExecutor())
    _same(serial, _restarts(shared_processes(1)))
    _same(serial, _restarts(shared_processes(2)))
    with DaskExecutor(workers=2, processes=False) as ex:
        _same(serial, _restarts(ex))


@pytest.mark.slow
def test_a_search_on_two_dask_worker_processes_gives_the_serial_answer():
    task = sp.TriggerTask(p=1, T=2)
    kw = dict(kind="softmax", values="learned", max_error=0.05, max_bos_mass=0.9,
              restarts=3, seed=11, maxiter=15, progress=False)
    one = sp.search(task, processes=1, **kw)
    with DaskExecutor(workers=2) as ex:
        two = sp.search(task, executor=ex, **kw)
    assert (one.found, one.restarts, one.trace) == (two.found, two.restarts, two.trace)
    np.testing.assert_array_equal(one.model.A, two.model.A)
    assert two.settings["processes"] == 2


def _job(arg):
    """0: return at once; 'die': kill the worker; 'raise': fail; ('mark', path): mark the
    path started; ('after', path): return 0 once the job of that path started (or
    'never started'); a path: mark it started, wait until the run is cancelled, then
    leave a file there."""
    if arg == 0:
        return 0
    if arg == "die":
        os._exit(3)
    if arg == "raise":
        raise ValueError("bad job")
    deadline = time.time() + 120
    if isinstance(arg, tuple) and arg[0] == "mark":
        Path(arg[1] + ".started").write_text("")
        return 0
    if isinstance(arg, tuple):
        while time.time() < deadline and not Path(arg[1] + ".started").exists():
            time.sleep(0.05)
        return 0 if Path(arg[1] + ".started").exists() else "never started"
    Path(arg + ".started").write_text("")
    while time.time() < deadline:
        if cancelled():
            Path(arg).write_text("stopped")
            return "stopped"
        time.sleep(0.05)
    return "never stopped"


def test_a_dead_worker_and_a_raising_job_are_recorded_and_the_others_finish():
    args = [0, "raise", 0, "die", 0, 0, 0]
    with ProcessExecutor(2) as ex:
        results = dict(ex.run(_job, args))
        assert sorted(results) == list(range(len(args)))
        assert results[1].error == "ValueError: bad job"
        assert not results[3].ok and "worker process died" in results[3].error
        assert all(results[i].ok and results[i].value == 0 for i in (0, 2, 4, 5, 6))
        # the pool was restarted: the executor still works
        assert [r.value for r in ex.map(_job, [0, 0])] == [0, 0]


def _blocked_signals(_):
    """The signals this worker process had blocked when it started (its main thread's
    mask, inherited through exec): a set of signal numbers."""
    import signal

    return set(signal.pthread_sigmask(signal.SIG_BLOCK, []))


@pytest.mark.slow  # a fresh 2-worker pool, about 9 s: CI runs it
@pytest.mark.skipif(not hasattr(__import__("signal"), "pthread_sigmask"), reason="POSIX only")
def test_workers_start_with_ctrl_c_blocked_and_the_caller_keeps_it():
    """A terminal's Ctrl-C reaches the workers too: one still importing its modules printed
    a KeyboardInterrupt traceback, so workers are started with SIGINT blocked (the standard
    library's resource tracker, which unblocks it outright, is started before the block)."""
    import signal

    with ProcessExecutor(2) as ex:
        masks = [r.value for r in ex.map(_blocked_signals, [0, 1, 2])]
    assert all(signal.SIGINT in m for m in masks), masks
    assert signal.SIGINT not in signal.pthread_sigmask(signal.SIG_BLOCK, [])


def test_kept_pools_of_different_sizes_each_run_with_their_own_count(tmp_path):
    """Every kept executor shares loky's one reusable pool: a run of the two-worker
    executor after a run of the one-worker one still runs two jobs at once."""
    for turn, workers in enumerate((2, 1, 2)):
        path = str(tmp_path / f"turn{turn}")
        jobs = [("after", path), ("mark", path)] if workers == 2 else [0]
        assert [r.value for r in shared_processes(workers).map(_job, jobs)] == [0] * len(jobs)


def test_stopping_a_run_early_cancels_its_running_jobs(tmp_path):
    ex = shared_processes(2)
    paths = [str(tmp_path / f"job{i}") for i in range(3)]
    with closing(ex.map(_job, [("after", paths[0]), *paths])) as results:
        assert next(results).value == 0
    def stopped():
        return [p for p in paths if Path(p).exists() and Path(p).read_text() == "stopped"]

    deadline = time.time() + 120  # generous: the machine may be loaded
    while time.time() < deadline and not stopped():
        time.sleep(0.1)
    assert stopped()
    assert [r.value for r in ex.map(_job, [0])] == [0]  # the kept pool is still usable


def test_cancelled_is_false_outside_a_job_and_in_the_serial_executor():
    assert not cancelled()
    assert [r.value for r in SerialExecutor().map(lambda _: cancelled(), [0, 1])] == [
        False, False]


@pytest.mark.slow
def test_a_job_that_kills_dask_workers_is_recorded_and_the_others_finish():
    with DaskExecutor(workers=2) as ex:
        results = dict(ex.run(_job, [0, "die", 0, "raise", 0]))
    assert sorted(results) == list(range(5))
    assert not results[1].ok and "no result from the cluster" in results[1].error
    assert results[3].error == "ValueError: bad job"
    assert all(results[i].ok for i in (0, 2, 4))


# ----------------------------------------------------------- the plainest script
PLAIN = """import sinkproof as sp
r = sp.search(sp.TriggerTask(p=1, T=2), kind="relu", values="fixed", max_error=0.05,
              max_bos_mass=0.0, restarts=2, seed=3, processes=2, maxiter=30, progress=False)
print("found", r.found, "workers", *sp.executor.shared_processes(2).pids())
"""
"""Three lines, no ``if __name__ == "__main__":`` guard, worker processes (the
standard library's pools re-run such a script in every worker, which dies)."""


def _left_behind(mark: str) -> list[str]:
    """Processes (other than this one) whose environment holds ``mark``."""
    out = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or int(proc.name) == os.getpid():
            continue
        try:
            environ = (proc / "environ").read_bytes()
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if mark.encode() in environ:
            out.append(f"{proc.name}: {cmdline[:120]}")
    return out


def _run_plain(code, way, tmp_path):
    """Run ``code`` as a script file, on stdin, with -c or interactively; return the
    finished process and the marker its environment (and its children's) carries."""
    import subprocess
    import sys
    import uuid

    script = tmp_path / "plain.py"
    script.write_text(code)
    mark = uuid.uuid4().hex
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1]),
           "SINKPROOF_TEST_MARK": mark}
    argv, stdin = {"script": ([str(script)], None), "stdin": (["-"], code),
                   "-c": (["-c", code], None), "interactive": (["-i"], code)}[way]
    proc = subprocess.run([sys.executable, *argv], input=stdin, capture_output=True,
                          text=True, env=env, cwd=tmp_path, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr, proc.stderr[-2000:]
    return proc, mark


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="needs /proc")
@pytest.mark.parametrize("way", [
    "script",
    pytest.param("stdin", marks=pytest.mark.slow),
    pytest.param("-c", marks=pytest.mark.slow),
    pytest.param("interactive", marks=pytest.mark.slow),
])
def test_a_plain_script_runs_on_worker_processes_and_leaves_no_process_behind(way, tmp_path):
    proc, mark = _run_plain(PLAIN, way, tmp_path)
    line = next(x for x in proc.stdout.splitlines() if "found" in x)
    found, workers = line.split("workers")
    assert "True" in found and len(workers.split()) == 2  # it ran on two workers
    deadline = time.time() + 30  # killed at exit; give the kernel a moment to reap them
    while _left_behind(mark) and time.time() < deadline:
        time.sleep(0.2)
    assert _left_behind(mark) == []


PLAIN_SWEEP = """import sinkproof as sp
r = sp.sweep({"kind": "certify", "base": {"p": 1, "eps": "1/20"}, "grid": {"T": [2, 3]}}, workers=2)
print(r.summary_line())
"""
"""A sweep on its default executor (a Dask LocalCluster, whose nannies spawn workers),
no main guard."""


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="needs /proc")
@pytest.mark.parametrize("way", ["script", "stdin"])
def test_a_plain_sweep_script_runs_on_a_dask_local_cluster(way, tmp_path):
    proc, mark = _run_plain(PLAIN_SWEEP, way, tmp_path)
    assert "2 computed, 0 from cache, 0 failed" in proc.stdout
    deadline = time.time() + 30
    while _left_behind(mark) and time.time() < deadline:
        time.sleep(0.2)
    assert _left_behind(mark) == []
