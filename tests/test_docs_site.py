"""The documentation site builds with ``mkdocs build --strict``: a broken link, a page missing
from the navigation or a module the API reference cannot load fails the build.

Needs the ``docs`` (or ``test``) extra: MkDocs, the Material theme and mkdocstrings.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NEEDED = ("mkdocs", "material", "mkdocstrings", "mkdocstrings_handlers.python")


def _missing() -> list[str]:
    missing = []
    for name in NEEDED:
        try:
            found = importlib.util.find_spec(name) is not None
        except ModuleNotFoundError:
            found = False
        if not found:
            missing.append(name)
    return missing


pytestmark = pytest.mark.skipif(
    bool(_missing()) or not (ROOT / "mkdocs.yml").exists(),
    reason="the docs site needs mkdocs, mkdocs-material and mkdocstrings[python] "
           "(pip install -e '.[docs]') and mkdocs.yml at the repository root")


def _build(root: Path, site: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1", PYTHONPATH=str(root))
    # no --quiet: it drops the warnings before --strict counts them, and the build passes
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict",
         "-f", str(root / "mkdocs.yml"), "-d", str(site)],
        cwd=root, env=env, text=True, capture_output=True, timeout=300)


@pytest.mark.slow  # 3 s of CPU (mkdocs build) in the default run; CI runs it
def test_site_builds_strict(tmp_path):
    proc = _build(ROOT, tmp_path / "site")
    assert proc.returncode == 0, f"mkdocs build --strict failed:\n{proc.stderr[-3000:]}"
    site = tmp_path / "site"
    assert (site / "index.html").exists() and (site / "theory" / "index.html").exists()
    api = (site / "api" / "core" / "index.html").read_text(encoding="utf-8")
    assert "TriggerTask" in api and "doc-object" in api  # rendered from the docstrings


def _copy_project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    shutil.copy(ROOT / "mkdocs.yml", root / "mkdocs.yml")
    shutil.copytree(ROOT / "docs", root / "docs")
    (root / "sinkproof").symlink_to(ROOT / "sinkproof", target_is_directory=True)
    return root


@pytest.mark.slow  # a second and third full build: CI runs them
def test_a_broken_link_fails_the_build(tmp_path):
    root = _copy_project(tmp_path)
    page = root / "docs" / "tutorial.md"
    page.write_text(page.read_text(encoding="utf-8") + "\nSee [nowhere](no-such-page.md).\n",
                    encoding="utf-8")
    proc = _build(root, tmp_path / "site")
    assert proc.returncode != 0 and "no-such-page.md" in proc.stderr


@pytest.mark.slow
def test_a_page_missing_from_the_nav_fails_the_build(tmp_path):
    root = _copy_project(tmp_path)
    (root / "docs" / "orphan.md").write_text("# Orphan\n", encoding="utf-8")
    proc = _build(root, tmp_path / "site")
    assert proc.returncode != 0 and "orphan.md" in proc.stderr
