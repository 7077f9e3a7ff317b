"""Work limits, one rule for the CLI and the Python API: estimate first, refuse at once.

Every entry point that can run long (``evaluate``, ``sink_map``, ``search``, ``check``,
``convex.family_certificate``, ``bnb.prove``, ...) takes ``max_work=`` (``None``: the
CLI's default for the same work) and, before any allocation or loop, compares a
closed-form estimate of its work with it (:func:`refuse_beyond`).  A refusal is one
:class:`WorkLimitExceeded` (the CLI's :class:`~sinkproof.errors.WorkLimitError`, exit
status 4) whose message names the quantity, the estimate, the limit and how to raise it::

    not started: about 12,938,341,329,476,838,285 (sequence, position) pairs to evaluate,
    beyond the limit of 2,000,000 (raise it with max_work=N)

Counts are computed in closed form and *saturate* at :data:`BEYOND` (a count no limit
reaches), so that estimating a family of length ``T = 10**30`` costs microseconds, not
the enumeration it bounds.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from . import certformat
from .errors import SATURATED, WorkLimitError, check_work

WorkLimitExceeded = WorkLimitError
"""The one error of a refused estimate (an alias: the CLI maps it to exit status 4)."""

API_FLAG = "max_work=N"
"""How a Python caller raises a limit (the CLI says ``--max-work N``)."""

BEYOND = SATURATED
"""A count beyond every limit: saturated counts stop here."""

MAX_ENTRIES = 100_000_000
"""Most numbers one table built from a size field may hold (content vectors, position
rows, a stack's weights): 800 MB of float64."""


MAX_MODEL_WEIGHTS = 10_000_000
"""Most weights of one model a claim's class may name (``4 x layers x heads x D^2``: query,
key, value and output maps); a route builds such models to search and to check."""

SEARCH_MAX_WORK = 100_000_000_000
"""Default limit on a search's head evaluations (restarts x steps x positions x heads x
layers): the default search on p=2, T=4 makes about 7 million, a paper claim's 24 x 4000
Adam steps on 20,000 positions of a 2-layer model about 4 billion."""


EVALUATE_MAX_WORK = 2_000_000
"""Default limit on the (sequence, position) pairs one evaluation covers (``evaluate``,
``sinkproof report --max-work``)."""

SITUATIONS_MAX_WORK = 100_000
"""Default limit on the situations (sets of distinct tokens) of a family certificate
(``convex.family_certificate``, ``sinkproof certify --max-work``)."""


BNB_MAX_WORK = 1_000_000_000
"""Default limit on a branch and bound's tree nodes x family positions (each node's
relaxation ranges over the family): ``bnb.prove`` at its 200 nodes per tree refuses
from about five million positions."""


EXPERIMENT_MAX_WORK = 200_000_000
"""Default limit on an experiment's token-steps (runs x (steps x batch x T + evaluation
tokens), :func:`sinkproof.experiment.config.token_steps`); the default experiment is
about 12 million."""


VARIANTS_MAX_WORK = 1_000_000
"""Default limit on the variants table's position evaluations (the family's positions, once
for the hull certificate and once per construction level and witness file of every map,
:func:`sinkproof.variants.table.table_work`); the default table is about 19 thousand."""


def model_weights(layers: int, heads: int, dim: int) -> int:
    """Weights of a model of ``layers`` x ``heads`` heads on rows of dimension ``dim``
    (query, key, value and output maps), saturated."""
    return product(4, layers, heads, dim, dim)


def limit(max_work: int | None, default: int, name: str = "max_work") -> int:
    """``max_work`` checked (an integer ``>= 1``), or ``default`` for ``None``; ``name``:
    the keyword it was passed as."""
    if max_work is None:
        return default
    if isinstance(max_work, bool) or not isinstance(max_work, int):
        raise TypeError(f"{name} must be an integer, got {max_work!r}")
    if max_work < 1:
        raise ValueError(f"{name} must be >= 1, got {max_work}")
    return max_work


def refuse_beyond(what: str, estimate: int, max_work: int | None, default: int) -> int:
    """Raise :class:`WorkLimitExceeded` when ``estimate`` units of ``what`` exceed the
    limit (``max_work``, default ``default``); return the limit otherwise."""
    bound = limit(max_work, default)
    check_work(what, estimate, bound, flag=API_FLAG)  # the CLI's format, the API's keyword
    return bound


def power(base: int, exponent: int) -> int:
    """``base ** exponent`` for counts ``>= 0``, saturated at :data:`BEYOND`."""
    if base <= 1 or exponent <= 0:
        return base ** max(exponent, 0) if base >= 0 else 0
    if exponent > 101 or exponent * math.log2(base) > math.log2(BEYOND) + 1:
        return BEYOND  # base >= 2: 2**101 > BEYOND (and no float of a huge exponent)
    return min(base**exponent, BEYOND)


def product(*factors: int) -> int:
    """The product of counts ``>= 0``, saturated at :data:`BEYOND`."""
    total = 1
    for f in factors:
        if f == 0:
            return 0
        total = min(total * f, BEYOND)
    return total


def total(terms: Iterable[int]) -> int:
    """The sum of counts ``>= 0``, stopping once it reaches :data:`BEYOND`."""
    acc = 0
    for term in terms:
        acc += term
        if acc >= BEYOND:
            return BEYOND
    return acc


def paper_prefixes(m: int, L: int) -> int:
    """:func:`sinkproof.certformat.paper_prefixes` (the paper family's distinct prefixes,
    in closed form) saturated at :data:`BEYOND`: its ``m ** (L + 1)`` is never computed
    where it would exceed every limit (``L = 10**30``)."""
    if m >= 2 and power(m, L + 1) >= BEYOND:
        return BEYOND
    return min(certformat.paper_prefixes(m, L), BEYOND)


def require_entries(what: str, *shape: int, limit: int = MAX_ENTRIES) -> None:
    """Refuse (:class:`WorkLimitExceeded`) to build a table of ``shape`` (its size fields)
    holding more than ``limit`` numbers, before it is allocated."""
    entries = product(*(max(int(s), 0) for s in shape))
    if entries > limit:
        dims = " x ".join(f"{int(s):,}" if int(s) < BEYOND else "10^30+" for s in shape)
        raise WorkLimitError(f"not started: a {what} of {dims} = about {entries:,} numbers, "
                             f"beyond the limit of {limit:,} numbers sinkproof builds in "
                             "one table (lower the size fields)")


__all__ = ["API_FLAG", "BEYOND", "MAX_ENTRIES", "MAX_MODEL_WEIGHTS", "SEARCH_MAX_WORK",
           "EVALUATE_MAX_WORK", "SITUATIONS_MAX_WORK", "BNB_MAX_WORK", "EXPERIMENT_MAX_WORK",
           "VARIANTS_MAX_WORK",
           "model_weights", "WorkLimitExceeded", "limit", "power",
           "paper_prefixes", "product", "refuse_beyond", "require_entries", "total"]
