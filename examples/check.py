"""Claims checked end to end: one proved by a theorem, one refuted by a verified witness.

Run: python examples/check.py
"""

from pathlib import Path

import sinkproof as sp

CLAIMS = Path(__file__).resolve().parent / "claims"

# 1. A claim file: every accurate one-head softmax model with fixed values sinks on
#    homogeneous sequences.  Theorem 1 covers the class, so the checker proves it.
proved = sp.check(CLAIMS / "fixed_values_homogeneous.toml", search=False)
print(proved.render(), "\n")

# 2. The same question for ReLU attention, as data: "every accurate ReLU head puts
#    BOS share >= 0.5 somewhere".  No theorem proves it; Theorem 4's construction is a
#    witness, re-evaluated in high precision before the claim is called refuted.
claim = {
    "title": "one ReLU head, fixed values: some non-trigger position sinks",
    "task": {"p": 2, "T": 3},
    "model": {"kind": "relu", "heads": 1, "values": "fixed"},
    "hypothesis": {"max_error": 0.01, "family": "S_T"},
    "conclusion": {"min_bos_mass": 0.5, "at": "nontrigger", "positions": "some"},
}
refuted = sp.check(claim, witness="relu_witness.json", budget=10)
print(refuted.render())

# Anyone can re-check the saved witness without trusting the search or the checker run above:
verdict = sp.checker.verify_file("relu_witness.json")  # = `sinkproof verify relu_witness.json`
print(f"\nrelu_witness.json: {'VERIFIED' if verdict.ok else 'FAILED'} ({verdict.kind})")
