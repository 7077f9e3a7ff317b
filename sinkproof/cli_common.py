"""Options shared by CLI subcommands: the task instance and output flags."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from .task import CONTENT_SCHEMES, POSITION_SCHEMES, TRIGGER_FAMILIES, TriggerTask

DEFAULT_P = 2
DEFAULT_T = 6


def add_task_options(
    parser: argparse.ArgumentParser, p: int = DEFAULT_P, T: int = DEFAULT_T
) -> None:
    """``--p --T --content --positions --triggers --k --seed``."""
    g = parser.add_argument_group("task instance")
    g.add_argument("--p", type=int, default=p, help=f"content dimension (default {p})")
    g.add_argument("--T", type=int, default=T, help=f"maximum length (default {T})")
    g.add_argument("--content", choices=CONTENT_SCHEMES, default="signed")
    g.add_argument("--positions", choices=POSITION_SCHEMES, default="inverse")
    g.add_argument("--triggers", choices=TRIGGER_FAMILIES, default="single")
    g.add_argument("--k", type=int, default=None, help="number of gaussian content vectors")
    g.add_argument("--seed", type=int, default=0, help="seed of the gaussian content set")


def task_from_args(args: argparse.Namespace) -> TriggerTask:
    """The :class:`TriggerTask` named by :func:`add_task_options`."""
    return TriggerTask(p=args.p, T=args.T, content=args.content, positions=args.positions,
                       triggers=args.triggers, k=args.k, seed=args.seed)


def write_json(data: Any, target: str) -> None:
    """Write ``data`` as JSON to a path, or to stdout for ``-``."""
    text = json.dumps(data, indent=2, allow_nan=True) + "\n"
    if target == "-":
        sys.stdout.write(text)
    else:
        Path(target).write_text(text)
