"""Attacks on how input is read and how the CLI reports: exact thresholds, exit statuses,
work limits, Ctrl-C, and the small defects (vacuous named theorems, empty position sets)."""

from __future__ import annotations

import decimal
import importlib
import os
import signal
import subprocess
import sys
import time
from fractions import Fraction
from pathlib import Path

import pytest
import sympy
from hypothesis import given
from hypothesis import strategies as st

import sinkproof as sp
from sinkproof import cli
from sinkproof.claims import Proved, check, claim_from_dict, load_claim
from sinkproof.claims.compare import at_least, rational_below
from sinkproof.errors import EXIT_CODES
from sinkproof.exact_numbers import exact, load_json, load_toml, show

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}

CLAIM = """
[task]
p = 2
T = {T}
[model]
kind = "softmax"
heads = 1
values = "fixed"
[hypothesis]
max_error = {eps}
[conclusion]
min_bos_mass = {b}
at = "{at}"
"""


def claim_file(tmp_path: Path, T: int = 3, eps: str = "0.01", b: str = "0.5",
               at: str = "homogeneous") -> Path:
    path = tmp_path / "c.toml"
    path.write_text(CLAIM.format(T=T, eps=eps, b=b, at=at))
    return path


class Ran:
    """What ``sinkproof ARGV`` did, run in this process: status and stderr."""

    def __init__(self, capsys: pytest.CaptureFixture, *argv: str) -> None:
        capsys.readouterr()
        self.returncode = cli.main(list(argv))
        self.stderr = capsys.readouterr().err


def run_cli(capsys: pytest.CaptureFixture, *argv: str) -> Ran:
    return Ran(capsys, *argv)


# ------------------------------------------------------------ exact numbers as written
def test_toml_decimals_are_read_exactly_not_through_a_float(tmp_path):
    claim = load_claim(claim_file(tmp_path, eps="1e-400", b='"1/3"'))
    assert claim.hypothesis.max_error == Fraction(1, 10**400)  # float('1e-400') is 0.0
    assert claim.conclusion.min_bos_mass == Fraction(1, 3)
    assert load_toml("x = 0.1")["x"] == decimal.Decimal("0.1")


@pytest.mark.parametrize("value", [Fraction(1, 20), "1/20", "0.05", " 0.05 ", 0.05,
                                   decimal.Decimal("0.05"), sympy.Rational(1, 20), "5e-2"])
def test_every_spelling_of_one_twentieth_is_one_twentieth(value):
    assert exact(value) == Fraction(1, 20)
    data = dict(task=dict(p=2, T=3), model=dict(kind="softmax", heads=1, values="fixed"),
                hypothesis=dict(max_error=value), conclusion=dict(min_bos_mass=0.5,
                                                                  at="homogeneous"))
    claim = claim_from_dict(data)
    assert claim.hypothesis.max_error == Fraction(1, 20)
    assert claim_from_dict(claim.to_dict()).hypothesis.max_error == Fraction(1, 20)


@pytest.mark.parametrize("bad", ["abc", "1/0", "\u0661", "nan", float("inf"), True, None,
                                 "1e-99999999", "9" * 2000])
def test_non_numbers_are_one_line_errors(bad):
    with pytest.raises((ValueError, TypeError)) as info:
        exact(bad, "eps")
    assert "eps" in str(info.value) and "\n" not in str(info.value)


def test_json_claims_refuse_duplicate_keys_and_nan():
    with pytest.raises(ValueError, match="duplicate key 'a'"):
        load_json('{"a": 1, "a": 2}')
    with pytest.raises(ValueError, match="NaN"):
        load_json('{"a": NaN}')
    assert load_json('{"a": 1e-400}')["a"] == decimal.Decimal("1e-400")


@given(st.fractions(min_value=0, max_value=1, max_denominator=10**6))
def test_show_then_exact_is_the_identity(q):
    assert exact(show(q)) == q


def test_meaningless_error_levels_and_masses_are_refused_consistently(tmp_path, capsys):
    for eps in ("1", "1.5"):
        with pytest.raises(ValueError, match="vacuous"):
            load_claim(claim_file(tmp_path, eps=eps))
        for cmd in (["certify", "--out", "-"], ["sinkmap"]):
            proc = run_cli(capsys, *cmd, "--eps", eps)
            assert proc.returncode == 2 and "vacuous" in proc.stderr
            assert len(proc.stderr.strip().splitlines()) == 1
    with pytest.raises(ValueError, match=r"must be in \(0, 1\]"):
        load_claim(claim_file(tmp_path, b="1.5"))
    assert run_cli(capsys, "sinkmap", "--eps", "0.1", "--rows", "-1").returncode == 2
    assert run_cli(capsys, "report", "--T", "-3").returncode == 2


# ------------------------------------------------------------ exact comparisons
def test_sympy_comparisons_sympy_leaves_open_are_decided():
    x = sympy.log(8) / sympy.log(2)  # exactly 3; bool(x >= 3) raises in SymPy
    with pytest.raises(TypeError):
        bool(x >= 3)
    assert at_least(x, 3)
    assert not at_least(x, Fraction(3) + Fraction(1, 10**80))
    assert at_least(x, Fraction(3) - Fraction(1, 10**80))
    assert not at_least(sympy.Symbol("x"), 0)  # undecidable: does not prove
    low = rational_below(sympy.sqrt(2) / 2)
    assert low < sympy.sqrt(2) / 2 and sympy.sqrt(2) / 2 - low < Fraction(1, 10**45)


def test_a_refutation_carries_the_claims_exact_eps(tmp_path):
    data = dict(task=dict(p=2, T=3), model=dict(kind="softmax", heads=1, values="fixed"),
                hypothesis=dict(max_error="1/10"),
                conclusion=dict(min_bos_mass="99/100", at="homogeneous"))
    out = check(data, witness=tmp_path / "w.json", budget=5, restarts=1)
    assert out.status == "refuted", out
    doc = sp.checker.load(tmp_path / "w.json")
    assert Fraction(doc["claim"]["max_error"]) == Fraction(1, 10)
    assert Fraction(doc["claim"]["max_bos_mass"]) < Fraction(99, 100)


# ------------------------------------------------------------ small defects
def test_a_vacuous_named_theorem_is_not_printed_as_minus_infinity():
    data = dict(task=dict(p=2, T=3), model=dict(kind="softmax", heads=1, values="fixed"),
                hypothesis=dict(max_error=0.1), conclusion=dict(theorem="theorem3",
                                                                at="trigger"))
    out = check(data, search=False)
    assert isinstance(out, Proved) and out.bound is None
    assert "inf" not in out.render() and "vacuous" in out.render()


def test_an_empty_position_set_is_a_one_line_error(tmp_path, capsys):
    with pytest.raises(ValueError, match="'after_trigger' is empty on T=1"):
        load_claim(claim_file(tmp_path, T=1, at="after_trigger"))
    proc = run_cli(capsys, "check", str(claim_file(tmp_path, T=1, at="after_trigger")))
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1


def test_values_learned_gets_the_right_message(capsys):
    proc = run_cli(capsys, "certify", "--eps", "0.05", "--values", "learned", "--out", "-")
    assert proc.returncode == 2 and "needs known values" in proc.stderr


# ------------------------------------------------------------ exit statuses
def test_exit_statuses_for_completed_decisions(tmp_path):
    assert cli.main(["check", str(claim_file(tmp_path)), "--no-search"]) == 0
    open_claim = claim_file(tmp_path, b="0.9999", eps="0.5")
    assert cli.main(["check", str(open_claim), "--no-search"]) == 3


def test_exit_statuses_for_bad_input_refusal_and_version(tmp_path, capsys):
    assert cli.main(["check", str(tmp_path / "missing.toml")]) == 2
    assert cli.main(["report", "--T", "30"]) == 4
    assert "--max-work" in capsys.readouterr().err
    assert cli.main([]) == 0 and "usage: sinkproof" in capsys.readouterr().out
    assert cli.main(["--version"]) == 0 and sp.__version__ in capsys.readouterr().out
    assert cli.main(["--help"]) == 0 and "130" in capsys.readouterr().out
    assert set(EXIT_CODES) == {0, 1, 2, 3, 4, 70, 130}


@pytest.mark.parametrize("exc", [RuntimeError("boom"), ZeroDivisionError(), KeyError("x"),
                                 AssertionError("invariant")])
def test_an_internal_error_is_70_never_the_refuted_status(monkeypatch, tmp_path, capsys, exc):
    claims_check = importlib.import_module("sinkproof.claims.check")

    def broken(*args, **kwargs):
        raise exc

    monkeypatch.setattr(claims_check, "prove_by_theorem", broken)
    assert cli.main(["check", str(claim_file(tmp_path))]) == 70
    err = capsys.readouterr().err
    assert "internal error" in err and "Traceback" not in err
    assert cli.main(["check", str(claim_file(tmp_path)), "--debug"]) == 70
    assert "Traceback" in capsys.readouterr().err


def test_a_value_error_from_inside_numpy_is_internal_not_bad_input(monkeypatch, tmp_path):
    import numpy as np

    claims_check = importlib.import_module("sinkproof.claims.check")

    def broken(*args, **kwargs):
        np.reshape(np.zeros(3), (2, 2))  # ValueError raised inside NumPy: a bug of ours

    monkeypatch.setattr(claims_check, "prove_by_theorem", broken)
    assert cli.main(["check", str(claim_file(tmp_path))]) == 70


def _defined_in_the_package(source: str, name: str):
    """``name`` from ``source`` compiled as if it were a line of the package (its file is a
    name under sinkproof/ whose lines linecache serves), so tracebacks point into it."""
    import linecache

    filename = str(Path(sp.__file__).parent / "_injected_by_a_test.py")
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace: dict = {}
    exec(compile(source, filename, "exec"), namespace)
    return namespace[name]


@pytest.mark.parametrize("source, status", [
    ("def broken(*args, **kwargs):\n    return 'b' + 1\n", 70),           # the interpreter's
    ("def broken(*args, **kwargs):\n    return len(1, 2)\n", 70),         # wrong arguments
    ("def broken(*args, **kwargs):\n    raise TypeError('b must be a number')\n", 2),
    ("def broken(*args, **kwargs):\n    raise ValueError('b must be positive')\n", 2),
], ids=["operand", "arguments", "raise-type-error", "raise-value-error"])
def test_a_type_error_is_bad_input_only_when_the_package_raises_it(monkeypatch, tmp_path,
                                                                   source, status):
    claims_check = importlib.import_module("sinkproof.claims.check")
    monkeypatch.setattr(claims_check, "prove_by_theorem", _defined_in_the_package(source, "broken"))
    assert cli.main(["check", str(claim_file(tmp_path))]) == status


@pytest.mark.slow  # 2.3 s of CPU (a shell pipeline) in the default run; CI runs it
def test_a_closed_pipe_is_not_an_error():
    proc = subprocess.run(f"{sys.executable} -m sinkproof report --T 3 | head -1", shell=True,
                          capture_output=True, text=True, env=ENV, timeout=120)
    assert proc.returncode == 0 and proc.stderr == "" and proc.stdout.startswith("sinkproof")


# ------------------------------------------------------------ nothing hangs
def test_a_claim_a_theorem_proves_is_proved_without_enumerating_a_huge_family(tmp_path):
    path = claim_file(tmp_path, T=40, eps="1e-400")  # S_T has ~10^25 sequences
    start = time.perf_counter()
    out = check(path, search=False)
    assert isinstance(out, Proved) and out.by == "theorem1"
    assert time.perf_counter() - start < 20


def test_a_claim_no_theorem_proves_on_a_huge_family_is_refused_at_once(tmp_path):
    path = claim_file(tmp_path, T=40, b="0.9999", eps="0.5", at="nontrigger")
    start = time.perf_counter()
    assert cli.main(["check", str(path)]) == 4
    assert time.perf_counter() - start < 20


# ------------------------------------------------------------ Ctrl-C
@pytest.mark.slow  # about 20 s: a real process, a real signal
def test_ctrl_c_stops_a_long_check_prints_the_partial_result_and_exits_130(tmp_path):
    path = tmp_path / "long.toml"  # true, unproved (family too small for Theorem 3): Open
    path.write_text(CLAIM.format(T=3, eps="0.01", b="0.5", at="before_trigger")
                    .replace("[conclusion]", 'family = "homogeneous"\n[conclusion]'))
    proc = subprocess.Popen([sys.executable, "-m", "sinkproof", "check", str(path),
                             "--budget", "300", "--restarts", "1000"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV,
                            cwd=tmp_path)
    time.sleep(15)  # past the proof routes, into the search
    sent = time.perf_counter()
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert time.perf_counter() - sent < 10, "Ctrl-C took too long"
    assert proc.returncode == 130, (out, err)
    assert "interrupted" in out.lower() or "interrupted" in err.lower()


GAUSSIAN = dict(p=3, content="gaussian", k=3, seed=0)


def _theorem3_claim(T: int, at: str, b: str = "1/2") -> dict:
    return dict(task=dict(T=T, **GAUSSIAN), model=dict(kind="softmax", heads=1, values="fixed"),
                hypothesis=dict(max_error="1/1000"), conclusion=dict(min_bos_mass=b, at=at))


def test_theorem3_by_situations_proves_a_huge_family_at_once():
    start = time.perf_counter()
    out = check(_theorem3_claim(40, "before_trigger"), search=False)  # ~10^19 positions
    assert isinstance(out, Proved) and out.by == "theorem3"
    assert time.perf_counter() - start < 20


@pytest.mark.parametrize("at", ["nontrigger", "before_trigger", "after_trigger", "homogeneous"])
def test_situations_give_the_same_least_bound_as_every_position(at):
    """Cross-check: the least Theorem 3 bound over one position per situation equals the least
    over every claimed position, listed one by one."""
    from sinkproof.claims.theorems import situations
    from sinkproof.theorems import THEOREMS

    claim = claim_from_dict(_theorem3_claim(4, at))
    every = [(s[:t], t) for s, t in claim.conclusion.at.pair_list(claim.task)
             if s[t - 1] != sp.TRIG]
    reps = situations(claim)
    assert reps is not None and set(reps) <= set(every) and len(reps) < len(every)
    thm = THEOREMS["theorem3"]
    eps = claim.hypothesis.max_error

    def least(pairs):
        inst = thm.instantiate(claim.task, eps, positions=pairs)
        items = [inst.bound_at(s, t) for s, t in pairs]
        return None if None in items else min(item.bound for item in items)

    assert least(reps) == least(every)


def test_search_refuses_meaningless_thresholds():
    task = sp.TriggerTask(p=1, T=2)
    with pytest.raises(ValueError, match="max_bos_mass must be in"):
        sp.search(task, max_bos_mass=1.5)
    with pytest.raises(ValueError, match="vacuous"):
        sp.search(task, max_error=1.2)


@pytest.mark.slow  # a real process per command and a real signal, about 20 s each
@pytest.mark.parametrize("argv, partial", [
    (["sinkmap", "--p", "3", "--T", "7", "--eps", "0.1", "--max-work", "100000000"],
     "positions settled"),
    (["experiment", "--jobs", "2", "--no-figures", "--out", "exp"], "runs finished"),
])
def test_ctrl_c_stops_other_long_commands_with_130(tmp_path, argv, partial):
    """Ctrl-C as a terminal sends it: SIGINT to the whole process group (workers too)."""
    proc = subprocess.Popen([sys.executable, "-m", "sinkproof", *argv], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=ENV, cwd=tmp_path,
                            start_new_session=True)
    time.sleep(6)  # past start-up; the sink map (about 15 s on an idle machine since it got
    # faster, and finished within the former 12 s wait) and the experiment (minutes) still run
    assert proc.poll() is None, "the command finished before the signal: make it longer"
    sent = time.perf_counter()
    os.killpg(proc.pid, signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert time.perf_counter() - sent < 5, "Ctrl-C took too long"
    assert proc.returncode == 130, (out, err)
    # the partial result, or (a loaded machine still listing the targets) nothing finished yet
    assert (partial in out and "interrupted" in out and err == "") or (
        out == "" and err == "sinkproof: interrupted\n"), (out, err)
