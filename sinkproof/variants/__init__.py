"""Attention variants: the four sink questions answered for every map, each answer checked.

- :func:`build_table` / :class:`VariantsTable`: the table (``sinkproof variants``);
- :func:`construction` / :func:`verify_construction`: one head per map, verified exactly or
  with outward intervals on the whole family;
- :func:`norm_lower_bound`: the certified norm price of the maps that cannot reach zero error.
"""

from __future__ import annotations

from .constructions import Construction, construction
from .normprice import NORM_PRICE_MAPS, norm_lower_bound
from .table import QUESTIONS, Cell, VariantsTable, build_table, default_task
from .verify import ConstructionCheck, verify_construction

__all__ = ["NORM_PRICE_MAPS", "QUESTIONS", "Cell", "Construction", "ConstructionCheck",
           "VariantsTable", "build_table", "construction", "default_task", "norm_lower_bound",
           "verify_construction"]
