"""``sinkproof verify FILE``: re-check a certificate in exact rational arithmetic."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "verify", help="re-check a certificate file with exact rational arithmetic",
        description="Re-check a certificate file with the small trusted checker "
                    "(exact rationals; no solver, no floating point in the decision). "
                    "Exit 0: the claim holds (it is printed); 1: an inequality fails "
                    "(the first one is printed); 2: the file is malformed.")
    p.add_argument("file", help="certificate file (JSON)")
    p.add_argument("--quiet", action="store_true", help="print nothing; use the exit status")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..checker import verify_file

    verdict = verify_file(args.file)
    if verdict.ok:
        if not args.quiet:
            print(f"verified ({verdict.kind}): {verdict.claim}")
        return 0
    if not args.quiet:
        print(f"NOT verified ({verdict.kind}): first failing inequality: {verdict.failure}")
    return 1
