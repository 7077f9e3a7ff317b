"""Every code block in docs/*.md and README.md runs, so the docs cannot drift from the code.

Rules (one test per Markdown file):

- ```python blocks of one file run in order in one shared namespace, fresh per
  file, with the working directory a temporary folder and matplotlib on Agg;
- ```console blocks: each line starting with ``$ `` is a shell command (a
  trailing backslash continues it); it must exit 0.  ``pip install`` commands
  are skipped; the other lines of the block are its shown output, not checked;
- ```pycon blocks (a Python shell session: ``>>> `` and ``... `` lines, then the
  expected output) run as doctests in the same namespace as the python blocks,
  with ELLIPSIS and NORMALIZE_WHITESPACE, so shown output is checked too;
- ```text (and every other language) is not run;
- the temporary folder links ``examples/`` from the repository, so docs name
  those files as a user at the repository root would (``examples/claims/...``);
- a fence info string with the word ``slow`` (```console slow) runs only where
  slow tests run (CI), for the rare long command.

A failure names the file and the line of the block.
"""

from __future__ import annotations

import argparse
import doctest
import io
import os
import re
import shutil
import subprocess
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import RUN_SLOW

ROOT = Path(__file__).resolve().parents[1]
COMMAND_TIMEOUT_S = 300
READ_ONLY_DIRS = ("examples",)

_FENCE = re.compile(r"^(?P<indent> {0,3})(?P<fence>`{3,}|~{3,})(?P<info>[^`]*)$")


@dataclass(frozen=True)
class Block:
    """A fenced code block: its language, further info words, first code line (1-based), code."""

    language: str
    options: tuple[str, ...]
    line: int
    code: str


def extract_blocks(text: str) -> list[Block]:
    """The fenced code blocks of a Markdown text, in order."""
    blocks: list[Block] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        fence, words = m.group("fence"), m.group("info").strip().split()
        language = words[0].lower() if words else ""
        options = tuple(w.strip("{}").lower() for w in words[1:])
        start = i + 1
        j = start
        while j < len(lines) and not (
            lines[j].strip().startswith(fence[0] * len(fence)) and
            set(lines[j].strip()) == {fence[0]}
        ):
            j += 1
        body = [ln[len(m.group("indent")):] if ln.startswith(m.group("indent")) else ln
                for ln in lines[start:j]]
        blocks.append(Block(language, options, start + 1, "\n".join(body) + "\n"))
        i = j + 1
    return blocks


def console_commands(code: str) -> list[str]:
    """The ``$ `` commands of a console block (continuations joined), ``pip install`` skipped."""
    commands: list[str] = []
    lines = code.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if not line.startswith("$ "):
            continue
        cmd = line[2:]
        while cmd.endswith("\\") and i < len(lines):
            cmd = cmd[:-1] + " " + lines[i].strip()
            i += 1
        if re.match(r"\s*(python -m )?pip3? install\b", cmd):
            continue
        commands.append(cmd.strip())
    return commands


def _shell_env() -> dict[str, str]:
    env = dict(os.environ, MPLBACKEND="Agg")
    bindir = str(Path(sys.executable).parent)
    env["PATH"] = bindir + os.pathsep + env.get("PATH", "")
    return env


def run_markdown(path: Path, workdir: Path, run_slow: bool = RUN_SLOW) -> int:
    """Run every runnable block of ``path`` in ``workdir``; returns how many blocks ran.

    Raises ``AssertionError`` naming ``path:line`` of the first block that fails.
    """
    import matplotlib

    matplotlib.use("Agg")
    namespace: dict[str, object] = {"__name__": "__docs__"}
    ran = 0
    old_cwd = Path.cwd()
    os.chdir(workdir)
    try:
        for block in extract_blocks(path.read_text(encoding="utf-8")):
            if "slow" in block.options and not run_slow:
                continue
            where = f"{path.name}:{block.line}"
            if block.language == "python":
                try:
                    exec(compile(block.code, where, "exec"), namespace)
                except Exception:
                    raise AssertionError(
                        f"{where}: python block failed\n{traceback.format_exc(limit=-3)}"
                    ) from None
                ran += 1
            elif block.language == "pycon":
                _run_session(block, path, namespace)
                ran += 1
            elif block.language == "console":
                for cmd in console_commands(block.code):
                    _run_command(cmd, where, workdir)
                ran += 1
    finally:
        os.chdir(old_cwd)
        _close_figures()
    return ran


DOCTEST_FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def _run_session(block: Block, path: Path, namespace: dict[str, object]) -> None:
    """Run a ``pycon`` block as a doctest in ``namespace`` (kept for the next blocks)."""
    test = doctest.DocTestParser().get_doctest(
        block.code, namespace, f"{path.name}:{block.line}", path.name, block.line - 1)
    report = io.StringIO()
    runner = doctest.DocTestRunner(optionflags=DOCTEST_FLAGS)
    runner.run(test, out=report.write, clear_globs=False)
    namespace.update(test.globs)  # DocTest ran on a copy
    if runner.failures:
        raise AssertionError(f"{path.name}:{block.line}: shell session differs\n"
                             f"{report.getvalue()}")


def _run_command(cmd: str, where: str, workdir: Path) -> None:
    try:
        proc = subprocess.run(cmd, shell=True, cwd=workdir, env=_shell_env(), text=True,
                              capture_output=True, timeout=COMMAND_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise AssertionError(f"{where}: `{cmd}` ran past {COMMAND_TIMEOUT_S} s") from None
    if proc.returncode != 0:
        tail = (proc.stdout[-1500:] + "\n" + proc.stderr[-1500:]).strip()
        raise AssertionError(f"{where}: `{cmd}` exited {proc.returncode}\n{tail}")


def _close_figures() -> None:
    import matplotlib.pyplot as plt

    plt.close("all")


def doc_files() -> list[Path]:
    files = sorted((ROOT / "docs").glob("*.md"))
    readme = ROOT / "README.md"
    return ([readme] if readme.exists() else []) + files


SLOW_PAGES = {"README.md", "docs/bnb.md", "docs/certificates.md", "docs/experiments.md",
              "docs/paper.md", "docs/search.md", "docs/sinkmap.md", "docs/sweeps.md",
              "docs/testing.md", "docs/tutorial.md", "docs/variants.md"}
"""Pages whose blocks take 2 s of CPU or more (measured with a per-test CPU profile of the
default run): they run where slow tests run (CI), the other pages in every run."""


def _page_params() -> list:
    return [pytest.param(p, id=str(p.relative_to(ROOT)),
                         marks=[pytest.mark.slow] if str(p.relative_to(ROOT)) in SLOW_PAGES
                         else []) for p in doc_files()]


@pytest.mark.parametrize("path", _page_params())
def test_doc_code_blocks_run(path: Path, tmp_path: Path) -> None:
    for shared in READ_ONLY_DIRS:  # so docs can name files as from the repository root
        (tmp_path / shared).symlink_to(ROOT / shared, target_is_directory=True)
    run_markdown(path, tmp_path)


_LINK = re.compile(r"\]\((?P<target>[^)\s]+)\)")


def local_links(path: Path) -> list[str]:
    """Targets of the Markdown links in ``path`` that point into the repository."""
    targets = []
    for m in _LINK.finditer(path.read_text(encoding="utf-8")):
        target = m.group("target").split("#")[0]
        if target and not re.match(r"^[a-z][a-z0-9+.-]*:", target):
            targets.append(target)
    return targets


@pytest.mark.parametrize("path", doc_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_doc_links_resolve(path: Path) -> None:
    missing = [t for t in local_links(path) if not (path.parent / t).exists()]
    assert not missing, f"{path.name}: links to missing files: {', '.join(missing)}"


def test_index_links_every_page():
    index = ROOT / "docs" / "index.md"
    linked = set(local_links(index))
    pages = [p.name for p in sorted(index.parent.glob("*.md")) if p != index]
    missing = [name for name in pages if name not in linked]
    assert not missing, f"docs/index.md does not link: {', '.join(missing)}"


def test_local_links_skip_urls_and_anchors(tmp_path):
    doc = tmp_path / "links.md"
    doc.write_text("[a](a.md) [b](https://x.org/b.md) [c](#top) [d](d.md#part)")
    assert local_links(doc) == ["a.md", "d.md"]


# ---------------------------------------------------------- the CLI reference

CLI_REFERENCE = ROOT / "docs" / "cli.md"
REGENERATE = "python tests/test_docs.py --write-cli-reference"


def _cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _option_rows(parser: argparse.ArgumentParser) -> list[str]:
    formatter = parser._get_formatter()
    out: list[str] = []
    for group in parser._action_groups:
        actions = [a for a in group._group_actions
                   if a.help is not argparse.SUPPRESS and not isinstance(a, argparse._HelpAction)
                   and not isinstance(a, argparse._SubParsersAction)]
        if not actions:
            continue
        out += ["", f"*{group.title}*", "", "| option | value | default | meaning |",
                "|---|---|---|---|"]
        for a in actions:
            name = ", ".join(f"`{o}`" for o in a.option_strings) or f"`{a.metavar or a.dest}`"
            if not a.option_strings:
                value = ""
            elif a.choices is not None:
                value = " \\| ".join(f"`{c}`" for c in a.choices)
            elif a.nargs == 0:
                value = "flag"
            else:
                value = f"`{_cell(a.metavar or a.dest.upper())}`"
            default = "" if a.default in (None, argparse.SUPPRESS) or a.nargs == 0 else (
                f"`{a.default}`")
            meaning = formatter._expand_help(a) if a.help else ""
            out.append(f"| {name} | {value} | {default} | {_cell(meaning)} |")
    return out


def render_cli_reference() -> str:
    """``docs/cli.md``, generated from :func:`sinkproof.cli.build_parser`."""
    from sinkproof.cli import build_parser
    from sinkproof.cli_common import json_keys
    from sinkproof.errors import EXIT_CODES

    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    helps = {a.dest: a.help for a in sub._choices_actions}
    lines = [
        "# Command-line reference",
        "",
        f"Generated from the argument parser by `{REGENERATE}`;",
        "do not edit by hand (a test fails when this page and the parser disagree).",
        "",
        f"`sinkproof COMMAND [options]` — {parser.description}",
        "Every error is one line on stderr (`--debug`, anywhere on the line, adds the "
        "traceback). The exit status means only this (0, 1 and 3 come only from a "
        "completed decision; an unexpected error is never 1):",
        "",
        "| status | meaning |",
        "|---|---|",
        *(f"| {code} | {_cell(meaning)} |" for code, meaning in EXIT_CODES.items()),
        "",
        "Numbers are read exactly as written: `--eps 0.05`, `--eps 1/20` and a claim file's "
        "`max_error = 0.05` all mean 1/20, and `1e-400` is 10^-400, not 0 (TOML and JSON "
        "decimals are never passed through a binary float). An error level must lie in "
        "[0, 1) (in (0, 1) where a bound is computed) and a BOS mass in [0, 1]; counts "
        "are non-negative. Every command that takes a size estimates its work before it "
        "starts and refuses (status 4) beyond `--max-work` (`sweep`: `--max-jobs`; "
        "`verify`: its `--max-*` limits; `variants`: position evaluations, or token-steps "
        "with `--trained`); a "
        "claim that Theorem 1 or 3 proves on a named position set is proved from one "
        "position per set of distinct tokens, without listing the family (`T = 40` takes "
        "seconds). Ctrl-C stops a command within about a second (`python "
        "benchmarks/bench_ctrl_c.py` measures every long command; docs/performance.md "
        "shows its table): it prints what it has "
        "finished (the positions settled, the runs or sections done), marked interrupted, "
        "and exits with status 130.",
        "",
        "A refusal for size is one line naming the quantity, the estimate and the limit: "
        "`sinkproof: refused: not started: about 12,938,341,329,476,838,285 prefixes to "
        "enumerate (...), beyond the limit of 300,000 (raise it with --max-work N)`. Every "
        "count is computed in closed form (a family of length `T = 10^30` is estimated in "
        "microseconds, saturating at 10^30), and a table built from a size field (content "
        "vectors, positions, a model's weights) is refused beyond its size before it is "
        "allocated. The Python API refuses the same way: `evaluate`, `sink_map`, `search`, "
        "`check`, `report`, `experiment`, `variants`, `convex.family_certificate` and "
        "`bnb.prove` take `max_work=` (`sweep`: `max_jobs=`; default: "
        "the command's) and raise `sinkproof.work.WorkLimitExceeded` (the error behind "
        "status 4) with the same message ending `(raise it with max_work=N)` (a sweep's: "
        "`max_jobs=N`).",
        "",
        *_conventions(),
        "",
        "| command | what it does |",
        "|---|---|",
    ]
    lines += [f"| [`{n}`](#sinkproof-{n}) | {_cell(helps.get(n) or '')} |" for n in sub.choices]
    for name, cmd in sub.choices.items():
        lines += ["", f"## sinkproof {name}", ""]
        lines.append(_cell(cmd.description or helps.get(name) or ""))
        lines += _option_rows(cmd)
        lines += ["", "*--json object* (always these keys):", "",
                  *(f"- `{k}`: {v}" for k, v in json_keys(cmd).items())]
    return "\n".join(lines) + "\n"


def _conventions() -> list[str]:
    """The conventions every command shares, from :mod:`sinkproof.cli_common`."""
    from sinkproof.cli_common import INTENTIONAL_DIFFERENCES, TASK_DEFAULTS
    from sinkproof.tokens import SYNTAX

    defaults = ", ".join(f"`{k}={v}`" for k, v in TASK_DEFAULTS.items() if v is not None)
    return [
        "Every command reads and writes the same way:",
        "",
        f"- **Sequences** are written as {SYNTAX}; `TRIG` and `-1` are read as the "
        "trigger too, and claim files take the same text or a list.",
        "- **`-`** is stdin wherever a file is read (claim, certificate, sweep file, "
        "`--values` model) and stdout wherever one is written (certificate, witness, "
        "statement, plot, `--json`); when stdout carries data nothing else is printed "
        "there, and two streams on one of them are refused.",
        "- **`--json FILE`** (`-` = stdout) on every command writes one object with the "
        "keys listed under each command, always present.",
        "- **Figures**: `--no-figures` skips them; without matplotlib a plot asked for "
        "(`--plot`) is refused before any work, and default figures are skipped with a "
        "one-line note.",
        "- **Option names** are lower case and spelled out, as in ruff and pytest: "
        "`--content-dim` (p), `--max-length` (T), `--token-dim` (n), `--length` (L), "
        "`--position` (t), `--longer-length`; the one-letter names (`--p`, `--T`, `--n`, "
        "`--L`, `--t`, `--longer-T`) stay as aliases so that old scripts run. No prefix "
        "is accepted for a name (`--ep` is not `--eps`: a later option could change an "
        "old script's meaning); an unknown option is a usage error that names the "
        "closest one (\"did you mean --eps?\").",
        "- **Every command** takes `-q/--quiet` (nothing on stdout but data asked for "
        "there: `--json -`, `--out -`; the exit status carries the verdict), "
        "`-v/--verbose` (progress bars, and the traceback of an error), "
        "`--progress/--no-progress` (bars on stderr; by default on a terminal or in a "
        "notebook, for long work) and `--force`. No colour is printed.",
        "- **Files are written whole or not at all** (a temporary name, renamed once "
        "complete), and a file this run did not create is never replaced: an existing "
        "output path is refused with status 2 unless `--force` is given.",
        "- **A file that cannot be read** is one message in every command: "
        "`sinkproof: error: cannot read FILE: No such file or directory` (status 2).",
        "- `sinkproof` alone prints this help (status 0), `--version` the version; a "
        "closed stdout (`sinkproof report | head -1`) is not an error.",
        "- Meaningless values are usage errors (status 2, one line) before any work: "
        "`--eps` outside (0, 1), negative counts and seeds, `--T 0`, a position beyond "
        "its sequence, `--values learned` where known values are needed. A sweep setting "
        "obeys the rule of the option of its name (`eps`, `T`, `content_seed`, `task.T` in a "
        "check job...), so a sweep with `eps = 1.5` is refused before its first job "
        "(`sinkproof.params`).",
        f"- **Task defaults** (`certify`, `report`, `sinkmap`, a sweep's task): {defaults}.",
        "  The differences, all intentional:",
        *(f"  - {d}" for d in INTENTIONAL_DIFFERENCES),
    ]


def test_cli_reference_is_generated_from_the_parser():
    assert CLI_REFERENCE.exists(), f"docs/cli.md is missing: run {REGENERATE}"
    assert CLI_REFERENCE.read_text(encoding="utf-8") == render_cli_reference(), (
        f"docs/cli.md is stale: run {REGENERATE}")


# ------------------------------------------------------------- the runner itself

SAMPLE = """# Title

```python
x = 2
```

Text.

```text
not run
```

```console
$ echo hello \\
    world
hello world
$ pip install -e .
```

~~~python
assert x == 2
y = x + 1
~~~

```console slow
$ sleep 1000
```
"""


def test_extract_blocks_finds_languages_lines_and_options():
    blocks = extract_blocks(SAMPLE)
    assert [(b.language, b.line) for b in blocks] == [
        ("python", 4), ("text", 10), ("console", 14), ("python", 21), ("console", 26)]
    assert blocks[0].code == "x = 2\n"
    assert blocks[4].options == ("slow",)


def test_console_commands_join_continuations_and_skip_pip():
    code = extract_blocks(SAMPLE)[2].code
    assert console_commands(code) == ["echo hello  world"]
    assert console_commands("$ pip install x\n$ python -m pip install y\n$ ls\n") == ["ls"]


def test_runner_shares_namespace_and_skips_slow_and_text(tmp_path):
    doc = tmp_path / "doc.md"
    doc.write_text(SAMPLE)
    work = tmp_path / "work"
    work.mkdir()
    assert run_markdown(doc, work, run_slow=False) == 3


def test_runner_failure_names_file_and_block_line(tmp_path):
    doc = tmp_path / "broken.md"
    doc.write_text("intro\n\n```python\nx = 1\n```\n\n```python\nassert x == 2, 'no'\n```\n")
    with pytest.raises(AssertionError, match=r"broken\.md:8: python block failed"):
        run_markdown(doc, tmp_path)
    doc.write_text("```console\n$ exit 3\n```\n")
    with pytest.raises(AssertionError, match=r"broken\.md:2: `exit 3` exited 3"):
        run_markdown(doc, tmp_path)


def test_pycon_sessions_are_checked_against_their_shown_output(tmp_path):
    doc = tmp_path / "session.md"
    doc.write_text("```python\nx = 20\n```\n\n```pycon\n>>> x + 1\n21\n>>> y = 2\n```\n\n"
                   "```python\nassert y == 2\n```\n")
    assert run_markdown(doc, tmp_path) == 3
    doc.write_text("intro\n\n```pycon\n>>> 1 + 1\n3\n```\n")
    with pytest.raises(AssertionError, match=r"(?s)session\.md:4: shell session differs.*Expected:"
                       r"\s+3\s+Got:\s+2"):
        run_markdown(doc, tmp_path)


def test_python_blocks_run_in_the_temporary_directory(tmp_path):
    doc = tmp_path / "cwd.md"
    doc.write_text("```python\nfrom pathlib import Path\nPath('made.txt').write_text('x')\n```\n")
    work = tmp_path / "work"
    work.mkdir()
    run_markdown(doc, work)
    assert (work / "made.txt").exists()


@pytest.mark.skipif(shutil.which("sh") is None, reason="needs a POSIX shell")
def test_console_commands_see_the_sinkproof_entry_point(tmp_path):
    doc = tmp_path / "cli.md"
    doc.write_text("```console\n$ sinkproof --version\nsinkproof 0.1.0\n```\n")
    assert run_markdown(doc, tmp_path) == 1


if __name__ == "__main__":
    if sys.argv[1:] != ["--write-cli-reference"]:
        sys.exit(f"usage: {REGENERATE}")
    CLI_REFERENCE.write_text(render_cli_reference(), encoding="utf-8")
    print(f"wrote {CLI_REFERENCE.relative_to(ROOT)}")
