"""``sinkproof certify``: write a Theorem 3 certificate file (family or one position)."""

from __future__ import annotations

import argparse

from ..cli_common import (
    add_json_option,
    add_paper_task_options,
    add_setting_option,
    add_task_options,
    add_values_option,
    add_work_option,
    count,
    emit_json,
    eps_arg,
    refuse_options,
    reserve_stdio,
    sequence_arg,
    setting_task_from_args,
    values_from_arg,
    write_json,
)
from ..errors import EXIT_INTERRUPTED, InputError, Interrupted, check_work
from ..tokens import SYNTAX
from ..work import SITUATIONS_MAX_WORK

MAX_SITUATIONS = SITUATIONS_MAX_WORK
"""Default limit on the situations (sets of distinct tokens) a family certificate solves."""

JSON_KEYS = {"kind": "the certificate's kind (hull-family, hull or paper-hull-family)",
             "claim": "the certified statement, as the certificate states it",
             "out": "where the certificate was written ('-': stdout)"}


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "certify", help="write an exact certificate of Theorem 3's sink bound",
        description="Certify Theorem 3 (alpha_t0 >= 1 - eps/d with fixed values, 1 - 2eps/d "
                    "otherwise) at every non-trigger position of the family, or at one "
                    "position, and write the certificate as JSON for 'sinkproof verify'.")
    add_task_options(p)
    add_values_option(p)
    p.add_argument("--eps", required=True, type=eps_arg,
                   help="error level in (0, 1), read exactly: 0.05, 1/20 or 1e-400")
    p.add_argument("--sequence", metavar="TOKENS", type=sequence_arg,
                   help=f"certify one position of this sequence instead of the family: {SYNTAX}")
    p.add_argument("--position", "--t", dest="t", type=count(1), metavar="POS",
                   help="the position t for --sequence")
    p.add_argument("--out", required=True, metavar="FILE", help="certificate file ('-' = stdout)")
    add_json_option(p, JSON_KEYS)
    add_work_option(p, MAX_SITUATIONS, "situations (sets of distinct tokens seen)")
    add_setting_option(p, "certify")
    add_paper_task_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..convex import family_certificate, position_certificate
    from ..convex.family import situation_count

    quiet = reserve_stdio(args, outputs=("out", "json"), inputs=("values",))
    task = setting_task_from_args(args, "certify")
    values = values_from_arg(args.values, task, "certify")
    try:
        if args.sequence is None:
            if args.t is not None:
                raise InputError("--t needs --sequence")
            check_work("situations to certify", situation_count(task), args.max_work)
            cert = family_certificate(task, args.eps, values)
        else:
            if args.t is None:
                raise InputError("--sequence needs --t")
            refuse_options(args, task, "has_positions", (("--sequence", True),))
            cert = position_certificate(task, list(args.sequence), args.t, args.eps, values)
    except Interrupted as exc:
        bounds = [s.bound for s in exc.partial.values()  # type: ignore[attr-defined]
                  if s.bound is not None]
        least = f"least bound on them {min(bounds)}" if bounds else "no bound yet"
        print(f"certify interrupted: {exc.progress} ({least}); no certificate written")
        return EXIT_INTERRUPTED
    data = cert.to_dict()
    write_json(data, args.out)
    if not quiet:
        print(f"{cert!r}\nwritten to {args.out}; check it with: sinkproof verify {args.out}")
    return emit_json(args, {"kind": data["kind"], "claim": data["claim"], "out": args.out}, 0)
