"""Size fuzzing of claim and sweep files (issue 24.7): every size field drawn from small to
absurd (negative, zero, huge, huge-digit), and for each file one of: a verdict (0, 1, 3),
a refusal with exit 2 or 4 within a second of CPU, never a hang, an internal error (70)
or a traceback.

The CLI runs in-process (:func:`sinkproof.cli.main`) under a watchdog (:func:`decided`),
so each example is fast; a few end-to-end cases run the installed command with a timeout.
Certificate and witness files are fuzzed the same way in tests/test_fuzz_sizes_checker.py
(the trusted checker's side).  The default run draws few examples; CI draws more.
"""

from __future__ import annotations

import contextlib
import functools
import io
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sinkproof.cli import main

ROOT = Path(__file__).parents[1]
REFUSAL_CPU_SECONDS = 1.0
"""A refusal (exit 2 or 4) takes at most this much CPU: measured as process time, not wall
time, so that a loaded machine does not fail it."""
WATCHDOG_SECONDS = 120
"""Wall-clock seconds after which a run counts as hung (a verdict is allowed its budget)."""
SCALE = max(1, settings.default.max_examples // 15)
FEW = settings(max_examples=6 * SCALE, deadline=None,
               suppress_health_check=[HealthCheck.too_slow,
                                      HealthCheck.function_scoped_fixture])

SIZES = st.one_of(
    st.sampled_from([-(10**30), -1, 0, 1, 2, 3]),
    st.integers(4, 40),
    st.sampled_from([10**3, 10**5, 10**6, 10**8, 10**18, 10**30, 10**400]),
)
"""A size field: negative, zero, small, large, absurd, huge-digit."""
NUMBERS = st.sampled_from([
    "0", "0.05", "0.5", "1", "-1", "1e-400", "1e400", "1e-5000", "1e5000",
    "0." + "0" * 3000 + "1", "9" * 1200, "1" + "0" * 400 + ".5", '"1/20"', '"1/0"',
    '"' + "1" * 900 + "/" + "3" * 900 + '"', "inf", "nan", "-0.0",
])
"""A number field as TOML text: small, zero, negative, tiny, huge, huge-digit, non-finite."""


class Hung(BaseException):
    """The watchdog fired (a BaseException, so that the CLI's own handler lets it through)."""


@functools.cache
def _warm() -> None:
    """Import what a check loads lazily (claims, theorems, engines), so that the CPU time
    of a refusal measures the refusal and not the first import."""
    import sinkproof.claims  # noqa: F401
    import sinkproof.commands.check  # noqa: F401
    import sinkproof.commands.verify  # noqa: F401
    import sinkproof.theorems  # noqa: F401


def decided(argv: list[str]) -> tuple[int, float, str]:
    """``main(argv)``: its exit status, the CPU seconds it took and its stderr; a run past
    :data:`WATCHDOG_SECONDS` fails the test as a hang."""
    _warm()

    def fire(*_):
        raise Hung()

    previous = signal.signal(signal.SIGALRM, fire)
    signal.alarm(WATCHDOG_SECONDS)
    err = io.StringIO()
    start = time.process_time()
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
            try:
                rc = main(argv)
            except SystemExit as exc:
                rc = int(exc.code or 0)
    except Hung:
        pytest.fail(f"hang: {argv} ran past {WATCHDOG_SECONDS} s")
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    return rc, time.process_time() - start, err.getvalue()


def assert_decided(rc: int, cpu: float, err: str) -> None:
    """A verdict, or a one-line refusal (2 or 4) within a second; never 70 or a traceback."""
    assert "Traceback" not in err, err
    assert rc in (0, 1, 2, 3, 4), (rc, err)
    if rc in (2, 4):
        lines = [line for line in err.splitlines() if line.startswith("sinkproof: ")]
        assert len(lines) == 1, err
        assert cpu < REFUSAL_CPU_SECONDS, (cpu, err)


def _toml(value: object) -> str:
    return str(value) if not isinstance(value, str) else value


# ------------------------------------------------------------------ claim files
@st.composite
def trigger_claims(draw) -> str:
    """A claim of our setting with every size field drawn."""
    size = {name: draw(st.one_of(st.sampled_from([default]), SIZES)) for name, default in
            (("p", 2), ("T", 3), ("heads", 1), ("k", 3), ("restarts", 2))}
    content = draw(st.sampled_from(["signed", "gaussian"]))
    k_line = f"k = {size['k']}\n" if content == "gaussian" else ""
    eps = draw(st.one_of(st.just("0.05"), NUMBERS))
    bos = draw(st.one_of(st.just("0.9"), NUMBERS))
    values = draw(st.sampled_from(["fixed", "learned"]))
    return (f"[task]\np = {size['p']}\nT = {size['T']}\ncontent = \"{content}\"\n{k_line}"
            f"positions = \"{draw(st.sampled_from(['inverse', 'onehot']))}\"\n"
            f"[model]\nkind = \"softmax\"\nheads = {size['heads']}\nvalues = \"{values}\"\n"
            f"[hypothesis]\nmax_error = {_toml(eps)}\n"
            f"[conclusion]\nmin_bos_mass = {_toml(bos)}\nat = \"before_trigger\"\n"
            f"[check]\nbudget = 1\nrestarts = {size['restarts']}\n")


@st.composite
def paper_claims(draw) -> str:
    """A claim of the paper's setting with every size field drawn."""
    size = {name: draw(st.one_of(st.sampled_from([default]), SIZES)) for name, default in
            (("n", 4), ("L", 5), ("heads", 1), ("layers", 1), ("grid", 2), ("steps", 50))}
    grid = draw(st.booleans())
    content = (f"content = \"grid\"\ngrid = {size['grid']}\n" if grid
               else "content = [[-1.0], [1.0]]\n")
    eps = draw(st.one_of(st.just("0.05"), NUMBERS))
    return (f"[task]\nsetting = \"paper\"\nn = {size['n']}\nL = {size['L']}\n{content}"
            f"[model]\nkind = \"softmax\"\nheads = {size['heads']}\n"
            f"layers = {size['layers']}\n"
            f"[hypothesis]\nmax_error = {_toml(eps)}\n"
            f"[conclusion]\nmin_bos_mass = 0.5\npositions = \"some\"\n"
            f"[check]\nbudget = 1\nrestarts = 1\nsteps = {size['steps']}\n")


def _check(text: str, tmp_path: Path, *extra: str) -> tuple[int, float, str]:
    path = tmp_path / "claim.toml"
    path.write_text(text, encoding="utf-8")
    return decided(["check", str(path), "--no-search", *extra, "--witness",
                    str(tmp_path / "w.json"), "--certificate-out", str(tmp_path / "c.json")])


@FEW
@given(text=trigger_claims())
def test_trigger_claim_sizes_are_decided_or_refused_at_once(text, tmp_path):
    """Without the engine: a drawn claim within every limit can be a long honest run of
    it (seen: p=3, T=3, 2 fixed-value heads before the trigger, 258 targets, 1074 dual
    solves, 150 s, past the watchdog); the size fields are read, estimated and refused
    before any engine starts, which is what this test draws for."""
    assert_decided(*_check(text, tmp_path, "--no-bnb"))


@FEW
@given(text=paper_claims())
def test_paper_claim_sizes_are_decided_or_refused_at_once(text, tmp_path):
    assert_decided(*_check(text, tmp_path))


TRIGGER = ("[task]\np = {p}\nT = {T}\n[model]\nkind = \"softmax\"\nheads = {heads}\n"
           "values = \"fixed\"\n[hypothesis]\nmax_error = {eps}\n[conclusion]\n"
           "min_bos_mass = 0.9\nat = \"before_trigger\"\n[check]\nbudget = 1\n")
PAPER = ("[task]\nsetting = \"paper\"\nn = {n}\nL = {L}\ncontent = [[-1.0], [1.0]]\n"
         "[model]\nkind = \"softmax\"\nheads = {heads}\nlayers = {layers}\n[hypothesis]\n"
         "max_error = 0.05\n[conclusion]\nmin_bos_mass = 0.5\npositions = \"some\"\n"
         "[check]\nbudget = 1\n")
KNOWN = {  # each hung, met the OOM killer or exited 70 before this round (issue 24.3/24.4)
    "p = 10^6 (terabytes of content table)": (TRIGGER, dict(p=10**6, T=3, heads=1, eps=0.05), 4),
    "p = 10^30": (TRIGGER, dict(p=10**30, T=3, heads=1, eps=0.05), 4),
    "T = 10^8 (the family count looped over T)": (TRIGGER, dict(p=2, T=10**8, heads=1,
                                                                 eps=0.05), 4),
    "T = 10^30": (TRIGGER, dict(p=2, T=10**30, heads=1, eps=0.05), 4),
    "heads = 10^6": (TRIGGER, dict(p=2, T=3, heads=10**6, eps=0.05), 4),
    "heads = 10^30": (TRIGGER, dict(p=2, T=3, heads=10**30, eps=0.05), 4),
    "max_error with a 5000-digit denominator": (TRIGGER, dict(p=2, T=3, heads=1,
                                                              eps="0." + "0" * 5000 + "1"), 2),
    "L = 10^8 (the prefix count looped over L)": (PAPER, dict(n=4, L=10**8, heads=1,
                                                              layers=1), 4),
    "paper heads = 10^6": (PAPER, dict(n=4, L=5, heads=10**6, layers=1), 4),
    "paper layers = 10^30": (PAPER, dict(n=4, L=5, heads=1, layers=10**30), 4),
}


@pytest.mark.parametrize("name", sorted(KNOWN))
def test_known_runaway_claims_are_refused_at_once_naming_the_quantity(name, tmp_path):
    template, fields, expected = KNOWN[name]
    rc, cpu, err = _check(template.format(**fields), tmp_path)
    assert_decided(rc, cpu, err)
    assert rc == expected, err
    if rc == 4:
        assert "not started:" in err and "beyond the limit" in err, err


def test_paper_layers_beyond_the_search_are_refused_by_the_search_estimate(tmp_path):
    """``layers = 10^5`` is a small model file but a search of 10^12 head evaluations."""
    path = tmp_path / "claim.toml"
    path.write_text(PAPER.format(n=4, L=5, heads=1, layers=10**5), encoding="utf-8")
    rc, cpu, err = decided(["check", str(path), "--no-bnb", "--witness",
                            str(tmp_path / "w.json")])
    assert rc == 4 and "head evaluations of the search" in err, err


# ------------------------------------------------------------------ sweep files
@st.composite
def sweep_files(draw) -> str:
    """A certify sweep with drawn grid sizes and axis lengths."""
    T = draw(st.lists(SIZES, min_size=1, max_size=3))
    p = draw(st.one_of(st.just(2), SIZES))
    eps = draw(st.lists(NUMBERS.filter(lambda s: not s.startswith('"')), min_size=1,
                        max_size=2))
    return (f"kind = \"certify\"\n[base]\np = {p}\nvalues = \"fixed\"\n[grid]\n"
            f"eps = [{', '.join(repr(e) for e in eps)}]\nT = [{', '.join(map(str, T))}]\n")


@FEW
@given(text=sweep_files())
def test_sweep_file_sizes_are_read_or_refused_at_once(text, tmp_path):
    """Reading a sweep (every job's settings checked, as ``sweep`` does before any job)."""
    from sinkproof.sweep import load_sweep

    path = tmp_path / "sweep.toml"
    path.write_text(text, encoding="utf-8")
    start = time.process_time()
    try:
        load_sweep(path)
    except (ValueError, TypeError) as exc:
        assert str(exc) and "\n" not in str(exc)
    assert time.process_time() - start < REFUSAL_CPU_SECONDS


def test_a_sweep_with_an_absurd_length_writes_it_exactly(tmp_path):
    """Theorem 3's family certificate needs no enumeration (its situations are sets of at
    most k tokens), so T = 10^30 is certified; its table once met pyarrow's C long (70)."""
    path = tmp_path / "sweep.toml"
    path.write_text("kind = \"certify\"\n[base]\np = 2\nvalues = \"fixed\"\n[grid]\n"
                    f"eps = [\"1/20\"]\nT = [{10**30}]\n", encoding="utf-8")
    rc, cpu, err = decided(["sweep", str(path), "--out", str(tmp_path / "out"),
                            "--no-figures"])
    assert_decided(rc, cpu, err)
    assert rc == 0, err
    assert f",{10**30}," in (tmp_path / "out" / "results.csv").read_text(encoding="utf-8")


# ------------------------------------------------------------------ end to end
@pytest.mark.parametrize("name", ["T = 10^30", "p = 10^6 (terabytes of content table)",
                                  "L = 10^8 (the prefix count looped over L)"])
def test_end_to_end_the_command_refuses_runaway_claims(name, tmp_path):
    template, fields, expected = KNOWN[name]
    path = tmp_path / "claim.toml"
    path.write_text(template.format(**fields), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    run = subprocess.run([sys.executable, "-m", "sinkproof", "check", str(path)],
                         capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path)
    assert run.returncode == expected, run.stderr
    assert run.stderr.count("\n") == 1 and "Traceback" not in run.stderr
