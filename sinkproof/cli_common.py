"""What every CLI subcommand shares, so that all of them read and write the same way.

- **Task options** (``--p --T --content --positions --triggers --k --content-seed``) with
  one table of defaults, :data:`TASK_DEFAULTS`.
- **Values and numbers**: one validation helper per kind of value, all argparse types, so
  that a meaningless value is a usage error (status 2, one line) before any work:
  :func:`param_arg` (a named parameter by its rule in :mod:`sinkproof.params`, the rule a
  sweep setting of that name obeys too; :func:`eps_arg` is one), :func:`count` (other
  integers ``>= minimum``), :func:`positive_number` (a rate or a budget, as a float),
  :func:`sequence_arg` / :func:`position_arg` (the token syntax of
  :mod:`sinkproof.tokens`: ``0,1,T,2``).
- **Files**: ``-`` is stdin for every file read (:func:`input_path`) and stdout for every
  file written (:func:`output_path`); :func:`reserve_stdio` refuses two streams on one of
  them and tells a command that stdout now carries data only.
- **JSON**: ``--json FILE`` (``-`` = stdout) on every command, one object with
  :data:`JSON_ENVELOPE` keys and the command's own documented keys
  (:func:`add_json_option`, :func:`emit_json`).
- **Figures**: ``--no-figures``; without matplotlib a figure asked for is refused before
  the work (:func:`require_matplotlib`) and default figures are skipped with a one-line
  note (:func:`figures_wanted`).
- ``--values learned`` where a command needs known values: one message,
  :func:`learned_values_message`.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from . import params, tokens
from ._version import __version__
from .errors import InputError
from .exact_numbers import plain
from .files import write_file
from .shipped import example_names, example_path

STDIO = "-"
"""The file name that means stdin (files read) or stdout (files written)."""

TASK_DEFAULTS: dict[str, Any] = {"p": 2, "T": 4, "content": "signed", "positions": "inverse",
                                 "triggers": "single", "k": None, "content_seed": 0}
"""Defaults of the task options, the same for every command that builds a trigger task
from options (``certify``, ``report``, ``sinkmap``) and for a sweep's task settings."""
DEFAULT_P = TASK_DEFAULTS["p"]
DEFAULT_T = TASK_DEFAULTS["T"]

INTENTIONAL_DIFFERENCES: tuple[str, ...] = (
    "`experiment` trains at p=4, T=16 by default (`--quick`: T=8; `--smoke`: tiny): "
    "learning needs longer sequences than an exact bound does, and its `--p`/`--T` "
    "override the preset.",
    "`paper` trains the paper's setting (n=16, L=16), not a trigger task of options.",
    "`variants` runs on one fixed instance, p=2, T=3 (`--quick`: p=1, T=2), so that every "
    "cell can be proved or refuted in minutes.",
    "`check` and `sweep` read the task from their file: a claim file names p and T "
    "(no default); a sweep's task settings default to the table above.",
    "`paper --seeds S [S ...]` lists its training seeds (its recorded runs name them); "
    "`experiment --seeds N` runs seeds 0..N-1.",
    "`--seed` of `check` is the search seed; a task's content seed is `--content-seed` "
    "(`--seed` is still read as it on `certify`, `report` and `sinkmap`).",
)
"""Where a command's defaults differ from :data:`TASK_DEFAULTS`, and why (docs/cli.md)."""

JSON_ENVELOPE: dict[str, str] = {
    "command": "the subcommand that wrote the object",
    "version": "the sinkproof version",
    "exit_status": "the exit status of the run (see the table above)",
}
"""Keys every ``--json`` object has, whatever the command."""


# ------------------------------------------------------------------ numbers and counts
def param_arg(name: str) -> Callable[[str], Any]:
    """An argparse type: the parameter ``name`` checked by its rule in
    :mod:`sinkproof.params` (the rule a sweep setting of that name obeys too)."""

    def parse(text: str) -> Any:
        try:
            return params.check(name, text)
        except (ValueError, TypeError) as exc:
            message = str(exc)
            raise argparse.ArgumentTypeError(message.removeprefix(f"{name} ")) from None

    parse.__name__ = name
    return parse


def count(minimum: int) -> Callable[[str], int]:
    """An argparse type: an integer ``>= minimum`` (a negative count is a usage error), for
    options without a named rule in :mod:`sinkproof.params`."""

    def parse(text: str) -> int:
        try:
            return params.integer(text, "value", minimum)
        except (ValueError, TypeError) as exc:
            raise argparse.ArgumentTypeError(str(exc).removeprefix("value ")) from None

    parse.__name__ = f"integer >= {minimum}"
    return parse


def positive_number(name: str) -> Callable[[str], float]:
    """An argparse type: the number parameter ``name`` (``lr``, ``budget``: ``> 0``) as a
    float."""
    exact = param_arg(name)

    def parse(text: str) -> float:
        return float(exact(text))

    parse.__name__ = name
    return parse


positive_seconds = positive_number("budget")
"""An argparse type: a number of seconds ``> 0`` (the rule of ``budget``)."""

eps_arg = param_arg("eps")
"""An argparse type: an error level in ``(0, 1)``, read exactly."""


def sequence_arg(text: str) -> tuple[int, ...]:
    """An argparse type: a sequence after BOS in the syntax of :mod:`sinkproof.tokens`."""
    try:
        return tokens.parse_sequence(text, "sequence")
    except (ValueError, TypeError) as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def position_arg(text: str) -> tuple[tuple[int, ...], int]:
    """An argparse type: ``SEQUENCE:POSITION`` (``0,T,2:3``), a sequence and a position
    ``>= 1`` in it."""
    seq_text, sep, pos_text = text.rpartition(":")
    if not sep:
        raise argparse.ArgumentTypeError(
            f"expected SEQUENCE:POSITION like 0,T,2:3 ({tokens.SYNTAX}), got {text!r}")
    seq = sequence_arg(seq_text)
    pos = count(1)(pos_text)
    if pos > len(seq):
        raise argparse.ArgumentTypeError(f"position {pos} lies beyond the sequence "
                                         f"{tokens.show_tokens(seq)} in {text!r}")
    return seq, pos


def add_work_option(parser: argparse.ArgumentParser, default: int, unit: str) -> None:
    """``--max-work N``: the most ``unit`` the command may do before it refuses to start."""
    parser.add_argument("--max-work", type=param_arg("max_work"), default=default, metavar="N",
                        dest="max_work",
                        help=f"refuse to start beyond N {unit} (default {default:,}); the "
                             "estimate is made before any work")


def add_seeds_option(parser: argparse.ArgumentParser, default: int | None,
                     what: str = "seeds") -> None:
    """``--seeds N``: the seeds ``0..N-1`` (``default`` None: the preset's)."""
    shown = "the preset's" if default is None else str(default)
    parser.add_argument("--seeds", type=param_arg("seeds"), default=default, metavar="N",
                        help=f"run {what} 0..N-1 (default {shown})")


# ------------------------------------------------------------------ the task instance
def add_task_options(parser: argparse.ArgumentParser, p: int = DEFAULT_P,
                     T: int = DEFAULT_T) -> None:
    """``--content-dim/--p --max-length/--T --content --positions --triggers --k
    --content-seed`` (the one-letter names stay as aliases; see docs/cli.md)."""
    from .task import CONTENT_SCHEMES, POSITION_SCHEMES, TRIGGER_FAMILIES

    d = TASK_DEFAULTS
    g = parser.add_argument_group("task instance")
    g.add_argument("--content-dim", "--p", dest="p", metavar="P", type=param_arg("p"),
                   default=p, help=f"content dimension p (default {p})")
    g.add_argument("--max-length", "--T", dest="T", metavar="T", type=param_arg("T"),
                   default=T, help=f"maximum length T (default {T})")
    g.add_argument("--content", choices=CONTENT_SCHEMES, default=d["content"])
    g.add_argument("--positions", choices=POSITION_SCHEMES, default=d["positions"])
    g.add_argument("--triggers", choices=TRIGGER_FAMILIES, default=d["triggers"])
    g.add_argument("--k", type=param_arg("k"), default=d["k"], help="number of gaussian "
                   "content vectors")
    g.add_argument("--content-seed", "--seed", dest="seed", type=param_arg("content_seed"),
                   default=d["content_seed"], metavar="SEED",
                   help="seed of the gaussian content set")


def task_from_args(args: argparse.Namespace, setting: str | None = None) -> Any:
    """The task the command line names: ``setting`` (default ``--setting``, else
    ``trigger``) and its options (:func:`add_task_options`, :func:`add_paper_task_options`),
    through :func:`sinkproof.tasks.task_from_options`, the one place a setting name
    becomes a task."""
    from .tasks import task_from_options

    return task_from_options(setting or getattr(args, "setting", None) or "trigger",
                             **vars(args))


# ------------------------------------------------------------------ the setting
SETTINGS = ("trigger", "paper")
"""The formalisations a command may be asked about (``--setting``): ours and the paper's."""


PAPER_NOTES: dict[str, str] = {
    "sinkmap": (
        "--n --L --grid name the paper's task with a content grid; per non-trigger position "
        "the least BOS weight of one head on the simplex (softmax, sparsemax, entmax15) with "
        "fixed values, from the exact hull distances (certificate paper-hull-family), or of "
        "one softmax head with learned values, by branch and bound (small instances; "
        "certificate paper-bnb-learned-values)"),
    "report": (
        "not: the report evaluates our task's constructions and bounds; the paper's are in "
        "'sinkproof paper' and docs/findings.md"),
    "experiment": (
        "not: this trains our task's one-layer models; the paper's protocol is 'sinkproof "
        "paper'"),
    "variants": (
        "the same four questions of every attention map on the paper's task (n=4, content "
        "{-1, 1}, L=5; --quick: L=4), one head with W_O W_V = I - e_0 e_0^T; with --trained "
        "only the paper's setting is trained"),
    "sweep": (
        "not: a sweep's job kinds run our task's instances; a 'check' job runs any claim file, "
        "paper claims included, whatever this option says"),
    "check": (
        "the claim file names its setting; with --setting the file's must match"),
    "certify": (
        "--n --L --grid name the paper's task with a content grid; the certificate is the exact "
        "hull distances of every token set (fixed values)"),
}
"""Per command: what ``--setting paper`` does, or (starting with ``"not: "``) why it does
not apply and what to use instead."""


def add_setting_option(parser: Any, command: str) -> None:
    """``--setting trigger|paper`` on ``command`` (its note in :data:`PAPER_NOTES`)."""
    note = PAPER_NOTES[command]
    parser.add_argument("--setting", choices=SETTINGS, default="trigger",
                        help="the formalisation: 'trigger' (ours, default) or 'paper' (the "
                             "paper's own task): " + note.removeprefix("not: "))
    parser.set_defaults(paper_setting=note)


def require_setting_arg(args: argparse.Namespace, command: str) -> str:
    """The ``--setting`` asked for; an :class:`~sinkproof.errors.InputError` when it is
    ``paper`` and the command does not apply there."""
    setting = getattr(args, "setting", "trigger")
    note = getattr(args, "paper_setting", "not: this command has no paper setting")
    if setting == "paper" and note.startswith("not: "):
        raise InputError(f"--setting paper does not apply to '{command}': "
                         f"{note.removeprefix('not: ')}")
    return setting


def add_paper_task_options(parser: argparse.ArgumentParser) -> None:
    """``--token-dim/--n --length/--L --grid``: the paper's task with a finite content grid
    (``--setting paper``)."""
    g = parser.add_argument_group("paper task instance (with --setting paper)")
    g.add_argument("--token-dim", "--n", dest="n", metavar="N", type=count(4), default=4,
                   help="token dimension n (default 4)")
    g.add_argument("--length", "--L", dest="L", metavar="L", type=count(3), default=5,
                   help="sequence length L (default 5)")
    g.add_argument("--grid", type=count(2), default=2,
                   help="content grid: points per content coordinate in [-1, 1] (default 2)")


def paper_task_from_args(args: argparse.Namespace) -> Any:
    """The :class:`~sinkproof.tasks.paper.PaperTask` named by :func:`add_paper_task_options`."""
    return task_from_args(args, "paper")


def setting_task_from_args(args: argparse.Namespace, command: str) -> Any:
    """The task ``--setting`` names, built from its options (``--p --T ...`` or ``--n --L
    --grid``): the one place a command turns a setting name into a task."""
    if require_setting_arg(args, command) == "paper":
        return paper_task_from_args(args)
    return task_from_args(args)


def refuse_options(args: argparse.Namespace, task: Any, capability: str,
                   given: Sequence[tuple[str, bool]]) -> None:
    """One :class:`~sinkproof.errors.InputError` when ``task`` lacks ``capability`` and one
    of the options ``given`` (``(flag, whether given)``) was used: they need it."""
    from .tasks.protocol import CAPABILITIES

    used = [flag for flag, was in given if was]
    if used and not getattr(task, capability):
        raise InputError(f"{used[0]} needs a task with {CAPABILITIES[capability]}; "
                         f"{task!r} has none")


# ------------------------------------------------------------------ values
def learned_values_message(command: str) -> str:
    """The one message for ``--values learned`` where ``command`` needs known values."""
    return (f"--values learned: 'sinkproof {command}' needs known values: with learned "
            "values the bound depends on the value map. Give 'fixed' or a one-head model "
            "file whose U is used (AttentionModel.to_dict JSON); to prove a claim about "
            "every learned-value softmax head, write a claim file with values = "
            "\"learned\" and run 'sinkproof check' (the branch-and-bound engine)")


def add_values_option(parser: argparse.ArgumentParser, learned: str = "") -> None:
    """``--values fixed|MODEL.json``, and ``learned`` where the command supports it
    (``learned``: how, for the help)."""
    choices = "fixed|learned|MODEL.json" if learned else "fixed|MODEL.json"
    parser.add_argument("--values", default="fixed", metavar=choices,
                        help="'fixed' (U_fix, every model of the class), a one-head model "
                             "file (AttentionModel.to_dict JSON; '-' = stdin) whose values U "
                             "are used" + (f", or 'learned': every value map, {learned}"
                                           if learned else ""))


def values_from_arg(spec: str, task: Any, command: str, learned: bool = False) -> Any:
    """``"fixed"``, ``"learned"`` (only where ``learned``) or the model a file holds;
    ``--values learned`` elsewhere gets :func:`learned_values_message`."""
    if spec in ("fixed", "learned"):
        if spec == "learned" and not learned:
            raise InputError(learned_values_message(command))
        return spec
    if not getattr(task, "has_positions", True):
        raise InputError(f"--values {spec}: a task without positional features ({task!r}) "
                         "takes 'fixed' or 'learned' (no model file)")
    from .model import AttentionModel

    with input_path(spec, ".json") as path:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise InputError(f"--values {spec}: not valid JSON ({exc})") from None
    model = AttentionModel.from_dict(data)
    if model.task != task:
        raise InputError(f"--values {spec}: the model is for {model.task!r}, not {task!r}")
    return model


# ------------------------------------------------------------------ files and streams
def reserve_stdio(args: argparse.Namespace, outputs: tuple[str, ...] = (),
                  inputs: tuple[str, ...] = ()) -> bool:
    """Check that at most one of the options ``outputs`` is ``-`` (stdout) and at most one
    of ``inputs`` (stdin); True when stdout carries data, so the command prints nothing
    else there."""
    for names, stream in ((outputs, "stdout"), (inputs, "stdin")):
        dashed = [n for n in names if getattr(args, n, None) == STDIO]
        if len(dashed) > 1:
            flags = " and ".join(_flag(n) for n in dashed)
            raise InputError(f"{flags} cannot all be '-': there is only one {stream}")
    return any(getattr(args, n, None) == STDIO for n in outputs)


def _flag(dest: str) -> str:
    return dest if dest in ("claim", "file", "sweep") else "--" + dest.replace("_", "-")


@contextlib.contextmanager
def input_path(source: str | Path, suffix: str | None = None) -> Iterator[Path]:
    """A path to read ``source`` from: itself, or for ``-`` a temporary file holding
    stdin (named ``stdin`` + ``suffix``; ``None``: ``.json`` when the text starts with
    ``{`` or ``[``, else ``.toml``).  Errors that name the temporary file name
    ``<stdin>`` instead."""
    if str(source) != STDIO:
        yield Path(source)
        return
    stream = getattr(sys.stdin, "buffer", None)
    data = stream.read() if stream is not None else sys.stdin.read().encode("utf-8")
    if suffix is None:
        suffix = ".json" if data.lstrip()[:1] in (b"{", b"[") else ".toml"
    with tempfile.TemporaryDirectory(prefix="sinkproof-") as folder:
        path = Path(folder) / f"stdin{suffix}"
        path.write_bytes(data)
        try:
            yield path
        except (ValueError, TypeError, OSError) as exc:
            if str(path) not in str(exc):
                raise
            text = str(exc).replace(str(path), "<stdin>")
            try:
                renamed = type(exc)(text)
            except Exception:  # noqa: BLE001 - an exception type with other arguments
                renamed = InputError(text)
            raise renamed from None


@contextlib.contextmanager
def output_path(target: str | Path, suffix: str = "") -> Iterator[Path]:
    """A path to write ``target`` to: itself, or for ``-`` a temporary file whose bytes
    go to stdout once the block is done (text as text, anything else as bytes)."""
    if str(target) != STDIO:
        yield Path(target)
        return
    with tempfile.TemporaryDirectory(prefix="sinkproof-") as folder:
        path = Path(folder) / f"stdout{suffix}"
        yield path
        if path.exists():
            data = path.read_bytes()
            try:
                sys.stdout.write(data.decode("utf-8"))
            except UnicodeDecodeError:
                sys.stdout.flush()
                sys.stdout.buffer.write(data)
            sys.stdout.flush()


def write_text(text: str, target: str | Path) -> None:
    """Write ``text`` to a path (atomically, never over a file this run did not create
    unless ``--force``: :func:`sinkproof.files.write_file`), or to stdout for ``-``."""
    if str(target) == STDIO:
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    write_file(target, text)


def write_json(data: Any, target: str | Path) -> None:
    """Write ``data`` as JSON to a path, or to stdout for ``-`` (exact numbers as text)."""
    write_text(json.dumps(plain(data), indent=2, allow_nan=True, default=_json_default)
               + "\n", target)


def _json_default(value: Any) -> Any:
    """NumPy scalars and arrays as numbers and lists; anything else as its text."""
    return value.tolist() if hasattr(value, "tolist") else str(value)


# ------------------------------------------------------------------ --json
def add_example_option(parser: argparse.ArgumentParser) -> None:
    """``--example [NAME]``: a claim shipped with the package instead of FILE (no NAME:
    list them)."""
    parser.add_argument("--example", nargs="?", const="", default=None, metavar="NAME",
                        help="check the shipped example claim NAME instead of FILE "
                             "(without NAME: list the examples)")


def example_claim(args: argparse.Namespace) -> bool:
    """Resolve ``--example`` into ``args.claim``; True when it only listed the examples.
    Exactly one of FILE and ``--example`` is needed."""
    if args.example is None:
        if args.claim is None:
            raise InputError("a claim FILE or --example NAME is needed")
        return False
    if args.claim is not None:
        raise InputError("give a claim FILE or --example NAME, not both")
    if args.example == "":
        print("\n".join(example_names()))
        return True
    args.claim = str(example_path(args.example))
    return False


def add_json_option(parser: argparse.ArgumentParser, keys: Mapping[str, str]) -> None:
    """``--json FILE`` (``-`` = stdout, then the only output there): one object with the
    :data:`JSON_ENVELOPE` keys and ``keys`` (name -> meaning), always present."""
    parser.add_argument("--json", metavar="FILE", default=None,
                        help="write the result as one JSON object ('-' = stdout, then "
                             "nothing else is printed there)")
    parser.set_defaults(json_keys=dict(keys))


def json_keys(parser: argparse.ArgumentParser) -> dict[str, str]:
    """The documented keys of a command's ``--json`` object (envelope first)."""
    return {**JSON_ENVELOPE, **(parser.get_default("json_keys") or {})}


def emit_json(args: argparse.Namespace, data: Mapping[str, Any], exit_status: int) -> int:
    """Write ``--json``'s object (if asked) and return ``exit_status``.  ``data`` must hold
    every documented key: a missing one is a bug (AssertionError, status 70)."""
    if args.json is None:
        return exit_status
    missing = set(args.json_keys) - set(data)
    assert not missing, f"--json of {args.command} lacks its documented keys {sorted(missing)}"
    obj = {"command": args.command, "version": __version__, "exit_status": exit_status,
           **data}
    write_json(obj, args.json)
    return exit_status


# ------------------------------------------------------------------ figures
PLOT_EXTRA = "pip install 'sinkproof[plot]'"


def have_matplotlib() -> bool:
    """Whether matplotlib can be imported here."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def add_figures_option(parser: argparse.ArgumentParser, what: str = "figures") -> None:
    """``--no-figures``: write no figure (without matplotlib, they are skipped anyway)."""
    parser.add_argument("--no-figures", action="store_true", dest="no_figures",
                        help=f"skip the {what} (skipped with a note when matplotlib is "
                             "missing)")


def figures_wanted(args: argparse.Namespace) -> bool:
    """Whether to write the command's default figures: not with ``--no-figures``; without
    matplotlib, no, after a one-line note on stderr (before any work)."""
    if getattr(args, "no_figures", False):
        return False
    if have_matplotlib():
        return True
    print(f"sinkproof: note: figures skipped: matplotlib is not installed ({PLOT_EXTRA}); "
          "--no-figures silences this note", file=sys.stderr)
    return False


def require_matplotlib(option: str) -> None:
    """Refuse (status 2, before any work) a figure asked for by ``option`` without
    matplotlib."""
    if not have_matplotlib():
        raise InputError(f"{option} needs matplotlib, which is not installed: {PLOT_EXTRA}")
