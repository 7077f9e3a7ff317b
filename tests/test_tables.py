"""Result tables: one protocol (records, DataFrame, CSV, LaTeX) on every result that is a
table, exact cells written exactly, pandas optional."""

from __future__ import annotations

import csv
import io
import sys
from fractions import Fraction

import pytest

import sinkproof as sp
from sinkproof.tables import RecordTable, Tabular, cell_text, latex_escape

RECORDS = [{"name": "a_b & c", "bound": Fraction(1, 20), "third": Fraction(1, 3),
            "x": 0.1, "none": None, "prefix": [0, -1], "ok": True},
           {"name": "50%", "bound": Fraction(0), "third": None, "x": float("nan"),
            "none": None, "prefix": [], "ok": False, "extra": 7}]


def test_csv_writes_exact_cells_exactly_and_reads_back():
    table = RecordTable(RECORDS)
    rows = list(csv.DictReader(io.StringIO(table.to_csv())))
    assert list(rows[0]) == ["name", "bound", "third", "x", "none", "prefix", "ok", "extra"]
    assert rows[0]["bound"] == "0.05" and rows[0]["third"] == "1/3"
    assert Fraction(rows[0]["third"]) == Fraction(1, 3) and float(rows[0]["x"]) == 0.1
    assert rows[0]["none"] == "" and rows[0]["prefix"] == "[0, -1]" and rows[0]["extra"] == ""
    assert rows[1]["extra"] == "7" and rows[1]["x"] == "nan"


def test_csv_and_latex_go_to_a_file_or_stdout(tmp_path, capsys):
    table = RecordTable(RECORDS)
    text = table.to_csv(tmp_path / "t.csv")
    assert (tmp_path / "t.csv").read_text(encoding="utf-8") == text
    table.to_latex("-")
    assert capsys.readouterr().out == table.to_latex()


def test_latex_escapes_specials_and_rounds_floats_only():
    tex = RecordTable(RECORDS).to_latex(caption="bounds_1")
    assert tex.startswith("\\begin{table}") and "\\caption{bounds\\_1}" in tex
    assert "a\\_b \\& c" in tex and "50\\%" in tex and "1/3" in tex
    assert "\\toprule" in tex and tex.count("\\\\\n") == 3  # header and two rows
    assert latex_escape("\\^~") == "\\textbackslash{}\\textasciicircum{}\\textasciitilde{}"
    assert cell_text(1 / 3, ".3g") == "0.333" and cell_text(Fraction(1, 3), ".3g") == "1/3"


def test_dataframe_holds_the_records():
    pd = pytest.importorskip("pandas")
    df = RecordTable(RECORDS).to_dataframe()
    assert isinstance(df, pd.DataFrame) and df.shape == (2, 10)  # 8 columns and 2 float ones
    assert df.loc[0, "bound"] == Fraction(1, 20) and df.loc[1, "extra"] == 7
    columns = list(df.columns)
    assert columns[columns.index("bound") + 1] == "bound (float)"
    assert df.loc[0, "bound (float)"] == 0.05 and pd.isna(df.loc[1, "third (float)"])


def test_without_pandas_to_dataframe_says_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)  # import pandas now fails
    with pytest.raises(ImportError, match="needs pandas, which is not installed: pip") as info:
        RecordTable(RECORDS).to_dataframe()
    assert "\n" not in str(info.value)
    assert RecordTable(RECORDS).to_csv()  # CSV and LaTeX need no pandas


@pytest.fixture(scope="module")
def sink_map():
    return sp.sink_map(sp.TriggerTask(p=1, T=2), eps="1/20")


def test_sink_map_rows_are_its_entries(sink_map):
    records = sink_map.to_records()
    assert len(records) == len(sink_map.entries)
    for r, (key, e) in zip(records, sink_map.entries.items()):
        assert r["position"] == len(key) and (r["status"], r["exact"]) == (e.status, e.exact)
        assert r["prefix"] == "(" + ", ".join("TRIG" if c == sp.TRIG else str(c)
                                              for c in key) + ")"
    rows = list(csv.DictReader(io.StringIO(sink_map.to_csv())))
    assert [Fraction(r["exact"]) for r in rows if r["exact"]] == [
        e.exact for e in sink_map.entries.values() if e.exact is not None]
    assert sink_map.to_latex().count("\\\n") == len(records) + 1


def test_family_certificate_rows_are_its_situations():
    cert = sp.convex.family_certificate(sp.TriggerTask(p=1, T=2), "1/20")
    records = cert.to_records()
    assert [r["bound"] for r in records] == [s.bound for s in cert.situations]
    assert len(records) == len(cert.table())


def test_a_check_outcome_is_a_row_and_outcomes_a_table():
    claim = {"task": {"p": 1, "T": 2}, "model": {"kind": "softmax", "values": "fixed"},
             "hypothesis": {"max_error": "1/20"},
             "conclusion": {"min_bos_mass": "1/2", "at": "homogeneous"}}
    out = sp.check(claim, search=False)
    assert isinstance(out, sp.claims.Proved)
    (row,) = out.to_records()
    assert row["status"] == "proved" and row["exit_code"] == 0 and row["proved by"] == out.by
    table = sp.claims.outcome_table([out, out])
    assert len(table) == 2 and table.table_columns()[:4] == ["claim", "statement", "status",
                                                           "exit_code"]
    with pytest.raises(TypeError, match="outcome 1: expected Proved, Refuted or Open"):
        sp.claims.outcome_table([out, "proved"])


def test_report_tables_keep_their_column_order():
    from sinkproof.report.table import Table

    t = Table("T", ["z", "a"], [[1, 2.5], [3, None]])
    assert t.to_records() == [{"z": 1, "a": 2.5}, {"z": 3, "a": None}]
    assert t.to_csv() == "z,a\n1,2.5\n3,\n"


def test_every_result_table_class_shares_the_protocol():
    from sinkproof.bnb.multihead import HeadsResult
    from sinkproof.bnb.result import BnbResult
    from sinkproof.claims.outcome import Open, Proved, Refuted
    from sinkproof.convex.family import FamilyCertificate
    from sinkproof.experiment.runner import ExperimentResult
    from sinkproof.report.table import Table
    from sinkproof.search.frontier import Frontier
    from sinkproof.search.result import SearchResult
    from sinkproof.sinkmap.result import SinkMap
    from sinkproof.sweep.runner import SweepResult
    from sinkproof.variants.table import VariantsTable

    classes = [BnbResult, HeadsResult, Open, Proved, Refuted, FamilyCertificate,
               ExperimentResult, Table, Frontier, SearchResult, SinkMap, SweepResult,
               VariantsTable]
    for cls in classes:
        assert issubclass(cls, Tabular), cls
        assert cls.to_records is not Tabular.to_records, f"{cls.__name__} has no to_records"
        for name in ("to_dataframe", "to_csv", "to_latex"):  # one implementation, no twins
            assert getattr(cls, name) is getattr(Tabular, name), (cls, name)


class _Stream(io.StringIO):
    def __init__(self, tty: bool) -> None:
        super().__init__()
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


def test_markdown_tables_become_columns_on_a_terminal_only():
    from sinkproof.tables import for_terminal

    text = "Title\n\n| kind | H | error |\n|---|---|---|\n| softmax | 1 | 0.5 ± 0.1 |\n\nend"
    assert for_terminal(text, _Stream(False)) == text  # a file or a pipe: Markdown
    shown = for_terminal(text, _Stream(True)).splitlines()
    assert shown[:2] == ["Title", ""] and shown[-1] == "end"
    assert shown[2].split() == ["kind", "H", "error"] and set(shown[3]) <= {"-", " "}
    assert shown[4].split() == ["softmax", "1", "0.5", "±", "0.1"] and "|" not in shown[4]
