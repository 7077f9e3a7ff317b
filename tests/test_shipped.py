"""The theory page and the example claims come with the installed package."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from sinkproof import cli
from sinkproof.errors import EXIT_BAD_INPUT
from sinkproof.shipped import (
    data_path,
    example_names,
    example_path,
    theory_section,
    theory_sections,
    theory_text,
)

ROOT = Path(__file__).resolve().parents[1]


def test_the_shipped_theory_page_is_docs_theory_md():
    assert theory_text() == (ROOT / "docs" / "theory.md").read_text(encoding="utf-8")


def test_the_shipped_examples_are_examples_claims():
    assert example_names() == sorted(p.stem for p in (ROOT / "examples" / "claims").glob("*.toml"))
    for name in example_names():
        assert example_path(name).read_bytes() == (
            ROOT / "examples" / "claims" / f"{name}.toml").read_bytes()


def test_theory_prints_the_page_a_section_or_the_titles(capsys):
    assert cli.main(["theory"]) == 0
    assert capsys.readouterr().out == theory_text()
    assert cli.main(["theory", "--section", "4"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("## 4. The theorems and their proofs") and "### Theorem 1" in out
    assert "## 5." not in out and out == theory_section(4)
    assert cli.main(["theory", "--list"]) == 0
    titles = capsys.readouterr().out.splitlines()
    assert titles == [t.removeprefix("## ") for t in theory_sections().values()]
    assert titles[0] == "1. The task"


def test_theory_refuses_a_section_it_lacks(capsys):
    assert cli.main(["theory", "--section", "99"]) == EXIT_BAD_INPUT
    assert "no section 99; its sections are 1, 2," in capsys.readouterr().err


def test_check_example_lists_and_runs_a_shipped_claim(capsys):
    assert cli.main(["check", "--example"]) == 0
    assert capsys.readouterr().out.split() == example_names()
    assert cli.main(["check", "--example", "fixed_values_homogeneous", "--no-search"]) == 0
    assert capsys.readouterr().out.startswith("PROVED")


@pytest.mark.parametrize("argv, message", [
    (["check", "--example", "fixed_values_homogenous"], "did you mean fixed_values_homogeneous"),
    (["check"], "a claim FILE or --example NAME is needed"),
    (["check", "x.toml", "--example", "after_trigger"], "not both"),
])
def test_check_example_refuses_clearly(argv, message, capsys):
    assert cli.main(argv) == EXIT_BAD_INPUT
    assert message in capsys.readouterr().err


@pytest.mark.slow
def test_the_wheel_carries_the_theory_page_and_the_examples(tmp_path):
    if importlib.util.find_spec("build") is None:
        pytest.skip("building the wheel needs the `build` package (in the test extra)")
    proc = subprocess.run([sys.executable, "-m", "build", "--wheel", "--outdir", str(tmp_path),
                           str(ROOT)], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    (wheel,) = tmp_path.glob("sinkproof-*.whl")
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        assert z.read("sinkproof/data/theory.md").decode() == theory_text()
    shipped = {f"sinkproof/data/claims/{n}.toml" for n in example_names()}
    assert shipped <= names
    schemas = {f"sinkproof/data/schemas/{p.name}" for p in data_path("schemas").glob("*.json")}
    assert schemas <= names


def test_the_readme_states_the_default_instance_of_sinkproof_report():
    from sinkproof.cli_common import DEFAULT_P, DEFAULT_T

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert f"the built-in default instance, p={DEFAULT_P}, T={DEFAULT_T}" in readme
