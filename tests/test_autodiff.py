"""The JAX forward against the numpy evaluator on every map, its gradients against finite
differences, float64 only in scope, and worker processes that compute on one thread each."""

from __future__ import annotations

import os

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sinkproof as sp
from sinkproof.attention import MAPS
from sinkproof.autodiff import compiled_forward, forward, model_params, padded_size, x64
from sinkproof.kernel import forward_prefixes
from sinkproof.search.objective import device_tables, prefix_batch


def random_model(task, kind, H, rng, scale=1.0):
    amap = MAPS[kind]
    kw = {}
    if amap.param_names:
        kw["map_params"] = rng.standard_normal((H, len(amap.param_names)))
    if amap.properties.gated:
        kw.update(gate_w=rng.standard_normal((H, task.D)), gate_c=rng.standard_normal(H))
    return sp.AttentionModel(task, kind, scale * rng.standard_normal((H, task.D, task.D)),
                             rng.standard_normal((H, task.p, task.p + 3)), **kw)


def jax_forward(model, batch, params=None):
    phi, tokens = device_tables(model.task)
    with x64():
        p = {k: jnp.asarray(v) for k, v in (params or model_params(model)).items()}
        return compiled_forward(p, batch.device_data, phi, tokens, kind=model.kind)


def assert_forward_matches_evaluator(model, batch):
    """Outputs and effective (gated) weights agree to 1e-12 (relative to the largest
    magnitude, for unnormalised maps at scores of ±1000) at every prefix of the batch."""
    fw = jax_forward(model, batch)
    out = np.asarray(fw.output)
    w = np.asarray(fw.weights * fw.gates[..., None])
    assert np.all(np.isfinite(out))
    row = 0
    for g in batch.groups:
        n, t = g.keys.shape[0], g.depth
        if t >= 1:
            ref = forward_prefixes(model, g.keys[:, 1:])
            tol = 1e-12 * max(1.0, float(np.abs(ref.output).max()))
            np.testing.assert_allclose(out[row:row + n], ref.output, rtol=0, atol=tol)
            tol = 1e-12 * max(1.0, float(np.abs(ref.weights).max()))
            np.testing.assert_allclose(w[:, row:row + n, : t + 1], ref.weights, rtol=0,
                                       atol=tol)
        assert not w[:, row:row + n, t + 1:].any()  # hidden keys get exactly 0
        row += n


@pytest.mark.parametrize("kind", sorted(MAPS))
def test_jax_forward_equals_the_numpy_evaluator_on_every_map(kind):
    """Two heads (gated where the map has a gate, random map parameters), ordinary scores
    and scores of about ±1000, on the whole family."""
    task = sp.TriggerTask(p=2, T=3)
    rng = np.random.default_rng(sorted(MAPS).index(kind) + 10)
    batch = prefix_batch(task)
    for scale in (1.0, 1000.0):
        assert_forward_matches_evaluator(random_model(task, kind, 2, rng, scale), batch)


@pytest.mark.slow
@settings(max_examples=40, deadline=None)
@given(kind=st.sampled_from(sorted(MAPS)), H=st.integers(1, 3), seed=st.integers(0, 2**31),
       scale=st.sampled_from([0.3, 1.0, 4.0]), T=st.integers(1, 4),
       positions=st.sampled_from(["inverse", "onehot"]))
def test_jax_forward_equals_the_numpy_evaluator_on_drawn_models(kind, H, seed, scale, T,
                                                                 positions):
    task = sp.TriggerTask(p=2, T=T, positions=positions)
    model = random_model(task, kind, H, np.random.default_rng(seed), scale)
    assert_forward_matches_evaluator(model, prefix_batch(task))


@pytest.mark.parametrize("kind", sorted(MAPS))
def test_gradients_match_central_differences_on_every_map(kind):
    """d/dx of ``Σ ||f - y||²`` along a random direction of every parameter (A, U, map
    parameters, gate) against the central difference of the float64 forward."""
    task = sp.TriggerTask(p=2, T=3)
    rng = np.random.default_rng(sorted(MAPS).index(kind))
    model = random_model(task, kind, 2, rng, scale=0.7)
    batch = prefix_batch(task)
    phi, tokens = device_tables(task)
    base = model_params(model)
    direction = {k: rng.standard_normal(np.shape(v)) for k, v in base.items()}
    with x64():
        data = batch.device_data

        def loss(p):
            f = forward(p, data, phi, tokens, kind).output
            return (data["weight"][:, None] * (f - data["target"]) ** 2).sum()

        value_grad = jax.jit(jax.value_and_grad(loss))  # one compilation serves both
        p0 = {k: jnp.asarray(v) for k, v in base.items()}
        grad = value_grad(p0)[1]
        analytic = sum(float((grad[k] * direction[k]).sum()) for k in base)
        h = 1e-6

        def along(x):
            return float(value_grad({k: p0[k] + x * direction[k] for k in base})[0])

        numeric = (along(h) - along(-h)) / (2 * h)
    assert abs(numeric - analytic) <= 1e-6 * max(1.0, abs(analytic)), (numeric, analytic)


def test_float64_is_scoped():
    task = sp.TriggerTask(p=1, T=2)
    model = random_model(task, "softmax", 1, np.random.default_rng(1))
    fw = jax_forward(model, prefix_batch(task))
    assert fw.output.dtype == jnp.float64
    assert jnp.zeros(1).dtype == jnp.float32  # outside x64() JAX is at its default again


def test_factored_scores_equal_their_product():
    task = sp.TriggerTask(p=1, T=3)
    rng = np.random.default_rng(2)
    WQ, WK = rng.standard_normal((2, 3, task.D)), rng.standard_normal((2, 3, task.D))
    A = np.einsum("hrd,hre->hde", WQ, WK)
    model = sp.AttentionModel(task, "softmax", A, rng.standard_normal((2, 1, 4)))
    batch = prefix_batch(task)
    bilinear = jax_forward(model, batch).output
    factored = jax_forward(model, batch, {"WQ": WQ, "WK": WK, "U": model.U}).output
    np.testing.assert_allclose(np.asarray(factored), np.asarray(bilinear), atol=1e-12)


def test_padded_sizes_are_few_and_large_enough():
    sizes = {padded_size(n) for n in range(1, 5000)}
    assert all(padded_size(n) >= n for n in range(1, 5000))
    assert all(padded_size(n) <= max(64, 1.125 * n) for n in range(1, 5000))
    assert len(sizes) < 60


def _threadpools(_):
    from threadpoolctl import threadpool_info

    return threadpool_info()


def _thread_ticks() -> dict[str, int]:
    """CPU ticks so far of each thread of this process (Linux /proc)."""
    out = {}
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:  # the thread ended meanwhile
            continue
        out[tid] = int(fields[11]) + int(fields[12])
    return out


def _computing_threads(_):
    """How many threads of this process computed during ~0.3 s of XLA work, and whether
    JAX dispatches asynchronously (a thread of its own) here."""
    import jax
    import jax.numpy as jnp

    f = jax.jit(lambda x: jnp.exp(jnp.sin(x) * x).sum())
    x = jnp.linspace(0.0, 1.0, 2_000_000)
    f(x).block_until_ready()
    before = _thread_ticks()
    for _ in range(30):
        f(x).block_until_ready()
    grew = [t for t, ticks in _thread_ticks().items() if ticks - before.get(t, 0) >= 2]
    return len(grew), jax.config.read("jax_cpu_enable_async_dispatch")


@pytest.mark.slow  # 2-7 s of subprocesses/compiles: CI runs it
def test_worker_processes_compute_on_one_thread_and_are_not_pinned():
    from sinkproof.executor import ProcessExecutor, core_set

    cores = set(core_set())
    with ProcessExecutor(2) as workers:
        affinities = [r.value for r in workers.map(os.sched_getaffinity, [0, 0])]
        flags = [r.value for r in workers.map(os.getenv, ["XLA_FLAGS"] * 2)]
        pools = [r.value for r in workers.map(_threadpools, [0, 0])]
        computing = [r.value for r in workers.map(_computing_threads, [0, 0])]
    assert all(a == cores for a in affinities)  # free to move off a busy core
    assert all("--xla_cpu_multi_thread_eigen=false" in f for f in flags)
    assert all(lib["num_threads"] == 1 for libs in pools for lib in libs)
    # XLA's own intra-op pool and dispatch thread too: one thread computes (it was 4-5)
    assert computing == [(1, False), (1, False)]


# ------------------------------------------------ JAX's persistent compilation cache
SEARCH_PROBE = ("import json, sinkproof as sp\n"
                "r = sp.search(sp.TriggerTask(p=1, T=3), 'relu', heads=1, restarts=1, "
                "maxiter=5, processes=1, progress=False)\n"
                "print(json.dumps([r.error, r.bos_mass, r.model.A.tolist(), r.model.U.tolist()]))")


def _run(code: str, env: dict[str, str]) -> str:
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=300, cwd=os.path.dirname(os.path.dirname(__file__)))
    assert out.returncode == 0, out.stderr
    return out.stdout.strip().splitlines()[-1]


def test_the_compilation_cache_variable_names_a_folder_or_turns_the_cache_off(tmp_path):
    from sinkproof.autodiff import CACHE_VARIABLE, compilation_cache_dir

    for off in ({}, {CACHE_VARIABLE: ""}, {CACHE_VARIABLE: "0"}, {CACHE_VARIABLE: "off"},
                {CACHE_VARIABLE: " OFF "}):
        assert compilation_cache_dir(off) is None
    assert compilation_cache_dir({CACHE_VARIABLE: "1", "XDG_CACHE_HOME": str(tmp_path)}) == \
        tmp_path / "sinkproof" / "jax"
    assert compilation_cache_dir({CACHE_VARIABLE: "on"}).parts[-3:] == \
        (".cache", "sinkproof", "jax")
    assert compilation_cache_dir({CACHE_VARIABLE: str(tmp_path / "c")}) == tmp_path / "c"
    assert os.environ.get(CACHE_VARIABLE) is None  # the tests run with it off (conftest)


def test_the_cache_is_off_by_default_and_the_users_jax_setting_wins(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "JAX_COMPILATION_CACHE_DIR"}
    probe = ("import jax, sinkproof.autodiff as ad\n"
             "print(ad.use_compilation_cache(), jax.config.jax_compilation_cache_dir)")
    assert _run(probe, env) == "None None"
    env.update(SINKPROOF_JAX_CACHE=str(tmp_path / "ours"),
               JAX_COMPILATION_CACHE_DIR=str(tmp_path / "theirs"))
    assert _run(probe, env) == f"None {tmp_path / 'theirs'}"
    assert not (tmp_path / "ours").exists()


@pytest.mark.slow  # a fresh interpreter that imports JAX and searches (~5 s)
def test_the_cache_writes_only_in_the_folder_it_is_told(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    env = {**os.environ, "HOME": str(home), "SINKPROOF_JAX_CACHE": str(tmp_path / "ours")}
    env.pop("XDG_CACHE_HOME", None)
    env.pop("JAX_COMPILATION_CACHE_DIR", None)
    _run(SEARCH_PROBE, env)
    assert list((tmp_path / "ours").glob("*-cache")), "no compiled program was cached"
    assert list(home.iterdir()) == []


@pytest.mark.slow  # three fresh interpreters that each import JAX and search (~10 s)
def test_a_cached_program_gives_the_same_search_result_as_a_fresh_compilation(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "JAX_COMPILATION_CACHE_DIR"}
    fresh = _run(SEARCH_PROBE, env)
    cached = {**env, "SINKPROOF_JAX_CACHE": str(tmp_path)}
    _run(SEARCH_PROBE, cached)  # compiles and fills the cache
    assert list(tmp_path.glob("*-cache"))
    assert _run(SEARCH_PROBE, cached) == fresh
