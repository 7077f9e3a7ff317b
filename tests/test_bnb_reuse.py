"""The engine's leaf certificates from each leaf's own multipliers (``reuse=True``, the
default) against a dual program per leaf (``reuse=False``, the engine before): the same
trees and the same verdicts, certificates the trusted checker verifies, fewer dual
programs; and the integer pieces of the exact rounding."""

from __future__ import annotations

import math
import pickle
import uuid
from fractions import Fraction

import pytest

import sinkproof as sp
from sinkproof.bnb import conic, prove
from sinkproof.bnb import dual as bnb_dual
from sinkproof.checker import verify
from sinkproof.tasks import PaperTask

EPS = Fraction(1, 20)
PAPER = PaperTask(n=4, L=4, content=[[-1.0], [1.0]])
TRIGGER = sp.TriggerTask(p=2, T=3)
CASES = [
    # (task, prove's arguments): a proof, a bound without goal, a miss, fixed values
    (PAPER, dict(eps=EPS, min_bos_mass=Fraction(1, 2), max_nodes=60)),
    (PAPER, dict(eps=EPS, max_nodes=12)),
    (PAPER, dict(eps=EPS, min_bos_mass=Fraction(99, 100), max_nodes=8)),
    (TRIGGER, dict(eps=EPS, at="homogeneous", min_bos_mass=Fraction(1, 2), max_nodes=40)),
    (TRIGGER, dict(eps=EPS, at="nontrigger", values="fixed", max_nodes=10)),
]


def _counted(monkeypatch) -> list[int]:
    """Count the dual programs solved (``conic.solve_dual`` calls)."""
    calls = [0]
    inner = conic.solve_dual

    def counting(*a, **k):
        calls[0] += 1
        return inner(*a, **k)

    monkeypatch.setattr(conic, "solve_dual", counting)
    return calls


@pytest.mark.parametrize("case", range(len(CASES)))
def test_reuse_keeps_trees_and_verdicts(case, monkeypatch):
    task, kw = CASES[case]
    calls = _counted(monkeypatch)
    before = prove(task, **kw, reuse=False)
    solved_before = calls[0]
    calls[0] = 0
    now = prove(task, **kw)
    assert now.status == before.status
    assert now.nodes == before.nodes
    assert [o.tree.bound for o in now.targets] == [o.tree.bound for o in before.targets]
    assert [o.certified is None for o in now.targets] == \
        [o.certified is None for o in before.targets]
    for result in (before, now):
        if result.certificate is not None:
            assert verify(result.certificate).ok
    assert (now.certificate is None) == (before.certificate is None)
    if before.bound is not None:
        # the same multipliers or better: tight cones never raise c0; a leaf's own point
        # may sit a rounding error away from the dual program's (both are exact bounds)
        assert abs(float(now.bound) - float(before.bound)) < 1e-6
    if solved_before:
        assert calls[0] < solved_before  # some leaf was certified with no dual program


def test_own_multipliers_certify_leaves_alone(monkeypatch):
    """With no dual program at all (every ``solve_dual`` refused), trees whose leaves the
    leaves' own multipliers certify still prove the claim, and the checker verifies it:
    the shortcut is a certificate by itself, not a hint."""
    monkeypatch.setattr(conic, "solve_dual", lambda *a, **k: None)
    kw = dict(eps=EPS, min_bos_mass=Fraction(1, 2), max_nodes=60)
    result = prove(PAPER, **kw, targets=[(0,), (1,), (0, 0)])
    assert result.status == "proved"
    assert verify(result.certificate).ok
    assert prove(PAPER, **kw, targets=[(0,), (1,), (0, 0)], reuse=False).status == "open"


def test_parallel_trees_match_serial_with_reuse():
    kw = dict(eps=EPS, min_bos_mass=Fraction(1, 2), max_nodes=30)
    serial = prove(PAPER, **kw)
    parallel = prove(PAPER, **kw, workers=2)
    assert parallel.status == serial.status and parallel.nodes == serial.nodes
    assert parallel.bound == serial.bound
    assert parallel.certificate == serial.certificate


def test_a_workers_jobs_of_one_proof_share_its_relaxation_and_empty_boxes():
    """A worker keeps one proof's relaxation (its prefix part assembled once) and its
    certified empty boxes from job to job; the trees are those of jobs run apart, and a
    new proof's first job replaces what the last one kept."""
    from sinkproof.bnb import api

    kw = dict(eps=EPS, min_bos_mass=Fraction(1, 2), max_nodes=30)
    jobs = []
    real = api._grow_parallel

    def capture(wanted, relaxation, settings, some, limit, deadline, workers, outcomes,
                shared=None):
        plan = api._plan(wanted, relaxation, shared)
        jobs.extend((relaxation, wanted[i], settings, limit, True) for i, (rep, _)
                    in enumerate(plan) if rep == i)
        return real(wanted, relaxation, settings, some, limit, deadline, workers, outcomes,
                    shared)

    api._grow_parallel = capture
    try:
        prove(PAPER, **kw, workers=2)
    finally:
        api._grow_parallel = real
    assert len(jobs) >= 2
    sent = [pickle.loads(pickle.dumps((*job, "one proof"))) for job in jobs]  # as loky
    kept = [api._tree_job(job) for job in sent]
    relaxation, shared = api._PROOF_IN_WORKER["one proof"]
    assert relaxation is sent[0][0] and relaxation._base is not None
    assert all(job[0]._base is None for job in sent[1:])  # the first one's served them
    assert sum(len(box) for box in shared._empties.values()) > 0
    apart = [api._tree_job((*job, f"proof {i}")) for i, job in enumerate(jobs)]
    assert list(api._PROOF_IN_WORKER) == [f"proof {len(jobs) - 1}"]
    for (tree, _, certified, skipped), (tree2, _, certified2, skipped2) in zip(kept, apart):
        assert tree.nodes == tree2.nodes and tree.bos_bound == tree2.bos_bound
        assert (certified, skipped) == (certified2, skipped2)


@pytest.mark.parametrize("task, kw", CASES)
def test_trees_grown_apart_are_certified_as_the_serial_loop_certifies_them(task, kw,
                                                                           monkeypatch):
    """Every target's tree grown in a worker of its own (no earlier target's empty boxes
    there) and certified again by the parent in target order gives the serial
    certificate: a leaf that only an earlier target's empty box certifies is not split
    further in the worker (once it was, and the parallel tree had 4 nodes more)."""
    from sinkproof.bnb import api
    from sinkproof.executor import SerialExecutor

    serial = prove(task, **kw)
    in_worker = []

    def apart(job):  # a fresh proof id: the worker keeps nothing from earlier jobs
        got = api._tree_job((*job[:5], uuid.uuid4().hex))
        in_worker.append(got[2])
        return got

    class OwnWorkerEach:
        def map(self, fn, jobs):
            return SerialExecutor().map(apart, jobs)

    monkeypatch.setattr(api, "shared_processes", lambda *a, **k: OwnWorkerEach())
    parallel = prove(task, **kw, workers=2)
    assert in_worker, "the trees were not grown through the workers' job"
    assert (parallel.status, parallel.nodes, parallel.bound) == \
        (serial.status, serial.nodes, serial.bound)
    assert parallel.certificate == serial.certificate


@pytest.mark.parametrize("vec", [[Fraction(3), Fraction(4)], [Fraction(1, 3), Fraction(-1, 7)],
                                 [Fraction(0)], [Fraction(2, 1 << 40), Fraction(-5, 1 << 40)]])
def test_ceil_norm_is_least_over_its_denominator(vec):
    s = bnb_dual._ceil_norm(vec)
    sq = sum(x * x for x in vec)
    d = math.lcm(1, *(x.denominator for x in vec))
    assert s * s >= sq
    assert s == 0 or (s - Fraction(1, d)) ** 2 < sq
    assert (s * d).denominator == 1
