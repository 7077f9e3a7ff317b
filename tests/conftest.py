"""Shared test configuration: hypothesis profiles and the ``slow`` marker.

Slow tests run only when ``CI=true`` (as in CI) or ``SINKPROOF_SLOW=1``.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

# the local run draws fewer examples (a fast loop); CI draws many more
# No example database: a stored failing example would make ``find``-based shrinking tests
# depend on earlier runs (a replayed, non-minimal example is returned as found), and CI
# starts from a clean checkout anyway.
settings.register_profile(
    "default", max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow],
    database=None,
)
settings.register_profile(
    "ci", max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow],
    database=None,
)
settings.load_profile("ci" if os.environ.get("CI") == "true" else "default")

RUN_SLOW = os.environ.get("CI") == "true" or os.environ.get("SINKPROOF_SLOW") == "1"

# JAX's persistent compilation cache stays off in the tests, and in every interpreter they
# start, whatever the developer's shell sets: a test writes no file in the user's cache
# folder (tests/test_autodiff.py turns it on in a temporary folder).
os.environ.pop("SINKPROOF_JAX_CACHE", None)


def examples(n: int) -> int:
    """``max_examples`` for a test with its own settings: ``n`` where slow tests run (CI),
    a third of it (at least 3) in the fast local run."""
    return n if RUN_SLOW else max(3, n // 3)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if RUN_SLOW:
        return
    skip = pytest.mark.skip(reason="slow: set SINKPROOF_SLOW=1 (CI runs it)")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Stop every worker pool this test process started (kept search pools included), so
    that the suite leaves no process behind, whatever way its workers exit."""
    from sinkproof.executor import shutdown_all

    shutdown_all()


def checker_pending() -> list[str]:
    """Attention maps whose row in the trusted checker's rule table has not landed yet."""
    from sinkproof.attention import MAPS
    from sinkproof.checker.maps import MAP_NAMES

    return [n for n in MAPS if n not in MAP_NAMES]


def with_checker_row(names):
    """``names`` as test parameters; a map the trusted checker cannot weigh yet is marked
    ``xfail`` (strict, with the checker's ValueError), so its checker comparisons run, and
    must pass, as soon as its row exists."""
    pending = checker_pending()
    return [pytest.param(n, marks=pytest.mark.xfail(
        n in pending, raises=ValueError, strict=True,
        reason=f"the trusted checker has no rule-table row for {n} yet")) for n in names]
