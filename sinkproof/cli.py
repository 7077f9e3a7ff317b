"""Command-line entry point ``sinkproof``.

Each subcommand lives in its own module of :mod:`sinkproof.commands` and exposes
``register(subparsers)``; it sets ``func(args) -> int`` on its parser.  Errors a
user can cause are reported on one line with a non-zero exit status.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
from collections.abc import Sequence

from . import __version__, commands
from .errors import SinkproofError


def build_parser() -> argparse.ArgumentParser:
    """The parser with every subcommand found in :mod:`sinkproof.commands`."""
    parser = argparse.ArgumentParser(
        prog="sinkproof",
        description="Proofs, certificates and counterexamples for attention sinks.",
    )
    parser.add_argument("--version", action="version", version=f"sinkproof {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for info in sorted(pkgutil.iter_modules(commands.__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{commands.__name__}.{info.name}")
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit status (0 success, 1 a claim failed, 2 bad input)."""
    parser = build_parser()
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
