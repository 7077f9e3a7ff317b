"""Every size in a claim is estimated before anything is allocated or looped over: a claim
with ``L = 10^8``, ``T = 10^8``, ``p = 10^6`` or ``heads = 10^6`` is refused at once (exit 4,
the quantity named) or decided by a theorem that needs no enumeration (issue 24)."""

from __future__ import annotations

import time

import pytest

import sinkproof as sp
from sinkproof.claims import Proved, claim_from_dict
from sinkproof.cli import main
from sinkproof.errors import WorkLimitError
from sinkproof.tasks import PaperTask

HUGE = 10**8


def _claim(task, model, **hyp):
    con = {"min_bos_mass": 0.5}
    if task.get("setting") != "paper":
        con["at"] = "nontrigger"
    return {"task": task, "model": model, "hypothesis": {"max_error": 0.05, **hyp},
            "conclusion": con}


LEARNED2 = {"kind": "softmax", "heads": 2, "values": "learned"}
CASES = [
    ({"setting": "paper", "n": 4, "L": HUGE, "content": [[1.0], [-1.0]]}, LEARNED2, {},
     "prefixes"),
    ({"p": 2, "T": HUGE}, LEARNED2, {}, "prefixes"),
    ({"p": 2, "T": HUGE}, LEARNED2, {"family": "homogeneous"}, "prefixes"),
    ({"p": 2, "T": HUGE}, {"kind": "softmax", "heads": 1, "values": "fixed"}, {}, "prefixes"),
    ({"p": 10**6, "T": 3}, LEARNED2, {}, "content table"),
    ({"p": 2, "T": 3}, {"kind": "softmax", "heads": 10**6, "values": "learned"}, {},
     "weights"),
    ({"setting": "paper", "n": 4, "L": 5, "content": [[1.0]]},
     {"kind": "softmax", "heads": 10**6, "values": "learned"}, {}, "weights"),
]


@pytest.mark.parametrize("task, model, hyp, quantity", CASES)
def test_a_huge_claim_is_refused_at_once_with_the_quantity_named(task, model, hyp, quantity):
    start = time.perf_counter()
    with pytest.raises(WorkLimitError, match=quantity):
        sp.check(claim_from_dict(_claim(task, model, **hyp)), bnb=False)
    assert time.perf_counter() - start < 2.0


def test_the_cli_refuses_a_huge_claim_with_exit_4(tmp_path, capsys):
    path = tmp_path / "huge.toml"
    path.write_text(f"[task]\nsetting = \"paper\"\nn = 4\nL = {HUGE}\n"
                    "content = [[1.0], [-1.0]]\n[model]\nheads = 2\n"
                    "[hypothesis]\nmax_error = 0.05\n[conclusion]\nmin_bos_mass = 0.5\n",
                    encoding="utf-8")
    assert main(["check", str(path)]) == 4
    assert "more than 300,000 prefixes" in capsys.readouterr().err


def test_a_theorem_still_proves_a_huge_paper_claim_without_enumerating():
    data = _claim({"setting": "paper", "n": 4, "L": HUGE, "content": [[1.0], [-1.0]]},
                  {"kind": "softmax", "heads": 1, "values": "fixed"})
    start = time.perf_counter()
    assert isinstance(sp.check(claim_from_dict(data)), Proved)
    assert time.perf_counter() - start < 2.0


def test_capped_counts_agree_with_the_exact_ones_and_stop_at_the_cap():
    for task in (sp.TriggerTask(p=2, T=4), sp.TriggerTask(p=1, T=5, triggers="multi"),
                 PaperTask(n=4, L=6, content=[[1.0], [0.5], [-1.0]])):
        exact = task.n_sequences
        assert task.n_sequences_at_most(exact) == exact
        assert task.n_sequences_at_most(exact - 1) == exact
    paper = PaperTask(n=4, L=6, content=[[1.0], [0.5], [-1.0]])
    from sinkproof.certformat import paper_prefixes as n_prefixes  # the checker's count

    exact = n_prefixes(paper.m, paper.L)
    assert paper.n_prefixes_at_most(exact) == exact
    assert paper.n_prefixes_at_most(exact - 1) == exact
    assert PaperTask(n=4, L=HUGE, content=[[1.0]]).n_prefixes_at_most(1000) == 1001
