"""examples/explore_bounds.ipynb runs headlessly (nbclient) and shows tables and a figure."""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "examples" / "explore_bounds.ipynb"


def test_the_committed_notebook_is_clean_and_listed():
    """No stored outputs (they could only go stale: the test below makes fresh ones)."""
    nb = json.loads(NOTEBOOK.read_text(encoding="utf-8"))
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert code and all(not c["outputs"] and c["execution_count"] is None for c in code)
    assert "`examples/explore_bounds.ipynb`" in (ROOT / "docs" / "index.md").read_text("utf-8")


def _missing() -> list[str]:
    return [m for m in ("nbclient", "nbformat", "ipykernel") if importlib.util.find_spec(m) is None]


@pytest.mark.slow
@pytest.mark.skipif(bool(_missing()), reason="running the notebook needs nbclient, nbformat "
                    "and ipykernel (in the test extra)")
def test_the_notebook_runs_headless_and_renders_tables_and_a_figure(tmp_path, monkeypatch):
    import nbformat
    from nbclient import NotebookClient

    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]))
    monkeypatch.setenv("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    nb = nbformat.read(NOTEBOOK, as_version=4)
    NotebookClient(nb, timeout=300, kernel_name="python3",
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    markdown = [o["data"]["text/markdown"] for o in outputs if "text/markdown" in o.get("data", {})]
    tables = [m for m in markdown if "\n|---" in m]
    assert len(tables) >= 6, f"expected tables, got {len(tables)}"
    assert any("FOUND (verified witness)" in m for m in markdown)  # the search found a ReLU head
    assert any("holds=True" in o.get("data", {}).get("text/plain", "") for o in outputs)
    assert any("image/png" in o.get("data", {}) for o in outputs)  # the plot
