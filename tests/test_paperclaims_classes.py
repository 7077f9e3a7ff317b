"""(P1) claims whose family is read by (query, multiset) class: beyond ``max_work``
prefixes, a finite paper claim about one softmax head at every non-trigger position is
proved by :func:`sinkproof.reduced.prove_subfamily` (one representative per class) and
its work counted in classes; the search, which verifies a witness at every prefix, is
skipped with its reason; beyond ``max_work`` classes the check is refused.

The fast tests run the n = 4, L = 5 example (82 prefixes, 50 classes) with ``max_work``
lowered between the two; ``examples/claims/paper_p1_paper_size.toml`` (n = L = 16,
884,738 prefixes, 864 classes, about two minutes on a loaded 2-core machine) runs with
the slow tests.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import pytest

import sinkproof as sp
from sinkproof import checker
from sinkproof.claims import load_claim
from sinkproof.claims.byclass import reads_by_class
from sinkproof.claims.check import estimate_work
from sinkproof.claims.implications import _by_class, implied_bound
from sinkproof.errors import WorkLimitError

ROOT = Path(__file__).resolve().parents[1]
CLAIMS = ROOT / "examples" / "claims"
EVERY = CLAIMS / "paper_p1_one_head_every.toml"
PAPER_SIZE = CLAIMS / "paper_p1_paper_size.toml"
BETWEEN = 60
"""A ``max_work`` between the example's 50 classes and its 82 prefixes."""


def test_the_example_sizes_lie_on_both_sides_of_the_lowered_limit():
    task = load_claim(EVERY).task
    assert task.n_prefix_classes() == 50 < BETWEEN < task.n_prefixes_at_most(10**6) == 82


def test_the_work_is_counted_in_classes_only_beyond_max_work_prefixes():
    """At the default limit the prefixes are listed (the token-pair route, as before); at
    a limit below the prefix count every route reads classes, and the estimate counts
    them (closed form)."""
    claim = load_claim(EVERY)
    assert not reads_by_class(claim) and estimate_work(claim) == 82
    low = claim.with_options(max_work=BETWEEN)
    assert reads_by_class(low) and estimate_work(low) == 50
    # 'some' position, several heads, a theorem: not a class route, the prefixes count
    some = load_claim(CLAIMS / "paper_p1_one_head_too_strong.toml").with_options(
        max_work=BETWEEN)
    assert not reads_by_class(some) and estimate_work(some) == BETWEEN + 1


def test_the_claim_is_proved_by_classes_and_its_certificate_verifies(tmp_path):
    out = sp.check(EVERY, max_work=BETWEEN, certificate_out=tmp_path / "c.json")
    assert out.status == "proved" and out.by == "bnb", out
    assert "32 non-trigger (query, multiset) classes" in out.detail
    assert "every non-trigger position of every sequence of the family" in out.detail
    verdict = checker.verify_file(tmp_path / "c.json")
    assert verdict.ok and verdict.statement["kind"] == "paper-subfamily-bnb"
    assert verdict.statement["content_domain"] == "finite"
    bounds = verdict.statement["conclusion"]["bounds"]
    assert len(bounds) == 32  # one per non-trigger class, not one per prefix (54)
    assert all(Fraction(b) >= Fraction(1, 2) for _, b in bounds)
    assert out.bound >= 0.5


def test_the_least_over_classes_is_the_least_over_every_prefix(tmp_path):
    """The implication reads the statement at one prefix per class; listing every
    non-trigger prefix of the family instead gives the same least bound."""
    from sinkproof.bnb.targets import nontrigger_targets

    claim = load_claim(EVERY).with_options(max_work=BETWEEN)
    out = sp.check(claim, certificate_out=tmp_path / "c.json", search=False)
    statement = checker.verify_file(tmp_path / "c.json").statement
    by = _by_class(statement)
    every = [by(tuple(p), claim.task.m) for p in nontrigger_targets(claim.task)]
    assert len(every) == 54 and None not in every
    assert implied_bound(claim, statement) == min(every)
    assert float(min(every)) == out.bound


def test_the_search_is_skipped_with_its_reason_beyond_max_work_prefixes():
    """No engine, and a witness would be verified at 82 > 60 prefixes: Open, saying so."""
    out = sp.check(EVERY, max_work=BETWEEN, bnb=False)
    assert out.status == "open"
    assert any(r.startswith("search: not run: a witness is verified at every prefix")
               for r in out.reasons), out.reasons


def test_beyond_max_work_classes_the_check_is_refused():
    with pytest.raises(WorkLimitError, match="prefixes to enumerate"):
        sp.check(EVERY, max_work=40)


def test_the_paper_size_example_is_routed_by_classes():
    """n = L = 16: 884,738 prefixes (beyond the default limit), 864 classes."""
    claim = load_claim(PAPER_SIZE)
    assert claim.task.n_prefixes_at_most(10**7) == 884_738
    assert reads_by_class(claim) and estimate_work(claim) == 864


def test_one_position_at_the_paper_size_is_proved_by_its_class(tmp_path):
    """``at = [[...]]`` at n = L = 16 (refused before: 884,738 prefixes): one tree over
    the 864 classes, well under a second of trees; the certificate verifies."""
    import tomllib

    from sinkproof.claims import claim_from_dict

    data = tomllib.loads(PAPER_SIZE.read_text(encoding="utf-8"))
    e1 = [1.0] + [0.0] * 12
    minus = [-x for x in e1]
    data["conclusion"] = {"at": [minus, minus, e1], "trigger": 2, "min_bos_mass": 0.5}
    claim = claim_from_dict(data)
    assert reads_by_class(claim) and estimate_work(claim) == 864
    out = sp.check(claim, certificate_out=tmp_path / "c.json")
    assert out.status == "proved" and out.by == "bnb", out
    assert "reduced family: 864 prefixes, the prefix's class" in out.detail
    assert checker.verify_file(tmp_path / "c.json").ok
    assert 0.5 <= out.bound < 1


@pytest.mark.slow  # about two minutes (107 s wall at load 3-4): CI runs it
def test_the_paper_size_example_is_proved(tmp_path):
    out = sp.check(PAPER_SIZE, certificate_out=tmp_path / "c.json")
    assert out.status == "proved" and out.by == "bnb", out
    assert "626 non-trigger (query, multiset) classes" in out.detail
    verdict = checker.verify_file(tmp_path / "c.json")
    assert verdict.ok and verdict.statement["kind"] == "paper-subfamily-bnb"
