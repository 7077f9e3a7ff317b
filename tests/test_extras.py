"""The optional extras: what works without them and what each missing one says."""

from __future__ import annotations

import importlib
import sys
import tomllib
from pathlib import Path

import pytest

import sinkproof as sp

ROOT = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def test_pyarrow_is_an_extra_and_the_test_extra_has_it():
    assert not any(d.startswith("pyarrow") for d in PROJECT["dependencies"])
    assert PROJECT["optional-dependencies"]["parquet"] == ["pyarrow>=14"]
    assert "sinkproof[parquet]" in PROJECT["optional-dependencies"]["test"]


def test_the_testing_extra_names_what_strategies_and_testing_need():
    names = {d.split(">")[0] for d in PROJECT["optional-dependencies"]["testing"]}
    assert names == {"hypothesis", "pytest"}


def test_without_hypothesis_strategies_names_the_testing_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "hypothesis", None)
    monkeypatch.delitem(sys.modules, "sinkproof.strategies", raising=False)
    with pytest.raises(ImportError, match=r"pip install 'sinkproof\[testing\]'"):
        importlib.import_module("sinkproof.strategies")
    monkeypatch.undo()
    importlib.import_module("sinkproof.strategies")


def test_without_pyarrow_a_sweep_writes_its_csv(monkeypatch, tmp_path):
    for name in ("pyarrow", "pyarrow.parquet"):
        monkeypatch.setitem(sys.modules, name, None)
    result = sp.sweep({"kind": "certify", "base": {"p": 1, "eps": "1/20"}, "grid": {"T": [2]}},
                      executor="serial", out=tmp_path / "s", figures=False)
    assert result.summary_line().endswith("0 failed")
    assert (tmp_path / "s" / "results.csv").exists()
    assert not (tmp_path / "s" / "results.parquet").exists()
