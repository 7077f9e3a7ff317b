"""``sinkproof theory``: the mathematics (docs/theory.md, shipped with the package)."""

from __future__ import annotations

import argparse

from ..cli_common import add_json_option, count, emit_json, reserve_stdio

JSON_KEYS = {"section": "the section printed (null: the whole page)",
             "titles": "every section's title, in order",
             "text": "the text printed (the page, the section, or the titles)"}


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "theory", help="print the theory page: the task, the models, the theorems, the proofs",
        description="Print the theory page (docs/theory.md, installed with the package): the "
                    "task, the models, the measures, every theorem with its proof, what is "
                    "open. --section N prints one section; --list the section titles.")
    group = p.add_mutually_exclusive_group()
    group.add_argument("--section", type=count(1), default=None, metavar="N",
                       help="print section N only (e.g. 4: the theorems and their proofs)")
    group.add_argument("--list", action="store_true", help="list the sections")
    add_json_option(p, JSON_KEYS)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..shipped import theory_section, theory_sections, theory_text

    quiet = reserve_stdio(args, outputs=("json",))
    titles = [title.removeprefix("## ") for title in theory_sections().values()]
    if args.list:
        text = "\n".join(titles) + "\n"
    elif args.section is not None:
        text = theory_section(args.section)
    else:
        text = theory_text()
    if not quiet:
        print(text, end="")
    return emit_json(args, {"section": args.section, "titles": titles, "text": text}, 0)
