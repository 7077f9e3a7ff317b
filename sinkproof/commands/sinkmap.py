"""``sinkproof sinkmap``: Theorem 6's certified BOS-mass lower bounds, position by position."""

from __future__ import annotations

import argparse

from ..cli_common import (
    add_setting_option,
    add_task_options,
    add_work_option,
    count,
    eps_arg,
    require_setting_arg,
    task_from_args,
)
from ..errors import EXIT_INTERRUPTED, EXIT_OK, EXIT_OPEN, SINK_MAP_MAX_WORK, check_work


def _position(text: str) -> tuple[list[int], int]:
    """``"0,2,-1:2"`` -> ``([0, 2, -1], 2)``: a sequence (TRIG = -1) and a position."""
    seq_text, sep, pos_text = text.rpartition(":")
    if not sep:
        raise argparse.ArgumentTypeError(f"expected SEQUENCE:POSITION like 0,2:2, got {text!r}")
    try:
        seq = [int(tok) for tok in seq_text.split(",") if tok.strip()]
        return seq, int(pos_text)
    except ValueError:
        msg = f"expected SEQUENCE:POSITION like 0,2:2, got {text!r}"
        raise argparse.ArgumentTypeError(msg) from None


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "sinkmap", help="certified least BOS mass of any eps-accurate softmax head, per position",
        description="Theorem 6 (logit sharing): at every non-trigger position of S_T (or the "
                    "positions given with --at), a lower bound on the BOS mass of every "
                    "single-head softmax model with fixed values, any score function and "
                    "error <= eps on S_T, each backed by an exact rational certificate. "
                    "Exit status 0: every position settled; 3: some position uncertified "
                    "or its program failed (the map is incomplete).")
    add_task_options(p, T=4)
    p.add_argument("--eps", required=True, type=eps_arg,
                   help="error bound in (0, 1), read exactly (e.g. 0.1, 1/10, 1e-400)")
    p.add_argument("--values", default="fixed", metavar="fixed|learned|MODEL.json",
                   help="known values: U_fix (default) or the U of a one-head model saved "
                        "with AttentionModel.to_dict; 'learned': bounds for every value map "
                        "by branch and bound (small instances: at most 32 positions, "
                        "choose them with --at)")
    p.add_argument("--at", type=_position, action="append", metavar="SEQ:POS",
                   help="only this position, e.g. 0,2:2 (repeatable; -1 is the trigger)")
    p.add_argument("--subfamily", choices=("auto", "hamming", "full"), default="auto",
                   help="which constraints to keep (any subfamily gives a valid bound)")
    p.add_argument("--radius", type=count(0), default=2, help="Hamming radius (default 2)")
    p.add_argument("--out", metavar="FILE", help="write the certificate (sinkproof verify FILE)")
    p.add_argument("--json", metavar="FILE", help="save the sink map as JSON")
    p.add_argument("--plot", metavar="FILE", help="save the heat map (needs matplotlib)")
    p.add_argument("--rows", type=count(0), default=10, help="prefix rows to print (default 10)")
    p.add_argument("--realise", action="store_true",
                   help="bridge to search: build accurate models aimed at the lowest bounds "
                        "(and where there is none) and print bound, realised mass and gap")
    add_work_option(p, SINK_MAP_MAX_WORK, "work units (cone constraints of the SOCPs solved, "
                                 "symmetry images of the targets)")
    add_setting_option(p, "sinkmap")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    require_setting_arg(args, "sinkmap")
    from ..errors import Interrupted
    from ..sinkmap import sink_map
    from ..sinkmap.work import estimate
    from .certify import _values as values_from_arg

    task = task_from_args(args)
    values = "learned" if args.values == "learned" else values_from_arg(args.values, task)
    lengths = None if args.at is None else [pos for _, pos in args.at]
    check_work("work units (SOCP cone constraints and symmetry images, or tree nodes x "
               "prefixes with learned values) in the sink map",
               estimate(task, values, args.subfamily, args.radius, lengths), args.max_work)
    try:
        result = sink_map(task, args.eps, values=values, positions=args.at,
                          subfamily=args.subfamily, radius=args.radius)
    except Interrupted as exc:
        print(f"sink map interrupted: {exc.progress}; the partial map (nothing written):")
        print(repr(exc.partial))
        print(exc.partial.table(args.rows))  # type: ignore[attr-defined]
        return EXIT_INTERRUPTED
    print(repr(result))
    if args.realise:
        from ..search.realise import realise

        for r in realise(result):
            print(r)
    print(result.table(args.rows))
    if args.out:
        result.save_certificate(args.out)
        print(f"certificate written to {args.out}")
    if args.json:
        result.save(args.json)
    if args.plot:
        import matplotlib

        matplotlib.use("Agg")
        ax = result.heatmap()
        ax.figure.savefig(args.plot, dpi=120, bbox_inches="tight")
    # a position the solver or the exact rounding could not settle is not a refutation of
    # anything: the map is incomplete, which is status 3 (open), never 1
    complete = result.count("uncertified") == 0 and result.count("failed") == 0
    return EXIT_OK if complete else EXIT_OPEN
