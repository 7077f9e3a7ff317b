"""One Family reader per setting: what a certificate's instance states, rebuilt exactly.

A Family is the checker's view of a task: its tokens (with their exact feature or token
vectors), its exact targets, its prefixes (counted in closed form before any is built)
and the token sets of its positions.  :mod:`.trigger` reads our setting (``TriggerTask``),
:mod:`.paper` the paper's (``PaperTask``); the proof rules take either.  This is the only
setting-specific code of the checker.
"""

from .paper import PaperFamily, read_paper
from .trigger import BOS, TRIGGER, Instance, read_instance, read_tokens

__all__ = ["BOS", "TRIGGER", "Instance", "PaperFamily", "read_instance", "read_paper",
           "read_tokens"]
