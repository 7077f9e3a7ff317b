"""``sinkproof check FILE``: settle a claim file (TOML or JSON).

Exit status: 0 proved, 1 refuted, 3 open, 2 bad input, 4 refused (beyond --max-work),
130 interrupted (the partial result is printed).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ..claims.schema import MAX_WORK
from ..cli_common import (
    add_setting_option,
    add_work_option,
    count,
    positive_seconds,
    require_setting_arg,
    write_json,
)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "check", help="prove, refute or report open a claim file (TOML or JSON)",
        description="Check a claim about every accurate model of a class: Proved (a registered "
                    "theorem, a verified certificate, or the branch-and-bound engine's "
                    "verified certificate), Refuted (a witness found by search, "
                    "re-verified in high precision and saved) or Open (best trade-offs found). "
                    "Exit status: 0 proved, 1 refuted, 3 open, 2 bad input, 4 refused "
                    "(beyond --max-work), 130 interrupted.")
    p.add_argument("claim", metavar="FILE", help="claim file (.toml or .json)")
    p.add_argument("--budget", type=positive_seconds, default=None,
                   help="search seconds (overrides the file)")
    p.add_argument("--restarts", type=count(1), default=None, help="search restarts per attempt")
    p.add_argument("--seed", type=count(0), default=None, help="search seed")
    p.add_argument("--certificate", metavar="CERT", default=None,
                   help="certificate file to try as a proof")
    p.add_argument("--witness", metavar="OUT", default=None,
                   help="where to save a refuting model (default: ./<claim>.witness.json)")
    p.add_argument("--certificate-out", metavar="OUT", default=None,
                   help="where to save a certificate made by the sink map or the engine "
                        "(default: ./<claim>.certificate.json)")
    p.add_argument("--no-search", action="store_true", help="only try proofs")
    p.add_argument("--no-bnb", action="store_true",
                   help="skip the branch-and-bound proof engine (learned-value heads)")
    p.add_argument("--json", metavar="FILE", help="also write the outcome as JSON ('-' = stdout)")
    add_work_option(p, MAX_WORK, "prefixes enumerated (positions, family prefixes); a "
                                 "registered theorem proves by situations without enumerating")
    add_setting_option(p, "check")
    p.set_defaults(func=run, max_work=None, setting=None)  # None: the claim file's [check] max_work


def run(args: argparse.Namespace) -> int:
    from ..claims import check, load_claim
    from ..errors import InputError

    claim = load_claim(args.claim)
    setting = getattr(claim, "setting", "trigger")
    if args.setting is not None and require_setting_arg(args, "check") != setting:
        raise InputError(f"--setting {args.setting}: {args.claim} is a claim in the "
                         f"{setting!r} setting (its [task] says so)")
    witness = args.witness or (claim.options.witness or f"{Path(args.claim).stem}.witness.json")
    cert_out = args.certificate_out or f"{Path(args.claim).stem}.certificate.json"
    outcome = check(claim, budget=args.budget, restarts=args.restarts, seed=args.seed,
                    certificate=args.certificate, witness=witness, certificate_out=cert_out,
                    search=not args.no_search, max_work=args.max_work, bnb=not args.no_bnb)
    if args.json != "-":
        print(outcome.render())
    if args.json:
        write_json(outcome.to_dict(), args.json)
    return outcome.exit_code
