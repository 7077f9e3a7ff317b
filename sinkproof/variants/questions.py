"""The four questions of the variants table (a light module: the CLI's choices)."""

from __future__ import annotations

QUESTIONS = ("bos_sink_necessary", "null_sink_necessary", "exact_solution_at_finite_norm",
             "norm_grows_as_error_shrinks")
"""Question names, in table order."""
