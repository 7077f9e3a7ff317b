"""Counterexample search: a sink-free ReLU head is found and verified; a softmax one is not.

Run: python examples/search.py   (about 10 s; writes relu_found.json)
"""

import sinkproof as sp
from sinkproof import theorems

task = sp.TriggerTask(p=2, T=3)
target = dict(max_error=0.05, where="nontrigger", restarts=2, seed=0, budget=6, processes=1)

# ReLU, values fixed to the content vectors: search from random starts (it does not know
# Theorem 4).  `found` is set only after the trusted checker re-ran the witness exactly.
relu = sp.search(task, kind="relu", values="fixed", max_bos_mass=0.05, **target)
print(relu)
if relu.found:
    print(f"  saved to {relu.save('relu_found.json')}: check it with `sinkproof verify`")
    largest = sp.evaluate(relu.model).bos_nontrigger.max[0]
    print(f"  largest BOS weight of the found head at a non-trigger position: {largest:.3g}")

# Softmax, asked only for BOS mass <= 0.5: the search fails, and Theorem 1 says why: any
# one-head softmax model with fixed values and error <= 0.05 has BOS mass >= 0.95 on X^c_n.
soft = sp.search(task, kind="softmax", values="fixed", max_bos_mass=0.5, **target)
print(f"\n{soft}")
print("  best (error, BOS mass) trade-offs seen:",
      ", ".join(f"({e:.3f}, {b:.3f})" for e, b in sorted(
          {(round(p.error, 3), round(p.bos_mass, 3)) for p in soft.trace})[:5]))
bound = theorems.theorem(1).instantiate(task, eps="1/20", values="fixed")
print(f"  {bound.bound_at([0, 0], 2)}  (Theorem 1 at eps = 0.05)")
