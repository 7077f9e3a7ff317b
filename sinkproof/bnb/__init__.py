"""A proof engine for one softmax head with learned values: relaxation, branch and bound,
certificates.

For each target prefix the engine bounds the least BOS mass any accurate model can have
there, over the logit-sharing variables (one per (query features, key features) class)
and one value vector per token kind, by a convex relaxation of the bilinear products over
boxes of values (:mod:`.primal`), refined by splitting the boxes (:mod:`.tree`).  Each
leaf of the final tree carries rational weak-duality multipliers (:mod:`.dual`), and the
whole tree is a ``bnb-learned-values`` certificate that the trusted checker re-derives
and verifies in exact arithmetic.  For ``H >= 2`` heads whose outputs add (fixed values
``U_fix``), :mod:`.multihead` proves sinks in every head by a chain of verified steps
(:mod:`.heads`), written as a ``bnb-heads`` certificate.

>>> import sinkproof as sp                                        # doctest: +SKIP
>>> from sinkproof.bnb import prove                               # doctest: +SKIP
>>> prove(sp.TriggerTask(p=2, T=3), eps="1/20", at="homogeneous",
...       min_bos_mass="1/2")                                     # doctest: +SKIP
BnbResult(proved >= 0.5: 12 targets, certified least BOS mass 0.818182, ...)
"""

from __future__ import annotations

from .api import prove
from .box import ValueBox
from .multihead import HeadsOutcome, HeadsResult, prove_heads
from .relaxation import Relaxation, build_relaxation
from .result import BnbResult, TargetOutcome
from .tree import TreeResult, branch_and_bound

__all__ = ["BnbResult", "HeadsOutcome", "HeadsResult", "Relaxation", "TargetOutcome",
           "TreeResult", "ValueBox", "branch_and_bound", "build_relaxation", "prove",
           "prove_heads"]
