"""The sink-price curve: the least BOS weight of an accurate one-head model against ε,
certified from below and achieved from above, in the paper's setting.

Instance: ``n = 4, L = 5``, content ``{-1, 1}``, one softmax head with learned ``W_Q, W_K,
W_V, W_O``, error ``<= ε`` on all 48 sequences; the position is position 1 of
``(BOS, -1)``.  For each ε:

* **certified**: the branch-and-bound engine (``sinkproof.bnb.prove_paper``, no goal,
  ``--nodes`` nodes) bounds the BOS weight there from below; its certificate is verified by
  the trusted checker;
* **achieved**: :func:`sinkproof.search.leastsink.least_sink` minimises the BOS weight
  there over ε-accurate heads (SLSQP from the sink construction at several logit scales);
  the model is written as a ``paper-witness`` at that position and verified by the trusted
  checker (error ``<= ε`` on the whole family, BOS weight ``<= `` the stated value).

The true least BOS weight lies between the two columns.  Prints a Markdown table, writes
``--json`` and (with matplotlib, the ``plot`` extra) ``--figure``: ``1 - BOS`` (the most
non-BOS weight) against ε on log axes.

    python benchmarks/sink_price.py --figure docs/figures/sink_price.png
"""

from __future__ import annotations

import argparse
import json
import time
from fractions import Fraction

import sinkproof as sp
from sinkproof.bnb.api import prove_paper
from sinkproof.checker import verify
from sinkproof.search.leastsink import least_sink, sink_starts
from sinkproof.stackwitness import stack_witness

EPS = ("1/10000", "1/1000", "1/300", "1/100", "1/50", "1/20", "1/10")
"""From the most accurate to the least: each optimum is a feasible start for the next."""


def point(task: sp.PaperTask, eps: str, nodes: int, warm: list) -> dict:
    t0 = time.perf_counter()
    proof = prove_paper(task, Fraction(eps), targets=[(0,)], max_nodes=nodes, progress=False)
    cert_ok = proof.certificate is not None and verify(proof.certificate).ok
    t1 = time.perf_counter()
    found = least_sink(task, float(Fraction(eps)), (0,),
                       starts=sink_starts(task, float(Fraction(eps))) + warm)
    warm[:] = [(found.A, found.M)]
    witness = stack_witness(found.model(task), eps, at=(0,))
    t2 = time.perf_counter()
    certified = float(proof.bound) if proof.bound is not None and cert_ok else None
    achieved = float(Fraction(witness.document["claim"]["max_bos_mass"])) \
        if witness.verdict.ok else None
    return dict(eps=eps, certified=certified, achieved=achieved,
                gap=None if certified is None or achieved is None else achieved - certified,
                nodes=proof.nodes, certificate_verified=cert_ok,
                witness_verified=witness.verdict.ok, error=witness.error,
                seconds_bnb=round(t1 - t0, 1), seconds_search=round(t2 - t1, 1))


def figure(rows: list[dict], path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    eps = [float(Fraction(r["eps"])) for r in rows]
    fig, ax = plt.subplots(figsize=(5.2, 3.6))
    cert = [(e, 1 - r["certified"]) for e, r in zip(eps, rows) if r["certified"] is not None]
    ax.loglog(*zip(*cert), "o-", label="certified: most non-BOS weight (branch and bound)")
    ax.loglog(eps, [1 - r["achieved"] for r in rows], "s--",
              label="achieved: an ε-accurate head (verified witness)")
    ax.set_xlabel("ε (largest error on the family)")
    ax.set_ylabel("1 − BOS weight at position 1 of (BOS, −1)")
    ax.set_title("The price of accuracy in sink weight (n=4, L=5, {−1, 1})", fontsize=9)
    ax.legend(fontsize=7)
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=130)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--nodes", type=int, default=40)
    parser.add_argument("--eps", nargs="*", default=list(EPS))
    parser.add_argument("--json", default=None)
    parser.add_argument("--figure", default=None)
    args = parser.parse_args()
    task = sp.PaperTask(n=4, L=5, content=[[-1.0], [1.0]])
    rows: list[dict] = []
    warm: list = []
    print("| ε | certified least BOS weight | achieved (verified witness) | gap | "
          "seconds (bnb, search) |")
    print("|---|---|---|---|---|")
    for eps in args.eps:
        r = point(task, eps, args.nodes, warm)
        rows.append(r)
        gap = "—" if r["gap"] is None else f"{r['gap']:.2e}"
        cert = "none (engine: Open)" if r["certified"] is None else f"{r['certified']:.6f}"
        print(f"| {eps} | {cert} | {r['achieved']:.6f} | {gap} | "
              f"{r['seconds_bnb']}, {r['seconds_search']} |", flush=True)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(rows, fh, indent=1)
    if args.figure:
        figure(rows, args.figure)


if __name__ == "__main__":
    main()
