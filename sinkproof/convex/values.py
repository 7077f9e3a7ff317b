"""Value vectors of a model class on a task, in floats and exactly, and the certificate instance.

``values`` is ``"fixed"`` (``U_fix``), a ``(p, p+3)`` value map ``U``, or a
single-head :class:`~sinkproof.model.AttentionModel` (its ``U``).  Token codes in
certificates follow ``sinkproof``: content ``0..k-1`` and ``-1`` (``TRIG``).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from .._validate import as_real_array
from ..certformat import TRIGGER, exact_values, format_rational
from ..exact_numbers import bounded
from ..model import AttentionModel, fixed_values
from ..task import TriggerTask
from ..tasks.protocol import require
from .rational import exact_vector


@dataclass(frozen=True)
class ValueTable:
    """``v_x`` for content codes ``0..k-1`` and ``TRIGGER``, and ``v_b``; float and exact."""

    task: TriggerTask
    U: np.ndarray
    fixed: bool
    floats: dict[int, np.ndarray]
    exact: dict[int, list[Fraction]]
    bos: np.ndarray
    bos_exact: list[Fraction]

    @property
    def factor(self) -> int:
        """Theorem 3's factor: ``α_0 >= 1 - factor·ε/d`` (1 when ``v_b = 0``, else 2)."""
        return 1 if all(x == 0 for x in self.bos_exact) else 2

    def instance(self, eps: Fraction) -> dict[str, Any]:
        """The certificate's ``instance`` object (task, content vectors, values, ε)."""
        out: dict[str, Any] = {"task": self.task.describe()}
        if self.task.content_scheme != "signed":
            out["content_vectors"] = [[format_rational(x) for x in exact_vector(c)]
                                      for c in self.task.content]
        out["values"] = "fixed" if self.fixed else {
            "U": [[format_rational(x) for x in exact_vector(row)] for row in self.U]}
        out["eps"] = format_rational(eps)
        return out


def value_table(task: TriggerTask, values: Any = "fixed") -> ValueTable:
    """The value vectors of ``values`` (``"fixed"``, a ``U`` or a one-head model) on ``task``."""
    require(task, "has_positions", "a value table (U_fix, or U on the token rows)")
    if isinstance(values, AttentionModel):
        if values.H != 1:
            raise ValueError(f"Theorem 3 is about one head; the model has H={values.H}")
        if values.task != task:
            raise ValueError("the model belongs to a different task")
        U = np.array(values.U[0])
    elif isinstance(values, str):
        if values != "fixed":
            raise ValueError(f"values must be 'fixed', a (p, p+3) array U or a model, "
                             f"got {values!r}")
        U = fixed_values(task.p)
    else:
        U = as_real_array("U", values, ndim=2)
        if U.shape != (task.p, task.p + 3):
            raise ValueError(f"U must have shape ({task.p}, {task.p + 3}), got {U.shape}")
    fixed = bool(np.array_equal(U, fixed_values(task.p)))
    table = task.token_table @ U.T  # (k+2, p): content..., TRIG, BOS
    floats = {i: table[i] for i in range(task.k)}
    floats[TRIGGER] = table[task.trig_code]
    U.setflags(write=False)
    content = [exact_vector(c) for c in task.content]
    values, bos = exact_values(content, None if fixed else [exact_vector(row) for row in U])
    return ValueTable(task, U, fixed, floats, values, table[task.bos_code], bos)


def check_eps(eps: Any) -> Fraction:
    """ε as an exact rational ``>= 0``: a Fraction, Decimal, int, a string ``"1/100"`` or
    ``"1e-400"``, or a float read as the shortest decimal that prints as it (``0.01`` ->
    ``1/100``); see :func:`sinkproof.exact_numbers.exact`.  ``ε >= 1`` is allowed here (the
    bounds are then vacuous, and say so); claims and the CLI refuse it."""
    return bounded(eps, "eps", 0)
