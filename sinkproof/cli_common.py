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

from .exact_numbers import error_level, plain
from .task import CONTENT_SCHEMES, POSITION_SCHEMES, TRIGGER_FAMILIES, TriggerTask

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
