"""The least BOS mass of a learned-value softmax head at the homogeneous positions of our
setting, from both sides: Theorem 8's exact bound (``π(1) = π(2)``: ``1 - ε/(‖c‖ - ε)``
at ``t = 1``, ``1 - 2ε/‖c‖`` from ``t = 2`` on) and the constrained optimiser's best model
(:func:`sinkproof.search.leastsink.least_sink`, SLSQP from the sink head at four logit
scales), verified by the trusted checker at its position (error ``<= ε`` on the whole
family, BOS weight there).  The least BOS mass of the class lies between the two columns.

    python benchmarks/homogeneous_gap.py --p 2 --T 3 --eps 1/20
"""

from __future__ import annotations

import argparse
import time
from fractions import Fraction

import sinkproof as sp
from sinkproof.search.leastsink import least_sink
from sinkproof.search.verify import verify_witness
from sinkproof.theorems import THEOREMS


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--p", type=int, default=2)
    parser.add_argument("--T", type=int, default=3)
    parser.add_argument("--eps", default="1/20")
    args = parser.parse_args()
    task, eps = sp.TriggerTask(p=args.p, T=args.T), Fraction(args.eps)
    bounds = THEOREMS["theorem8"].instantiate(task, eps)
    print(f"{task!r}, eps = {eps}, content c = code 0")
    print("| t | Theorem 8 (exact) | least_sink (verified) | its error | gap | seconds |")
    print("|---|---|---|---|---|---|")
    for t in range(1, task.T + 1):
        target = (0,) * t
        start = time.perf_counter()
        found = least_sink(task, float(eps), target)
        report = verify_witness(found.model(task), str(eps), found.bos * (1 + 1e-9),
                                where=[(target, t)])
        item = bounds.bound_at(target, t)
        seconds = time.perf_counter() - start
        shown = f"{found.bos:.9f}" if report.verified else "not verified"
        print(f"| {t} | {item.bound} = {item.value:.9f} | {shown} | {found.error:.8f} | "
              f"{found.bos - item.value:.1e} | {seconds:.1f} |")


if __name__ == "__main__":
    main()
