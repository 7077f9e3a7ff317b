"""The engine route verifies the certificate it writes exactly once, from the file's bytes.

The engine writes its certificate and the trusted checker verifies that written file
(:func:`sinkproof.convex.certfile.save_verified`); the claim is then decided from that
verdict, not from a second verification.  These tests count the checker's ``verify``
calls (``verify_file`` goes through it), require the one verified document to be the
file the check reports, and the file to verify again with ``sinkproof verify``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import sinkproof.checker as checker
from sinkproof.claims import check, claim_from_dict
from sinkproof.claims.engine import certify_by_engine
from sinkproof.claims.schema import load_claim
from sinkproof.cli import main
from sinkproof.convex.certfile import certificate_text, save_verified
from sinkproof.files import write_file, write_file_if

ROOT = Path(__file__).resolve().parent.parent
CLAIMS = ROOT / "examples" / "claims"

PAPER_SMALL = {"task": {"setting": "paper", "n": 4, "L": 4, "content": [[-1.0], [1.0]]},
               "model": {"kind": "softmax", "heads": 1},
               "hypothesis": {"max_error": 0.05},
               "conclusion": {"min_bos_mass": 0.5, "positions": "every"},
               "check": {"restarts": 1, "steps": 10, "budget": 30}}
"""A small paper-setting claim the engine proves (token-pair relaxation, one head)."""
LATER_LAYERS = ("jax", "optax", "dask", "distributed")
"""The search's and the cluster's libraries: the engine route needs neither.  (CVXPY it may
load: a leaf whose first bound came out above its parent's is solved again through it.)"""


@pytest.fixture
def verified_documents(monkeypatch):
    """Every document the trusted checker's ``verify`` is called on, in order."""
    seen: list[dict] = []
    real = checker.verify

    def counting(cert, limits=None):
        seen.append(json.loads(json.dumps(cert)))
        return real(cert, limits)

    monkeypatch.setattr(checker, "verify", counting)
    return seen


@pytest.mark.parametrize("claim", [CLAIMS / "learned_values_homogeneous.toml", PAPER_SMALL,
                                   CLAIMS / "paper_p1_position.toml",
                                   CLAIMS / "paper_p1_uniform_position.toml"],
                         ids=["learned-values", "paper-setting", "reduced-finite",
                              "reduced-box"])
def test_the_engine_route_verifies_the_certificate_it_writes_once(claim, tmp_path,
                                                                   verified_documents):
    out = tmp_path / "claim.certificate.json"
    claim = claim_from_dict(claim) if isinstance(claim, dict) else claim
    outcome = check(claim, search=False, certificate_out=out, theorems=False)  # Theorem 8
    assert outcome.status == "proved" and outcome.by == "bnb"  # proves the first at once
    assert outcome.certificate == str(out)
    assert len(verified_documents) == 1  # once: not in memory and again from the file
    assert verified_documents[0] == json.loads(out.read_text(encoding="utf-8"))
    digest = checker.verify_file(out).digest
    assert f"sha256:{digest}" in outcome.detail
    assert main(["verify", str(out)]) == 0


def test_several_heads_verify_the_saved_file_once(tmp_path, verified_documents):
    claim = load_claim(CLAIMS / "two_heads_fixed.toml")
    run = certify_by_engine(claim, tmp_path / "heads.json")
    assert run.path is not None and run.verdict is not None and run.verdict.ok
    assert len(verified_documents) == 1
    assert verified_documents[0] == json.loads(run.path.read_text(encoding="utf-8"))
    assert checker.verify_file(run.path).digest == run.verdict.digest


def _homogeneous_certificate(tmp_path: Path) -> dict:
    out = tmp_path / "made.json"
    check(CLAIMS / "learned_values_homogeneous.toml", search=False, certificate_out=out,
          theorems=False)
    return json.loads(out.read_text(encoding="utf-8"))


def test_a_rejected_certificate_is_never_written(tmp_path):
    cert = _homogeneous_certificate(tmp_path)
    cert["claim"]["min_bos_mass"] = "99/100"  # more than its trees prove
    dest = tmp_path / "rejected.json"
    verdict = save_verified(cert, dest)
    assert not verdict.ok
    assert not dest.exists() and not list(tmp_path.glob(".rejected.json.*"))
    good = _homogeneous_certificate(tmp_path / "again")
    verdict = save_verified(good, dest)
    assert verdict.ok and dest.read_text(encoding="utf-8") == certificate_text(good)
    assert checker.verify_file(dest).digest == verdict.digest


def test_write_file_if_keeps_the_destination_when_the_check_says_no(tmp_path):
    dest = write_file(tmp_path / "f.txt", "old")
    seen: list[bytes] = []

    def refuse(written: Path) -> bool:
        seen.append(written.read_bytes())
        return False

    assert write_file_if(dest, "new", refuse, force=True) is False
    assert seen == [b"new"] and dest.read_text() == "old"
    assert write_file_if(dest, "new", lambda written: True, force=True) is True
    assert dest.read_text() == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.txt"]


def test_the_engine_route_of_the_command_loads_no_search_convex_or_cluster_layer(tmp_path):
    claim = tmp_path / "small.toml"
    claim.write_text("\n".join(
        [f"[{section}]\n" + "\n".join(f"{k} = {json.dumps(v)}" for k, v in table.items())
         for section, table in PAPER_SMALL.items()]) + "\n", encoding="utf-8")
    code = ("import json, sys\nfrom sinkproof.cli import main\n"
            "rc = main(['check', sys.argv[1], '--force'])\n"
            f"print(json.dumps([rc] + [m for m in {LATER_LAYERS!r} if m in sys.modules]))")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    run = subprocess.run([sys.executable, "-c", code, str(claim)], capture_output=True,
                         text=True, cwd=tmp_path, env=env, timeout=300, check=False)
    assert "PROVED" in run.stdout and "proved by: bnb" in run.stdout, run.stderr
    assert json.loads(run.stdout.strip().splitlines()[-1]) == [0]  # exit 0, none loaded
    assert main(["verify", str(tmp_path / "small.certificate.json")]) == 0


def test_the_reduced_route_writes_no_certificate_for_a_bound_it_does_not_prove(tmp_path):
    claim = load_claim(CLAIMS / "paper_p1_position.toml")
    too_strong = claim_from_dict({**claim.to_dict(), "conclusion": {
        **claim.to_dict()["conclusion"], "min_bos_mass": 0.999}})
    out = tmp_path / "never.json"
    run = certify_by_engine(too_strong, out)
    assert run.path is None and "no proof" in run.note
    assert not out.exists()
