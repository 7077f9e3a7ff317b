"""``sinkproof report`` and the CLI's error handling."""

from __future__ import annotations

import json
import subprocess
import sys

from sinkproof.cli import main


def test_report_prints_the_constructions(capsys):
    assert main(["report", "--T", "4"]) == 0
    out = capsys.readouterr().out
    assert "relu (Thm 4)" in out and "softmax L=16" in out


def test_report_json(tmp_path):
    path = tmp_path / "r.json"
    assert main(["report", "--T", "4", "--json", str(path)]) == 0
    data = json.loads(path.read_text())
    rows = data["tables"][0]["rows"]
    relu = rows[0]
    assert relu["max error"] < 1e-12 and relu["BOS min"] == 0.0
    soft = [r for r in rows if r["model"].startswith("softmax")]
    errors = [r["max error"] for r in soft]
    assert errors == sorted(errors, reverse=True)
    assert soft[-1]["BOS min"] > 0.999


def test_bad_input_exits_nonzero_with_one_line():
    proc = subprocess.run([sys.executable, "-m", "sinkproof", "report", "--p", "0"],
                          capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        "sinkproof: error: argument --content-dim/--p: must be >= 1, got 0 "
        "(see sinkproof report --help)"]


def test_report_objects_are_compact_in_a_shell_and_tables_in_a_notebook():
    import sinkproof as sp
    from sinkproof.report import build_report

    report = build_report(sp.TriggerTask(p=1, T=2))
    assert repr(report).startswith("Report(") and "Constructions" in repr(report)
    assert len(repr(report)) < 400
    md = report._repr_markdown_()
    assert md.count("**Constructions**") == 1 and "| relu (Thm 4) |" in md
    assert "\\|\\|A\\|\\|_2" in md  # pipes inside cells are escaped
