"""The paper-setting claim the claim tests vary: one softmax head, n = 4, L = 5, content
{-1, 1}, conclusion BOS mass >= 1/2; a test overrides any section's fields."""

from __future__ import annotations


def paper_claim_data(max_error: str, **parts: dict) -> dict:
    """The claim's dict with ``parts`` merged into its sections (a section's fields replace
    the defaults' fields of the same name)."""
    d = {"task": {"setting": "paper", "n": 4, "L": 5, "content": [[-1.0], [1.0]]},
         "model": {"kind": "softmax"}, "hypothesis": {"max_error": max_error},
         "conclusion": {"min_bos_mass": "1/2"}}
    for k, v in parts.items():
        d[k] = {**d.get(k, {}), **v}
    return d
