"""One CLI: every command in ``sinkproof.commands.COMMANDS`` reads, writes and fails the
same way.  A new command must add a :data:`CASES` entry (a fast complete run and a
meaningless value); the tests below then cover it: ``--help``, the ``--json`` object and
its documented keys, ``-`` for stdin and stdout, a closed stdout, bad values (status 2,
one line, no traceback), ``--values learned``, the sequence syntax and missing matplotlib.
"""

from __future__ import annotations

import argparse
import io
import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

import sinkproof as sp
from sinkproof import cli_common, tokens
from sinkproof.attention import MAPS
from sinkproof.cli import build_parser, main
from sinkproof.commands import COMMANDS
from sinkproof.sinkmap import SinkMap

ROOT = Path(__file__).resolve().parents[1]
CLAIM = ROOT / "examples" / "claims" / "fixed_values_homogeneous.toml"
SWEEP = """kind = "certify"
[base]
p = 1
values = "fixed"
[grid]
eps = ["1/10"]
T = [2]
"""


@dataclass(frozen=True)
class Case:
    """``argv``: a fast complete run (``{tmp}`` is a fresh folder, ``{cert}`` a certificate
    file, ``{claim}`` and ``{sweep}`` input files); ``stdin``: the argv word that names an
    input file, replaced by ``-`` with the file's bytes on stdin; ``bad``: a meaningless
    value and the word its one-line error names."""

    argv: tuple[str, ...]
    bad: tuple[str, ...]
    names: str
    stdin: str | None = None
    slow: bool = False


CASES: dict[str, Case] = {
    "certify": Case(("--p", "1", "--T", "2", "--eps", "1/10", "--out", "{tmp}/c.json"),
                    ("--eps", "1", "--out", "-"), "vacuous"),
    "check": Case(("{claim}", "--no-search", "--certificate-out", "{tmp}/c.json"),
                  ("{claim}", "--budget", "-1"), "--budget", stdin="{claim}"),
    "experiment": Case(("--smoke", "--kinds", "relu", "--heads", "1", "--seeds", "1",
                        "--no-figures", "--quiet", "--out", "{tmp}/e"),
                       ("--smoke", "--seeds", "-1"), "--seeds"),
    "paper": Case(("--quick", "--max-steps", "1", "--configs", "1x1", "--kinds", "softmax",
                   "--no-figures", "--out", "{tmp}/p"), ("--max-steps", "-1"), "--max-steps",
                  slow=True),
    "report": Case(("--p", "1", "--T", "2"), ("--T", "0"), "--T"),
    "theory": Case(("--section", "1"), ("--section", "0"), "--section"),
    "sinkmap": Case(("--p", "1", "--T", "2", "--eps", "1/10", "--rows", "2"),
                    ("--eps", "0.1", "--rows", "-1"), "--rows"),
    "sweep": Case(("{sweep}", "--executor", "serial", "--no-figures", "--out", "{tmp}/s"),
                  ("{sweep}", "--out", "{tmp}/s", "--workers", "0"), "--workers",
                  stdin="{sweep}"),
    "variants": Case(("--quick", "--map", "relu", "--question", "bos_sink_necessary"),
                     ("--map", "nope"), "--map"),
    "verify": Case(("{cert}",), ("{cert}", "--max-depth", "0"), "--max-depth", stdin="{cert}"),
}

# a run of each command that estimates its work; with --max-work 1 it is refused before
# any work (status 4), in one line naming the limit and the flag (check: a claim a theorem
# proves needs no enumeration, so tests/test_soundness_cli.py covers it on a huge family)
REFUSED: dict[str, tuple[str, ...]] = {
    "certify": ("--p", "1", "--T", "2", "--eps", "1/10", "--out", "{tmp}/c.json"),
    "experiment": ("--smoke", "--no-figures", "--out", "{tmp}/e"),
    "paper": ("--quick", "--no-figures", "--out", "{tmp}/p"),
    "report": ("--p", "1", "--T", "2"),
    "sinkmap": ("--p", "1", "--T", "2", "--eps", "1/10"),
    "variants": ("--quick",),
    "variants --trained": ("--trained", "--quick"),
}


@pytest.mark.parametrize("which", sorted(REFUSED))
def test_beyond_max_work_is_refused_at_once_naming_the_limit(which, inputs, tmp_path, capsys,
                                                             monkeypatch):
    import sinkproof.variants.table as table
    import sinkproof.variants.trained as trained

    def never(*args, **kwargs):
        raise AssertionError("the work started")

    monkeypatch.setattr(table, "build_table", never)  # variants: nothing may start
    monkeypatch.setattr(trained, "train_variants", never)
    name = which.split()[0]
    argv = [name, *_argv(REFUSED[which], inputs, tmp_path), "--max-work", "1"]
    assert main(argv) == 4
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--max-work" in err and "limit of 1 " in err, err


COMMAND_PARAMS = [pytest.param(name, marks=pytest.mark.slow) if CASES.get(name) and
                  CASES[name].slow else name for name in sorted(COMMANDS)]


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> dict[str, str]:
    folder = tmp_path_factory.mktemp("inputs")
    cert = folder / "cert.json"
    assert main(["certify", "--p", "1", "--T", "2", "--eps", "1/10", "--out", str(cert)]) == 0
    sweep = folder / "grid.toml"
    sweep.write_text(SWEEP)
    return {"{cert}": str(cert), "{claim}": str(CLAIM), "{sweep}": str(sweep)}


def _argv(words: tuple[str, ...], inputs: dict[str, str], tmp: Path) -> list[str]:
    out = []
    for w in words:
        w = inputs.get(w, w)
        out.append(w.replace("{tmp}", str(tmp)))
    return out


def _stdin(monkeypatch, data: bytes) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data), encoding="utf-8"))


def _one_line_error(err: str, names: str) -> None:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("sinkproof: error: "), err
    assert names in lines[0] and "Traceback" not in err


def test_every_command_has_a_case():
    assert set(CASES) == set(COMMANDS), "add a Case for each new command to CASES"


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_help_exits_0_and_names_the_json_option(name, capsys):
    assert main([name, "--help"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: sinkproof {name}") and "--json FILE" in out


def test_bare_sinkproof_prints_help_and_version_exits_0(capsys):
    assert main([]) == 0 and "usage: sinkproof" in capsys.readouterr().out
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"sinkproof {sp.__version__}"


@pytest.mark.parametrize("name", COMMAND_PARAMS)
def test_json_object_closed_pipe_and_stdin(name, inputs, tmp_path, capsys, monkeypatch):
    case = CASES[name]
    argv = [name, *_argv(case.argv, inputs, tmp_path), "--json", "-"]
    status = main(argv)
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    data = json.loads(captured.out)  # stdout holds the JSON object and nothing else
    parser = build_parser((name,))
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    documented = cli_common.json_keys(sub.choices[name])
    assert set(documented) <= set(data), f"{name} --json lacks {set(documented) - set(data)}"
    assert data["command"] == name and data["version"] == sp.__version__
    assert data["exit_status"] == status and status in (0, 1, 3)

    # the reader of stdout has gone: not an error, the same status, nothing on stderr
    class Closed(io.TextIOBase):
        def write(self, text: str) -> int:
            raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr(sys, "stdout", Closed())
    assert main([*argv, "--force"]) == status  # again, over the files of the first run
    monkeypatch.undo()
    assert capsys.readouterr().err == ""

    if case.stdin is not None:  # '-' reads the input file from stdin, with the same result
        source = Path(inputs[case.stdin])
        _stdin(monkeypatch, source.read_bytes())
        piped = [name, *("-" if w == case.stdin else w for w in case.argv)]
        (tmp_path / "stdin").mkdir()
        piped = [*_argv(tuple(piped), inputs, tmp_path / "stdin"), "--json", "-"]
        assert main(piped) == status
        again = json.loads(capsys.readouterr().out)
        assert again["exit_status"] == status


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_meaningless_values_and_unknown_options_are_one_line_errors(name, inputs, tmp_path,
                                                                    capsys):
    case = CASES[name]
    assert main([name, *_argv(case.bad, inputs, tmp_path)]) == 2
    _one_line_error(capsys.readouterr().err, case.names)
    assert main([name, *_argv(case.argv, inputs, tmp_path), "--no-such-option"]) == 2
    _one_line_error(capsys.readouterr().err, "--no-such-option")


def _options(name: str) -> dict[str, argparse.Action]:
    parser = build_parser((name,))
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return {o: a for a in sub.choices[name]._actions for o in a.option_strings}


KNOWN_VALUES_ONLY = [n for n in sorted(COMMANDS) if "--values" in _options(n)
                     and "learned" not in _options(n)["--values"].metavar]


def test_some_command_needs_known_values():
    assert "certify" in KNOWN_VALUES_ONLY


@pytest.mark.parametrize("name", KNOWN_VALUES_ONLY)
def test_values_learned_gets_the_one_message(name, capsys):
    extra = ["--eps", "0.1", "--out", "-"] if "--out" in _options(name) else ["--eps", "0.1"]
    assert main([name, "--values", "learned", *extra]) == 2
    err = capsys.readouterr().err
    assert err.strip() == f"sinkproof: error: {cli_common.learned_values_message(name)}"


def test_every_sequence_option_uses_the_one_parser():
    seen = 0
    for name in COMMANDS:
        for action in _options(name).values():
            if action.dest in ("sequence", "at"):
                assert action.type in (cli_common.sequence_arg, cli_common.position_arg), name
                seen += 1
    assert seen >= 2  # certify --sequence, sinkmap --at


@pytest.mark.parametrize("text, tokens_", [("0,1,T,2", (0, 1, -1, 2)), ("t", (-1,)),
                                           (" 3 , TRIG ,-1", (3, -1, -1)), ("0", (0,))])
def test_the_sequence_syntax(text, tokens_):
    assert tokens.parse_sequence(text) == tokens_
    assert tokens.parse_sequence(tokens.show_tokens(tokens_)) == tokens_
    assert tokens.TRIG == sp.TRIG


@pytest.mark.parametrize("text, bad", [("0,x,T", "'x'"), ("0,,1", "empty token"),
                                       ("", "empty sequence"), ("0,-2", "-2"),
                                       ("0,1.5", "'1.5'")])
def test_a_bad_sequence_names_the_bad_token(text, bad, capsys):
    with pytest.raises(ValueError, match=bad):
        tokens.parse_sequence(text)
    assert main(["certify", "--eps", "0.1", "--out", "-", "--sequence", text, "--t", "1"]) == 2
    _one_line_error(capsys.readouterr().err, bad)


def test_the_trigger_is_T_for_certify_sinkmap_and_claim_files(tmp_path, capsys):
    args = ["--p", "1", "--T", "3", "--eps", "1/10"]
    assert main(["certify", *args, "--sequence", "0,T,1", "--t", "3", "--out", "-"]) == 0
    cert = json.loads(capsys.readouterr().out)
    assert main(["certify", *args, "--sequence", "0,-1,1", "--t", "3", "--out", "-"]) == 0
    assert json.loads(capsys.readouterr().out) == cert
    assert main(["sinkmap", *args, "--at", "0,T,1:3", "--json", "-"]) == 0
    entries = json.loads(capsys.readouterr().out)["entries"]
    assert [e["prefix"] for e in entries] == [[0, -1, 1]]
    from sinkproof.claims.positions import PositionSet

    written = PositionSet.parse([{"sequence": "0,T,1", "position": 3}])
    assert written == PositionSet.parse([{"sequence": [0, "T", 1], "position": 3}])
    assert written.pairs == (((0, -1, 1), 3),)


def test_sinkmap_learned_values_json_says_so(capsys):
    status = main(["sinkmap", "--p", "1", "--T", "2", "--eps", "1/20", "--values", "learned",
                   "--at", "0,0:2", "--json", "-"])
    data = json.loads(capsys.readouterr().out)
    assert status in (0, 3) and data["exit_status"] == status and data["values"] == "learned"
    assert [e["subfamily"] for e in data["entries"]] == ["bnb"]


@pytest.mark.parametrize("kind", ["sparsemax", "relu", "all"])
def test_sinkmap_kind_json_names_the_map_and_keeps_every_key(kind, tmp_path, capsys):
    status = main(["sinkmap", "--p", "1", "--T", "2", "--eps", "1/10", "--kind", kind,
                   "--json", "-"])
    data = json.loads(capsys.readouterr().out)
    assert status == 0 and data["map"] == kind
    if kind == "all":
        assert data["kind"] == "sinkmap-kinds"
        assert [e["map"] for e in data["entries"]] == list(MAPS)
        assert set(data["certificate"]) == set(MAPS)
        return
    path = tmp_path / "m.json"
    path.write_text(json.dumps({k: v for k, v in data.items()
                                if k not in ("command", "version", "exit_status")}))
    assert SinkMap.load(path).kind == kind
    assert main(["sinkmap", "--p", "1", "--T", "2", "--eps", "1/10", "--kind", kind,
                 "--out", str(tmp_path / "c.json")]) == 0
    capsys.readouterr()
    assert main(["verify", str(tmp_path / "c.json")]) == 0


def test_sinkmap_kind_refuses_what_only_softmax_has(capsys):
    for extra in (["--realise"], ["--values", "learned", "--at", "0:1"]):
        assert main(["sinkmap", "--p", "1", "--T", "2", "--eps", "1/10", "--kind",
                     "sparsemax", *extra]) == 2
        _one_line_error(capsys.readouterr().err, "--kind sparsemax")
    assert main(["sinkmap", "--p", "1", "--T", "2", "--eps", "1/10", "--kind", "all",
                 "--out", "x.json"]) == 2
    _one_line_error(capsys.readouterr().err, "--kind all")


def test_dash_writes_each_output_to_stdout_and_two_dashes_are_refused(inputs, tmp_path, capsys):
    assert main(["sinkmap", "--p", "1", "--T", "2", "--eps", "1/10", "--out", "-"]) == 0
    cert = capsys.readouterr().out
    path = tmp_path / "c.json"
    path.write_text(cert)
    assert main(["verify", str(path)]) == 0
    assert main(["verify", inputs["{cert}"], "--statement", "-", "--json", "-"]) == 2
    _one_line_error(capsys.readouterr().err, "--statement and --json")
    assert main(["certify", "--eps", "0.1", "--out", "-", "--json", "-"]) == 2
    _one_line_error(capsys.readouterr().err, "only one stdout")


def test_values_model_file_from_stdin(monkeypatch, capsys):
    model = sp.constructions.softmax_solution(sp.TriggerTask(p=1, T=2), 8.0)
    _stdin(monkeypatch, json.dumps(model.to_dict()).encode())
    assert main(["certify", "--p", "1", "--T", "2", "--eps", "1/10", "--values", "-",
                 "--out", "-"]) == 0
    assert json.loads(capsys.readouterr().out)["kind"] == "hull-family"


def test_a_claim_from_stdin_names_stdin_in_its_errors(monkeypatch, capsys):
    _stdin(monkeypatch, b"[task]\np = 0\nT = 3\n")
    assert main(["check", "-"]) == 2
    err = capsys.readouterr().err
    assert "<stdin>" in err and "sinkproof-" not in err and len(err.strip().splitlines()) == 1


def test_shared_task_defaults_are_the_sweeps():
    from sinkproof.sweep.jobs import TASK_SETTINGS

    assert dict(TASK_SETTINGS) == cli_common.TASK_DEFAULTS
    for name in ("certify", "report", "sinkmap"):
        opts = _options(name)
        assert opts["--p"].default == cli_common.DEFAULT_P
        assert opts["--T"].default == cli_common.DEFAULT_T
        assert opts["--content-seed"] is opts["--seed"]


# ------------------------------------------------------------ without matplotlib
NO_MPL = ("import sys\nsys.modules['matplotlib'] = None\nfrom sinkproof.cli import main\n"
          "sys.exit(main(sys.argv[1:]))")


def _without_matplotlib(*argv: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", NO_MPL, *argv], capture_output=True,
                          text=True, cwd=cwd, timeout=300,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})


@pytest.mark.slow  # 2-7 s of subprocesses/compiles: CI runs it
def test_a_plot_asked_for_without_matplotlib_is_refused_before_the_work(tmp_path):
    proc = _without_matplotlib("sinkmap", "--p", "1", "--T", "2", "--eps", "0.1", "--plot",
                               "map.png", cwd=tmp_path)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.strip().splitlines() == [
        "sinkproof: error: --plot needs matplotlib, which is not installed: "
        "pip install 'sinkproof[plot]'"]


@pytest.mark.slow  # 2-7 s of subprocesses/compiles: CI runs it
def test_default_figures_without_matplotlib_are_skipped_with_one_note(tmp_path):
    (tmp_path / "grid.toml").write_text(SWEEP)
    proc = _without_matplotlib("sweep", "grid.toml", "--executor", "serial", "--out", "s",
                               cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    executor = "serial: every job in this process"  # the one line naming the executor
    assert proc.stderr.strip().splitlines() == [
        "sinkproof: note: figures skipped: matplotlib is not installed (pip install "
        "'sinkproof[plot]'); --no-figures silences this note", executor]
    assert (tmp_path / "s" / "results.csv").exists()
    assert not list((tmp_path / "s").glob("*.png"))
    quiet = _without_matplotlib("sweep", "grid.toml", "--executor", "serial", "--out", "s",
                                "--no-figures", cwd=tmp_path)
    assert quiet.returncode == 0 and quiet.stderr == ""  # every job from the cache: no executor


@pytest.mark.slow  # trains a model in a fresh interpreter
def test_experiment_without_matplotlib_writes_its_results_and_says_so(tmp_path):
    proc = _without_matplotlib("experiment", "--smoke", "--kinds", "relu", "--heads", "1",
                               "--quiet", "--out", "e", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "figures skipped: matplotlib is not installed" in proc.stderr
    assert "Traceback" not in proc.stderr and (tmp_path / "e" / "results.json").exists()


# ------------------------------------------------------------ one rule per parameter
ALIASES = {"seed": ("seed", "content_seed"), "seeds": ("seeds", "seed")}


def test_every_option_named_like_a_parameter_uses_its_rule():
    from sinkproof import params

    named = set(params.INTEGERS) | set(params.NUMBERS)
    seen = 0
    for name in COMMANDS:
        for option, action in _options(name).items():
            if action.dest in named and action.type is not None:
                rules = ALIASES.get(action.dest, (action.dest,))
                assert getattr(action.type, "__name__", "") in rules, (name, option)
                seen += 1
    assert seen >= 15


@pytest.mark.parametrize("setting, value, option, text, names", [
    ("eps", '"3/2"', "--eps", "3/2", "must be in (0, 1), got 1.5: from error 1 on"),
    ("T", "0", "--T", "0", "must be >= 1, got 0"),
    ("p", '"x"', "--p", "x", "must be an integer, got 'x'"),
    ("content_seed", "-1", "--content-seed", "-1", "must be >= 0, got -1")])
def test_a_sweep_setting_obeys_the_rule_of_the_option_of_its_name(setting, value, option, text,
                                                                   names, tmp_path, capsys):
    settings = {"p": "1", "eps": '"1/10"', setting: value}
    path = tmp_path / "bad.toml"
    path.write_text('kind = "certify"\n[base]\n'
                    + "".join(f"{k} = {v}\n" for k, v in settings.items() if k != "T")
                    + f"[grid]\nT = [{settings.get('T', '2')}]\n")
    assert main(["sweep", str(path), "--out", str(tmp_path / "o"), "--executor", "serial"]) == 2
    _one_line_error(capsys.readouterr().err, names)
    argv = {"--eps": "1/10", "--out": "-", option: text}
    assert main(["certify", *(w for kv in argv.items() for w in kv)]) == 2
    _one_line_error(capsys.readouterr().err, names)


SETTING_CASES = {
    "sinkmap": Case(("--setting", "paper", "--eps", "1/10", "--L", "4", "--out", "{tmp}/m.json"),
                    ("--setting", "paper", "--eps", "0.1", "--kind", "relu"), "'relu'"),
    "variants": Case(("--setting", "paper", "--quick", "--map", "relu_length", "--question",
                      "exact_solution_at_finite_norm"),
                     ("--setting", "paper", "--sandwich"), "--sandwich"),
}
"""Commands whose ``--setting paper`` runs its own code path: a fast run and a bad use."""


@pytest.mark.parametrize("name", sorted(SETTING_CASES))
def test_setting_paper_runs_and_refuses_bad_uses_in_one_line(name, tmp_path, capsys):
    case = SETTING_CASES[name]
    status = main([name, *_argv(case.argv, {}, tmp_path), "--json", "-"])
    data = json.loads(capsys.readouterr().out)
    assert status == 0 and data["exit_status"] == 0 and data["command"] == name
    assert main([name, *_argv(case.bad, {}, tmp_path)]) == 2
    _one_line_error(capsys.readouterr().err, case.names)


# ------------------------------------------------------------- one option convention
def _parsers() -> list[argparse.ArgumentParser]:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return [parser, *sub.choices.values()]


def test_no_parser_accepts_prefix_abbreviations():
    assert all(p.allow_abbrev is False for p in _parsers())


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_command_has_quiet_verbose_and_progress(name):
    options = _options(name)
    for flag in ("-q", "--quiet", "-v", "--verbose", "--progress", "--no-progress"):
        assert flag in options, f"sinkproof {name} lacks {flag}"


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_long_names_are_lower_case_and_never_differ_only_by_case(name):
    """Each option's first (documented) long name is lower case and no two of them differ
    only by case; the old one-letter names (--T and --t, --L, --n, --p) stay as aliases."""
    actions = {id(a): a for a in _options(name).values()}.values()
    firsts = []
    for action in actions:
        longs = [o for o in action.option_strings if o.startswith("--")]
        assert longs and longs[0] == longs[0].lower(), f"{name}: {longs}"
        assert len(longs[0]) > 3 or longs[0] == "--k", f"{name}: {longs[0]} is one letter"
        firsts.append(longs[0])
    assert len({f.lower() for f in firsts}) == len(firsts)


def test_a_prefix_is_refused_with_the_option_it_resembles(capsys):
    assert main(["certify", "--p", "1", "--T", "2", "--ep", "0.1", "--eps", "0.1",
                 "--out", "-"]) == 2
    err = capsys.readouterr().err
    assert "unrecognized arguments: --ep" in err and "did you mean --eps?" in err
    assert len(err.strip().splitlines()) == 1


def test_the_old_one_letter_names_still_work(capsys):
    assert main(["report", "--p", "1", "--T", "2", "--json", "-"]) == 0
    old = json.loads(capsys.readouterr().out)
    assert main(["report", "--content-dim", "1", "--max-length", "2", "--json", "-"]) == 0
    new = json.loads(capsys.readouterr().out)
    assert old["task"] == new["task"] and new["task"]["p"] == 1 and new["task"]["T"] == 2


def test_quiet_prints_nothing_but_data_asked_for_on_stdout(capsys):
    assert main(["report", "-q", "--p", "1", "--T", "2"]) == 0
    assert capsys.readouterr().out == ""
    assert main(["report", "-q", "--p", "1", "--T", "2", "--json", "-"]) == 0
    assert json.loads(capsys.readouterr().out)["command"] == "report"


def test_the_progress_options_set_what_progress_none_means(monkeypatch, capsys):
    from sinkproof import progress

    seen = []
    monkeypatch.setattr(progress, "set_default", lambda value: seen.append(value))
    for flags in (["--progress"], ["--no-progress"], ["-q"], ["-v"], []):
        assert main(["theory", "--section", "1", *flags]) == 0
    capsys.readouterr()
    assert seen == [True, None, False, None, False, None, True, None, None, None]


@pytest.mark.parametrize("argv", [["check", "{tmp}/nothing.toml"],
                                  ["sinkmap", "--eps", "0.1", "--values", "{tmp}/nothing.json"],
                                  ["sweep", "{tmp}/nothing.toml", "--out", "{tmp}/o"]])
def test_a_missing_file_is_one_message_in_every_command(argv, tmp_path, capsys):
    assert main([a.replace("{tmp}", str(tmp_path)) for a in argv]) == 2
    missing = next(a for a in argv if "nothing" in a).replace("{tmp}", str(tmp_path))
    assert capsys.readouterr().err == (
        f"sinkproof: error: cannot read {missing}: No such file or directory\n")
