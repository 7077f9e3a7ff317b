"""The shape of the top-level API: one rule for every name, one export for every result."""

from __future__ import annotations

import importlib
import types
from fractions import Fraction

import pytest

import sinkproof as sp
from sinkproof.tables import Tabular

VERB_PACKAGES = {"search": "search", "sweep": "run_sweep", "report": "build_report",
                 "variants": "build_table", "experiment": "run"}


@pytest.mark.parametrize("name", sp.__all__)
def test_every_top_level_name_follows_the_rule(name):
    """Callable, unless it is one of the stated namespaces or constants (the docstring)."""
    value = getattr(sp, name)
    if name in sp.NAMESPACES:
        assert isinstance(value, types.ModuleType) and not callable(value)
    elif name in sp.CONSTANTS:
        assert not callable(value) and not isinstance(value, types.ModuleType)
    else:
        assert callable(value), f"sp.{name} is neither callable nor a stated namespace"
    assert set(sp.NAMESPACES) | set(sp.CONSTANTS) <= set(sp.__all__)


@pytest.mark.parametrize("name", sorted(VERB_PACKAGES))
def test_a_verb_package_calls_its_main_function_even_after_import(name):
    """``import sinkproof.<verb>`` puts the package at ``sp.<verb>``: it is callable all
    the same, and calling it calls the main function (here: a stand-in for it)."""
    module = importlib.import_module(f"sinkproof.{name}")
    assert getattr(sp, name) is module and callable(module)
    function = VERB_PACKAGES[name]
    real = getattr(module, function)
    try:
        setattr(module, function, lambda *a, **k: ("called", a, k))
        assert module(1, x=2) == ("called", (1,), {"x": 2})
    finally:
        setattr(module, function, real)


def test_a_report_exports_as_every_result_table_and_keeps_exact_values():
    pytest.importorskip("pandas")
    report = sp.report(sp.TriggerTask(p=1, T=2))
    assert isinstance(report, Tabular)
    records = report.to_records()
    assert {r["table"] for r in records} == {t.title for t in report.tables}
    assert len(records) == sum(len(t.rows) for t in report.tables)
    family = [r for r in records if r["table"].startswith("Theorem 3 family")]
    assert [r["min bound"] for r in family] == [Fraction(99, 100), Fraction(999, 1000)]
    csv = report.to_csv()
    assert ",0.99," in csv and ",0.999," in csv  # exact, not a 12-digit float
    assert "0.99 " in report.to_latex() or "0.99 &" in report.to_latex()
    frame = report.to_dataframe()
    columns = list(frame.columns)
    assert columns[columns.index("min bound") + 1] == "min bound (float)"
    bounds = frame.dropna(subset=["min bound (float)"])
    assert list(bounds["min bound"]) == [Fraction(99, 100), Fraction(999, 1000)]
    assert list(bounds["min bound (float)"]) == [0.99, 0.999]
