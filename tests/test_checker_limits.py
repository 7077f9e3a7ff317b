"""``sinkproof verify`` refuses oversized input at once, naming the limit and its flag;
strict JSON (duplicate keys, NaN, huge numbers, non-ASCII digits) is refused clearly."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from unittest.mock import patch

import pytest

import sinkproof as sp
from sinkproof import checker
from sinkproof.checker.limits import DEFAULT, FLAGS, LimitExceeded, Limits
from sinkproof.cli import main
from sinkproof.convex import family_certificate
from sinkproof.errors import CertificateError
from sinkproof.search.verify import witness_document


@pytest.fixture(scope="module")
def family():
    return family_certificate(sp.TriggerTask(p=2, T=3), "1/20").to_dict()


@pytest.fixture(scope="module")
def witness():
    return witness_document(sp.constructions.relu_solution(sp.TriggerTask(p=1, T=2)),
                            1e-3, 0.0, "all")


def _edit(data: dict, path: tuple, value) -> dict:
    out = json.loads(json.dumps(data))
    node = out
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return out


# "Refuses fast", measured as work and not as time (a timing assertion fails under load):
# Python calls into the checker and into fractions.py while refusing.  The refusals below
# make 20-1700 such calls whatever the size the input declares (T = 10**12, 3000-digit
# numbers, ...); checking the small valid family certificate itself makes about 6100.
CALL_BUDGET = 3000


def checker_calls(argv: list[str]) -> tuple[int, int]:
    """``main(argv)``'s exit code and the number of Python function calls it made into
    ``sinkproof/checker`` and ``fractions`` (deterministic, unlike a wall-clock time)."""
    calls = 0

    def profile(frame, event, arg):
        nonlocal calls
        if event == "call":
            name = frame.f_code.co_filename.replace("\\", "/")
            calls += "sinkproof/checker/" in name or name.endswith("fractions.py")

    previous = sys.getprofile()
    sys.setprofile(profile)
    try:
        rc = main(argv)
    finally:
        sys.setprofile(previous)
    return rc, calls


def refused(tmp_path, capsys, text: str, flag: str, *extra: str) -> str:
    path = tmp_path / "f.json"
    path.write_text(text)
    rc, calls = checker_calls(["verify", *extra, str(path)])
    assert rc == 4 and calls < CALL_BUDGET, calls
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and f"(raise it with {flag})" in err, err
    return err


def test_every_limit_has_a_flag_and_a_documented_default():
    doc = (Path(__file__).parents[1] / "docs" / "certificates.md").read_text(encoding="utf-8")
    for name, flag in FLAGS.items():
        assert f"`{flag}`" in doc and f"{getattr(DEFAULT, name):_}".replace("_", ",") in doc


def test_the_call_budget_separates_a_refusal_from_a_check(tmp_path, family):
    """The budget means something: a real check of a valid certificate exceeds it."""
    path = tmp_path / "ok.json"
    path.write_text(json.dumps(family))
    rc, calls = checker_calls(["verify", str(path)])
    assert rc == 0 and calls > CALL_BUDGET, calls


def test_oversized_file_refused_before_reading(tmp_path, capsys):
    path = tmp_path / "big.json"
    with path.open("wb") as handle:
        handle.truncate(DEFAULT.file_bytes + 1)  # sparse: nothing is read
    real_open = Path.open
    with patch.object(Path, "open", autospec=True, side_effect=real_open) as opened:
        rc, calls = checker_calls(["verify", str(path)])
    assert rc == 4 and calls < CALL_BUDGET, calls
    assert all(c.args[0] != path for c in opened.call_args_list)  # refused on its size alone
    assert "--max-file-bytes" in capsys.readouterr().err


@pytest.mark.parametrize("levels", [65, 100_000])
def test_deep_nesting(tmp_path, capsys, family, levels):
    text = json.dumps({**family, "data": {"situations": "@"}}).replace(
        '"@"', "[" * levels + "]" * levels)
    refused(tmp_path, capsys, text, "--max-depth")


def test_long_numbers(tmp_path, capsys, family):
    long = _edit(family, ("instance", "eps"), "1/" + "3" * 3000)
    refused(tmp_path, capsys, json.dumps(long), "--max-digits")
    text = json.dumps(family).replace('"version": 1', '"version": ' + "1" * 3000)
    refused(tmp_path, capsys, text, "--max-digits")


def test_huge_signed_dimension(tmp_path, capsys, family):
    refused(tmp_path, capsys, json.dumps(_edit(family, ("instance", "task", "p"), 10**9)),
            "--max-content")


def test_huge_witness_families(tmp_path, capsys, witness):
    refused(tmp_path, capsys, json.dumps(_edit(witness, ("instance", "task", "T"), 10**12)),
            "--max-prefixes")
    err = refused(tmp_path, capsys, json.dumps(_edit(witness, ("instance", "task", "T"), 40)),
                  "--max-work", "--max-prefixes", str(10**15))
    assert "exact operations" in err


def test_many_situations(tmp_path, capsys, family):
    big = _edit(family, ("instance", "task", "T"), 10**9)
    big["instance"]["task"].update(content="gaussian", k=40, seed=0)
    big["instance"]["content_vectors"] = [["1", "0"]] * 40
    refused(tmp_path, capsys, json.dumps(big), "--max-situations")


def test_raising_a_limit_lets_the_check_run(tmp_path, capsys, family):
    path = tmp_path / "c.json"
    path.write_text(json.dumps(family))
    assert main(["verify", "--max-situations", "5", str(path)]) == 4
    assert "--max-situations" in capsys.readouterr().err
    assert main(["verify", "--max-situations", "100", str(path)]) == 0


def test_limits_are_positive_integers():
    with pytest.raises(ValueError, match="positive integer"):
        Limits(depth=0)
    with pytest.raises(ValueError, match="Python's own limit"):
        Limits(digits=10**6)
    assert DEFAULT.replace(depth=None, work=7).work == 7


def test_ray_patterns_are_bounded(tmp_path):
    from sinkproof.sinkmap import sink_map

    smap = sink_map(sp.TriggerTask(p=1, T=3), "1/20", progress=False)
    cert = smap.certificate
    assert cert["data"]["rays"], "this instance needs a ray"
    with pytest.raises(LimitExceeded, match="--max-ray-patterns"):
        checker.verify(cert, Limits(ray_patterns=1))
    assert checker.verify(cert).ok


@pytest.mark.parametrize(("text", "match"), [
    ('{"format": NaN}', "non-number NaN"),
    ('{"format": -Infinity}', "non-number -Infinity"),
    ('{"format": 1e400}', "beyond the range of a double"),
    ('{"format": 1e-400}', "rounds to 0"),
    ('{"format": 1, "format": 2}', "duplicate key 'format'"),
    ('{"format": [1, 2', "not valid JSON"),
    ('[1, 2]', "a certificate is a JSON object"),
])
def test_strict_json(tmp_path, text, match):
    path = tmp_path / "x.json"
    path.write_text(text)
    with pytest.raises(CertificateError, match=match):
        checker.load(path)


def test_not_utf8(tmp_path):
    path = tmp_path / "x.json"
    path.write_bytes(b'{"format": "\xff"}')
    with pytest.raises(CertificateError, match="not UTF-8"):
        checker.load(path)


def test_non_ascii_digits_in_rationals(family):
    with pytest.raises(CertificateError, match="instance.eps: .* non-ASCII digit"):
        checker.verify(_edit(family, ("instance", "eps"), "\u0661/\u0662\u0660"))


@pytest.mark.parametrize("where", [
    ("extra",), ("instance", "extra"), ("instance", "task", "extra"), ("claim", "extra"),
    ("data", "extra"), ("data", "situations", 0, "extra"),
])
def test_unknown_fields_anywhere(family, where):
    with pytest.raises(CertificateError, match="unknown field"):
        checker.verify(_edit(family, (*where,), 1))


def test_unknown_witness_and_sink_map_fields(witness):
    from sinkproof.sinkmap import sink_map

    for where in [("claim", "model_class", "extra"), ("data", "extra"), ("claim", "extra")]:
        with pytest.raises(CertificateError, match="unknown field"):
            checker.verify(_edit(witness, where, 1))
    cert = sink_map(sp.TriggerTask(p=1, T=2), "1/20", progress=False).certificate
    for where in [("instance", "extra"), ("data", "certificates", 0, "extra"),
                  ("claim", "extra")]:
        with pytest.raises(CertificateError, match="unknown field"):
            checker.verify(_edit(cert, where, 1))


def test_a_registered_kind_without_a_statement(tmp_path, capsys, monkeypatch):
    import sys
    import types
    from types import MappingProxyType

    from sinkproof import checker
    from sinkproof.checker import Verdict

    module = types.ModuleType("sinkproof_test_kind")
    module.verify = lambda cert: Verdict(True, "toy", "a toy claim")
    monkeypatch.setitem(sys.modules, "sinkproof_test_kind", module)
    monkeypatch.setattr(checker, "KIND_MODULES",
                        MappingProxyType({**checker.KIND_MODULES, "toy": "sinkproof_test_kind"}))
    path = tmp_path / "toy.json"
    path.write_text(json.dumps({"format": "sinkproof-certificate", "version": 1, "kind": "toy",
                                "instance": {}, "claim": {}, "data": {}}))
    assert main(["verify", str(path)]) == 0
    assert "statement: none" in capsys.readouterr().out


def test_unrelated_denominators_are_refused_fast(tmp_path, capsys):
    """Distinct large denominators make exact sums as long as all of them: refused early."""
    import random

    from sinkproof.sinkmap import sink_map

    rng = random.Random(0)

    def q() -> str:
        return f"1/{10**600 + 2 * rng.getrandbits(1900) + 1}"

    cert = sink_map(sp.TriggerTask(p=1, T=2), "1/20", progress=False).certificate
    entry = cert["data"]["certificates"][0]
    n = 40
    entry["constraints"] = [entry["constraints"][0]] * n
    entry["z"], entry["w"] = [[q()] for _ in range(n)], [q() for _ in range(n)]
    err = refused(tmp_path, capsys, json.dumps(cert), "--max-denominator-digits")
    assert "z and w: the common denominator" in err
    model = witness_document(sp.constructions.relu_solution(sp.TriggerTask(p=1, T=1)),
                             1.0, 1.0, "all")
    model["data"]["A"] = [[[q() for _ in row] for row in a] for a in model["data"]["A"]]
    refused(tmp_path, capsys, json.dumps(model), "--max-denominator-digits")


def test_a_tree_leafs_unrelated_denominators_are_refused_fast(tmp_path, capsys):
    """The tree rule sums a leaf's ``G_l`` in integers over its multipliers' common
    denominator: a leaf whose ``z`` have unrelated large denominators is refused first."""
    import random
    from fractions import Fraction

    from sinkproof.bnb import prove

    rng = random.Random(1)
    cert = prove(sp.TriggerTask(p=2, T=3), eps=Fraction(1, 20), at="homogeneous",
                 targets=[(0, 0)], min_bos_mass=Fraction(1, 2), max_nodes=40).certificate
    node = cert["data"]["trees"][0]["root"]
    while "leaf" not in node:
        node = node["below"]  # the first leaf the checker reaches
    leaf, n = node["leaf"], 20  # 40 unrelated 600-digit denominators: past 10,000 digits
    leaf["constraints"] = [leaf["constraints"][0]] * n
    leaf["s"] = [leaf["s"][0]] * n
    leaf["z"] = [[f"1/{10**600 + 2 * rng.getrandbits(1900) + 1}" for _ in leaf["z"][0]]
                 for _ in range(n)]
    err = refused(tmp_path, capsys, json.dumps(cert), "--max-denominator-digits")
    assert "the leaf's multipliers z: the common denominator" in err
