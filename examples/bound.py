"""The sink bounds instantiated with exact constants, held against the constructions.

Run: python examples/bound.py
"""

import math

import sinkproof as sp
from sinkproof import symbolic, theorems
from sinkproof.constructions import relu_solution, softmax_solution

task = sp.TriggerTask(p=2, T=6)
print(f"{task!r}\n")

# Theorem 5: a softmax head with ||A||_2 <= B has error >= eps_min(B) (a certified lower bound);
# Theorem 5's construction at the same norm shows how far from tight that bound is.
golden = (1 + math.sqrt(5)) / 2  # ||A||_2 of the construction is golden * L
print("Theorem 5 sandwich: softmax error at weight norm B")
print("(both fall exponentially in B; -ln(error)/B is the rate, and the rates differ)")
print(f"{'B':>6} {'eps_min(B) (bound)':>19} {'rate':>6} {'construction error':>19} {'rate':>6}")
for B in (2.0, 4.0, 8.0, 16.0, 32.0):
    lower = symbolic.eps_min(task, B)
    model = softmax_solution(task, B / golden)
    err = sp.evaluate(model).max_error
    print(f"{model.norm:6.2f} {lower:19.3e} {-math.log(lower) / B:6.3f} "
          f"{err:19.3e} {-math.log(err) / B:6.3f}")
relu = relu_solution(task)
print(f"ReLU (Theorem 4) reaches error {sp.evaluate(relu).max_error:.1e} at B = {relu.norm:g}\n")

# Theorem 1 at eps = 1/100 with fixed values: the BOS mass any accurate head must have
bound = theorems.theorem(1).instantiate(task, eps="1/100", values="fixed")
print(f"Theorem 1: {bound!r}")
for seq, t in (([0], 1), ([1, 1, 1], 3), ([2] * 6, 6)):
    print(f"  {bound.bound_at(seq, t)}")
for L in (4.0, 8.0, 16.0):
    model = softmax_solution(task, L)
    print(f"  softmax L={L:g} (error {sp.evaluate(model).max_error:.1e}): {bound.check(model)}")
