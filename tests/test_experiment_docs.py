"""docs/experiments.md shows what ``sinkproof experiment`` wrote, unedited."""

from __future__ import annotations

from pathlib import Path

import pytest

from sinkproof.experiment import ExperimentConfig, load

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "experiments.md"
OUT = ROOT / "docs" / "figures" / "experiments"


@pytest.fixture(scope="module")
def stored():
    return load(OUT)


def test_stored_run_is_the_default_run(stored):
    assert stored.config == ExperimentConfig.default()
    assert len(stored.runs) == stored.config.n_runs
    assert stored.violations == 0


def test_results_md_is_regenerated_from_the_json(stored):
    assert (OUT / "results.md").read_text() == stored.markdown()


def test_doc_shows_the_stored_tables_verbatim():
    doc = DOC.read_text()
    tables = [block for block in (OUT / "results.md").read_text().split("\n\n")
              if block.startswith("|")]
    assert len(tables) >= 2
    for table in tables:
        assert table in doc


def test_doc_names_the_command_and_figures():
    doc = DOC.read_text()
    assert "sinkproof experiment --jobs 2 --out docs/figures/experiments" in doc
    for name in ("heatmaps.png", "bos_training.png"):
        assert f"figures/experiments/{name}" in doc
        assert (OUT / name).stat().st_size < 200_000
