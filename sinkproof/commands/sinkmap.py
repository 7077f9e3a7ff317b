"""``sinkproof sinkmap``: Theorem 6's certified BOS-mass lower bounds, position by position."""

from __future__ import annotations

import argparse
import gc
import io

from ..attention import MAPS
from ..cli_common import (
    add_json_option,
    add_paper_task_options,
    add_setting_option,
    add_task_options,
    add_values_option,
    add_work_option,
    emit_json,
    eps_arg,
    output_path,
    param_arg,
    position_arg,
    refuse_options,
    require_matplotlib,
    reserve_stdio,
    setting_task_from_args,
    values_from_arg,
)
from ..errors import EXIT_INTERRUPTED, EXIT_OK, EXIT_OPEN, SINK_MAP_MAX_WORK, check_work
from ..files import write_file
from . import COMMANDS

JSON_KEYS = {"kind": "'sinkmap' (SinkMap.load reads the object back; with --setting paper "
                     "sinkproof.sinkmap.PaperSinkMap.load); 'sinkmap-kinds' with "
                     "--kind all",
             "map": "the attention map (--kind) whose sink measure is bounded",
             "task": "the task instance", "eps": "the error bound, exactly",
             "values": "the value matrix U ('learned' with --values learned; 'fixed' or "
                       "'learned' with --setting paper)",
             "subfamily": "the constraints kept ('hull', 'gate split' or 'witness' for "
                          "the maps bounded by the hull argument, by the gate split, or "
                          "shown bound-free by a witness)",
             "radius": "the Hamming radius", "family": "the prefix family",
             "entries": "one object per target prefix: its bound and status (with --kind "
                        "all: one summary object per map)",
             "certificate": "the certificate 'sinkproof verify' checks (with --kind all: "
                            "one per map, by name)"}


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "sinkmap", help=COMMANDS["sinkmap"],
        description="Theorem 6 (logit sharing): at every non-trigger position of S_T (or the "
                    "positions given with --at), a lower bound on the BOS mass of every "
                    "single-head softmax model with fixed values, any score function and "
                    "error <= eps on S_T, each backed by an exact rational certificate. "
                    "--kind NAME does the same for another attention map's sink measure: "
                    "the null mass (slot plus BOS) of sink_logit and softmax1 by the same "
                    "program, Theorem 3's hull bound for sparsemax and entmax15, the null "
                    "mass of gated_softmax by logit sharing split over the gate (with the "
                    "hull bound), and for sigmoid, relu and relu_length 'no bound' "
                    "everywhere, shown by a sink-free head the checker verifies; "
                    "--kind all prints one line per map. "
                    "Exit status 0: every position settled; 3: some position uncertified "
                    "or its program failed (the map is incomplete).")
    add_task_options(p)
    p.add_argument("--kind", choices=(*MAPS, "all"), default="softmax",
                   help="the attention map (default softmax); 'all': every map, one line "
                        "each (least certified bound per position)")
    p.add_argument("--eps", required=True, type=eps_arg,
                   help="error bound in (0, 1), read exactly (e.g. 0.1, 1/10, 1e-400)")
    add_values_option(p, learned="by branch and bound (small instances: at most 32 "
                                  "positions, choose them with --at)")
    p.add_argument("--at", type=position_arg, action="append", metavar="SEQ:POS",
                   help="only this position, e.g. 0,T,2:3 (repeatable; content indices and "
                        "T for the trigger)")
    p.add_argument("--subfamily", choices=("auto", "hamming", "full"), default="auto",
                   help="which constraints to keep (any subfamily gives a valid bound)")
    p.add_argument("--radius", type=param_arg("radius"), default=2,
                   help="Hamming radius (default 2)")
    p.add_argument("--out", metavar="FILE",
                   help="write the certificate (sinkproof verify FILE; '-' = stdout)")
    add_json_option(p, JSON_KEYS)
    p.add_argument("--plot", metavar="FILE",
                   help="save the heat map as PNG (needs matplotlib; '-' = stdout)")
    p.add_argument("--rows", type=param_arg("rows"), default=10,
                   help="prefix rows to print (default 10)")
    p.add_argument("--realise", action="store_true",
                   help="bridge to search: build accurate models aimed at the lowest bounds "
                        "(and where there is none) and print bound, realised mass and gap")
    add_work_option(p, SINK_MAP_MAX_WORK, "work units (cone constraints of the SOCPs solved, "
                                 "symmetry images of the targets)")
    add_setting_option(p, "sinkmap")
    add_paper_task_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..sinkmap.work import estimate

    quiet = reserve_stdio(args, outputs=("out", "json", "plot"), inputs=("values",))
    task = setting_task_from_args(args, "sinkmap")
    refuse_options(args, task, "has_positions", (
        ("--at", args.at is not None), ("--realise", args.realise),
        ("--plot", args.plot is not None), ("--kind all", args.kind == "all"),
        ("--subfamily", args.subfamily != "auto")))
    if args.plot:
        require_matplotlib("--plot")
    values = values_from_arg(args.values, task, "sinkmap", learned=True)
    positions = None if args.at is None else [(list(s), t) for s, t in args.at]
    lengths = None if positions is None else [pos for _, pos in positions]
    kinds = tuple(MAPS) if args.kind == "all" else (args.kind,)
    if args.kind != "softmax" and (args.realise or (isinstance(values, str)
                                                    and values == "learned")):
        raise ValueError(f"--kind {args.kind}: --realise and --values learned apply to "
                         f"softmax only")
    check_work("work units (SOCP cone constraints and symmetry images, or tree nodes x "
               "prefixes with learned values; hull programs or witness prefixes for other "
               "maps) in the sink map",
               sum(estimate(task, values, args.subfamily, args.radius, lengths, kind=k,
                            eps=args.eps) for k in kinds), args.max_work)
    if args.kind == "all":
        return _run_all(args, task, positions, quiet)
    was = gc.isenabled()
    gc.disable()  # the map pauses it for its big parts; kept off to the end of the command,
    try:  # so no collector pass over the big heap (seconds, deaf to Ctrl-C) precedes the exit
        return _one_map(args, task, values, positions, quiet)
    finally:
        if was:
            gc.enable()


def _one_map(args: argparse.Namespace, task: object, values: object, positions: object,
             quiet: bool) -> int:
    """One map's sink map: its table (and certificate, plot, JSON) or, on Ctrl-C, the
    partial map."""
    from ..errors import InputError, Interrupted
    from ..sinkmap import sink_map

    try:
        result = sink_map(task, args.eps, values=values, positions=positions,  # type: ignore
                          subfamily=args.subfamily, radius=args.radius, kind=args.kind,
                          max_work=args.max_work)  # the command's own estimate was checked
    except Interrupted as exc:
        print(f"sink map interrupted: {exc.progress}; the partial map (nothing written):")
        print(repr(exc.partial))
        print(exc.partial.table(args.rows))  # type: ignore[attr-defined]
        return EXIT_INTERRUPTED
    lines = [repr(result)]
    if args.realise:
        from ..search.realise import realise

        lines += [str(r) for r in realise(result)]
    lines.append(result.table(args.rows))
    if args.out:
        if not result.certificate:
            raise InputError("--out: no position was certified, so there is no certificate "
                             "to write")
        with output_path(args.out, ".json") as path:
            result.save_certificate(path)
        lines.append(f"certificate written to {args.out}")
    if args.plot:
        import matplotlib

        matplotlib.use("Agg")
        ax = result.heatmap()
        with output_path(args.plot, ".png") as path:
            image = io.BytesIO()
            ax.figure.savefig(image, dpi=120, bbox_inches="tight", format="png")
            write_file(path, image.getvalue(), what="plot")
    if not quiet:
        print("\n".join(lines))
    # a position the solver or the exact rounding could not settle is not a refutation of
    # anything: the map is incomplete, which is status 3 (open), never 1
    complete = result.count("uncertified") == 0 and result.count("failed") == 0
    return emit_json(args, result.to_dict(), EXIT_OK if complete else EXIT_OPEN)


def _run_all(args: argparse.Namespace, task: object, positions: object, quiet: bool) -> int:
    """``--kind all``: every map's sink map (fixed values), one summary line each."""
    from ..sinkmap.overview import kinds_table

    if args.out or args.plot:
        raise ValueError("--kind all prints a summary: --out and --plot need one --kind")
    if args.values != "fixed":
        raise ValueError("--kind all uses fixed values: drop --values")
    table = kinds_table(task, args.eps, positions=positions)
    if not quiet:
        print(repr(table))
    first = next(iter(table.maps.values()))
    complete = all(m.count("uncertified") == 0 and m.count("failed") == 0
                   for m in table.maps.values())
    data = {**{k: v for k, v in first.to_dict().items() if k not in ("entries",
                                                                      "certificate")},
            "kind": "sinkmap-kinds", "map": "all", "subfamily": "per map",
            "entries": table.to_json(),
            "certificate": {name: m.certificate for name, m in table.maps.items()}}
    return emit_json(args, data, EXIT_OK if complete else EXIT_OPEN)
