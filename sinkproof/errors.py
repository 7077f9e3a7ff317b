"""Exceptions with messages meant for users (the CLI prints them on one line)."""


class SinkproofError(Exception):
    """Base class for errors the CLI reports as ``sinkproof: error: <message>``."""


class CertificateError(SinkproofError, ValueError):
    """A certificate or witness file is malformed, tampered with, or does not verify."""


class InputError(SinkproofError, ValueError):
    """Bad input: a file, option or argument that does not make sense (exit status 2)."""


class CapabilityError(SinkproofError, TypeError):
    """A task lacks (or has) a capability that a layer needs (or excludes)."""


class WorkLimitError(SinkproofError):
    """The work a command would do is beyond its limit (exit status 4); the message names
    the estimate, the limit and the option that raises it."""


class Interrupted(KeyboardInterrupt):
    """Ctrl-C stopped a long computation.  ``partial`` is its result so far (exact for what
    it covers); ``progress`` says how far it got (e.g. ``"3 of 10 runs finished"``)."""

    def __init__(self, partial: object, progress: str) -> None:
        super().__init__(progress)
        self.partial = partial
        self.progress = progress


EXIT_CODES: dict[int, str] = {
    0: "proved / verified / done: the command completed and its claim holds",
    1: "refuted / not verified: the command completed and its claim fails "
       "(a verified counterexample, a failing inequality, a proved bound broken, a sweep "
       "job that failed)",
    2: "bad input: an unknown option, a malformed file or a meaningless parameter (a "
       "number beyond the float range or with more digits than are read included)",
    3: "open: neither proved nor refuted within the budget (sinkmap: some position "
       "not certified)",
    4: "refused: the estimated work or a table's size is beyond the limit, before any "
       "work (raise it with --max-work; in Python, max_work=)",
    70: "internal error: a bug in sinkproof (run with --debug for the traceback)",
    130: "interrupted (Ctrl-C / SIGINT); the partial result is printed, marked interrupted",
}
"""Every exit status of the ``sinkproof`` command.  0, 1 and 3 come only from a completed
decision; an unexpected exception is always 70, never 1."""

EXIT_OK, EXIT_FAILS, EXIT_BAD_INPUT, EXIT_OPEN, EXIT_REFUSED = 0, 1, 2, 3, 4
EXIT_INTERNAL, EXIT_INTERRUPTED = 70, 130


SINK_MAP_MAX_WORK = 20_000_000
"""Default limit on a sink map's work units (one per cone constraint of every SOCP solved,
one per symmetry image of a target; ``sinkproof sinkmap --max-work``): p=2, T=8 (about
18 million) runs; p=3, T=7 (about 37 million) is refused.  Light here so that
``sinkproof sinkmap --help`` loads no solver."""


SATURATED = 10**30
"""Where size estimates stop counting (:data:`sinkproof.work.BEYOND`): an estimate this
large reads "10^30 or more"."""


def check_work(what: str, estimate: int, limit: int, flag: str = "--max-work N") -> None:
    """Refuse (:class:`WorkLimitError`) when ``estimate`` units of ``what`` exceed ``limit``
    (an estimate of exactly ``limit + 1`` is read as a capped count: "more than"; one of
    :data:`SATURATED` or more as a saturated one)."""
    if estimate > limit:
        about = (f"more than {limit:,}" if estimate == limit + 1 else
                 "10^30 or more" if estimate >= SATURATED else f"about {estimate:,}")
        raise WorkLimitError(f"not started: {about} {what}, beyond the limit "
                             f"of {limit:,} (raise it with {flag})")
