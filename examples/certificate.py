"""Theorem 3 as a certificate: write it, re-check it exactly, and watch a tampered copy fail.

Run: python examples/certificate.py   (writes hull_family.json in the current folder)
"""

import copy
import json

import sinkproof as sp
from sinkproof import checker, convex
from sinkproof.constructions import softmax_solution

task = sp.TriggerTask(p=2, T=5)
eps = "1/100"

# Every single-head normalised-attention model with values U_fix and error <= eps
# must put BOS mass >= 1 - eps/d(S) at each non-trigger position whose token set is S.
cert = convex.family_certificate(task, eps=eps, values="fixed")
print(cert)
print("\nbounded situations (token set S so far, distance d(S) from 0 to the hull, bound):")
for name, d, bound in cert.table():
    if bound.startswith(">="):
        print(f"  {name:10} d = {d:9}  BOS mass {bound}")

path = cert.save("hull_family.json")
verdict = checker.verify_file(path)  # exact rationals only: no solver, no floats in the decision
print(f"\n{path}: {'VERIFIED' if verdict.ok else 'FAILED'} by the trusted checker")

# A tampered copy: claim a larger distance (hence a stronger bound) for one situation.
data = json.loads(path.read_text())
bad = copy.deepcopy(data)
situation = next(s for s in bad["data"]["situations"] if "d" in s)
situation["d"] = "3/4"
tampered = checker.verify(bad)
print(f"tampered copy (d raised to 3/4 for S={situation['tokens']}): "
      f"{'VERIFIED' if tampered.ok else 'REJECTED'}: {tampered.failure}")

# The bound against a model: Theorem 5's softmax head is accurate to eps, so it must obey
# the bound at every bounded position of every sequence.
model = softmax_solution(task, 8.0)
print(f"\nsoftmax construction L=8: error {sp.evaluate(model).max_error:.4f} <= {eps}")
margin, checked = float("inf"), 0
for seq in task.sequences():
    bos = model.bos_mass(seq)[0]
    for t in range(1, len(seq) + 1):
        bound = cert.bound_at(seq, t) if seq[t - 1] != sp.TRIG else None
        if bound is not None:
            margin, checked = min(margin, bos[t] - float(bound)), checked + 1
print(f"  at {checked} bounded positions its BOS mass exceeds the certified bound "
      f"by at least {margin:.6f}")

# The simplex constraint is the whole story: drop sum-to-one (ReLU) and BOS mass 0 is feasible.
print("\n" + repr(convex.simplex_pair_at(task, [0, 1, 1], 3, eps=eps)))
