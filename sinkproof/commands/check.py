"""``sinkproof check FILE``: settle a claim file (TOML or JSON).

Exit status: 0 proved, 1 refuted, 3 open, 2 bad input, 4 refused (beyond --max-work),
130 interrupted (the partial result is printed).
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from pathlib import Path

from ..claims.options import MAX_WORK
from ..cli_common import (
    STDIO,
    add_example_option,
    add_json_option,
    add_setting_option,
    add_work_option,
    emit_json,
    example_claim,
    input_path,
    output_path,
    param_arg,
    positive_seconds,
    require_setting_arg,
    reserve_stdio,
)

JSON_KEYS = {
    "status": "proved, refuted or open; the other keys depend on it: proved: by, bound, "
              "detail, certificate; refuted: error, witness, violations, detail; open: "
              "frontier, spent, reasons, interrupted, so_far (what the interrupted route had "
              "settled, e.g. the engine's exactly certified bounds)",
    "claim": "the claim as read (exact numbers as text)",
}


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "check", help="prove, refute or report open a claim file (TOML or JSON)",
        description="Check a claim about every accurate model of a class: Proved (a registered "
                    "theorem, a verified certificate, or the branch-and-bound engine's "
                    "verified certificate), Refuted (a witness found by search, "
                    "re-verified in high precision and saved) or Open (best trade-offs found). "
                    "Exit status: 0 proved, 1 refuted, 3 open, 2 bad input, 4 refused "
                    "(beyond --max-work), 130 interrupted.")
    p.add_argument("claim", metavar="FILE", nargs="?", default=None,
                   help="claim file (.toml or .json; '-' = stdin, JSON if it starts with '{')")
    add_example_option(p)
    p.add_argument("--budget", type=positive_seconds, default=None,
                   help="search seconds (overrides the file)")
    p.add_argument("--restarts", type=param_arg("restarts"), default=None,
                   help="search restarts per attempt")
    p.add_argument("--seed", type=param_arg("seed"), default=None, help="search seed")
    p.add_argument("--certificate", metavar="CERT", default=None,
                   help="certificate file to try as a proof ('-' = stdin)")
    p.add_argument("--witness", metavar="OUT", default=None,
                   help="where to save a refuting model (default: ./<claim>.witness.json, "
                        "or with --write-witness the claim's [check] witness; '-' = stdout)")
    p.add_argument("--write-witness", action="store_true",
                   help="save a refuting model at the path the claim file names in "
                        "[check] witness (without this flag that path is never written)")
    p.add_argument("--force", action="store_true",
                   help="overwrite an existing witness or certificate file (without it, a "
                        "file this run did not create is never overwritten: exit 2)")
    p.add_argument("--certificate-out", metavar="OUT", default=None,
                   help="where to save a certificate made by the sink map or the engine "
                        "(default: ./<claim>.certificate.json; '-' = stdout)")
    p.add_argument("--no-search", action="store_true", help="only try proofs")
    p.add_argument("--no-bnb", action="store_true",
                   help="skip the branch-and-bound proof engine (learned-value heads)")
    p.add_argument("--no-theorems", action="store_true",
                   help="skip the registered theorems: the claim is then proved by a "
                        "certificate or the engine, an independent path (to cross-check a "
                        "theorem, or to have a certificate file)")
    add_json_option(p, JSON_KEYS)
    add_work_option(p, MAX_WORK, "prefixes enumerated (positions, family prefixes); a "
                                 "registered theorem proves by situations without enumerating")
    add_setting_option(p, "check")
    # None: the claim file's [check] max_work, and its [task] setting
    p.set_defaults(func=run, max_work=None, setting=None)


def run(args: argparse.Namespace) -> int:
    from ..claims import check, load_claim
    from ..errors import InputError

    if example_claim(args):  # --example alone: the list was printed
        return 0
    quiet = reserve_stdio(args, outputs=("witness", "certificate_out", "json"),
                          inputs=("claim", "certificate"))
    stem = "stdin" if args.claim == STDIO else Path(args.claim).stem
    with contextlib.ExitStack() as stack:
        claim = load_claim(stack.enter_context(input_path(args.claim)))
        if args.setting is not None and require_setting_arg(args, "check") != claim.task.setting:
            raise InputError(f"--setting {args.setting}: {args.claim} is a claim in the "
                             f"{claim.task.setting!r} setting (its [task] says so)")
        certificate = (None if args.certificate is None
                       else stack.enter_context(input_path(args.certificate, ".json")))
        named = claim.options.witness if args.write_witness else None
        if args.write_witness and named is None and args.witness is None:
            raise InputError(f"--write-witness: {args.claim} names no [check] witness path")
        witness = args.witness or named or f"{stem}.witness.json"
        witness_path = stack.enter_context(output_path(witness, ".json"))
        cert_out = args.certificate_out or f"{stem}.certificate.json"
        cert_path = stack.enter_context(output_path(cert_out, ".json"))
        outcome = check(claim, budget=args.budget, restarts=args.restarts, seed=args.seed,
                        certificate=certificate, witness=witness_path,
                        certificate_out=cert_path, search=not args.no_search,
                        max_work=args.max_work, bnb=not args.no_bnb, force=args.force,
                        theorems=not args.no_theorems)
        data = outcome.to_dict()
        for key, path, shown in (("witness", witness_path, witness),
                                 ("certificate", cert_path, cert_out)):
            if isinstance(data.get(key), str) and data[key] == str(path):
                data[key] = str(shown)
        if not quiet:
            print(outcome.render())
        if claim.options.witness is not None and not args.write_witness \
                and isinstance(data.get("witness"), str):
            print(f"sinkproof: note: the claim's [check] witness = "
                  f"{claim.options.witness!r} is written only with --write-witness; the "
                  f"witness is at {data['witness']}", file=sys.stderr)
    return emit_json(args, data, outcome.exit_code)
