"""Options shared by CLI subcommands: the task instance, exact numbers, counts, work limits
and output flags."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path
from typing import Any

from .errors import InputError
from .exact_numbers import error_level, plain
from .task import CONTENT_SCHEMES, POSITION_SCHEMES, TRIGGER_FAMILIES, TriggerTask
from .tasks.paper import PaperTask

DEFAULT_P = 2
DEFAULT_T = 6


def count(minimum: int) -> Callable[[str], int]:
    """An argparse type: an integer ``>= minimum`` (a negative count is a usage error)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be >= {minimum}, got {value}")
        return value

    parse.__name__ = f"integer >= {minimum}"
    return parse


def positive_seconds(text: str) -> float:
    """An argparse type: a number of seconds ``> 0``."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a finite number > 0, got {text}")
    return value


def eps_arg(text: str) -> Fraction:
    """An argparse type: an error level in ``(0, 1)`` read exactly (``0.05``, ``1/20``,
    ``1e-400``)."""
    try:
        return error_level(text, "eps", positive=True)
    except (ValueError, TypeError) as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_work_option(parser: argparse.ArgumentParser, default: int, unit: str) -> None:
    """``--max-work N``: the most ``unit`` the command may do before it refuses to start."""
    parser.add_argument("--max-work", type=count(1), default=default, metavar="N",
                        dest="max_work",
                        help=f"refuse to start beyond N {unit} (default {default:,}); the "
                             "estimate is made before any work")


SETTINGS = ("trigger", "paper")
"""The formalisations a command may be asked about (``--setting``): ours and the paper's."""


PAPER_NOTES: dict[str, str] = {
    "sinkmap": (
        "not: the sink map bounds one U_fix softmax head of our task; in the paper's setting "
        "use 'sinkproof certify --setting paper' (fixed values, exact hull distances) or "
        "'sinkproof check' on a paper claim"),
    "report": (
        "not: the report evaluates our task's constructions and bounds; the paper's are in "
        "'sinkproof paper' and docs/findings.md"),
    "experiment": (
        "not: this trains our task's one-layer models; the paper's protocol is 'sinkproof "
        "paper'"),
    "variants": (
        "not: the variants table asks our task's questions of every attention map; the paper's "
        "models are softmax and relu_length, asked by 'sinkproof check' on paper claims"),
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
    """``--n --L --grid``: the paper's task with a finite content grid (``--setting paper``)."""
    g = parser.add_argument_group("paper task instance (with --setting paper)")
    g.add_argument("--n", type=count(4), default=4, help="token dimension (default 4)")
    g.add_argument("--L", type=count(3), default=5, help="sequence length (default 5)")
    g.add_argument("--grid", type=count(2), default=2,
                   help="content grid: points per content coordinate in [-1, 1] (default 2)")


def paper_task_from_args(args: argparse.Namespace) -> Any:
    """The :class:`~sinkproof.tasks.paper.PaperTask` named by :func:`add_paper_task_options`."""
    return PaperTask(n=args.n, L=args.L, content="grid", grid=args.grid)


def add_task_options(
    parser: argparse.ArgumentParser, p: int = DEFAULT_P, T: int = DEFAULT_T
) -> None:
    """``--p --T --content --positions --triggers --k --seed``."""
    g = parser.add_argument_group("task instance")
    g.add_argument("--p", type=count(1), default=p, help=f"content dimension (default {p})")
    g.add_argument("--T", type=count(1), default=T, help=f"maximum length (default {T})")
    g.add_argument("--content", choices=CONTENT_SCHEMES, default="signed")
    g.add_argument("--positions", choices=POSITION_SCHEMES, default="inverse")
    g.add_argument("--triggers", choices=TRIGGER_FAMILIES, default="single")
    g.add_argument("--k", type=count(1), default=None, help="number of gaussian content vectors")
    g.add_argument("--seed", type=count(0), default=0, help="seed of the gaussian content set")


def task_from_args(args: argparse.Namespace) -> TriggerTask:
    """The :class:`TriggerTask` named by :func:`add_task_options`."""
    return TriggerTask(p=args.p, T=args.T, content=args.content, positions=args.positions,
                       triggers=args.triggers, k=args.k, seed=args.seed)


def write_json(data: Any, target: str) -> None:
    """Write ``data`` as JSON to a path, or to stdout for ``-`` (exact numbers as text)."""
    text = json.dumps(plain(data), indent=2, allow_nan=True) + "\n"
    if target == "-":
        sys.stdout.write(text)
    else:
        Path(target).write_text(text)
