"""``sinkproof verify FILE``: re-check a certificate in exact rational arithmetic.

Prints the statement the checker rebuilt from the verified numbers and its digest (the
SHA-256 of the canonical statement, which ``sinkproof check`` reports for a proof or a
refutation by file); ``--statement OUT`` writes the canonical statement in full.
Seeded content (``gaussian``, ``k``, ``seed``) is rebuilt here and must equal the
vectors the file lists.  Each size is bounded (docs/certificates.md): beyond a limit
the file is refused at once, with the option that raises it.
"""

from __future__ import annotations

import argparse

from ..checker import Limits
from ..cli_common import (
    add_json_option,
    count,
    emit_json,
    input_path,
    param_arg,
    reserve_stdio,
    write_text,
)
from ..params import INTEGERS

JSON_KEYS = {"verified": "true when every inequality holds", "kind": "the certificate kind",
             "claim": "the statement the checker rebuilt (when verified)",
             "failure": "the first failing inequality (null when verified)",
             "digest": "sha256 of the canonical statement (null when none)",
             "content": "how the content set was confirmed (empty when not verified)",
             "details": "kind-specific figures, exact rationals as text"}

_HELP = {
    "file_bytes": "largest file in bytes",
    "depth": "deepest nesting of JSON arrays/objects",
    "digits": "longest number in characters",
    "content": "most entries k·p of the content set (and of U)",
    "prefixes": "most distinct prefixes a witness is evaluated on",
    "situations": "most token sets of a hull-family certificate",
    "ray_patterns": "most support patterns of one sink-map ray",
    "work": "most exact operations one check is estimated to take",
    "denominator_digits": "most digits of the common denominator of numbers combined exactly",
}


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "verify", help="re-check a certificate file with exact rational arithmetic",
        description="Re-check a certificate file with the small trusted checker "
                    "(exact rationals; no solver, no floating point in the decision) and "
                    "print the verified statement with its SHA-256 digest. "
                    "Exit 0: the claim holds (it is printed); 1: an inequality fails "
                    "(the first one is printed); 2: the file is malformed or about other "
                    "content than it declares; 4: refused, beyond a size limit (the "
                    "message names the option that raises it).")
    p.add_argument("file", help="certificate file (JSON; '-' = stdin)")
    p.add_argument("--quiet", action="store_true", help="print nothing; use the exit status")
    p.add_argument("--statement", metavar="OUT", default=None,
                   help="also write the verified statement as canonical JSON ('-' = stdout)")
    add_json_option(p, JSON_KEYS)
    g = p.add_argument_group("limits (refused at once beyond them)")
    for name, flag in Limits.flags().items():
        rule = param_arg(f"max_{name}") if f"max_{name}" in INTEGERS else count(1)
        g.add_argument(flag, dest=f"max_{name}", type=rule, default=None, metavar="N",
                       help=f"{_HELP[name]} (default {getattr(Limits(), name)})")
    p.set_defaults(func=run)


def limits_from_args(args: argparse.Namespace) -> Limits:
    """The :class:`Limits` named by the ``--max-*`` options (defaults elsewhere)."""
    return Limits().replace(**{name: getattr(args, f"max_{name}") for name in Limits.flags()})


def _confirm_content(instance: dict) -> str:
    """Gaussian content is rebuilt by the producer (NumPy's generator), loaded only for it;
    every other scheme the checker itself rebuilt or compared."""
    if instance["content"]["scheme"] != "gaussian":
        return f"{instance['content']['scheme']} content confirmed by the checker"
    from ..convex.certfile import confirm_declared_content

    return confirm_declared_content(instance)


def run(args: argparse.Namespace) -> int:
    from ..checker import verify_file

    quiet = reserve_stdio(args, outputs=("statement", "json"), inputs=("file",)) or args.quiet
    with input_path(args.file, ".json") as path:
        verdict = verify_file(path, limits_from_args(args))
    data = {"verified": verdict.ok, "kind": verdict.kind, "claim": verdict.claim,
            "failure": verdict.failure, "digest": verdict.digest, "content": "",
            "details": verdict.details}
    if not verdict.ok:
        if not quiet:
            print(f"NOT verified ({verdict.kind}): first failing inequality: {verdict.failure}")
        return emit_json(args, data, 1)
    if "instance" in verdict.statement:
        data["content"] = _confirm_content(verdict.statement["instance"])
    if not quiet:
        print(f"verified ({verdict.kind}): {verdict.claim}")
        if verdict.digest is None:  # a registered kind whose checker states no statement
            print(f"statement: none (the {verdict.kind} checker returns no canonical statement)")
        else:
            content = data["content"]
            print(f"statement sha256:{verdict.digest}" + (f" ({content})" if content else ""))
    if args.statement:
        write_text(verdict.canonical_statement() + "\n", args.statement)
    return emit_json(args, data, 0)
