"""The published JSON Schemas agree with the readers: every shipped file the reader accepts
the schema accepts, the shipped schema files are the generated ones, and the mistakes a
reader refuses (an unknown field, a wrong kind) the schema refuses too."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from sinkproof.claims import claim_from_dict
from sinkproof.cli import main
from sinkproof.exact_numbers import load_toml, plain
from sinkproof.schemas import SCHEMAS, schema_path, schema_text
from sinkproof.sweep.grid import SweepError, sweep_from_dict

jsonschema = pytest.importorskip("jsonschema")

ROOT = Path(__file__).resolve().parent.parent
SWEEPS = sorted((ROOT / "examples" / "sweeps").glob("*.toml"))
CLAIMS = sorted((ROOT / "examples" / "claims").glob("*.toml"))
GOLDEN = ROOT / "tests" / "data" / "golden" / "corpus.jsonl.gz"


def _validator(name: str):
    schema = json.loads(schema_text(name))
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_the_shipped_schema_file_is_the_generated_one(name):
    assert schema_path(name).read_text(encoding="utf-8") == schema_text(name), (
        f"stale: run sinkproof schema {name} --out {schema_path(name)} --force")


def _toml_data(path: Path) -> dict:
    return plain(load_toml(path.read_text(encoding="utf-8")))


READERS = {"sweep": sweep_from_dict, "claim": claim_from_dict}
EXAMPLES = [("sweep", p) for p in SWEEPS] + [("claim", p) for p in CLAIMS]


@pytest.mark.parametrize("kind, path", EXAMPLES, ids=[p.name for _, p in EXAMPLES])
def test_every_example_sweep_and_claim_file_validates(kind, path):
    data = _toml_data(path)
    READERS[kind](data)  # the reader accepts it
    errors = list(_validator(kind).iter_errors(data))
    assert not errors, [e.message for e in errors]


@pytest.mark.parametrize("path", SWEEPS[:3], ids=[p.name for p in SWEEPS[:3]])
@pytest.mark.parametrize("mistake", ["top", "setting", "kind"])
def test_a_mistake_the_sweep_reader_refuses_the_schema_refuses(path, mistake):
    data = _toml_data(path)
    if mistake == "top":
        data["extra"] = 1
    elif mistake == "setting":
        data.setdefault("base", {})["no_such_setting"] = 1
    else:
        data["kind"] = "no_such_kind"
    with pytest.raises((SweepError, ValueError)):
        sweep_from_dict(data)
    assert list(_validator("sweep").iter_errors(data))


def _golden_certificates(limit: int = 200):
    with gzip.open(GOLDEN, "rt", encoding="utf-8") as handle:
        for i, line in enumerate(handle):
            if i >= limit:
                return
            record = json.loads(line)
            yield record["cert"]


def test_golden_certificates_validate_and_a_wrong_envelope_does_not():
    validator = _validator("certificate")
    seen = 0
    for cert in _golden_certificates():
        if not isinstance(cert, dict) or cert.get("format") != "sinkproof-certificate":
            continue
        seen += 1
        errors = list(validator.iter_errors(cert))
        assert not errors, [e.message for e in errors]
        assert list(validator.iter_errors({**cert, "kind": "no-such-kind"}))
        assert list(validator.iter_errors({**cert, "extra": 1}))
        assert list(validator.iter_errors({k: v for k, v in cert.items() if k != "data"}))
    assert seen > 50


def test_the_schema_command_prints_writes_and_refuses_to_overwrite(tmp_path, capsys):
    assert main(["schema", "sweep"]) == 0
    assert json.loads(capsys.readouterr().out)["title"] == "sinkproof sweep file"
    out = tmp_path / "s.json"
    assert main(["schema", "certificate", "--out", str(out)]) == 0
    assert out.read_text() == schema_text("certificate")
    assert main(["schema", "certificate", "--out", str(out)]) == 2  # exists: not ours
    assert main(["schema", "nothing"]) == 2


@pytest.mark.parametrize("path", [CLAIMS[0], next(p for p in CLAIMS if p.name.startswith(
    "paper_p1_one_head"))], ids=["trigger", "paper"])
@pytest.mark.parametrize("where", ["top", "task", "model", "hypothesis", "conclusion",
                                   "check", "setting"])
def test_a_mistake_the_claim_reader_refuses_the_schema_refuses(path, where):
    data = _toml_data(path)
    if where == "top":
        data["no_such_section"] = {}
    elif where == "setting":
        data["task"]["setting"] = "no_such_setting"
    else:
        data.setdefault(where, {})["no_such_field"] = 1
    with pytest.raises((ValueError, TypeError)):
        claim_from_dict(data)
    assert list(_validator("claim").iter_errors(data))
