"""``sinkproof schema``: the JSON Schema of a file sinkproof reads (claim, sweep, certificate)."""

from __future__ import annotations

import argparse

from ..cli_common import add_json_option, emit_json, reserve_stdio, write_text

JSON_KEYS = {"name": "the schema printed", "names": "every schema's name",
             "schema": "the schema (a JSON object)"}


def register(sub: argparse._SubParsersAction) -> None:
    from ..schemas import SCHEMAS

    p = sub.add_parser(
        "schema", help="print the JSON Schema of a claim, sweep or certificate file",
        description="Print the JSON Schema (draft 2020-12) of a file sinkproof reads, "
                    "generated from the tables its readers use, for an editor to complete "
                    "and check the file. The readers remain the judges.")
    p.add_argument("name", choices=sorted(SCHEMAS), help="which file kind")
    p.add_argument("--out", metavar="FILE", default=None,
                   help="write the schema to FILE instead of stdout ('-' = stdout)")
    add_json_option(p, JSON_KEYS)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import json

    from ..schemas import SCHEMAS, schema_text

    quiet = reserve_stdio(args, outputs=("json", "out"))
    text = schema_text(args.name)
    if args.out is not None:
        write_text(text, args.out)
    elif not quiet:
        print(text, end="")
    return emit_json(args, {"name": args.name, "names": sorted(SCHEMAS),
                            "schema": json.loads(text)}, 0)
