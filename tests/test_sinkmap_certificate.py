"""sinkmap-socp certificates: exact verification, tampering rejected, CLI round trip."""

from __future__ import annotations

import copy
import json
from fractions import Fraction

import numpy as np
import pytest

import sinkproof as sp
from sinkproof.checker import verify
from sinkproof.cli import main
from sinkproof.errors import CertificateError
from sinkproof.sinkmap import SinkMap, sink_map


@pytest.fixture(scope="module")
def smap() -> SinkMap:
    return sink_map(sp.TriggerTask(p=2, T=3), 0.1)


def rejected(cert: dict) -> bool:
    try:
        return not verify(cert).ok
    except CertificateError:
        return True


def test_untouched_certificate_verifies(smap):
    assert verify(copy.deepcopy(smap.certificate)).ok


def test_every_stated_bound_is_at_most_the_float_bound(smap):
    for e in smap.entries.values():
        if e.status == "certified":
            assert e.exact is not None and float(e.exact) <= e.float_bound


def _first_with_constraints(cert: dict, n: int = 2) -> dict:
    return next(c for c in cert["data"]["certificates"] if len(c["constraints"]) >= n)


@pytest.mark.parametrize("tamper", [
    "raise_bound", "raise_derived_bound", "scale_z", "drop_constraint", "raise_eps",
    "derived_target", "derived_matrix", "ray_to_content", "missing_field", "float_number",
    "claim_count", "foreign_prefix",
])
def test_tampering_is_rejected(smap, tamper):
    cert = copy.deepcopy(smap.certificate)
    data = cert["data"]
    base = _first_with_constraints(cert)
    if tamper == "raise_bound":
        base["bound"] = "99/100"
    elif tamper == "raise_derived_bound":
        data["derived"][0]["bound"] = "99/100"
    elif tamper == "scale_z":
        base["z"] = [[f"{10 * int(x.split('/')[0])}/{x.split('/')[1]}" if "/" in x else x
                      for x in z] for z in base["z"]]
    elif tamper == "drop_constraint":
        i = max(range(len(base["w"])), key=lambda i: Fraction(base["w"][i]))
        for key in ("constraints", "z", "w"):
            del base[key][i]
    elif tamper == "raise_eps":
        cert["instance"]["eps"] = "1/5"
    elif tamper == "derived_target":
        d = data["derived"][0]
        d["target"] = [1 - x if x >= 0 else x for x in d["target"][:-1]] + [d["target"][-1]]
        d["target"][0] = (d["target"][0] + 1) % 4
    elif tamper == "derived_matrix":
        data["derived"][0]["matrix"] = [["2", "0"], ["0", "1"]]
    elif tamper == "ray_to_content":
        ray = data["rays"][0]
        ray["direction"] = [[ray["target"][-1], len(ray["target"]), "1"]]
    elif tamper == "missing_field":
        del base["w"]
    elif tamper == "float_number":
        base["bound"] = 0.5
    elif tamper == "claim_count":
        cert["claim"]["bounds"] += 1
    elif tamper == "foreign_prefix":
        base["constraints"][0] = [0, 0, 0, 0, 0]
    assert rejected(cert), tamper


def test_cli_writes_and_verifies(tmp_path, capsys):
    out = tmp_path / "map.json"
    saved = tmp_path / "saved.json"
    assert main(["sinkmap", "--p", "2", "--T", "3", "--eps", "1/10", "--out", str(out),
                 "--json", str(saved), "--rows", "3"]) == 0
    text = capsys.readouterr().out
    assert "certified" in text and "no bound" in text
    assert main(["verify", str(out)]) == 0
    cert = json.loads(out.read_text())
    cert["data"]["certificates"][0]["bound"] = "1"
    out.write_text(json.dumps(cert))
    assert main(["verify", str(out)]) == 1
    loaded = SinkMap.load(saved)
    assert loaded.count("certified") == 84 and loaded.verify().ok


def test_cli_bad_input_exits_2(capsys):
    assert main(["sinkmap", "--p", "2", "--T", "2", "--eps", "zero"]) == 2
    assert main(["sinkmap", "--p", "2", "--T", "2", "--eps", "0.1", "--at", "0,5:1"]) == 2


def test_save_load_round_trip(smap, tmp_path):
    path = tmp_path / "m.json"
    smap.save(path)
    back = SinkMap.load(path)
    assert back.entries.keys() == smap.entries.keys()
    assert all(back.entries[k].exact == e.exact for k, e in smap.entries.items())
    assert repr(back) == repr(smap)
    (tmp_path / "bad.json").write_text("{}")
    with pytest.raises(ValueError):
        SinkMap.load(tmp_path / "bad.json")


def test_display(smap):
    assert "certified" in repr(smap) and "\n" in repr(smap)
    md = smap._repr_markdown_()
    assert md.count("|") > 10 and "Sink map" in md
    assert "... " in smap.table(5)


def test_heatmap_draws(smap):
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    ax = smap.heatmap()
    img = ax.get_images()[0].get_array()
    assert img.shape == (96, 3)  # rows: the 96 longest prefixes (length 3, last not a trigger)
    assert np.isnan(np.asarray(img.filled(np.nan) if hasattr(img, "filled") else img)).any()


def test_listed_family_cannot_borrow_symmetries(smap):
    """A listed family is not closed under relabelling: derived entries are refused there."""
    cert = copy.deepcopy(smap.certificate)
    cert["instance"]["family"] = "listed"
    assert rejected(cert)
    listed = sink_map(sp.TriggerTask(p=2, T=3), 0.1, family=[[0, 2, 1], [2, 2, 2]],
                      positions=[([0, 2], 2)])
    assert listed.certificate["data"]["derived"] == [] and listed.verify().ok
    assert "listed prefix" in listed.verify().claim
