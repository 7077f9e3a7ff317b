"""Sweeps: grid expansion, exact settings, cache and resume, failures, executors agree."""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import sinkproof as sp
from sinkproof.cli import main
from sinkproof.errors import SinkproofError, WorkLimitError
from sinkproof.executor import DaskExecutor, Executor, JobResult, SerialExecutor, call_job
from sinkproof.sweep import load_sweep, run_sweep, sweep_from_dict
from sinkproof.sweep.cache import job_key

ROOT = Path(__file__).resolve().parents[1]
CERTIFY = {"kind": "certify", "base": {"p": 1, "eps": "1/20"}, "grid": {"T": [2, 3]},
           "zip": {"content": ["signed", "gaussian"], "k": [None, 3]}}


def _strip(rows):
    return [{k: v for k, v in r.items() if k not in ("seconds", "cached")} for r in rows]


def test_grid_is_the_product_of_grid_axes_and_the_zipped_rows():
    sweep = sweep_from_dict(CERTIFY)
    jobs = sweep.jobs()
    assert sweep.n_jobs == len(jobs) == 4
    assert [(j["T"], j["content"], j["k"]) for j in jobs] == [
        (2, "signed", None), (2, "gaussian", 3), (3, "signed", None), (3, "gaussian", 3)]
    assert all(j["p"] == 1 and j["eps"] == "1/20" for j in jobs)
    assert sweep.axes == ("T", "content", "k")


@pytest.mark.parametrize("bad, message", [
    ({"kind": "nope"}, "kind must be one of"),
    ({"kind": "certify", "base": {"eps": "1/20"}, "grid": {"colour": [1]}}, "no setting 'colour'"),
    ({"kind": "certify", "base": {"p": 1}}, "needs the setting 'eps'"),
    ({"kind": "certify", "base": {"eps": "1/20"}, "zip": {"p": [1, 2], "T": [3]}},
     "equal lengths"),
    ({"kind": "certify", "base": {"eps": "1/20"}, "grid": {"T": [3]}, "zip": {"T": [3]}},
     "both [grid] and [zip]"),
    ({"kind": "certify", "base": {"eps": "1/20"}, "grid": {"T": 3}}, "non-empty list"),
    ({"kind": "certify", "base": {"eps": "1/20"}, "colour": 1}, "unknown sweep fields"),
])
def test_malformed_sweeps_are_refused_before_anything_runs(bad, message):
    with pytest.raises(SinkproofError) as info:
        sweep_from_dict(bad)
    assert message in str(info.value)


def test_too_many_jobs_are_refused_naming_the_flag_and_the_keyword():
    spec = {"kind": "certify", "base": {"eps": "1/20"},
            "grid": {"T": list(range(1, 101)), "content_seed": list(range(100))}}
    with pytest.raises(WorkLimitError, match=r"about 10,000 jobs.*--max-jobs N; in Python, "
                       r"max_jobs=N"):
        sweep_from_dict(spec, max_jobs=1000)
    sweep = sweep_from_dict(spec)  # within the default limit
    for run in (lambda: run_sweep(sweep, max_jobs=9_999), lambda: run_sweep(spec, max_jobs=10),
                lambda: sp.sweep(spec, max_jobs=10)):
        with pytest.raises(WorkLimitError, match="max_jobs=N"):
            run()
    with pytest.raises(TypeError, match="max_jobs must be an integer"):
        run_sweep(spec, max_jobs=1.5)


def test_the_cli_refuses_too_many_jobs_with_status_4(tmp_path):
    path = tmp_path / "big.toml"
    path.write_text('kind = "certify"\n[base]\neps = "1/20"\n[grid]\nT = [1, 2, 3, 4]\n')
    proc = subprocess.run([sys.executable, "-m", "sinkproof", "sweep", str(path),
                           "--max-jobs", "2", "--out", "out"], capture_output=True, text=True,
                          cwd=tmp_path)
    assert proc.returncode == 4, proc.stderr
    assert "4 jobs of the sweep" in proc.stderr and "--max-jobs" in proc.stderr


def test_numbers_in_a_sweep_file_are_read_exactly(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text('kind = "certify"\n[base]\np = 1\nT = 2\n[grid]\neps = [0.05, 1e-400]\n')
    jobs = load_sweep(path).jobs()
    assert jobs[0]["eps"] == "0.05"
    assert jobs[1]["eps"] not in ("0", "0.0") and "400" in jobs[1]["eps"]


def test_job_keys_depend_on_every_setting_and_nothing_else():
    a = {"p": 1, "T": 2, "eps": "1/20"}
    assert job_key("certify", a) == job_key("certify", dict(reversed(list(a.items()))))
    assert job_key("certify", a) != job_key("certify", {**a, "T": 3})
    assert job_key("certify", a) != job_key("sinkmap", a)


def test_rerun_computes_only_what_is_missing_and_distrusts_edited_cache(tmp_path):
    first = run_sweep(CERTIFY, tmp_path, executor="serial", figures=False)
    assert (first.computed, first.cached, first.failed) == (4, 0, 0)
    assert all(r["verified"] and r["status"] == "ok" for r in first.rows)
    again = run_sweep(CERTIFY, tmp_path, executor="serial", figures=False)
    assert (again.computed, again.cached) == (0, 4)
    assert _strip(again.rows) == _strip(first.rows)
    wider = dict(CERTIFY, grid={"T": [2, 3, 4]})
    assert run_sweep(wider, tmp_path, executor="serial", figures=False).computed == 2
    # a cache file whose settings were edited is not trusted: the job runs again
    victim = next((tmp_path / "cache").glob("*.json"))
    data = json.loads(victim.read_text())
    data["settings"]["T"] = 99
    victim.write_text(json.dumps(data))
    assert run_sweep(wider, tmp_path, executor="serial", figures=False).computed == 1


def test_a_failed_job_is_recorded_and_the_sweep_goes_on(tmp_path):
    # a meaningless setting (p = 0) is refused before any job runs; a job that fails when
    # it runs (a certificate needs known values) is recorded
    spec = {"kind": "certify", "base": {"eps": "1/20", "T": 2, "p": 1},
            "grid": {"values": ["fixed", "learned"]}}
    result = run_sweep(spec, tmp_path, executor="serial", figures=False)
    assert [r["status"] for r in result.rows] == ["ok", "failed"]
    assert "learned" in result.rows[1]["failure"]
    assert (result.computed, result.failed) == (1, 1)
    assert "1 failed" in result.summary_line()
    # failures are not cached: they run again
    assert run_sweep(spec, tmp_path, executor="serial", figures=False).failed == 1


class _InterruptAfterOne(Executor):
    def run(self, fn, args):
        yield 0, call_job(fn, args[0])
        raise KeyboardInterrupt


def test_ctrl_c_keeps_every_finished_job(tmp_path):
    result = run_sweep(CERTIFY, tmp_path, executor=_InterruptAfterOne(), figures=False)
    assert result.interrupted and result.computed == 1
    assert [r["status"] for r in result.rows].count("not run") == 3
    assert "interrupted" in result.summary_line()
    assert run_sweep(CERTIFY, tmp_path, executor="serial", figures=False).cached == 1


def test_a_dask_local_cluster_gives_the_serial_results():
    with DaskExecutor(workers=2, processes=False) as ex:
        dask_rows = run_sweep(CERTIFY, executor=ex).rows
    serial_rows = run_sweep(CERTIFY, executor=SerialExecutor()).rows
    assert _strip(dask_rows) == _strip(serial_rows)


@pytest.mark.slow
def test_two_dask_worker_processes_give_the_serial_results():
    dask_rows = run_sweep(CERTIFY, executor="dask", workers=2).rows
    assert _strip(dask_rows) == _strip(run_sweep(CERTIFY, executor="serial").rows)


def test_call_job_captures_errors_as_data():
    res = call_job(int, "x")
    assert isinstance(res, JobResult) and not res.ok and res.error.startswith("ValueError")


def test_cli_writes_parquet_and_csv_with_one_row_per_job(tmp_path, capsys):
    path = tmp_path / "s.toml"
    path.write_text('kind = "certify"\n[base]\np = 1\neps = "1/20"\n[grid]\nT = [2, 3]\n')
    out = tmp_path / "out"
    assert main(["sweep", str(path), "--out", str(out), "--executor", "serial",
                 "--no-figures"]) == 0
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert last == "sweep certify: 2 jobs, 2 computed, 0 from cache, 0 failed"
    pq = pytest.importorskip("pyarrow.parquet")
    table = pq.read_table(out / "results.parquet").to_pylist()
    with (out / "results.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    assert [r["T"] for r in table] == [2, 3] and [r["T"] for r in rows] == ["2", "3"]
    assert all(r["status"] == "ok" and r["verified"] for r in table)
    assert main(["sweep", str(path), "--out", str(out), "--executor", "serial",
                 "--no-figures"]) == 0
    assert capsys.readouterr().out.strip().endswith("0 computed, 2 from cache, 0 failed")


def test_cli_bad_sweep_file_is_one_line_exit_2(tmp_path, capsys):
    path = tmp_path / "s.toml"
    path.write_text('kind = "certify"\n[grid]\nT = [2]\n')
    assert main(["sweep", str(path), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "eps" in err


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(p.stem for p in (ROOT / "examples/sweeps").glob("*.toml")))
def test_example_sweeps_run(name, tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    result = run_sweep(ROOT / "examples/sweeps" / f"{name}.toml", tmp_path, executor="serial")
    assert result.failed == 0 and result.computed == len(result.rows) > 0
    assert (tmp_path / "results.parquet").exists() and (tmp_path / "results.csv").exists()


def test_variant_cells_agree_with_the_variants_table_and_a_bad_map_is_a_failed_job():
    from sinkproof.task import TriggerTask
    from sinkproof.variants import QUESTIONS, build_table

    maps = ["softmax", "relu", "sigmoid"]
    spec = {"kind": "variant", "base": {"p": 1, "T": 2},
            "grid": {"map": [*maps, "nomap"], "question": list(QUESTIONS)}}
    result = run_sweep(spec, executor="serial", figures=False)
    table = build_table(TriggerTask(p=1, T=2), maps=tuple(maps))
    good = [r for r in result.rows if r["map"] != "nomap"]
    assert len(good) == 12 and all(r["status"] == "ok" for r in good)
    for row in good:  # one cell computed alone is the cell of the whole table
        c = table.rows[row["map"]][row["question"]]
        assert (row["answer"], row["how"], row["detail"]) == (c.answer, c.how, c.detail)
        assert row["yes"] == {"yes": 1.0, "no": 0.0}[c.answer]
    bad = [r for r in result.rows if r["map"] == "nomap"]
    assert [r["status"] for r in bad] == ["failed"] * 4 and result.failed == 4
    assert all("unknown attention map 'nomap'" in r["failure"] for r in bad)


EPS = ", ".join(f'"1/{20 + i}"' for i in range(12))
INTERRUPTED = f"""# twelve sink maps of about a second each
kind = "sinkmap"
[base]
p = 1
T = 4
[grid]
eps = [{EPS}]
"""


def _interrupt_a_sweep(tmp_path, executor):
    """Run a sweep in a real process, send it SIGINT once a job has finished, and check
    that it stops with 130, no traceback, and every finished job in the table and cache."""
    path, out = tmp_path / "s.toml", tmp_path / "out"
    path.write_text(INTERRUPTED)
    proc = subprocess.Popen([sys.executable, "-m", "sinkproof", "sweep", str(path), "--out",
                             str(out), "--executor", executor, "--workers", "2", "--no-figures"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    deadline = time.time() + 300  # generous: the machine may be loaded
    while not any((out / "cache").glob("*.json")):
        assert proc.poll() is None, proc.communicate()
        assert time.time() < deadline, "no job finished in time"
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 130, (stdout, stderr)
    assert "Traceback" not in stderr, stderr
    assert stdout.strip().splitlines()[-1].endswith("(interrupted: finished jobs kept)")
    with (out / "results.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    done = [r["eps"] for r in rows if r["status"] == "ok"]
    assert len(rows) == 12 and {r["status"] for r in rows} <= {"ok", "not run"}
    assert 1 <= len(done) == len(list((out / "cache").glob("*.json")))
    # what finished was kept: the same jobs again all come from the cache
    again = run_sweep({"kind": "sinkmap", "base": {"p": 1, "T": 4}, "grid": {"eps": done}},
                      out, executor="serial", figures=False)
    assert (again.computed, again.cached) == (0, len(done))
    return len(done)


@pytest.mark.slow  # 2-7 s of subprocesses/compiles: CI runs it
def test_sigint_stops_a_sweep_on_worker_processes_keeping_every_finished_job(tmp_path):
    assert _interrupt_a_sweep(tmp_path, "processes") < 12


@pytest.mark.slow
def test_sigint_stops_a_sweep_on_a_dask_cluster_keeping_every_finished_job(tmp_path):
    _interrupt_a_sweep(tmp_path, "dask")


# ------------------------------------------------- the cache never reports a stale verdict
CLAIMS = {
    # Theorem 1: Proved (no document; derived again on reading)
    "theorem": ('[task]\np = 1\nT = 2\n[model]\nkind = "softmax"\nheads = 1\nvalues = "fixed"\n'
                '[hypothesis]\nmax_error = 0.05\n[conclusion]\nmin_bos_mass = 0.9\n'
                'at = "homogeneous"\n'),
    # the Theorem 6 sink map certifies (BOS, +e1, -e1), where Theorem 3 is silent
    "certificate": ('[task]\np = 1\nT = 2\n[model]\nkind = "softmax"\nheads = 1\n'
                    'values = "fixed"\n[hypothesis]\nmax_error = 0.05\n[conclusion]\n'
                    'min_bos_mass = 0.5\nat = [{sequence = [0, 1], position = 2}]\n'),
    # a sink-free ReLU construction refutes it (a witness)
    "witness": ('[task]\np = 1\nT = 2\n[model]\nkind = "relu"\nheads = 1\nvalues = "fixed"\n'
                '[hypothesis]\nmax_error = 0.05\n[conclusion]\nmin_bos_mass = 0.5\n'
                'at = "nontrigger"\n'),
}


def _check_sweep(tmp_path, name, **base):
    claim = tmp_path / f"{name}.toml"
    if not claim.exists():
        claim.write_text(CLAIMS[name])
    spec = tmp_path / "sweep.toml"
    settings = "".join(f"{k} = {json.dumps(v)}\n" for k, v in {"claim": claim.name, **base}.items())
    spec.write_text(f'kind = "check"\n[base]\n{settings}[grid]\n"check.seed" = [0]\n')
    return run_sweep(spec, tmp_path / "out", executor="serial", figures=False)


def _same_rows(a, b):
    """Equal rows but for timing (NaN equal to NaN)."""
    return json.dumps(_strip(a), sort_keys=True) == json.dumps(_strip(b), sort_keys=True)


def _entry(tmp_path):
    (path,) = (tmp_path / "out" / "cache").glob("*.json")
    return path, json.loads(path.read_text())


@pytest.mark.parametrize("name, verdict", [("theorem", "Proved"), ("witness", "Refuted")])
def test_editing_the_claim_file_between_two_sweeps_runs_the_job_again(tmp_path, name, verdict):
    first = _check_sweep(tmp_path, name)
    assert first.rows[0]["outcome"] == verdict and first.computed == 1
    assert _check_sweep(tmp_path, name).cached == 1  # unchanged: from the cache
    claim = tmp_path / f"{name}.toml"  # the same path, other bytes: a stronger claim
    claim.write_text(claim.read_text().replace("min_bos_mass = 0.", "min_bos_mass = 0.99"))
    again = _check_sweep(tmp_path, name)
    assert (again.computed, again.cached) == (1, 0)
    assert again.rows[0]["outcome"] != "Proved"  # never the old verdict


def test_editing_a_certificate_the_claim_names_runs_the_job_again(tmp_path):
    first = _check_sweep(tmp_path, "certificate")
    row = first.rows[0]
    assert row["outcome"] == "Proved" and row["by"].startswith("certificate"), row
    cert = tmp_path / "given.json"  # the certificate, named by the claim
    cert.write_text(json.dumps(_entry(tmp_path)[1]["evidence"]["certificate"]))
    claim = tmp_path / "certificate.toml"
    claim.write_text(CLAIMS["certificate"] + '[check]\ncertificate = "given.json"\n')
    named = _check_sweep(tmp_path, "certificate")
    assert named.computed == 1 and named.rows[0]["outcome"] == "Proved"
    assert _check_sweep(tmp_path, "certificate").cached == 1
    cert.write_text(cert.read_text() + "\n")  # the same certificate, other bytes
    assert _check_sweep(tmp_path, "certificate").computed == 1


def test_another_package_version_or_setting_runs_the_job_again(tmp_path, monkeypatch):
    assert _check_sweep(tmp_path, "theorem", search=False).computed == 1
    assert _check_sweep(tmp_path, "theorem", search=True).computed == 1
    monkeypatch.setattr("sinkproof.sweep.cache.__version__", "0.0.0-other")
    assert _check_sweep(tmp_path, "theorem", search=True).computed == 1


def _tamper(tmp_path, edit):
    path, data = _entry(tmp_path)
    edit(data)
    path.write_text(json.dumps(data))


@pytest.mark.parametrize("name, edit", [
    ("theorem", lambda d: d["outcome"].update(bound=0.999)),
    ("theorem", lambda d: d["outcome"].update(by="theorem2")),
    ("witness", lambda d: d["outcome"].update(outcome="Proved", by="theorem1", bound=0.99)),
    ("witness", lambda d: d["evidence"]["witness"]["claim"]["model_class"].update(
        kind="softmax")),
    ("witness", lambda d: d.update(evidence={})),
    ("certificate", lambda d: d["outcome"].update(bound=0.99)),
    ("certificate", lambda d: d["evidence"].update(digest="0" * 64)),
    ("certificate", lambda d: d["evidence"]["certificate"]["instance"].update(eps="1/2")),
])
def test_a_hand_edited_cache_entry_is_never_reported(tmp_path, name, edit):
    """A verdict is reported from the cache only if its evidence verifies again and
    supports this claim with the stored bound (or, with no document, a Proved is derived
    again the same)."""
    honest = _check_sweep(tmp_path, name).rows[0]
    _tamper(tmp_path, edit)
    again = _check_sweep(tmp_path, name)
    assert (again.computed, again.cached) == (1, 0) and len(again.rechecks) == 1
    assert "did not verify again" in again.rechecks[0]
    assert _same_rows(again.rows, [honest])
    assert _check_sweep(tmp_path, name).cached == 1  # the entry was written again, honest


def test_an_open_entry_flipped_to_proved_is_not_reported(tmp_path):
    claim = tmp_path / "theorem.toml"
    claim.write_text(CLAIMS["theorem"].replace("0.9", "0.99"))
    assert _check_sweep(tmp_path, "theorem", search=False).rows[0]["outcome"] == "Open"
    _tamper(tmp_path, lambda d: d["outcome"].update(outcome="Proved", by="theorem1",
                                                    bound=0.995))
    again = _check_sweep(tmp_path, "theorem", search=False)
    assert again.rows[0]["outcome"] == "Open" and again.computed == 1


@pytest.mark.parametrize("edit", [
    lambda d: d["outcome"].update(min_bound_exact="99/100", min_bound=0.99),
    lambda d: d["evidence"]["certificate"]["instance"].update(eps="1/40"),
    lambda d: d.update(evidence={}),
    lambda d: d["settings"].update(eps="1/40"),
])
def test_a_hand_edited_certify_entry_is_never_reported(tmp_path, edit):
    spec = {"kind": "certify", "base": {"p": 1, "T": 2}, "grid": {"eps": ["1/20"]}}
    honest = run_sweep(spec, tmp_path / "out", executor="serial", figures=False).rows
    _tamper(tmp_path, edit)
    again = run_sweep(spec, tmp_path / "out", executor="serial", figures=False)
    assert again.computed == 1 and _same_rows(again.rows, honest)


# ---------------------------------- paths relative to the sweep file; loud failures
def test_example_check_sweep_runs_from_another_folder(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)  # not the repository: claim paths are the file's
    out = tmp_path / "out"
    status = main(["sweep", str(ROOT / "examples/sweeps/check.toml"), "--out", str(out),
                   "--executor", "serial", "--no-figures"])
    captured = capsys.readouterr()
    assert status == 0, captured
    assert captured.out.strip().endswith("3 computed, 0 from cache, 0 failed")
    assert "serial: every job in this process" in captured.err  # the executor, in one line
    with (out / "results.csv").open() as fh:
        assert [r["outcome"] for r in csv.DictReader(fh)] == ["Proved"] * 3


def test_a_sweep_with_a_failed_job_exits_1(tmp_path, capsys):
    path = tmp_path / "s.toml"
    path.write_text('kind = "check"\n[base]\nclaim = "nowhere.toml"\n[grid]\n"check.seed" = [0]\n')
    assert main(["sweep", str(path), "--out", str(tmp_path / "o"), "--executor", "serial",
                 "--no-figures"]) == 1
    out = capsys.readouterr().out
    assert "job 0 failed" in out and out.strip().endswith("1 failed")


def test_outputs_never_overwrite_a_file_no_sweep_wrote(tmp_path, capsys):
    path = tmp_path / "s.toml"
    path.write_text('kind = "certify"\n[base]\np = 1\nT = 2\n[grid]\neps = ["1/20"]\n')
    out = tmp_path / "o"
    out.mkdir()
    mine = out / "results.csv"
    mine.write_text("my own table\n")
    args = ["sweep", str(path), "--out", str(out), "--executor", "serial", "--no-figures"]
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "not overwritten" in err
    assert mine.read_text() == "my own table\n" and not (out / "cache").exists()
    mine.unlink()
    assert main(args) == 0 and main(args) == 0  # its own files: written again
    assert not [p for p in out.rglob("*.tmp*")]  # nothing half-written left


def test_a_claims_witness_path_is_never_written_by_a_sweep(tmp_path):
    victim = tmp_path / "precious.json"
    victim.write_text("keep me")
    claim = tmp_path / "witness.toml"
    claim.write_text(CLAIMS["witness"] + f'[check]\nwitness = "{victim}"\n')
    for out in (tmp_path / "out", None):
        spec = {"kind": "check", "base": {"claim": str(claim)}, "grid": {"check.seed": [0]}}
        assert run_sweep(spec, out, executor="serial", figures=False).rows[0][
            "outcome"] == "Refuted"
        assert victim.read_text() == "keep me"


def test_an_axis_name_never_names_a_file_outside_the_output_folder():
    from sinkproof.sweep.output import figure_name

    assert figure_name("hypothesis.max_error") == "figures/hypothesis.max_error.png"
    for hostile in ("task./../../etc/x", "../x", "/abs", ".hidden"):
        name = figure_name(hostile)
        assert name.count("/") == 1 and ".." not in name.split("/")[1][:2]
        assert not name.split("/")[1].startswith(".")


def test_numeric_axes_are_plotted_as_numbers_eps_on_a_log_axis(tmp_path):
    pytest.importorskip("matplotlib")
    from sinkproof.sweep.output import log_scale, numeric_axis

    assert numeric_axis(["1/100", "0.05", 0.1]) == [0.01, 0.05, 0.1]
    assert numeric_axis(["softmax", "relu"]) is None and numeric_axis([True]) is None
    assert log_scale("eps", [0.01, 0.1]) and log_scale("hypothesis.max_error", [0.05])
    assert not log_scale("T", [2, 3]) and not log_scale("eps", [0.0, 0.1])
    spec = {"kind": "certify", "base": {"p": 1, "T": 2}, "grid": {"eps": ["1/10", "1/100"]}}
    result = run_sweep(spec, tmp_path, executor="serial", figures=True)
    assert (tmp_path / "figures" / "eps.png").stat().st_size > 0
    assert result.failed == 0


@pytest.mark.parametrize("edit", [
    lambda d: d["outcome"].update(min_bound=0.99),
    lambda d: d["outcome"].update(n_bounded=99),
    lambda d: d["evidence"]["certificate"]["instance"].update(eps="1/40"),
    lambda d: d.update(evidence={}),
])
def test_a_hand_edited_sinkmap_entry_is_never_reported(tmp_path, edit):
    spec = {"kind": "sinkmap", "base": {"p": 1, "T": 2}, "grid": {"eps": ["1/20"]}}
    honest = run_sweep(spec, tmp_path / "out", executor="serial", figures=False).rows
    assert honest[0]["n_bounded"] > 0
    _tamper(tmp_path, edit)
    again = run_sweep(spec, tmp_path / "out", executor="serial", figures=False)
    assert again.computed == 1 and len(again.rechecks) == 1 and _same_rows(again.rows, honest)
    third = run_sweep(spec, tmp_path / "out", executor="serial", figures=False)
    assert (third.cached, third.rechecks) == (1, [])  # an honest entry verifies again
