"""Exceptions with messages meant for users (the CLI prints them on one line)."""


class SinkproofError(Exception):
    """Base class for errors the CLI reports as ``sinkproof: error: <message>``."""


class CertificateError(SinkproofError, ValueError):
    """A certificate or witness file is malformed, tampered with, or does not verify."""
