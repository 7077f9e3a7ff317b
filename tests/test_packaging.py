"""Packaging: one version, a licence, type hints shipped, a README that reads on a package
index, and a source distribution that carries (and passes) its own tests."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
import tarfile
import tomllib
import warnings
from pathlib import Path

import pytest

import sinkproof

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def test_the_version_is_written_in_one_place():
    project = PYPROJECT["project"]
    assert "version" not in project and "version" in project["dynamic"]
    attr = PYPROJECT["tool"]["setuptools"]["dynamic"]["version"]["attr"]
    assert attr == "sinkproof._version.__version__"
    from sinkproof._version import __version__

    assert sinkproof.__version__ == __version__
    assert re.fullmatch(r"\d+\.\d+\.\d+(\.dev\d+|rc\d+)?", __version__)
    hard_coded = [p for p in (ROOT / "sinkproof").rglob("*.py") if p.name != "_version.py"
                  and re.search(r"^__version__\s*=\s*['\"]", p.read_text(encoding="utf-8"), re.M)]
    assert not hard_coded, f"version literal outside _version.py: {hard_coded}"


def test_the_changelog_names_the_current_version():
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert "## Unreleased" in text and f"## {sinkproof.__version__}" in text


def test_licence_and_type_hints_ship():
    assert PYPROJECT["project"]["license"] == "MIT"
    assert "MIT License" in (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert (ROOT / "sinkproof" / "py.typed").exists()
    assert "py.typed" in PYPROJECT["tool"]["setuptools"]["package-data"]["sinkproof"]


def test_supported_pythons_are_declared_consistently():
    assert PYPROJECT["project"]["requires-python"] == ">=3.11"
    assert PYPROJECT["tool"]["ruff"]["target-version"] == "py311"
    assert sys.version_info >= (3, 11)


_LINK = re.compile(r"(?P<bang>!?)\[[^\]]*\]\((?P<target>[^)\s]+)\)")


def test_readme_has_no_relative_links_that_break_on_a_package_index():
    """On a package index page relative links have no repository to resolve against, so the
    README names documentation paths as text; only its images (which exist) are relative."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    relative = [m for m in _LINK.finditer(text)
                if not re.match(r"^[a-z][a-z0-9+.-]*:", m.group("target"))]
    links = [m.group("target") for m in relative if not m.group("bang")]
    assert not links, f"README.md has relative links: {links}"
    images = [m.group("target") for m in relative if m.group("bang")]
    assert all((ROOT / t).exists() for t in images), images
    assert "THEORY" not in text


def test_a_deprecation_from_sinkproof_code_fails_the_tests():
    with pytest.raises(DeprecationWarning):
        warnings.warn_explicit("old", DeprecationWarning, "x.py", 1, module="sinkproof.task")
    with warnings.catch_warnings(record=True):  # elsewhere: reported, not an error
        warnings.warn_explicit("old", DeprecationWarning, "x.py", 1, module="somelib")


def _readme_test_command() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    lines = [ln for ln in text.splitlines() if ln.startswith("pip install -e \".[test]\"")]
    assert len(lines) == 1, "the README shows one test command"
    return lines[0].strip()


def test_ci_runs_exactly_the_readme_test_command():
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert ci[-1].strip() == _readme_test_command()
    assert "pytest-xdist" in " ".join(PYPROJECT["project"]["optional-dependencies"]["test"])


# ------------------------------------------------------------------ the sdist

NEEDED_IN_SDIST = (
    "LICENSE", "CHANGELOG.md", "README.md", "mkdocs.yml", "pyproject.toml", "sinkproof/py.typed",
    "sinkproof/_version.py", "tests/conftest.py", "tests/test_docs.py", "docs/theory.md",
    "docs/figures/attention_constructions.png", "examples/construction.py", "examples/claims",
    "benchmarks",
)

# a quick subset that touches the package, the docs and the examples from the unpacked tree
SDIST_TESTS = ["tests/test_task.py", "tests/test_packaging.py", "tests/test_symbolic_docs.py",
               "tests/test_docs.py::test_doc_links_resolve",
               "tests/test_docs.py::test_doc_code_blocks_run[docs/theory.md]",
               "tests/test_examples.py::test_every_example_is_listed_in_the_docs_index"]


def _build_sdist(out: Path) -> Path:
    if importlib.util.find_spec("build") is None:
        pytest.skip("building the sdist needs the `build` package (in the test extra)")
    proc = subprocess.run(
        [sys.executable, "-m", "build", "--sdist", "--outdir", str(out), str(ROOT)],
        capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        pytest.fail("python -m build --sdist failed:\n"
                    f"{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    (sdist,) = out.glob("sinkproof-*.tar.gz")
    return sdist


@pytest.mark.slow
def test_the_sdist_carries_and_passes_its_tests(tmp_path):
    sdist = _build_sdist(tmp_path / "dist")
    assert sdist.name == f"sinkproof-{sinkproof.__version__}.tar.gz"
    with tarfile.open(sdist) as tar:
        names = tar.getnames()
        tar.extractall(tmp_path / "unpacked", filter="data")
    top = f"sinkproof-{sinkproof.__version__}"
    missing = [n for n in NEEDED_IN_SDIST
               if not any(x == f"{top}/{n}" or x.startswith(f"{top}/{n}/") for x in names)]
    assert not missing, f"the sdist lacks {missing}"
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]
    root = tmp_path / "unpacked" / top
    env = dict(os.environ, PYTHONPATH=str(root), MPLBACKEND="Agg", SINKPROOF_SLOW="0")
    env.pop("CI", None)  # the quick subset only: this test must not run itself again
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider",
                           *SDIST_TESTS],
                          cwd=root, env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, f"pytest from the unpacked sdist failed:\n{proc.stdout[-3000:]}"
