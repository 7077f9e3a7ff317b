"""The trusted checker on hand-written certificates: schema, envelope, registry, checks, CLI."""

from __future__ import annotations

import ast
import copy
import json
import re
import subprocess
import sys
from fractions import Fraction
from pathlib import Path
from types import MappingProxyType

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sinkproof import checker
from sinkproof.checker.exact import InequalityFailed, check_scaled_norm_leq
from sinkproof.checker.schema import format_rational, need_vector, parse_rational
from sinkproof.cli import main
from sinkproof.errors import CertificateError


def family_cert() -> dict:
    """Theorem 3 on S_2 for p=1 signed content {+1, -1}, fixed values, ε = 1/100."""
    return {
        "format": "sinkproof-certificate", "version": 1, "kind": "hull-family",
        "instance": {"task": {"p": 1, "T": 2, "content": "signed"}, "values": "fixed",
                     "eps": "1/100"},
        "claim": {"bounded": 2, "min_bound": "99/100"},
        "data": {"situations": [
            {"tokens": [0], "w": ["3"], "d": "1", "bound": "99/100"},
            {"tokens": [1], "w": ["-1"], "d": "1", "bound": "99/100"},
            {"tokens": [0, 1], "zero_combination": ["1/2", "1/2"]},
            {"tokens": [-1, 0], "zero_combination": ["1", "0"]},
            {"tokens": [-1, 1], "zero_combination": ["1", "0"]},
        ]},
    }


def position_cert() -> dict:
    """Theorem 3 at t=2 of (BOS, e1, e2) for p=2: d = 1/√2 >= 7/10, bound 1 - ε/d."""
    return {
        "format": "sinkproof-certificate", "version": 1, "kind": "hull",
        "instance": {"task": {"p": 2, "T": 3, "content": "signed"}, "values": "fixed",
                     "eps": "1/100", "sequence": [0, 1, 0], "t": 2},
        "claim": {"bound": "69/70"},
        "data": {"tokens": [0, 1], "w": ["1", "1"], "d": "7/10", "bound": "69/70"},
    }


# ---------------------------------------------------------------- rationals
@given(st.fractions(max_denominator=10**30))
def test_rationals_round_trip(x):
    assert parse_rational(format_rational(x), "x") == x


@pytest.mark.parametrize("value", ["3/7", "-3/7", "+4", "012", 5])
def test_parse_rational_accepts_exact_forms(value):
    assert isinstance(parse_rational(value, "x"), Fraction)


@pytest.mark.parametrize("value, fragment", [
    (0.5, "JSON float"), (True, "boolean"), ("1/0", "zero denominator"), ("1.5", "not a rational"),
    ("abc", "not a rational"), (None, "rational string"), ("1" * 3000, "exceeds the limit 2000"),
    (" 12 ", "not a rational"), ("12\n", "not a rational"), ("\u0663/7", "non-ASCII digit"),
    ("1_000", "not a rational"),
])
def test_parse_rational_rejects_with_path(value, fragment):
    with pytest.raises(CertificateError, match=fragment) as info:
        parse_rational(value, "data.w[1]")
    assert str(info.value).startswith("data.w[1]:")


def test_need_vector_names_first_bad_entry():
    with pytest.raises(CertificateError, match=r"^data\.w\[1\]:"):
        need_vector({"w": ["1", 0.5]}, "w", "data")


def test_scaled_norm_check_is_exact_at_the_boundary():
    w = [Fraction(3), Fraction(4)]  # ||w|| = 5
    check_scaled_norm_leq(Fraction(2), w, Fraction(10), "tight")  # 2·5 <= 10 holds
    with pytest.raises(InequalityFailed):
        check_scaled_norm_leq(Fraction(2) + Fraction(1, 10**30), w, Fraction(10), "over")
    with pytest.raises(InequalityFailed, match="w = 0"):
        check_scaled_norm_leq(Fraction(1), [Fraction(0), Fraction(0)], Fraction(0), "zero")


# ----------------------------------------------------------------- envelope
def test_good_certificates_verify_and_input_is_untouched():
    for make in (family_cert, position_cert):
        cert = make()
        before = copy.deepcopy(cert)
        verdict = checker.verify(cert)
        assert verdict.ok and bool(verdict) and verdict.failure is None
        assert cert == before
        assert "verified" in repr(verdict) and "Verified" in verdict._repr_markdown_()


@pytest.mark.parametrize("edit, fragment", [
    (lambda c: c.update(format="other"), "^format:"),
    (lambda c: c.update(version=2), "^version:"),
    (lambda c: c.pop("kind"), "^kind: required"),
    (lambda c: c.pop("data"), "^data: required"),
    (lambda c: c.update(claim=[]), "^claim: expected an object"),
    (lambda c: c.update(kind="no-such-kind"), "unknown certificate kind"),
])
def test_envelope_errors_name_the_field(edit, fragment):
    cert = family_cert()
    edit(cert)
    with pytest.raises(CertificateError, match=fragment):
        checker.verify(cert)


def test_non_object_certificate():
    with pytest.raises(CertificateError, match="expected a JSON object"):
        checker.verify([1, 2])


def test_registry_plugs_in_a_kind(tmp_path, monkeypatch):
    (tmp_path / "toy_kind.py").write_text(
        "from fractions import Fraction\n"
        "from sinkproof.checker.exact import check_leq\n"
        "from sinkproof.checker.schema import need_rational\n"
        "from sinkproof.checker.verdict import Verdict\n"
        "def verify(cert):\n"
        "    x = need_rational(cert['data'], 'x', 'data')\n"
        "    check_leq(x, Fraction(1), 'data.x <= 1')\n"
        "    return Verdict(True, cert['kind'], f'x = {x} <= 1')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with_kind(monkeypatch, "toy", "toy_kind")
    cert = {"format": "sinkproof-certificate", "version": 1, "kind": "toy",
            "instance": {}, "claim": {"statement": "x is small"}, "data": {"x": "1/2"}}
    assert checker.verify(cert).claim == "x = 1/2 <= 1"
    cert["data"]["x"] = "3/2"
    verdict = checker.verify(cert)
    assert not verdict.ok and "data.x <= 1" in verdict.failure and verdict.claim == "x is small"
    cert["data"]["x"] = 1.5
    with pytest.raises(CertificateError, match="JSON float"):
        checker.verify(cert)


def with_kind(monkeypatch, kind: str, module: str) -> None:
    """Give the checker a fake kind for one test (the registry itself is read-only)."""
    monkeypatch.setattr(checker, "KIND_MODULES",
                        MappingProxyType({**checker.KIND_MODULES, kind: module}))


def test_the_kind_registry_is_closed():
    """No imported module adds trusted code at run time: the mapping is read-only and there
    is no register function."""
    with pytest.raises(TypeError):
        checker.KIND_MODULES["toy"] = "toy_kind"  # type: ignore[index]
    assert not hasattr(checker, "register_kind")
    assert all(m.startswith("sinkproof.checker.") for m in checker.KIND_MODULES.values())


def test_missing_checker_module_is_a_certificate_error(monkeypatch):
    with_kind(monkeypatch, "ghost", "sinkproof.checker.no_such_module")
    cert = family_cert()
    cert["kind"] = "ghost"
    with pytest.raises(CertificateError, match="no checker available"):
        checker.verify(cert)


# ------------------------------------------------------- Theorem 3 contents
def test_family_claim_text_is_rebuilt_by_the_checker():
    verdict = checker.verify(family_cert())
    assert "99/100" in verdict.claim and "2 bounded situations" in verdict.claim
    assert verdict.details["bounded"] == 2 and verdict.details["zero_in_hull"] == 3


@pytest.mark.parametrize("edit, fragment", [
    (lambda c: c["data"]["situations"][0].update(bound="991/1000"), "bound <= 1 - 1·ε/d"),
    (lambda c: c["data"]["situations"][0].update(d="11/10"), "d·||w|| <= w·v"),
    (lambda c: c["data"]["situations"][1].update(w=["1"]), "d·||w|| <= w·v|>= 0 is false"),
    (lambda c: c["data"]["situations"][2].update(zero_combination=["2/3", "1/3"]),
     "coordinate 0 of the zero combination"),
    (lambda c: c["data"]["situations"][2].update(zero_combination=["3/2", "-1/2"]), ">= 0"),
    (lambda c: c["claim"].update(min_bound="995/1000"), "claim.min_bound"),
    (lambda c: c["claim"].update(bounded=3), "claim.bounded"),
    (lambda c: c["instance"].update(eps="1/50"), "bound <= 1 - 1·ε/d"),
    (lambda c: c["data"]["situations"][0].update(d="0"), "d > 0"),
])
def test_tampered_family_fails_with_the_first_inequality(edit, fragment):
    cert = family_cert()
    edit(cert)
    verdict = checker.verify(cert)
    assert not verdict.ok
    assert re.search(fragment, verdict.failure), verdict.failure


@pytest.mark.parametrize("edit, fragment", [
    (lambda c: c["data"]["situations"].pop(0), r"situation \{0\} is not covered"),
    (lambda c: c["data"]["situations"].append({"tokens": [0], "w": ["1"], "d": "1",
                                               "bound": "0"}), "listed twice"),
    (lambda c: c["data"]["situations"][0].pop("w"), r"situations\[0\]\.w: required"),
    (lambda c: c["data"]["situations"][0].update(w=["1", "0"]), "expected 1 entries"),
    (lambda c: c["data"]["situations"][0].update(tokens=[5]), "not a token"),
    (lambda c: c["instance"]["task"].update(content="gaussian"), "content_vectors"),
    (lambda c: c["instance"].update(eps="-1/100"), "eps: must be >= 0"),
    (lambda c: c["instance"].pop("values"), "values: required"),
    (lambda c: c["instance"]["task"].update(T=1), "does not occur"),
])
def test_malformed_family_raises_naming_the_field(edit, fragment):
    cert = family_cert()
    edit(cert)
    with pytest.raises(CertificateError, match=fragment):
        checker.verify(cert)


def test_position_certificate_checks_the_token_set_and_bound():
    assert checker.verify(position_cert()).ok
    cert = position_cert()
    cert["instance"]["t"] = 3  # x_1..x_3 = {0, 1}: still the same set
    assert checker.verify(cert).ok
    cert["instance"]["t"] = 1  # the set is {0}, not {0, 1}
    with pytest.raises(CertificateError, match="is not the token set"):
        checker.verify(cert)
    cert = position_cert()
    cert["claim"]["bound"] = "99/100"  # above 1 - (1/100)/(7/10)
    assert not checker.verify(cert).ok
    cert = position_cert()
    cert["instance"]["sequence"] = [0, -1, -1]
    with pytest.raises(CertificateError, match="more than one trigger"):
        checker.verify(cert)


def test_learned_values_use_the_factor_two():
    cert = position_cert()
    # U = [I | 0 0 e], so v_b = (0, 1) != 0: the bound is 1 - 2ε/d
    cert["instance"]["values"] = {"U": [["1", "0", "0", "0", "0"], ["0", "1", "0", "0", "1"]]}
    cert["data"]["bound"] = cert["claim"]["bound"] = "68/70"
    assert checker.verify(cert).ok
    cert["data"]["bound"] = "69/70"
    assert "1 - 2·ε/d" in checker.verify(cert).failure


def test_custom_content_vectors_must_match_the_task():
    cert = position_cert()
    cert["instance"]["task"]["content"] = [[1.0, 0.0], [0.0, 1.0]]
    cert["instance"]["content_vectors"] = [["1", "0"], ["0", "1"]]
    assert checker.verify(cert).ok
    cert["instance"]["content_vectors"][1] = ["0", "2"]
    with pytest.raises(CertificateError, match="differ from task.content"):
        checker.verify(cert)


# -------------------------------------------------------------- files, CLI
def test_verify_file_and_cli_exit_codes(tmp_path, capsys):
    good = tmp_path / "good.json"
    good.write_text(json.dumps(family_cert()))
    assert checker.verify_file(good).ok
    assert main(["verify", str(good)]) == 0
    assert "verified (hull-family)" in capsys.readouterr().out

    raised = family_cert()
    raised["data"]["situations"][1]["bound"] = "1"
    bad = tmp_path / "raised.json"
    bad.write_text(json.dumps(raised))
    assert main(["verify", str(bad)]) == 1
    assert "first failing inequality: data.situations[1]" in capsys.readouterr().out

    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    assert main(["verify", str(broken)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not valid JSON" in err
    nan = tmp_path / "nan.json"
    nan.write_text('{"x": NaN}')
    with pytest.raises(CertificateError, match="NaN"):
        checker.verify_file(nan)
    assert main(["verify", str(tmp_path / "missing.json")]) == 2


def test_checker_imports_no_producer_code():
    """The trusted checker's own modules import only the standard library and each other."""
    forbidden = ("numpy", "scipy", "cvxpy", "sympy", "sinkproof.convex", "sinkproof.search",
                 "sinkproof.sinkmap")
    package = Path(checker.__file__).parent
    for name in ("__init__", "schema", "exact", "instance", "verdict", "hull"):
        tree = ast.parse((package / f"{name}.py").read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                mods = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                mods = [("." * node.level) + (node.module or "")]
            else:
                continue
            for mod in mods:
                assert not mod.startswith(forbidden), f"{name}.py imports {mod}"
                if mod.startswith(".."):
                    assert mod == "..errors", f"{name}.py imports {mod}"
    # and no checker module, whoever wrote it, pulls in a solver or the producers
    for path in package.glob("*.py"):
        text = path.read_text()
        for mod in ("cvxpy", "scipy", "sinkproof.convex", "..convex", "..search", "..sinkmap"):
            assert f"import {mod}" not in text and f"from {mod}" not in text, (path.name, mod)


def test_checking_a_file_loads_no_solver(tmp_path):
    """Verifying in a fresh interpreter leaves CVXPY and the producers unimported.

    (``import sinkproof`` itself loads numpy/scipy for the core; the checker's own
    modules import neither, as the test above shows.)"""
    path = tmp_path / "c.json"
    path.write_text(json.dumps(family_cert()))
    code = ("import sys; from sinkproof.checker import verify_file; "
            f"assert verify_file({str(path)!r}).ok; "
            "bad = [m for m in ('cvxpy', 'sinkproof.convex', 'sinkproof.search', "
            "'sinkproof.sinkmap') if m in sys.modules]; assert not bad, bad")
    subprocess.run([sys.executable, "-c", code], check=True)


@settings(max_examples=60)
@given(st.lists(st.tuples(st.integers(-3, 3), st.integers(-3, 3)), min_size=1, max_size=3),
       st.tuples(st.integers(-4, 4), st.integers(-4, 4)),
       st.fractions(min_value=Fraction(1, 50), max_value=3, max_denominator=50))
def test_accepted_distance_never_exceeds_the_true_one(points, w, d):
    """Soundness of the hull check: whatever (w, d) it accepts, d <= dist(0, conv points)."""
    from sinkproof.convex.crosscheck import hull_distance_scipy

    k = len(points)
    cert = {
        "format": "sinkproof-certificate", "version": 1, "kind": "hull",
        "instance": {"task": {"p": 2, "T": k, "content": [list(map(float, v)) for v in points]},
                     "content_vectors": [[str(x) for x in v] for v in points],
                     "values": "fixed", "eps": "0", "sequence": list(range(k)), "t": k},
        "claim": {"bound": "0"},
        "data": {"tokens": list(range(k)), "w": [str(x) for x in w], "d": str(d), "bound": "0"},
    }
    verdict = checker.verify(cert)
    if verdict.ok:
        assert float(d) <= hull_distance_scipy(points) + 1e-7


def test_undecided_entries_claim_nothing():
    cert = position_cert()
    cert["data"] = {"tokens": [0, 1], "no_bound": "undecided: solver trouble"}
    cert["claim"]["bound"] = None
    verdict = checker.verify(cert)
    assert verdict.ok and "no bound is claimed" in verdict.claim
    cert["claim"]["bound"] = "1/2"
    assert not checker.verify(cert).ok
    fam = family_cert()
    fam["data"]["situations"][0] = {"tokens": [0], "no_bound": "undecided"}
    fam["claim"]["bounded"] = 1
    verdict = checker.verify(fam)
    assert verdict.ok and verdict.details["undecided"] == 1 and "undecided" in verdict.claim


# ------------------------------------------------- huge rationals in a failure
HUGE_HULL = {"format": "sinkproof-certificate", "version": 1, "kind": "hull",
             "instance": {"task": {"T": 1, "content": "signed", "p": 1, "positions": "inverse",
                                   "triggers": "single"},
                          "eps": "1/10", "sequence": [0], "t": 1, "values": "fixed"},
             "claim": {"bound": "1/2", "statement": "BOS mass at t=1 of (0,) >= 1/2"},
             "data": {"bound": "1/2", "d": "1" * 1999, "tokens": [0],
                      "w": ["7" * 1000]}}


def test_a_failed_inequality_between_huge_rationals_is_a_failure_not_malformed(tmp_path,
                                                                                capsys):
    """``d²·||w||²`` has about 6,000 digits, past Python's int-to-text limit: the message
    is built without ``str`` or ``float`` of it, so the verdict is a failed inequality
    (exit 1), never a malformed file (exit 2)."""
    verdict = checker.verify(HUGE_HULL)
    assert not verdict.ok and "characters)" in verdict.failure
    assert len(verdict.failure) < 400
    path = tmp_path / "huge.json"
    path.write_text(json.dumps(HUGE_HULL))
    assert main(["verify", str(path)]) == 1
    assert "NOT verified" in capsys.readouterr().out


@given(st.integers(-10**80, 10**80), st.integers(1, 10**80))
def test_show_of_a_rational_starts_with_its_file_form(num, den):
    from sinkproof.checker.exact import show

    x = Fraction(num, den)
    text = format_rational(x)
    shown = show(x)
    assert shown.startswith(text if len(text) <= 60 else text[:24] + "...")
    if len(text) > 60:
        assert f"({len(text)} characters)" in shown


def test_show_of_a_rational_past_the_int_to_text_limit():
    from sinkproof.checker.exact import show

    x = Fraction(-(3**30000), 7**3000)
    shown = show(x)
    limit = sys.get_int_max_str_digits()
    try:
        sys.set_int_max_str_digits(0)
        text = format_rational(x)
    finally:
        sys.set_int_max_str_digits(limit)
    assert shown.startswith(text[:24] + f"...({len(text)} characters) (~-2.2055")
