"""Which claims every route reads by (query, multiset) class instead of by prefix.

Without positional encoding a head's output at a prefix's last position depends only on
the query token and the multiset of visible tokens, and so does the prefix's target: the
family's constraints are one per class.  For the claims :func:`reads_by_class` names, the
check counts its work in classes (closed form, before anything is listed), the engine
proves from one representative per class, and the search, whose witness is verified at
every prefix, is skipped.
"""

from __future__ import annotations

from .schema import Claim


def reads_by_class(claim: Claim) -> bool:
    """Whether every route of the claim reads its family by (query, multiset) class: a
    finite task without positional features whose prefixes exceed ``max_work`` (below it
    the engine's token-pair relaxation lists every prefix), one layer of one softmax head
    (learned values; ``U_fix`` is a subset), the error hypothesis on the whole family, a
    numeric bound at one named prefix or at every non-trigger position.  The engine then
    runs :func:`sinkproof.reduced.prove_subfamily` (one representative prefix per class:
    the whole family's program, by the multiset lemma) and the search, which verifies a
    witness at every prefix, is skipped (:func:`sinkproof.claims.check._refute_stack`)."""
    mc, task, con = claim.model_class, claim.task, claim.conclusion
    cap = claim.options.max_work
    return (not task.has_positions and task.finite
            and (mc.kind, mc.heads, mc.layers) == ("softmax", 1, 1)
            and con.theorem is None and claim.hypothesis.family == "S_T"
            and (con.at.name == "prefix"
                 or (con.at.name == "nontrigger" and con.positions == "every"))
            and task.n_prefixes_at_most(cap) > cap)
