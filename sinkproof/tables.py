"""Result tables: one protocol for every result that is a table of records.

A result class inherits :class:`Tabular` and defines :meth:`Tabular.to_records` (one
dict per row, column name -> cell); the mixin then gives it

- :meth:`~Tabular.to_dataframe`: a pandas DataFrame (pandas is optional: without it a
  one-line :class:`ImportError` says how to install it); a column that holds exact
  rationals keeps them and gets a float column beside it, ``"<name> (float)"``, for
  plotting and arithmetic;
- :meth:`~Tabular.to_csv`: CSV text (standard library only), written to a file or ``-``
  (standard output) when a path is given;
- :meth:`~Tabular.to_latex`: a LaTeX ``tabular`` (standard library only).

:func:`for_terminal` shows the Markdown tables of a text as aligned columns on a terminal
(tabulate: small, pure Python, no dependencies; a wide Markdown table wraps unreadably in
a terminal) and leaves them Markdown for a file or a pipe.

Cells stay what they are in the records (a certified bound is a :class:`~fractions.Fraction`);
CSV and LaTeX write an exact rational as its shortest exact text (``0.05``, ``1/3``), a
float by ``repr`` (CSV) or to six significant digits (LaTeX), ``None`` as an empty cell.
"""

from __future__ import annotations

import csv
import io
import json
import math
import sys
from collections.abc import Iterable
from fractions import Fraction
from pathlib import Path
from typing import Any

from .exact_numbers import show
from .files import write_file

PANDAS_HINT = "pip install pandas (or: pip install 'sinkproof[tables]')"


def pandas() -> Any:
    """The pandas module, or an ImportError that says how to install it."""
    try:
        import pandas as pd
    except ImportError:
        raise ImportError(f"to_dataframe needs pandas, which is not installed: {PANDAS_HINT}"
                          ) from None
    return pd


def cell_text(value: Any, float_format: str | None = None) -> str:
    """One cell as text: exact rationals exactly, ``None`` empty, sequences as JSON."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, Fraction):
        return show(value)
    if isinstance(value, float):
        if float_format is None or math.isnan(value) or math.isinf(value):
            return repr(value)
        return format(value, float_format)
    if isinstance(value, (list, tuple, dict)):
        return json.dumps(value, default=str)
    return str(value)


_LATEX_SPECIAL = {"&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{",
                  "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
                  "\\": r"\textbackslash{}"}


def latex_escape(text: str) -> str:
    """``text`` with LaTeX's special characters escaped."""
    return "".join(_LATEX_SPECIAL.get(c, c) for c in text)


def _write(text: str, path: str | Path | None) -> str:
    if path is None:
        return text
    if str(path) == "-":
        sys.stdout.write(text)
    else:
        write_file(path, text, what="table")
    return text


def _markdown_cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split(" | ")]


def for_terminal(text: str, stream: Any = None) -> str:
    """``text`` with each Markdown table (a ``| a | b |`` header, a ``|---|`` rule, rows) as
    aligned plain columns when ``stream`` (default standard output) is a terminal;
    unchanged otherwise, so that files and pipes get Markdown."""
    stream = sys.stdout if stream is None else stream
    if not getattr(stream, "isatty", lambda: False)():
        return text
    from tabulate import tabulate

    lines, out, i = text.split("\n"), [], 0
    while i < len(lines):
        if (lines[i].startswith("|") and i + 1 < len(lines)
                and set(lines[i + 1].replace("|", "").strip()) <= {"-", ":"}
                and lines[i + 1].startswith("|---")):
            header, j = _markdown_cells(lines[i]), i + 2
            rows = []
            while j < len(lines) and lines[j].startswith("|"):
                rows.append(_markdown_cells(lines[j]))
                j += 1
            out.append(tabulate(rows, headers=header, tablefmt="simple", disable_numparse=True))
            i = j
        else:
            out.append(lines[i])
            i += 1
    return "\n".join(out)


class Tabular:
    """Mixin for results that are tables: define :meth:`to_records`, get the exports."""

    def to_records(self) -> list[dict[str, Any]]:
        """One dict per row (column name -> cell)."""
        raise NotImplementedError

    def table_columns(self) -> list[str]:
        """Column names in order: every key of the records, first-seen order."""
        seen: dict[str, None] = {}
        for record in self.to_records():
            seen.update(dict.fromkeys(record))
        return list(seen)

    def _rows(self) -> tuple[list[str], list[list[Any]]]:
        records = self.to_records()
        columns = self.table_columns()
        return columns, [[r.get(c) for c in columns] for r in records]

    def to_dataframe(self) -> Any:
        """The table as a pandas DataFrame (needs pandas)."""
        pd = pandas()
        columns, rows = self._rows()
        frame = pd.DataFrame(rows, columns=columns)
        for i, name in reversed(list(enumerate(columns))):
            if any(isinstance(row[i], Fraction) for row in rows):
                floats = [float(c) if isinstance(c, (Fraction, int, float)) else math.nan
                          for c in (row[i] for row in rows)]
                frame.insert(i + 1, f"{name} (float)", floats)
        return frame

    def to_csv(self, path: str | Path | None = None) -> str:
        """The table as CSV text (header row first); written to ``path`` (``-``: standard
        output) when given.  Returns the text."""
        columns, rows = self._rows()
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow(columns)
        writer.writerows([cell_text(c) for c in row] for row in rows)
        return _write(buf.getvalue(), path)

    def to_latex(self, path: str | Path | None = None, float_format: str = ".6g",
                 caption: str | None = None) -> str:
        """The table as a LaTeX ``tabular`` (booktabs rules; in a ``table`` float with a
        ``caption`` when given); written to ``path`` when given.  Returns the text."""
        columns, rows = self._rows()
        lines = [r"\begin{tabular}{" + "l" * len(columns) + "}", r"\toprule",
                 " & ".join(latex_escape(c) for c in columns) + r" \\", r"\midrule"]
        lines += [" & ".join(latex_escape(cell_text(c, float_format)) for c in row) + r" \\"
                  for row in rows]
        lines += [r"\bottomrule", r"\end{tabular}"]
        if caption is not None:
            lines = [r"\begin{table}", r"\centering", *lines,
                     r"\caption{" + latex_escape(caption) + "}", r"\end{table}"]
        return _write("\n".join(lines) + "\n", path)


class RecordTable(Tabular):
    """A plain table of records (for example one row per outcome of several checks)."""

    def __init__(self, records: Iterable[dict[str, Any]]) -> None:
        self.records = [dict(r) for r in records]

    def to_records(self) -> list[dict[str, Any]]:
        return [dict(r) for r in self.records]

    def __len__(self) -> int:
        return len(self.records)

    def __repr__(self) -> str:
        return f"RecordTable({len(self.records)} rows x {len(self.table_columns())} columns)"
