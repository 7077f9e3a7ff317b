"""One Family reader per setting (the checker's only setting-specific code): a task's tokens,
exact targets, prefixes (counted in closed form first) and token sets, rebuilt from a
certificate's instance; :mod:`.trigger` reads ``TriggerTask``, :mod:`.paper` ``PaperTask``."""

from .paper import PaperFamily, read_paper
from .trigger import BOS, TRIGGER, Instance, read_instance, read_tokens

__all__ = ["BOS", "TRIGGER", "Instance", "PaperFamily", "read_instance", "read_paper",
           "read_tokens"]
