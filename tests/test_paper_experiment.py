"""The paper's training protocol: the JAX forward against the NumPy stack, and the command."""

from __future__ import annotations

import json

import numpy as np
import pytest

import sinkproof as sp
from sinkproof.attention import MAPS
from sinkproof.cli import main
from sinkproof.experiment.config import QUICK
from sinkproof.experiment.train import assemble, forward, init_params


@pytest.mark.parametrize("kind", list(MAPS))
@pytest.mark.parametrize("layers,heads", [(1, 1), pytest.param(2, 3, marks=pytest.mark.slow)])
def test_jax_forward_matches_the_numpy_stack(kind, layers, heads):
    import jax

    task = sp.PaperTask(n=6, L=7)
    params = {k: np.asarray(v, dtype=float) for k, v in
              init_params(jax.random.PRNGKey(3), layers, heads, 6, std=0.7, kind=kind).items()}
    rng = np.random.default_rng(4)
    if "mp" in params:  # a nonzero sink logit / sigmoid bias
        params["mp"] = rng.normal(0.0, 1.0, params["mp"].shape)
    if "gc" in params:
        params["gc"] = rng.normal(0.0, 1.0, params["gc"].shape)
    model = sp.paper_model(task, kind, W_Q=params["wq"], W_K=params["wk"], W_V=params["wv"],
                           W_O=params["wo"], map_params=params.get("mp"),
                           gate_w=params.get("gw"), gate_c=params.get("gc"))
    x = task.sample(4, seed=1)
    with jax.enable_x64(True):
        out, w = forward({k: jax.numpy.asarray(v) for k, v in params.items()},
                         jax.numpy.asarray(x), kind, residual=layers > 1)
    for b in range(x.shape[0]):
        ref_out, ref_w = model.forward(x[b])
        np.testing.assert_allclose(np.asarray(out[b]), ref_out, atol=1e-10)
        np.testing.assert_allclose(np.asarray(w[b]), ref_w, atol=1e-10)


@pytest.mark.parametrize("residual", [False, True])
def test_batch_targets_match_the_task(residual):
    import jax

    task = sp.PaperTask(n=5, L=9, residual=residual)
    x_np = task.sample(6, seed=2)
    j = np.array([task.trigger_position(s) for s in x_np])
    with jax.enable_x64(True):
        x, y = assemble(jax.numpy.asarray(x_np[:, 1:, 2:4]), jax.numpy.asarray(j), 5, 9,
                        residual)
    np.testing.assert_array_equal(np.asarray(x), x_np)
    np.testing.assert_allclose(np.asarray(y), task.row_targets(x_np), atol=1e-12)


@pytest.mark.parametrize("configs", [
    # JAX training: 5 s of CPU for 1x1, several times that with the 2x2 figures; CI runs both
    pytest.param([], id="quick", marks=pytest.mark.slow),
    pytest.param(["--configs", "1x1,2x2"], id="quick-1x1-2x2", marks=pytest.mark.slow),
])
def test_paper_quick_writes_results(tmp_path, capsys, configs):
    assert main(["paper", "--quick", *configs, "--out", str(tmp_path)]) == 0
    runs = json.loads((tmp_path / "results.json").read_text())
    sizes = (1, 2) if configs else (1,)
    assert {(r["kind"], r["layers"], r["heads"]) for r in runs} == {
        (k, n, n) for k in ("softmax", "relu_length") for n in sizes}
    for r in runs:
        bos = np.asarray(r["bos_nontrigger"])
        assert bos.shape == (r["layers"], r["heads"]) and r["seed"] == 0
        assert np.all((bos >= 0) & (bos <= 1 + 1e-6))
        assert 0 <= r["steps"] <= QUICK.max_steps and r["max_abs_error"] >= 0
    relu = [r for r in runs if r["kind"] == "relu_length"]
    soft = [r for r in runs if r["kind"] == "softmax"]
    # at a small init the softmax rows are near uniform (1/(i+1) on BOS); ReLU/length
    # puts max(0, q.k)/i, about 0.02^2-sized scores: far below softmax's BOS share
    assert min(np.min(r["bos_nontrigger"]) for r in soft) > max(
        np.max(r["bos_nontrigger"]) for r in relu)
    table = (tmp_path / "table.md").read_text()
    assert "| softmax | 1×1 | 0 |" in table
    assert ("| softmax | 2×2 | 0 |" in table) == (2 in sizes)
    figures = ["fig3_1x1_mean_std.png"]
    figures += ["fig4_2x2_softmax.png", "fig5_2x2_relu_length.png"] if 2 in sizes else []
    for name in figures:
        assert (tmp_path / name).stat().st_size > 1000


@pytest.mark.slow  # about 40 s of JAX training and compiles on 2 cores: CI runs it
def test_paper_quick_shows_the_phenomenon(tmp_path, capsys):
    """The quick preset's real run: the one-layer softmax head sinks (mean BOS weight >= 0.9
    at the non-trigger rows, the sink counted in the run's own measure) and ReLU/length does
    not (<= 0.1), both accurate (stopped at the tolerance)."""
    assert main(["paper", "--quick", "--no-figures", "--out", str(tmp_path)]) == 0
    runs = {r["kind"]: r for r in json.loads((tmp_path / "results.json").read_text())}
    soft, relu = runs["softmax"], runs["relu_length"]
    assert (soft["layers"], soft["heads"]) == (relu["layers"], relu["heads"]) == (1, 1)
    assert soft["stopped"] and relu["stopped"]
    assert soft["bos_nontrigger"][0][0] >= 0.9 and soft["sinks_per_layer"] == [1]
    assert relu["bos_nontrigger"][0][0] <= 0.1 and relu["sinks_per_layer"] == [0]
    assert soft["bound_check"]["violations"] == 0


def test_bad_config_is_one_line_error(capsys):
    assert main(["paper", "--configs", "2y2"]) == 2
    assert "LAYERSxHEADS" in capsys.readouterr().err
