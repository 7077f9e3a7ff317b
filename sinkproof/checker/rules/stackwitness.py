"""Read-only alias of the ``paper-witness`` rule, now in :mod:`.witness` (for importers outside
the kernel that still name this module)."""

from ..family.paper import n_prefixes
from .witness import KIND, PaperWitness
from .witness import measure_stack as measure
from .witness import read_stack_witness as read_witness
from .witness import verify_stack as verify

__all__ = ["KIND", "PaperWitness", "measure", "n_prefixes", "read_witness", "verify"]
