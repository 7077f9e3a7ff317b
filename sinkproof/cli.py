"""Command-line entry point ``sinkproof``.

Each subcommand lives in its own module of :mod:`sinkproof.commands` and exposes
``register(subparsers)``; it sets ``func(args) -> int`` on its parser.  The top-level
help comes from the table :data:`sinkproof.commands.COMMANDS`, so only the module of
the command that runs is imported.  The exit
status means only what :data:`sinkproof.errors.EXIT_CODES` says: 0, 1 and 3 come from
a completed decision; bad input is 2, a refused size 4, an internal error 70 and an
interrupt 130, each with a one-line message on stderr (``--debug`` adds the traceback).
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import difflib
import importlib
import os
import signal
import sys
import traceback
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Any

from . import __version__, files, interrupts
from . import progress as progress_bars
from .commands import COMMANDS, module_of
from .errors import (
    EXIT_BAD_INPUT,
    EXIT_CODES,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_REFUSED,
    Interrupted,
    SinkproofError,
    WorkLimitError,
)

PACKAGE_DIR = Path(__file__).resolve().parent


def exit_status_text() -> str:
    """The exit-status table, one line per status (for ``--help`` and docs/cli.md)."""
    return "\n".join(f"  {code:>3}  {meaning}" for code, meaning in EXIT_CODES.items())


class _Parser(argparse.ArgumentParser):
    """argparse with the project's convention (docs/cli.md): usage errors on one line
    (``sinkproof: error: ...``), status 2; no prefix abbreviations (``--ep`` is not
    ``--eps``: a later option could change an old script's meaning); a "did you mean" for
    an unknown option.  Subparsers are of this class too."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs["allow_abbrev"] = False
        super().__init__(*args, **kwargs)

    def _known_options(self) -> list[str]:
        names = list(self._option_string_actions)
        for action in self._actions:
            if isinstance(action, argparse._SubParsersAction):
                for parser in action.choices.values():
                    names += list(parser._option_string_actions)
        return names

    def error(self, message: str) -> None:  # type: ignore[override]
        if message.startswith("unrecognized arguments:"):
            known = self._known_options()
            for word in message.split(":", 1)[1].split():
                close = difflib.get_close_matches(word.split("=")[0], known, n=1, cutoff=0.6)
                if word.startswith("-") and close:
                    message += f" (did you mean {close[0]}?)"
                    break
        self.exit(EXIT_BAD_INPUT, f"sinkproof: error: {message} (see {self.prog} --help)\n")


def add_common_options(parser: argparse.ArgumentParser) -> None:
    """``-q/--quiet``, ``-v/--verbose``, ``--force`` and ``--progress/--no-progress`` on a
    command's parser (a command that defines one of them itself keeps its own)."""
    have = parser._option_string_actions
    if "--quiet" in have:
        if "-q" not in have:  # the command's own --quiet answers -q too
            have["--quiet"].option_strings.insert(0, "-q")
            have["-q"] = have["--quiet"]
    else:
        parser.add_argument("-q", "--quiet", action="store_true",
                            help="print nothing on standard output but data asked for there "
                                 "(--json -, --out -); the exit status carries the verdict")
    if "--verbose" not in have:
        parser.add_argument("-v", "--verbose", action="store_true",
                            help="progress bars, and the full traceback of an error")
    if "--force" not in have:
        parser.add_argument("--force", action="store_true",
                            help="overwrite an existing output file (without it, a file this "
                                 "run did not create is never replaced: exit 2)")
    if "--progress" not in have:
        parser.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                            help="draw progress bars on stderr (default: on a terminal, for "
                                 "long work)")


def build_parser(load: Collection[str] | None = None) -> argparse.ArgumentParser:
    """The parser with every subcommand of :data:`~sinkproof.commands.COMMANDS`.

    The modules of the commands in ``load`` (default: all) are imported and register
    their full parsers; every other command gets a parser with its one-line help only.
    """
    parser = _Parser(
        prog="sinkproof",
        description="Proofs, certificates and counterexamples for attention sinks.",
        epilog="exit status:\n" + exit_status_text(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"sinkproof {__version__}")
    parser.add_argument("--debug", action="store_true",
                        help="show the full traceback of an error (anywhere on the line)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, help_line in sorted(COMMANDS.items()):
        if load is None or name in load:
            importlib.import_module(f"sinkproof.commands.{module_of(name)}").register(sub)
            add_common_options(sub.choices[name])
        else:
            sub.add_parser(name, help=help_line)
    return parser


def _command_in(argv: Sequence[str]) -> str | None:
    """The subcommand ``argv`` names (its first word that is not an option), if any."""
    word = next((a for a in argv if not a.startswith("-")), None)
    return word if word in COMMANDS else None


def _first_line(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.filename is not None and exc.strerror:
        # one style for a file that cannot be opened, whichever command opened it
        verb = "read" if isinstance(exc, (FileNotFoundError, IsADirectoryError)) else "open"
        return f"cannot {verb} {exc.filename}: {exc.strerror}"
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _is_input_error(exc: BaseException) -> bool:
    """A user-caused error: a :class:`SinkproofError`, an OSError (a file), or a
    ValueError/TypeError raised by sinkproof's own validation (the innermost frame of its
    traceback is in the package; for a TypeError, that frame is a ``raise`` statement).
    The same classes raised inside NumPy, SciPy & co. are internal errors: sinkproof should
    have refused the input before them; so is a TypeError the interpreter raises at a line
    of the package (a call with the wrong arguments, an operand of the wrong type)."""
    if isinstance(exc, (SinkproofError, OSError)):
        return True
    if not isinstance(exc, (ValueError, TypeError)):
        return False
    frames = traceback.extract_tb(exc.__traceback__)
    if not frames:
        return True
    innermost = frames[-1]
    if not Path(innermost.filename).resolve().is_relative_to(PACKAGE_DIR):
        return False
    return isinstance(exc, ValueError) or (innermost.line or "").lstrip().startswith("raise")


class _QuietStdout:
    """stdout that, once its reader has gone (``sinkproof ... | head``), drops what follows
    instead of raising BrokenPipeError: a closed pipe is not an error.  ``muted`` (the
    commands' ``-q/--quiet``) drops everything."""

    def __init__(self, stream: object) -> None:
        self._stream = stream
        self.closed_pipe = False
        self.muted = False  # -q/--quiet: nothing but data asked for on stdout

    def write(self, text: str) -> int:
        if self.closed_pipe or self.muted:
            return len(text)
        try:
            return self._stream.write(text)  # type: ignore[attr-defined]
        except BrokenPipeError:
            self._close()
            return len(text)

    def flush(self) -> None:
        if self.closed_pipe:
            return
        try:
            self._stream.flush()  # type: ignore[attr-defined]
        except BrokenPipeError:
            self._close()

    def _close(self) -> None:
        self.closed_pipe = True
        try:  # point the descriptor at /dev/null so that the interpreter's exit flush is quiet
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self._stream.fileno())  # type: ignore[attr-defined]
        except (OSError, AttributeError, ValueError):
            pass

    def __getattr__(self, name: str) -> object:
        return getattr(self._stream, name)


def _error(kind: str, exc: BaseException, debug: bool) -> None:
    if debug:
        traceback.print_exception(exc)
    print(f"sinkproof: {kind}: {_first_line(exc)}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit status (:data:`sinkproof.errors.EXIT_CODES`)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv  # accepted anywhere on the line, not only before COMMAND
    argv = [a for a in argv if a != "--debug"]
    command = _command_in(argv)
    try:  # importing the command's modules takes seconds: Ctrl-C there is an interrupt too
        with interrupts.handled():
            parser = build_parser(() if command is None else (command,))
            args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version (0) or a usage error (2)
        return int(exc.code or 0)
    except KeyboardInterrupt:
        print("sinkproof: interrupted (before the command started)", file=sys.stderr)
        return EXIT_INTERRUPTED
    if not getattr(args, "func", None):
        parser.print_help()
        return 0
    debug = debug or args.verbose
    bars = args.progress if args.progress is not None else (
        True if args.verbose else False if args.quiet else None)
    progress_bars.set_default(bars)
    files.new_run(force=args.force)
    stdout = sys.stdout
    sys.stdout = quiet = _QuietStdout(stdout)
    quiet.muted = args.quiet and "-" not in (getattr(args, "json", None),
                                             getattr(args, "out", None))
    try:
        with interrupts.handled():
            return int(args.func(args) or 0)
    except KeyboardInterrupt as exc:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
        progress = f" ({exc.progress})" if isinstance(exc, Interrupted) else ""
        print(f"sinkproof: interrupted{progress}", file=sys.stderr)
        return EXIT_INTERRUPTED
    except WorkLimitError as exc:
        _error("refused", exc, debug)
        return EXIT_REFUSED
    except BrokenPipeError:
        quiet._close()
        return 0
    except Exception as exc:  # noqa: BLE001 - every failure gets a status and one line
        if _is_input_error(exc):
            _error("error", exc, debug)
            return EXIT_BAD_INPUT
        _error("internal error", exc, debug)
        if not debug:
            print("sinkproof: this is a bug; run again with --debug for the traceback",
                  file=sys.stderr)
        return EXIT_INTERNAL
    finally:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
        sys.stdout = stdout
        progress_bars.set_default(None)
        files.new_run()


def console_main() -> None:
    """The ``sinkproof`` script and ``python -m sinkproof``: :func:`main`, then leave.

    After an interrupt the partial result is already out (printed and written by the
    command), so the process leaves at once: the exit handlers run (multiprocessing's
    clean-up of workers and semaphores), the streams are flushed, and the interpreter's
    teardown, which frees a large heap object by object (JAX's arrays and compiled code:
    84.5 s after ``sinkproof paper`` was measured), is skipped.  A Ctrl-C after the
    command (during that teardown) is ignored: no traceback after the result.
    """
    status = main()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if status == EXIT_INTERRUPTED:
        atexit._run_exitfuncs()
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        os._exit(status)
    sys.exit(status)


if __name__ == "__main__":  # pragma: no cover
    console_main()
