"""docs/findings.md cannot drift: every recorded command is run and must give its outcome.

Each row of the findings tables holds one command ``sinkproof check FILE`` and the
outcome it produced (**Proved**, **Refuted** or **Open**).  Proofs take at most a few
seconds (the branch-and-bound engine's); searches take tens of seconds and run only in
CI (``slow``).
"""

from __future__ import annotations

import json
import re
import shlex
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

import sinkproof as sp
from sinkproof.checker import verify_file
from sinkproof.claims import load_claim
from sinkproof.claims.positions import scan
from sinkproof.cli import main

ROOT = Path(__file__).resolve().parent.parent
FINDINGS = ROOT / "docs" / "findings.md"
EXIT = {"Proved": 0, "Refuted": 1, "Open": 3}
PAIR = re.compile(r"`(sinkproof check [^`]+)`[^`]*?\*\*(Proved|Refuted|Open)\*\*")
"""One command and the first outcome after it: a summary row holds one such pair per
setting (our setting's, then the paper's), or a dash where the question does not apply."""


def recorded() -> list[tuple[str, str]]:
    """``(command, outcome)`` for every setting of every row of docs/findings.md that
    records one (each command once)."""
    seen: dict[str, str] = {}
    for line in FINDINGS.read_text().splitlines():
        for m in PAIR.finditer(line):
            assert seen.get(m.group(1), m.group(2)) == m.group(2), f"{m.group(1)}: two outcomes"
            seen[m.group(1)] = m.group(2)
    return list(seen.items())


def test_summary_rows_hold_both_settings():
    rows = [line for line in FINDINGS.read_text().splitlines() if line.startswith("| (")]
    assert rows and all(line.count("|") == 8 for line in rows), "7 columns per summary row"
    paper = [line for line in rows if "examples/claims/paper_" in line]
    assert len(paper) >= 6, "the paper's setting is asked in most rows"


def witness_model(path: Path, claim) -> sp.AttentionModel:
    """The model stored in a witness file (exact rationals back to float64, exactly)."""
    data = json.loads(path.read_text())["data"]

    def arr(rows):
        return np.array([[[float(Fraction(x)) for x in r] for r in m] for m in rows])

    U = None if data["U"] == "fixed" else arr(data["U"])
    return sp.AttentionModel(claim.task, claim.model_class.kind, arr(data["A"]), U)


def check_two_heads_cancel(model: sp.AttentionModel) -> None:
    """The recorded mechanism: the two heads' content values nearly cancel."""
    v = model.value_table[:, : model.task.k]  # (2, k, p)
    total = np.linalg.norm(v.sum(axis=0), axis=-1)
    each = np.linalg.norm(v, axis=-1).min(axis=0)
    assert np.all(total < 0.25 * each), (total, each)


def check_trigger_is_the_sink(model: sp.AttentionModel, claim) -> None:
    """The recorded mechanism: after the trigger the null mass (BOS + trigger) is ~1."""
    masses = scan(model, claim.conclusion.at)
    assert min(min(m.null) for m in masses) > 0.99
    assert max(max(m.masses) for m in masses) < claim.conclusion.min_bos_mass


MECHANISMS = {
    "two_heads_learned_nontrigger": lambda model, claim: check_two_heads_cancel(model),
    "after_trigger": check_trigger_is_the_sink,
}


def _params() -> list:
    out = []
    for command, outcome in recorded():
        marks = [pytest.mark.slow] if outcome != "Proved" else []
        out.append(pytest.param(command, outcome, marks=marks, id=Path(command.split()[2]).stem))
    return out


def test_findings_record_every_question():
    rows = recorded()
    assert len(rows) >= 14
    for command, _ in rows:
        path = ROOT / shlex.split(command)[2]
        assert path.exists(), f"{command}: no such claim file"
        load_claim(path)  # parses


@pytest.mark.parametrize(("command", "outcome"), _params())
def test_findings_command_gives_its_recorded_outcome(command, outcome, tmp_path, capsys,
                                                     monkeypatch):
    monkeypatch.chdir(ROOT)
    args = shlex.split(command)[1:]
    witness = tmp_path / "w.json"
    code = main([*args, "--witness", str(witness), "--certificate-out", str(tmp_path / "c.json")])
    out = capsys.readouterr().out
    assert code == EXIT[outcome], out
    assert out.startswith(outcome.upper())
    by = out.split("proved by:")[-1].split("\n")[0]
    if "certificate" in by or "bnb" in by:
        verdict = verify_file(tmp_path / "c.json")
        assert verdict.ok and verdict.digest in out
        if "bnb" in by:  # one head: ours, or the paper setting's adapter
            paper = not load_claim(ROOT / args[1]).task.has_positions
            assert verdict.kind == ("paper-bnb-learned-values" if paper else
                                    "bnb-learned-values")
    if outcome == "Refuted":
        assert verify_file(witness).ok
        claim = load_claim(ROOT / args[1])
        check = MECHANISMS.get(Path(args[1]).stem)
        if check is not None:
            check(witness_model(witness, claim), claim)
