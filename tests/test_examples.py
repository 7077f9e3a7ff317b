"""Every script in examples/ runs and prints something (each takes seconds)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
SLOW = {"search.py", "quick_experiment.py",  # 10-20 s each on a loaded 2-core machine
        "check.py", "sink_map.py", "certificate.py"}  # 2-3 s of CPU each


def _params() -> list:
    return [pytest.param(p, marks=[pytest.mark.slow] if p.name in SLOW else [], id=p.name)
            for p in sorted(EXAMPLES.glob("*.py"))]


@pytest.mark.parametrize("script", _params())
def test_example_runs(script: Path, tmp_path: Path) -> None:
    env = dict(os.environ, MPLBACKEND="Agg")
    proc = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env, text=True,
                          capture_output=True, timeout=300)
    assert proc.returncode == 0, f"{script.name} exited {proc.returncode}:\n{proc.stderr[-3000:]}"
    assert proc.stdout.strip(), f"{script.name} printed nothing"


def test_every_example_is_listed_in_the_docs_index():
    index = (EXAMPLES.parent / "docs" / "index.md").read_text(encoding="utf-8")
    missing = [p.name for p in EXAMPLES.glob("*.py") if f"`examples/{p.name}`" not in index]
    assert not missing, f"docs/index.md does not list: {', '.join(missing)}"
