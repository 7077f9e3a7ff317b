"""End-to-end tests of training, the experiment runner and ``sinkproof experiment``."""

from __future__ import annotations

import json

import numpy as np
import pytest

from sinkproof.cli import main
from sinkproof.experiment import (
    ExperimentConfig,
    ExperimentResult,
    RunResult,
    load,
    run,
    train,
)
from sinkproof.experiment.table import aggregate

SMOKE = ExperimentConfig.smoke()


@pytest.fixture(scope="module")
def smoke(tmp_path_factory) -> tuple[ExperimentResult, object]:
    out = tmp_path_factory.mktemp("experiment")
    return run(SMOKE, out=out, progress=False), out


def test_training_is_seeded_and_reduces_the_loss():
    task = SMOKE.task("signed")
    a = train(task, "softmax", 1, 3, SMOKE)
    b = train(task, "softmax", 1, 3, SMOKE)
    c = train(task, "softmax", 1, 4, SMOKE)
    np.testing.assert_array_equal(a.model.A, b.model.A)
    assert not np.array_equal(a.model.A, c.model.A)
    assert a.history.loss[-1] < a.history.loss[0]
    assert a.history.step.tolist() == list(range(0, SMOKE.steps + 1, SMOKE.record_every))
    assert a.history.sink_score.shape == (a.history.step.size, 1)
    assert "TrainedModel(softmax, H=1, seed=3" in repr(a)
    assert repr(a.history).startswith(f"History({SMOKE.steps // SMOKE.record_every + 1} records")


def test_run_covers_every_setting(smoke):
    result, _ = smoke
    assert len(result.runs) == SMOKE.n_runs == len(result.models)
    assert {(r.kind, r.heads) for r in result.runs} == {
        (k, h) for k in SMOKE.kinds for h in SMOKE.heads}
    assert result.violations == 0
    assert "violations=0" in repr(result)
    assert "| content | attention | H |" in result._repr_markdown_()
    rows = result.to_records()
    assert [(r["kind"], r["heads"], r["seed"], r["error"]) for r in rows] == [
        (r.kind, r.heads, r.seed, r.error) for r in result.runs]
    assert "history" not in rows[0] and "theory" not in rows[0]
    assert result.to_csv().count("\n") == len(rows) + 1
    first = result.runs[0]
    assert repr(first).startswith(f"RunResult(signed {first.kind} H={first.heads} seed=0: ")
    assert first._repr_markdown_().count("\n") == 2


def test_results_json_schema(smoke):
    result, out = smoke
    runs = json.loads((out / "results.json").read_text())
    assert isinstance(runs, list) and len(runs) == len(result.runs)
    for d in runs:
        for key in ("kind", "heads", "seed", "error", "sink_score", "bos_trigger",
                    "error_longer", "bos_share", "null_mass", "theory", "history"):
            assert key in d
        for key in ("sink_score", "bos_trigger", "bos_share", "null_mass"):
            assert len(d[key]) == d["heads"]
        if d["kind"] == "softmax" and d["heads"] == 1:
            assert [t["theorem"] for t in d["theory"]] == [1, 3]
            assert all(t["violations"] == 0 for t in d["theory"])
        assert RunResult.from_dict(d).to_dict() == d
    config = json.loads((out / "config.json").read_text())
    assert ExperimentConfig.from_dict(config["config"]) == SMOKE


def test_measurements_are_consistent(smoke):
    result, _ = smoke
    for r, m in zip(result.runs, result.models):
        assert r.error >= 0 and r.error_longer >= 0
        if r.kind == "softmax":
            # softmax weights are a distribution: BOS share equals BOS mass, both in [0, 1]
            np.testing.assert_allclose(r.bos_share, r.sink_score)
            assert all(0.0 <= x <= 1.0 for x in r.sink_score + r.bos_trigger)
        np.testing.assert_allclose(r.norm_A, m.spectral_norms)


def test_load_reads_back_what_run_wrote(smoke):
    result, out = smoke
    back = load(out)
    assert back.config == result.config and back.seconds == result.seconds
    assert [r.to_dict() for r in back.runs] == [r.to_dict() for r in result.runs]
    np.testing.assert_array_equal(back.models[0].A, result.models[0].A)
    assert back.markdown() == (out / "results.md").read_text()


def test_load_rejects_other_folders(tmp_path):
    (tmp_path / "results.json").write_text("not json")
    (tmp_path / "config.json").write_text("{}")
    (tmp_path / "models.json").write_text("[]")
    with pytest.raises(ValueError, match="not an experiment output folder"):
        load(tmp_path)
    with pytest.raises(OSError):
        load(tmp_path / "missing")


def test_written_files_and_figures(smoke):
    _, out = smoke
    for name in ("results.md", "models.json", "heatmaps.png", "bos_training.png"):
        assert (out / name).stat().st_size > 0
    for name in ("heatmaps.png", "bos_training.png"):
        head = (out / name).read_bytes()[:8]
        assert head == b"\x89PNG\r\n\x1a\n"
        assert (out / name).stat().st_size < 200_000


def test_aggregate_spans_the_seeds(smoke):
    result, _ = smoke
    rows = aggregate(result.runs)
    assert len(rows) == len(SMOKE.kinds) * len(SMOKE.heads)
    for row in rows:
        members = [r for r in result.runs if (r.kind, r.heads) == (row["kind"], row["heads"])]
        assert row["error"]["max"] == pytest.approx(max(r.error for r in members))


def test_cli_smoke(tmp_path, capsys):
    assert main(["experiment", "--smoke", "--out", str(tmp_path), "--quiet", "--no-figures",
                 "--kinds", "relu", "--heads", "1"]) == 0
    runs = json.loads((tmp_path / "results.json").read_text())
    assert [(r["kind"], r["heads"]) for r in runs] == [("relu", 1)]
    assert not (tmp_path / "heatmaps.png").exists()


def test_cli_bad_input_is_one_line(tmp_path, capsys):
    assert main(["experiment", "--smoke", "--out", str(tmp_path), "--seeds", "0"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--seeds" in err


@pytest.mark.slow  # a second or more of training/compiles: CI runs it
def test_parallel_jobs_give_identical_runs(smoke):
    result, _ = smoke
    cfg = SMOKE.replace(kinds=("softmax",), heads=(2,))
    parallel = run(cfg, progress=False, jobs=2)
    (serial,) = [r for r in result.runs if (r.kind, r.heads) == ("softmax", 2)]
    assert parallel.runs[0].to_dict() | {"seconds": 0} == serial.to_dict() | {"seconds": 0}
    assert not parallel.models[0].A.flags.writeable


def test_progress_bar_on_request(capsys):
    run(SMOKE.replace(kinds=("relu",), heads=(1,)), progress=True)
    err = capsys.readouterr().err
    assert "experiment:" in err and "100%" in err and "40/40" in err and "relu H=1 seed=0" in err


@pytest.mark.parametrize("argv", [["--heads", "0"], ["--steps", "0"],
                                  ["--T", "3", "--longer-T", "3"]])
def test_cli_rejects_bad_settings(tmp_path, capsys, argv):
    assert main(["experiment", "--smoke", "--out", str(tmp_path), "--quiet", *argv]) == 2
    assert capsys.readouterr().err.startswith("sinkproof: error: ")


def test_run_rejects_a_non_config():
    with pytest.raises(TypeError, match="ExperimentConfig"):
        run({"p": 2})


@pytest.mark.slow
def test_cli_quick(tmp_path):
    assert main(["experiment", "--quick", "--out", str(tmp_path), "--quiet"]) == 0
    runs = json.loads((tmp_path / "results.json").read_text())
    assert len(runs) == ExperimentConfig.quick().n_runs
