"""A proof engine for one softmax head with learned values: relaxation, branch and bound,
certificates.

For each target prefix the engine bounds the least BOS mass any accurate model can have
there, over the logit-sharing variables (one per (query features, key features) class)
and one value vector per token kind, by a convex relaxation of the bilinear products over
boxes of values (:mod:`.primal`, written straight into Clarabel's standard form by
:mod:`.conic`), refined by splitting the boxes (:mod:`.tree`).  Each leaf of the final
tree carries rational weak-duality multipliers (:mod:`.dual`, checked exactly by
:mod:`.exact`), and the whole tree is a ``bnb-learned-values`` certificate that the
trusted checker re-derives and verifies in exact arithmetic.  ``prove(...,
workers=N)`` grows the targets' trees in ``N`` processes.  For ``H >= 2`` heads whose
outputs add (fixed values ``U_fix``), :mod:`.multihead` proves sinks in every head by a
chain of verified steps (:mod:`.heads`), written as a ``bnb-heads`` certificate.  A task
without positional features (the paper's setting) runs through the same engine with
token-pair classes (:mod:`.relaxation`), written as a ``paper-bnb-learned-values`` certificate.

>>> import sinkproof as sp                                        # doctest: +SKIP
>>> from sinkproof.bnb import prove                               # doctest: +SKIP
>>> prove(sp.TriggerTask(p=2, T=3), eps="1/20", at="homogeneous",
...       min_bos_mass="1/2")                                     # doctest: +SKIP
BnbResult(proved >= 0.5: 12 targets, certified least BOS mass 0.818182, ...)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_dir, lazy_getattr

if TYPE_CHECKING:  # the names below, for type checkers and the API pages (not imported here)
    from .api import prove, prove_paper, restrict, restrict_paper
    from .box import ValueBox
    from .multihead import HeadsOutcome, HeadsResult, prove_heads
    from .relaxation import Relaxation, build_relaxation, family_prefixes, token_pair_classes
    from .result import BnbResult, TargetOutcome
    from .targets import nontrigger_targets
    from .tree import TreeResult, branch_and_bound

    paper_prefixes = family_prefixes
    paper_targets = nontrigger_targets
    paper_relaxation = build_relaxation
    paper_classes = token_pair_classes

# Every name loads its submodule on first use: a caller that needs the target prefixes
# (:mod:`.targets`) does not load the programs (SciPy, Clarabel).  The ``paper_*`` names
# are the paper setting's names for the same functions.
_LAZY: dict[str, str] = {
    "prove": "api", "prove_paper": "api", "restrict": "api", "restrict_paper": "api",
    "ValueBox": "box",
    "HeadsOutcome": "multihead", "HeadsResult": "multihead", "prove_heads": "multihead",
    "Relaxation": "relaxation", "build_relaxation": "relaxation",
    "family_prefixes": "relaxation", "token_pair_classes": "relaxation",
    "BnbResult": "result", "TargetOutcome": "result",
    "nontrigger_targets": "targets",
    "TreeResult": "tree", "branch_and_bound": "tree",
    "paper_prefixes": "relaxation:family_prefixes",
    "paper_targets": "targets:nontrigger_targets",
    "paper_relaxation": "relaxation:build_relaxation",
    "paper_classes": "relaxation:token_pair_classes",
}

__getattr__ = lazy_getattr(__name__, _LAZY, globals())

__dir__ = lazy_dir(globals())


__all__ = ["BnbResult", "HeadsOutcome", "HeadsResult", "Relaxation", "TargetOutcome",
           "TreeResult", "ValueBox", "branch_and_bound", "build_relaxation", "family_prefixes",
           "nontrigger_targets", "paper_classes", "paper_prefixes", "paper_relaxation",
           "paper_targets", "prove", "prove_heads", "prove_paper", "restrict",
           "restrict_paper", "token_pair_classes"]
