"""Command-line entry point ``sinkproof``.

Each subcommand lives in its own module of :mod:`sinkproof.commands` and exposes
``register(subparsers)``; it sets ``func(args) -> int`` on its parser.  The top-level
help comes from the table :data:`sinkproof.commands.COMMANDS`, so only the module of
the command that runs is imported.  Errors a user can cause are reported on one line
with a non-zero exit status.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Collection, Sequence

from . import __version__
from .commands import COMMANDS
from .errors import SinkproofError


def build_parser(load: Collection[str] | None = None) -> argparse.ArgumentParser:
    """The parser with every subcommand of :data:`~sinkproof.commands.COMMANDS`.

    The modules of the commands in ``load`` (default: all) are imported and register
    their full parsers; every other command gets a parser with its one-line help only.
    """
    parser = argparse.ArgumentParser(
        prog="sinkproof",
        description="Proofs, certificates and counterexamples for attention sinks.",
    )
    parser.add_argument("--version", action="version", version=f"sinkproof {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, help_line in sorted(COMMANDS.items()):
        if load is None or name in load:
            importlib.import_module(f"sinkproof.commands.{name}").register(sub)
        else:
            sub.add_parser(name, help=help_line)
    return parser


def _command_in(argv: Sequence[str]) -> str | None:
    """The subcommand ``argv`` names (its first word that is not an option), if any."""
    word = next((a for a in argv if not a.startswith("-")), None)
    return word if word in COMMANDS else None


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit status (0 success, 1 a claim failed, 2 bad input)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    command = _command_in(argv)
    parser = build_parser(() if command is None else (command,))
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except (SinkproofError, ValueError, TypeError, OSError) as exc:
        msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        print(f"sinkproof: error: {msg}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("sinkproof: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
