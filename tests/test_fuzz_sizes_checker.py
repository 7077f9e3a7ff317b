"""Size fuzzing of certificate and witness files (issue 24.7), the trusted checker's side:
every integer size field of every base file (``p``, ``T``, ``n``, ``L``, ``k``, heads,
layers, counts, positions, digits) replaced by a size from small to absurd, and for each:
a verdict (0, 1), a refusal with exit 2 or 4 within a second of CPU, never a hang, an
internal error (70) or a traceback.

Every kind meets the rule since the checker's limits were rewritten (round three): the
fuzzer below is a plain test, and the field that last hung (``bnb-heads``
``instance.task.T = 10^8``) is among the refusals pinned by value.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.test_fuzz_files import _get, _nodes, _set, base_files
from tests.test_fuzz_sizes import (
    REFUSAL_CPU_SECONDS,
    ROOT,
    SIZES,
    assert_decided,
    decided,
)

SCALE = max(1, settings.default.max_examples // 15)
FEW = settings(max_examples=8 * SCALE, deadline=None,
               suppress_health_check=[HealthCheck.too_slow,
                                      HealthCheck.function_scoped_fixture])


def size_paths(doc: dict) -> list[tuple]:
    """Paths of every integer field (a size, a count, a position, a code) in ``doc``."""
    return [p for p in _nodes(doc) if type(_get(doc, p)) is int]


@st.composite
def resized_files(draw) -> tuple[str, str]:
    """A base file of a drawn kind with one to three integer fields replaced by sizes."""
    name = draw(st.sampled_from(sorted(base_files())))
    doc = json.loads(base_files()[name])
    paths = size_paths(doc)
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(paths))
        _set(doc, path, draw(SIZES))
    return name, json.dumps(doc)


def verify(text: str, tmp_path) -> tuple[int, float, str]:
    path = tmp_path / "resized.json"
    path.write_text(text, encoding="utf-8")
    return decided(["verify", str(path)])


def test_every_kind_has_size_fields():
    for name, text in base_files().items():
        assert size_paths(json.loads(text)), name


def verify_in_a_process(text: str, tmp_path) -> tuple[int, str]:
    """``sinkproof verify`` in a subprocess with a timeout: a hang inside C code (a big
    integer power, an allocation) does not let a signal watchdog fire."""
    path = tmp_path / "resized.json"
    path.write_text(text, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    try:
        run = subprocess.run([sys.executable, "-m", "sinkproof", "verify", str(path)],
                             capture_output=True, text=True, timeout=60, env=env)
    except subprocess.TimeoutExpired:
        pytest.fail("hang: verify ran past 60 s")
    return run.returncode, run.stderr


@pytest.mark.slow
@FEW
@given(case=resized_files())
def test_resized_certificates_are_decided_or_refused_at_once(case, tmp_path):
    rc, err = verify_in_a_process(case[1], tmp_path)
    assert rc in (0, 1, 2, 4) and "Traceback" not in err, (rc, err)


def _resized(name: str, path: tuple, value: int) -> str:
    doc = json.loads(base_files()[name])
    _set(doc, path, value)
    return json.dumps(doc)


REFUSED = [  # (kind, field path, value): refused at once today
    ("bnb-heads", ("instance", "task", "p"), 10**8),
    ("bnb-heads", ("instance", "task", "p"), 10**30),
    ("bnb-heads", ("instance", "task", "T"), 10**8),  # hung inside C code until round 3
]


@pytest.mark.parametrize("kind, path, value", REFUSED)
def test_size_fields_the_checker_refuses_at_once(kind, path, value, tmp_path):
    rc, cpu, err = verify(_resized(kind, path, value), tmp_path)
    assert_decided(rc, cpu, err)
    assert rc == 4 and cpu < REFUSAL_CPU_SECONDS, err
