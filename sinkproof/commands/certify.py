"""``sinkproof certify``: write a Theorem 3 certificate file (family or one position)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from ..cli_common import (
    add_paper_task_options,
    add_setting_option,
    add_task_options,
    add_work_option,
    eps_arg,
    paper_task_from_args,
    require_setting_arg,
    task_from_args,
    write_json,
)
from ..errors import EXIT_INTERRUPTED, InputError, Interrupted, check_work

MAX_SITUATIONS = 100_000
"""Default limit on the situations (sets of distinct tokens) a family certificate solves."""


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "certify", help="write an exact certificate of Theorem 3's sink bound",
        description="Certify Theorem 3 (alpha_t0 >= 1 - eps/d with fixed values, 1 - 2eps/d "
                    "otherwise) at every non-trigger position of the family, or at one "
                    "position, and write the certificate as JSON for 'sinkproof verify'.")
    add_task_options(p)
    p.add_argument("--values", default="fixed", metavar="fixed|MODEL.json",
                   help="'fixed' (U_fix, every model of the class) or a one-head model file "
                        "(AttentionModel.to_dict JSON) whose values U are used")
    p.add_argument("--eps", required=True, type=eps_arg,
                   help="error level in (0, 1), read exactly: 0.05, 1/20 or 1e-400")
    p.add_argument("--sequence", metavar="TOKENS",
                   help="certify one position of this sequence instead of the family: content "
                        "indices and T for the trigger, comma-separated (e.g. 0,1,T,2)")
    p.add_argument("--t", type=int, metavar="POS", help="the position for --sequence")
    p.add_argument("--out", required=True, metavar="FILE", help="certificate file ('-' = stdout)")
    add_work_option(p, MAX_SITUATIONS, "situations (sets of distinct tokens seen)")
    add_setting_option(p, "certify")
    add_paper_task_options(p)
    p.set_defaults(func=run)


def _values(spec: str, task: Any) -> Any:
    if spec == "fixed":
        return "fixed"
    if spec == "learned":
        raise InputError("--values learned: a certificate needs known values; with learned "
                         "values the bound depends on the value map. Give 'fixed' or a model "
                         "file whose U is used (AttentionModel.to_dict JSON)")
    from ..model import AttentionModel

    try:
        data = json.loads(Path(spec).read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"--values {spec}: not valid JSON ({exc})") from None
    model = AttentionModel.from_dict(data)
    if model.task != task:
        raise ValueError(f"--values {spec}: the model is for {model.task!r}, not {task!r}")
    return model


def _sequence(text: str) -> list[int]:
    from ..task import TRIG

    tokens = []
    for part in text.split(","):
        part = part.strip()
        if part.upper() in ("T", "TRIG"):
            tokens.append(TRIG)
        elif part.lstrip("-").isdigit():
            tokens.append(int(part))
        else:
            raise ValueError(f"--sequence: {part!r} is neither a content index nor T")
    return tokens


def situation_count(task: Any) -> int:
    """Sets of distinct content tokens (each with and without a trigger) a family
    certificate covers: ``sum over s <= min(k, T) of C(k, s)``, twice."""
    from math import comb

    return 2 * sum(comb(task.k, s) for s in range(1, min(task.k, task.T) + 1))


def run(args: argparse.Namespace) -> int:
    from ..convex import family_certificate, position_certificate

    if require_setting_arg(args, "certify") == "paper":
        return _paper(args)
    task = task_from_args(args)
    values = _values(args.values, task)
    if args.sequence is None:
        if args.t is not None:
            raise ValueError("--t needs --sequence")
        check_work("situations to certify", situation_count(task), args.max_work)
        try:
            cert = family_certificate(task, args.eps, values)
        except Interrupted as exc:
            bounds = [s.bound for s in exc.partial.values()  # type: ignore[attr-defined]
                      if s.bound is not None]
            least = f"least bound on them {min(bounds)}" if bounds else "no bound yet"
            print(f"certify interrupted: {exc.progress} ({least}); no certificate written")
            return EXIT_INTERRUPTED
    else:
        if args.t is None:
            raise ValueError("--sequence needs --t")
        cert = position_certificate(task, _sequence(args.sequence), args.t, args.eps, values)
    write_json(cert.to_dict(), args.out)
    if args.out != "-":
        print(f"{cert!r}\nwritten to {args.out}; check it with: sinkproof verify {args.out}")
    return 0


def _paper(args: argparse.Namespace) -> int:
    """The paper-hull family certificate (fixed values) on the paper's task with a grid."""
    from math import comb

    from ..convex import paper_family_certificate

    if args.values != "fixed" or args.sequence is not None:
        raise InputError("--setting paper certifies the whole family with fixed values: "
                         "drop --values and --sequence")
    task = paper_task_from_args(args)
    check_work("situations to certify",
               sum(comb(task.m, s) for s in range(1, min(task.m, task.L - 2) + 1))
               * (task.m + 1), args.max_work)
    cert = paper_family_certificate(task, args.eps)
    write_json(cert.to_dict(), args.out)
    if args.out != "-":
        print(f"{cert!r}\nwritten to {args.out}; check it with: sinkproof verify {args.out}")
    return 0
