"""Benchmark: how fast ``sinkproof verify`` refuses oversized input, and how the witness
checker's work estimate compares with its running time.

1. Refusal time of one crafted file per limit (file size, depth, number length, content,
   prefixes, work, situations, common denominator): each must be refused well under a
   second.
2. Witness checks of random one-head models: estimated work units, seconds, units per
   second (the default ``work`` limit divided by the slowest rate is the longest a
   check the defaults admit should take on this machine).

Run: python benchmarks/bench_checker_limits.py
"""

from __future__ import annotations

import json
import random
import tempfile
import time
from pathlib import Path

import numpy as np

import sinkproof as sp
from sinkproof import checker
from sinkproof.checker.limits import DEFAULT, LimitExceeded
from sinkproof.checker.rules.witness import count_prefixes, estimate_work, read_witness
from sinkproof.convex import family_certificate
from sinkproof.errors import CertificateError
from sinkproof.search.verify import witness_document


def crafted(folder: Path) -> dict[str, Path]:
    family = family_certificate(sp.TriggerTask(p=2, T=3), "1/20").to_dict()
    witness = witness_document(sp.constructions.relu_solution(sp.TriggerTask(p=1, T=2)),
                               1e-3, 0.0, "all")
    files: dict[str, Path] = {}

    def write(name: str, text: str) -> None:
        files[name] = folder / f"{name}.json"
        files[name].write_text(text)

    big = folder / "file_bytes.json"
    with big.open("wb") as handle:
        handle.truncate(DEFAULT.file_bytes + 1)
    files["file_bytes"] = big
    write("depth", "[" * 100_000 + "]" * 100_000)
    write("digits", json.dumps(family).replace('"version": 1', '"version": ' + "7" * 50_000))
    edited = json.loads(json.dumps(family))
    edited["instance"]["task"]["p"] = 10**9
    write("content", json.dumps(edited))
    edited = json.loads(json.dumps(witness))
    edited["instance"]["task"]["T"] = 10**12
    write("prefixes", json.dumps(edited))
    edited["instance"]["task"]["T"] = 40
    write("work", json.dumps(edited))
    edited = json.loads(json.dumps(family))
    edited["instance"]["task"].update(T=10**9, content="gaussian", k=40, seed=0)
    edited["instance"]["content_vectors"] = [["1", "0"]] * 40
    write("situations", json.dumps(edited))
    rng = random.Random(0)
    edited = json.loads(json.dumps(witness))
    edited["data"]["A"] = [[[f"1/{10**600 + 2 * rng.getrandbits(1900) + 1}" for _ in row]
                            for row in a] for a in edited["data"]["A"]]
    write("denominator_digits", json.dumps(edited))
    return files


def bench_refusals() -> None:
    print("limit              refused in   message")
    with tempfile.TemporaryDirectory() as tmp:
        for name, path in crafted(Path(tmp)).items():
            start = time.perf_counter()
            try:
                limits = DEFAULT.replace(prefixes=10**15) if name == "work" else DEFAULT
                checker.verify_file(path, limits)
                message = "NOT REFUSED"
            except LimitExceeded as exc:
                message = str(exc)
            except CertificateError as exc:
                message = f"(other) {exc}"
            print(f"{name:<18} {time.perf_counter() - start:9.4f} s   {message}")


def bench_witness_rates() -> None:
    print("\nkind     p  T  prefixes   work units   seconds   units/s")
    rng = np.random.default_rng(0)
    for kind, p, T in [("relu", 2, 5), ("relu", 1, 10), ("softmax", 2, 4), ("softmax", 1, 8)]:
        task = sp.TriggerTask(p=p, T=T)
        model = sp.AttentionModel(task, kind, 0.3 * rng.standard_normal((task.D, task.D)))
        doc = witness_document(model, 10.0, 1.0, "all")
        w = read_witness(doc)
        n = count_prefixes(w.inst)
        work = estimate_work(w.inst, task.D, 1, kind, n, w.digits)
        start = time.perf_counter()
        checker.verify(doc)
        seconds = time.perf_counter() - start
        print(f"{kind:<8} {p}  {T:<2} {n:>8} {work:>12} {seconds:9.2f} {work / seconds:9.0f}")
    print(f"default work limit: {DEFAULT.work}")


if __name__ == "__main__":
    bench_refusals()
    bench_witness_rates()
