"""How small can the error of a sink-free residual 2-layer model (one softmax head per
layer) go?  The stack search (:func:`sinkproof.search.engine.search_stack`) aims at
decreasing error levels with the BOS weight held below ``--bos`` at every non-trigger
position of both layers, on the paper's task ``n = 4, L = 5`` with content ``{-1, 0, 1}``;
restart 0 starts from the stored sink-free witness
(``examples/claims/paper_p2_two_layers_five.witness.json``), the others at random.  Each
best model is written as a ``paper-witness`` and verified by the trusted checker, so every
"achieved" figure is an exact upper bound on the least error of the class on that family.
Nothing here bounds the error from below.

    python benchmarks/residual_floor.py --aims 0.01 0.005 0.002 --restarts 3 --steps 3000
"""

from __future__ import annotations

import argparse
import json
import time
from fractions import Fraction

import numpy as np

import sinkproof as sp
from sinkproof.checker import load
from sinkproof.search.engine import search_stack
from sinkproof.stack import paper_model
from sinkproof.stackwitness import stack_witness

WITNESS = "examples/claims/paper_p2_two_layers_five.witness.json"


def stored_weights() -> dict[str, np.ndarray]:
    data = load(WITNESS)["data"]
    as_float = np.vectorize(lambda q: float(Fraction(q)))
    return {k: as_float(np.array(data[k], dtype=object)) for k in ("W_Q", "W_K", "W_V", "W_O")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--aims", nargs="*", type=float, default=[0.01, 0.005, 0.002])
    parser.add_argument("--bos", type=float, default=0.5)
    parser.add_argument("--restarts", type=int, default=3)
    parser.add_argument("--steps", type=int, default=3000)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--json", default=None)
    parser.add_argument("--witness-out", default=None,
                        help="save the most accurate verified witness here (sinkproof verify FILE)")
    args = parser.parse_args()
    task = sp.PaperTask(n=4, L=5, content=[[-1.0], [0.0], [1.0]], residual=True)
    init = stored_weights()
    rows = []
    print("| aimed error | best error (verified) | largest BOS weight, non-trigger | restarts "
          "| seconds |")
    print("|---|---|---|---|---|")
    for aim in args.aims:
        t0 = time.perf_counter()
        res = search_stack(task, "softmax", 2, 1, max_error=aim, max_bos_mass=args.bos,
                           restarts=args.restarts, steps=args.steps, lr=args.lr,
                           budget=1e9, init=init)
        p = res.params
        model = paper_model(task, "softmax", W_Q=p["wq"], W_K=p["wk"], W_V=p["wv"],
                            W_O=p["wo"], residual=True)
        level = Fraction(float(res.error)).limit_denominator(10**9) * (1 + Fraction(1, 10**6))
        w = stack_witness(model, level)
        rows.append(dict(aim=aim, error=w.error, bos=w.bos, verified=w.verdict.ok,
                         level=str(level), seconds=round(time.perf_counter() - t0, 1)))
        print(f"| {aim} | {w.error:.5f} ({'verified' if w.verdict.ok else 'REJECTED'}) | "
              f"{w.bos:.4f} | {res.restarts} | {rows[-1]['seconds']} |", flush=True)
        init = {"W_Q": p["wq"], "W_K": p["wk"], "W_V": p["wv"], "W_O": p["wo"]}
        if args.witness_out and w.verdict.ok and w.error <= min(r["error"] for r in rows):
            w.save(args.witness_out)  # the most accurate verified model so far
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(rows, fh, indent=1)


if __name__ == "__main__":
    main()
