"""How long Ctrl-C takes to stop a command: each case is started as a subprocess (its own
process group, as a terminal runs it), sent SIGINT after each delay of ``--delays``, and
timed from the signal to its exit.

Every case that writes a file passes ``--force``: the runs of one case share a folder and a
later run overwrites what an earlier one wrote. CLI cases run the ``sinkproof`` console
script (the entry point ``[project.scripts]`` of pyproject.toml names, called as the script
pip writes calls it; ``--entry module``: ``python -m sinkproof``) and count the delay from
the start. Block cases (``block-*``) run this script itself on the largest sink-map block
(p=3, T=6, the 14,256-prefix block of the first query token, near the 20,000 most a map
builds): it builds the block, prints ``READY`` just before one solve (the direct Clarabel
route, the SCS fallback through CVXPY, or the ray program), and the delay counts from
``READY``, so a short delay lands in the solver's set-up. A case of :data:`PREPARE` first
makes its input (``verify``: a sink-map certificate) and is timed on it. ``--root DIR``
measures another checkout (e.g. the code before a change).

Prints one line per run (``case delay: latency, exit status, marker``) and, per case,
``LATENCY <case>: max <x> s over <n> runs (exit 130: <k>/<n>)``. A run that finished before
its signal is reported and left out of the maximum (the delay was too long for it).

Usage: python benchmarks/bench_ctrl_c.py [--cases block-direct,check-bnb] [--delays 0.05,1]
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples" / "claims"
SWEEPS = ROOT / "examples" / "sweeps"

CASES: dict[str, list[str]] = {
    # largest sink-map programs: full blocks (up to 20,000 cone constraints each)
    "sinkmap-full": ["sinkmap", "--p", "3", "--T", "6", "--eps", "1/10", "--subfamily", "full",
                     "--max-work", "100000000"],
    "sinkmap-auto": ["sinkmap", "--p", "2", "--T", "8", "--eps", "1/10"],
    # the branch-and-bound engine inside check (one learned-value head)
    "check-bnb": ["check", str(EXAMPLES / "learned_values_homogeneous.toml"), "--no-search",
                  "--budget", "60", "--force"],
    # several fixed-value heads (prove_heads)
    "check-heads": ["check", str(EXAMPLES / "two_heads_fixed_before_trigger.toml"), "--no-search",
                    "--budget", "60", "--force"],
    "variants": ["variants", "--trained"],
    # the paper's training protocol (JAX compile, then the compiled loop)
    "paper-quick": ["paper", "--quick", "--no-figures", "--out", "paper-quick", "--force"],
    # the other long commands: every one answers Ctrl-C within a second
    "report": ["report", "--p", "3", "--T", "7", "--max-work", "10000000"],
    "certify": ["certify", "--p", "3", "--T", "6", "--eps", "1/10", "--out", "cert.json",
                "--max-work", "100000000", "--force"],
    "check-search": ["check", str(EXAMPLES / "learned_values_homogeneous.toml"),
                     "--budget", "60", "--force"],
    "experiment": ["experiment", "--quick", "--no-figures", "--out", "experiment-quick",
                   "--force"],
    "sweep": ["sweep", str(SWEEPS / "train.toml"), "--out", "sweep-train", "--no-figures",
              "--executor", "processes", "--workers", "2"],
    # the trusted checker on a 13 MB sink-map certificate (about 4 s to verify)
    "verify": ["verify", "verify-sinkmap.json"],
}
PREPARE: dict[str, list[str]] = {
    "verify": ["sinkmap", "--p", "2", "--T", "7", "--eps", "1/10", "--out",
               "verify-sinkmap.json", "-q"],
}
"""What a case needs made first (run to completion once, in the same folder)."""
BLOCKS = ("block-direct", "block-scs", "block-ray")


def block_target(case: str) -> None:
    """Solve the largest block once as ``case`` says; Ctrl-C exits 130 as the CLI does."""
    from sinkproof import interrupts
    from sinkproof.sinkmap.blocks import build_block
    from sinkproof.sinkmap.core import _Planner, known_values
    from sinkproof.sinkmap.solve import BlockSolver
    from sinkproof.task import TriggerTask

    task = TriggerTask(p=3, T=6)
    V = task.token_table @ known_values(task, "fixed").U.T
    planner = _Planner(task, V, 0.1, "full", 0, None, "CLARABEL")
    block = build_block(task, V, 0, task.T, planner.full_prefixes(0, task.T, True), 0.1)
    solver = BlockSolver(block)
    target = block.indicator(tuple(int(c) for c in block.prefixes[0]))
    with interrupts.handled():
        try:
            print("READY", block.m, flush=True)
            if case == "block-direct":
                solver.solve(target)
            elif case == "block-scs":
                solver._run("SCS", target, 1e-7)
            else:
                solver.ray(target)
            print("finished", flush=True)
        except KeyboardInterrupt:
            print("interrupted", flush=True)
            os._exit(130)
        os._exit(0)  # a signal after the solve finds no handler left to raise


def script_argv(root: Path) -> list[str]:
    """The console script of ``root``'s pyproject.toml as pip's wrapper runs it."""
    scripts = tomllib.loads((root / "pyproject.toml").read_text())["project"]["scripts"]
    module, func = scripts["sinkproof"].split(":")
    return ["-c", f"import sys; from {module} import {func}; sys.argv[0] = 'sinkproof'; "
                  f"sys.exit({func}())"]


def cli_argv(root: Path, entry: str) -> list[str]:
    """Python's arguments that run ``root``'s CLI as ``entry`` says (script or module)."""
    return script_argv(root) if entry == "script" else ["-m", "sinkproof"]


def measure(case: str, delay: float, cwd: str, root: Path,
            entry: str = "script") -> tuple[float | None, int, str]:
    """(seconds from SIGINT to exit, or None when it finished first; exit status; marker)."""
    env = {**os.environ, "PYTHONPATH": str(root)}
    cli = cli_argv(root, entry)
    argv = ([str(Path(__file__).resolve()), "--target", case] if case in BLOCKS
            else [*cli, *CASES[case]])
    proc = subprocess.Popen([sys.executable, *argv], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env, cwd=cwd,
                            start_new_session=True)
    if case in BLOCKS:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("READY"), line
    time.sleep(delay)
    if proc.poll() is not None:
        out, err = proc.communicate()
        return None, proc.returncode, ""
    sent = time.perf_counter()
    os.killpg(proc.pid, signal.SIGINT)
    out, err = proc.communicate(timeout=600)
    latency = time.perf_counter() - sent
    marker = "interrupted" if "interrupted" in (out + err).lower() else (
        f"NO MARKER: {(out + err).strip().splitlines()[-1:]}")
    if "Traceback" in err:
        marker += ", TRACEBACK"
    return latency, proc.returncode, marker


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", default=",".join(BLOCKS + tuple(CASES)))
    parser.add_argument("--delays", default="0.05,0.3,1,2")
    parser.add_argument("--root", type=Path, default=ROOT)
    parser.add_argument("--entry", choices=("script", "module"), default="script",
                        help="run CLI cases as the console script (default) or python -m")
    parser.add_argument("--target", choices=BLOCKS, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.target is not None:
        block_target(args.target)
        return
    delays = [float(d) for d in args.delays.split(",")]
    with tempfile.TemporaryDirectory() as cwd:
        for name in args.cases.split(","):
            if name in PREPARE:
                cli = cli_argv(args.root.resolve(), args.entry)
                subprocess.run([sys.executable, *cli, *PREPARE[name]], cwd=cwd, check=True,
                               env={**os.environ, "PYTHONPATH": str(args.root.resolve())})
            got: list[tuple[float, int]] = []
            for delay in delays:
                latency, rc, marker = measure(name, delay, cwd, args.root.resolve(), args.entry)
                if latency is None:
                    print(f"{name} {delay:g}s: finished before the signal (exit {rc})",
                          flush=True)
                    continue
                got.append((latency, rc))
                print(f"{name} {delay:g}s: {latency:.2f} s, exit {rc}, {marker}", flush=True)
            if got:
                worst = max(lat for lat, _ in got)
                ok = sum(rc == 130 for _, rc in got)
                print(f"LATENCY {name}: max {worst:.2f} s over {len(got)} runs "
                      f"(exit 130: {ok}/{len(got)})", flush=True)


if __name__ == "__main__":
    main()
