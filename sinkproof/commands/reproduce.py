"""``sinkproof paper``: reproduce the paper's attention-map figures by training stacks with a
protocol preset (:data:`sinkproof.experiment.config.PROTOCOLS`: the paper's, or the quick
one) and the one protocol runner (:func:`sinkproof.experiment.runner.run_protocol`)."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from ..attention import MAPS
from ..cli_common import (
    add_figures_option,
    add_json_option,
    add_work_option,
    count,
    emit_json,
    figures_wanted,
    param_arg,
    reserve_stdio,
)
from ..errors import EXIT_INTERRUPTED, Interrupted, check_work

MAX_TOKEN_STEPS = 2_000_000_000
"""Default limit on a paper run's token-steps (runs x max steps x 128 sequences x L tokens
x layers); the full reproduction with one seed (1x1, 2x2, 4x4 x 2 maps, 50000 steps,
L=16) is about 1.4 billion (about half an hour), --quick about 0.8 million."""

JSON_KEYS = {"runs": "one object per trained model (what results.json holds)",
             "protocol": "the training protocol and the run's settings",
             "seconds": "wall time", "files": "the files written under --out"}


def paper_token_steps(protocol: object, configs: tuple[tuple[int, int], ...],
                      kinds: list[str], seeds: list[int]) -> int:
    """Upper bound on the token-steps of a paper run: each run's step limit x batch x length,
    times its layer count, summed over the runs."""
    p = protocol
    per_layer = p.max_steps * p.batch * p.L  # type: ignore[attr-defined]
    return len(seeds) * len(kinds) * sum(per_layer * layers for layers, _ in configs)


def _configs(text: str) -> tuple[tuple[int, int], ...]:
    out = []
    for item in text.split(","):
        try:
            layers, heads = (int(v) for v in item.lower().split("x"))
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"configuration {item!r} is not LAYERSxHEADS (e.g. 2x2)") from None
        if layers < 1 or heads < 1:
            raise argparse.ArgumentTypeError(f"configuration {item!r}: sizes must be >= 1")
        out.append((layers, heads))
    return tuple(out)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "paper", help="reproduce the paper's attention-map figures with its training protocol",
        description="Train the paper's models (n=16, L=16; 1x1, 2x2 and 4x4, softmax and "
                    "ReLU/length, residual when layers > 1) with its protocol: N(0, 0.02^2) "
                    "init, Adam betas (0.9, 0.95), lr 1e-3 (1 layer) or 1e-4, MSE, 128 fresh "
                    "sequences a step, at most 50000 steps, stop at batch max-abs error < "
                    "5e-3; float32. Writes results.json, table.md, protocol.json, maps.npz "
                    "and the figures (Fig. 3: mean and std maps over the test sequences with "
                    "the trigger at index 7; Figs. 4-7: per-head maps of one test sequence).")
    p.add_argument("--quick", action="store_true",
                   help="the quick preset, under a minute: n=6, L=8, at most 400 steps, "
                        "learning rates 1e-2 (one layer) and 1e-3, 64 test sequences, "
                        "configuration 1x1 (the one-layer softmax head sinks, ReLU/length "
                        "does not)")
    p.add_argument("--seeds", type=param_arg("seed"), nargs="+", default=[0], metavar="S",
                   help="training seeds, listed (default 0; experiment's --seeds N counts)")
    p.add_argument("--configs", type=_configs, default=None, metavar="LxH,...",
                   help="layer x head configurations (default 1x1,2x2,4x4)")
    p.add_argument("--kinds", nargs="+", default=None, choices=tuple(MAPS),
                   help="attention maps (default the paper's: softmax relu_length; every "
                        "map trains, its parameters and gate learned)")
    p.add_argument("--max-steps", type=count(0), default=None, metavar="N",
                   help="override the step limit (default 50000; --quick 400)")
    p.add_argument("--out", default="paper-out", metavar="DIR",
                   help="output folder (default paper-out)")
    add_work_option(p, MAX_TOKEN_STEPS, "token-steps (step limit x batch x length x layers, "
                                        "over the runs)")
    add_figures_option(p)
    add_json_option(p, JSON_KEYS)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from ..experiment.config import CONFIGS, PAPER_KINDS, PROTOCOLS, QUICK_CONFIGS
    from ..experiment.runner import run_protocol

    quiet = reserve_stdio(args, outputs=("json",))
    figures = figures_wanted(args)
    protocol = PROTOCOLS["quick" if args.quick else "paper"]
    if args.max_steps is not None:
        protocol = replace(protocol, max_steps=args.max_steps)
    configs = args.configs or (QUICK_CONFIGS if args.quick else CONFIGS)
    kinds = args.kinds or list(PAPER_KINDS)
    check_work("token-steps of training", paper_token_steps(protocol, configs, kinds,
                                                             args.seeds), args.max_work)
    start = time.perf_counter()
    lines: list[str] = []

    def report(_run: object, line: str) -> None:
        lines.append(line)
        if not quiet:  # with the JSON on stdout, nothing else is printed
            print(line, file=sys.stderr)

    try:
        runs, files, info = run_protocol(protocol, configs, kinds, args.seeds, Path(args.out),
                                         figures=figures, on_run=report)
    except Interrupted as exc:  # the finished runs are kept (without figures: seconds)
        print(f"paper interrupted: {exc.progress}" + "".join(f"\n  {line}" for line in lines))
        return EXIT_INTERRUPTED
    wall = time.perf_counter() - start
    if not quiet:
        print(f"{len(runs)} runs in {wall:.1f} s; wrote "
              f"{', '.join(str(p) for p in files.values())}")
    data = {"runs": [r.summary() for r in runs], "protocol": {**protocol.__dict__, **info},
            "seconds": wall, "files": [str(p) for p in files.values()]}
    return emit_json(args, data, 0)
