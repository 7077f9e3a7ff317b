"""A claim file never writes or deletes a file the user did not name (issue 24): a path in
``[check] witness`` is written only on request (``write_witness=True``,
``--write-witness``), no existing file is overwritten without ``force``, a file is
published by a rename from a temporary name next to it, and nothing outside the run's
private folder is ever removed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import sinkproof as sp
from sinkproof.claims import Proved, Refuted, check, claim_from_dict
from sinkproof.claims.outputs import OutputExistsError, private_folder, publish
from sinkproof.cli import main
from sinkproof.exact_numbers import load_toml

CLAIMS = Path(__file__).resolve().parents[1] / "examples" / "claims"
PRECIOUS = "a file of the user's, not to be touched\n"


def _relu_claim(witness: Path | None = None) -> dict:
    """The paper's (P3) claim, refuted by its construction in well under a second."""
    data = load_toml((CLAIMS / "paper_p3_relu.toml").read_text(encoding="utf-8"))
    if witness is not None:
        data["check"] = {"witness": str(witness)}
    return data


def _proved_claim(witness: Path) -> dict:
    """The paper's fixed-value claim, proved by Theorem 3 (no witness is ever made)."""
    data = load_toml((CLAIMS / "paper_p1_fixed_values.toml").read_text(encoding="utf-8"))
    data["check"] = {"witness": str(witness)}
    return data


def test_publish_refuses_an_existing_file_and_renames_into_place(tmp_path):
    made = private_folder() / "w.json"
    made.write_text("new\n", encoding="utf-8")
    dest = tmp_path / "w.json"
    dest.write_text(PRECIOUS, encoding="utf-8")
    with pytest.raises(OutputExistsError, match="exists and this run did not create it"):
        publish(made, dest)
    assert dest.read_text(encoding="utf-8") == PRECIOUS and made.exists()
    assert publish(made, dest, force=True) == dest
    assert dest.read_text(encoding="utf-8") == "new\n"
    assert sorted(os.listdir(tmp_path)) == ["w.json"]  # no temporary name left behind
    (tmp_path / "folder").mkdir()
    with pytest.raises(sp.errors.InputError, match="is a folder"):
        publish(made, tmp_path / "folder", force=True)


def test_a_claims_witness_path_is_not_written_without_the_opt_in(tmp_path):
    target = tmp_path / "victim.txt"
    target.write_text(PRECIOUS, encoding="utf-8")
    out = check(claim_from_dict(_relu_claim(target)))
    assert isinstance(out, Refuted)
    assert target.read_text(encoding="utf-8") == PRECIOUS
    assert Path(out.witness) != target and sp.checker.verify_file(out.witness).ok


def test_the_opt_in_never_overwrites_and_force_does(tmp_path):
    target = tmp_path / "victim.txt"
    target.write_text(PRECIOUS, encoding="utf-8")
    with pytest.raises(OutputExistsError, match="victim.txt exists"):
        check(claim_from_dict(_relu_claim(target)), write_witness=True)
    assert target.read_text(encoding="utf-8") == PRECIOUS
    out = check(claim_from_dict(_relu_claim(target)), write_witness=True, force=True)
    assert isinstance(out, Refuted) and Path(out.witness) == target
    assert sp.checker.verify_file(target).ok


def test_a_claim_that_refutes_nothing_deletes_nothing(tmp_path):
    # the old code wrote the witness path and unlinked it when the construction did not
    # refute: here the claim is proved, and the named file must survive untouched
    target = tmp_path / "victim.txt"
    target.write_text(PRECIOUS, encoding="utf-8")
    out = check(claim_from_dict(_proved_claim(target)), write_witness=True)
    assert isinstance(out, Proved)
    assert target.read_text(encoding="utf-8") == PRECIOUS
    absent = tmp_path / "absent.json"
    check(claim_from_dict(_proved_claim(absent)), write_witness=True)
    assert not absent.exists()


def test_write_witness_needs_a_path_in_the_claim():
    with pytest.raises(sp.errors.InputError, match="names no"):
        check(claim_from_dict(_relu_claim()), write_witness=True)


def test_cli_opt_in_and_no_overwrite(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    target = tmp_path / "named.json"
    claim = tmp_path / "c.toml"
    text = (CLAIMS / "paper_p3_relu.toml").read_text(encoding="utf-8")
    claim.write_text(text + f"\n[check]\nwitness = {str(target)!r}\n", encoding="utf-8")
    assert main(["check", str(claim)]) == 1
    assert not target.exists() and (tmp_path / "c.witness.json").exists()
    assert "written only with --write-witness" in capsys.readouterr().err
    assert main(["check", str(claim), "--write-witness"]) == 1 and target.exists()
    first = target.read_bytes()
    assert main(["check", str(claim), "--write-witness"]) == 2  # it exists now
    assert "pass --force" in capsys.readouterr().err
    assert target.read_bytes() == first
    assert main(["check", str(claim), "--write-witness", "--force"]) == 1
    assert sp.checker.verify_file(target).ok


def test_every_file_writer_is_atomic_and_never_replaces_a_file_it_did_not_create(
        tmp_path, monkeypatch):
    """The one writer (:func:`sinkproof.files.write_file`): an existing file another run made
    is refused and left byte for byte; the run's own file may be replaced; ``force`` allows
    it; a folder is refused; an interrupted write leaves neither the destination changed
    nor a temporary file behind."""
    from sinkproof import files

    victim = tmp_path / "victim.txt"
    victim.write_text("theirs")
    with pytest.raises(files.OutputExistsError, match="victim.txt exists"):
        files.write_file(victim, "ours")
    assert victim.read_text() == "theirs"
    files.write_file(victim, "ours", force=True)
    assert victim.read_text() == "ours"
    own = files.write_file(tmp_path / "own.txt", "1")
    files.write_file(own, "2")  # this run made it
    assert own.read_text() == "2"
    with pytest.raises(sp.errors.InputError, match="is a folder"):
        files.write_file(tmp_path, "x", force=True)

    def explode(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", explode)
    with pytest.raises(KeyboardInterrupt):
        files.write_file(own, "3")
    monkeypatch.undo()
    assert own.read_text() == "2" and sorted(p.name for p in tmp_path.iterdir()) == [
        "own.txt", "victim.txt"]


@pytest.mark.parametrize("argv, name", [
    (["certify", "--p", "1", "--T", "2", "--eps", "1/10", "--out", "{f}"], "certificate"),
    (["report", "--p", "1", "--T", "2", "--json", "{f}"], "json"),
])
def test_a_command_never_replaces_a_file_it_did_not_create_without_force(
        tmp_path, capsys, argv, name):
    target = tmp_path / f"{name}.out"
    target.write_text("a file the user keeps")
    args = [a.replace("{f}", str(target)) for a in argv]
    assert main(args) == 2
    assert "exists and this run did not create it" in capsys.readouterr().err
    assert target.read_text() == "a file the user keeps"
    assert main([*args, "--force"]) == 0 and target.read_text() != "a file the user keeps"
