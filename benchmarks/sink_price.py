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

``--backends cvxpy clarabel`` runs the engine with each program backend and keeps the
largest verified bound (each is a lower bound the checker verified); ``--relaxed`` adds
a third column, a point of the engine's own class (a free logit per token pair, a free
value per token: ``least_sink(..., relaxed=True)`` from the achieved head): no
certificate of that class can prove more than its BOS weight, so it splits the gap into
the engine's part (certified to relaxed) and the class's part (relaxed to achieved).

    python benchmarks/sink_price.py --figure docs/figures/sink_price.png
    python benchmarks/sink_price.py --eps 1/300 1/100 1/50 1/20 1/10 --nodes 40 400 \
        --backends cvxpy clarabel --relaxed --json docs/figures/sink_price_tight.json
"""

from __future__ import annotations

import argparse
import json
import time
from fractions import Fraction

import sinkproof as sp
from sinkproof.bnb.api import prove_paper
from sinkproof.checker import verify
from sinkproof.search.leastsink import least_sink, relaxed_start, sink_starts
from sinkproof.stackwitness import stack_witness

EPS = ("1/10000", "1/1000", "1/300", "1/100", "1/50", "1/20", "1/10")
"""From the most accurate to the least: each optimum is a feasible start for the next."""


def certify(task: sp.PaperTask, eps: str, nodes: list[int], backends: list[str]) -> tuple:
    """The largest verified engine bound over ``backends`` x ``nodes`` (``None``: none),
    the backend that gave it, and the nodes of its tree (a larger tree may end Open where
    a smaller one certified: each is tried)."""
    best = (None, None, 0)
    for backend in backends:
        kw = {} if backend == "default" else {"backend": backend}
        for n in nodes:
            proof = prove_paper(task, Fraction(eps), targets=[(0,)], max_nodes=n,
                                progress=False, **kw)
            if proof.bound is None or proof.certificate is None or not verify(
                    proof.certificate).ok:
                continue
            if best[0] is None or float(proof.bound) > best[0]:
                best = (float(proof.bound), backend, proof.nodes)
    return best


def point(task: sp.PaperTask, eps: str, nodes: list[int], warm: list,
          backends: list[str] = ("default",), relaxed: bool = False) -> dict:
    t0 = time.perf_counter()
    certified, backend, n_nodes = certify(task, eps, list(nodes), list(backends))
    t1 = time.perf_counter()
    found = least_sink(task, float(Fraction(eps)), (0,),
                       starts=sink_starts(task, float(Fraction(eps))) + warm)
    warm[:] = [(found.A, found.M)]
    witness = stack_witness(found.model(task), eps, at=(0,))
    t2 = time.perf_counter()
    achieved = float(Fraction(witness.document["claim"]["max_bos_mass"])) \
        if witness.verdict.ok else None
    out = dict(eps=eps, certified=certified, achieved=achieved,
               gap=None if certified is None or achieved is None else achieved - certified,
               nodes=n_nodes, backend=backend, certificate_verified=certified is not None,
               witness_verified=witness.verdict.ok, error=witness.error,
               seconds_bnb=round(t1 - t0, 1), seconds_search=round(t2 - t1, 1))
    if relaxed:
        rel = least_sink(task, float(Fraction(eps)), (0,), relaxed=True,
                         starts=[relaxed_start(task, found.A, found.M)])
        out["relaxed_class_point"] = rel.bos
        out["seconds_relaxed"] = round(time.perf_counter() - t2, 1)
    return out


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
    parser.add_argument("--nodes", type=int, nargs="*", default=[400],
                        help="tree sizes to try (the largest verified bound is kept)")
    parser.add_argument("--eps", nargs="*", default=list(EPS))
    parser.add_argument("--json", default=None)
    parser.add_argument("--figure", default=None)
    parser.add_argument("--backends", nargs="*", default=["default"],
                        help="engine program backends to try (default: the engine's own)")
    parser.add_argument("--relaxed", action="store_true",
                        help="add a point of the engine's relaxed class")
    args = parser.parse_args()
    task = sp.PaperTask(n=4, L=5, content=[[-1.0], [1.0]])
    rows: list[dict] = []
    warm: list = []
    rel_head = " relaxed-class point |" if args.relaxed else ""
    print(f"| ε | certified least BOS weight |{rel_head} achieved (verified witness) | gap | "
          "seconds (bnb, search) |")
    print("|---|---|" + ("---|" if args.relaxed else "") + "---|---|---|")
    for eps in args.eps:
        r = point(task, eps, args.nodes, warm, args.backends, args.relaxed)
        rows.append(r)
        gap = "—" if r["gap"] is None else f"{r['gap']:.2e}"
        cert = "none (engine: Open)" if r["certified"] is None else f"{r['certified']:.6f}"
        rel = f" {r['relaxed_class_point']:.6f} |" if args.relaxed else ""
        print(f"| {eps} | {cert} |{rel} {r['achieved']:.6f} | {gap} | "
              f"{r['seconds_bnb']}, {r['seconds_search']} |", flush=True)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(rows, fh, indent=1)
    if args.figure:
        figure(rows, args.figure)


if __name__ == "__main__":
    main()
