"""Read-only alias of the ``bnb-heads`` rule, now in :mod:`.tree` (for importers outside the
kernel that still name this module)."""

from .tree import HEADS_KIND as KIND
from .tree import HeadsInstance as Instance
from .tree import check_step, step_terms
from .tree import verify_heads as verify

__all__ = ["KIND", "Instance", "check_step", "step_terms", "verify"]
