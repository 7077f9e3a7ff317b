"""High-precision (mpmath) evaluation of a model at chosen prefixes.

Used to confirm a refutation: the witness's error on the hypothesis family and its
BOS mass at the violated positions are recomputed from the exact binary values of
its float parameters, with every feature taken as an exact rational, at
``DIGITS`` significant digits.  Float64 only proposes; this decides.

Every attention map is evaluated from its definition by the map's own mpmath form
(:func:`mp_weights`); a gated head's output is scaled by its gate ``σ(w·φ_t + c)``.  The
BOS figure is the mass ``α_0`` on the simplex and the share ``α_0 / Σ_j α_j`` off it, as
claims measure it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import mpmath

from ..attention import MAPS, get_map
from ..model import AttentionModel
from ..symbolic.exact import distinct_prefixes
from ..task import TriggerTask

DIGITS = 50


@dataclass(frozen=True)
class PreciseAt:
    """The model at the last position of one prefix: error and BOS mass per head."""

    codes: tuple[int, ...]
    error: mpmath.mpf
    bos: tuple[mpmath.mpf, ...]


def mp_weights(kind: str, s: list[mpmath.mpf], t: int, params: list[mpmath.mpf]
               ) -> list[mpmath.mpf]:
    """The weights ``α_0..α_t`` of map ``kind`` at scores ``s`` (before any gate), in mpmath:
    the map's own high-precision form (:meth:`sinkproof.attention.AttentionMap.weights_mpmath`)."""
    return get_map(kind).weights_mpmath(s, t, params)


def _rows(task: TriggerTask) -> list[list[mpmath.mpf]]:
    """Exact feature rows ``φ(a, t)`` ordered (code, position)."""
    rows = []
    for a in range(task.n_tokens):
        tok = task.token_features_exact(a)
        for t in range(task.T + 1):
            rows.append([mpmath.mpf(x.numerator) / x.denominator
                         for x in (*tok, *task.position_features_exact(t))])
    return rows


class PreciseModel:
    """A model's score table and values in mpmath at :data:`DIGITS` digits."""

    def __init__(self, model: AttentionModel) -> None:
        self.model = model
        task = model.task
        self.task = task
        with mpmath.workdps(DIGITS):
            phi = mpmath.matrix(_rows(task))
            self.scores = []
            for A in model.A:
                S = phi * mpmath.matrix(A.tolist()) * phi.T  # exact float entries
                self.scores.append(S)
            tok = mpmath.matrix([[mpmath.mpf(x.numerator) / x.denominator
                                  for x in task.token_features_exact(a)]
                                 for a in range(task.n_tokens)])
            self.values = [tok * mpmath.matrix(U.T.tolist()) for U in model.U]  # (k+2, p)
            ctab = task.content_table
            self.content = [[mpmath.mpf(float(v)) for v in row] for row in ctab]
            self.params = [[mpmath.mpf(float(x)) for x in row] for row in model.map_params]
            self.gates = None
            if model.gate_w is not None:
                gw = mpmath.matrix(model.gate_w.tolist())
                z = phi * gw.T  # (rows, H)
                self.gates = [[1 / (1 + mpmath.exp(-(z[r, h] + mpmath.mpf(float(c)))))
                               for h, c in enumerate(model.gate_c)] for r in range(phi.rows)]
            self.on_simplex = MAPS[model.kind].properties.on_simplex

    def _row(self, code: int, t: int) -> int:
        return code * (self.task.T + 1) + t

    def at(self, codes: tuple[int, ...]) -> PreciseAt:
        """Error and BOS masses at the last position of the prefix ``codes`` (t >= 0)."""
        task, t = self.task, len(codes)
        keys = (task.bos_code, *codes)
        with mpmath.workdps(DIGITS):
            out = [mpmath.mpf(0)] * task.p
            bos = []
            for h, (S, V) in enumerate(zip(self.scores, self.values)):
                q = self._row(keys[-1], t)
                s = [S[q, self._row(b, j)] for j, b in enumerate(keys)]
                if self.model.kind == "softmax":
                    m = max(s)
                    e = [mpmath.exp(x - m) for x in s]
                    z = mpmath.fsum(e)
                    w = [x / z for x in e]
                    bos.append(1 / (1 + mpmath.fsum(mpmath.exp(x - s[0]) for x in s[1:])))
                else:
                    w = mp_weights(self.model.kind, s, t, self.params[h])
                    total = mpmath.fsum(w)
                    if self.on_simplex:
                        bos.append(w[0])
                    else:
                        bos.append(w[0] / total if total > 0 else mpmath.mpf(0))
                    if self.gates is not None:
                        w = [x * self.gates[q][h] for x in w]
                for i in range(task.p):
                    out[i] += mpmath.fsum(w[j] * V[b, i] for j, b in enumerate(keys))
            target = [mpmath.mpf(0)] * task.p
            if t >= 2 and keys[-1] == task.trig_code:
                target = [mpmath.fsum(self.content[c][i] for c in codes[:-1]) / (t - 1)
                          for i in range(task.p)]
            err = mpmath.sqrt(mpmath.fsum((o - y) ** 2 for o, y in zip(out, target)))
        return PreciseAt(tuple(codes), err, tuple(bos))


def family_prefixes(task: TriggerTask, sequences: list[tuple[int, ...]] | None
                    ) -> Iterator[tuple[int, ...]]:
    """Every distinct prefix (codes; the empty one first) of the family or of ``sequences``."""
    yield ()
    yield from distinct_prefixes(task, sequences)


def max_error(pm: PreciseModel, sequences: list[tuple[int, ...]] | None
              ) -> tuple[mpmath.mpf, tuple[int, ...]]:
    """The sup error over the family (``None``: all of ``S_T``) and a prefix where it occurs."""
    worst, where = mpmath.mpf(-1), ()
    for codes in family_prefixes(pm.task, sequences):
        e = pm.at(codes).error
        if e > worst:
            worst, where = e, codes
    return worst, where
