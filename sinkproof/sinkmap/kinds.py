"""Which sink measure a sink map bounds for each attention map, and by which argument.

Read off the map's properties (:class:`sinkproof.attention.MapProperties`), never its name:

- ``"logit sharing"`` (weights ``exp(s_j) / (Σ_k exp(s_k) [+ exp(b)])``, no gate: softmax,
  sink logit, softmax1).  For softmax the measure is the BOS mass.  With a zero-valued
  virtual slot of logit ``b`` it is the **null mass** ``α_slot + α_0``: divide every weight
  by the null's own weight ``exp(b) + exp(s_0)``; the ratios
  ``w_j = exp(s_j) / (exp(b) + exp(s_0))`` depend only on the query (token, position) and
  the key (token, position), so they are shared between sequences exactly as softmax's
  ``exp(s_j - s_0)`` are, the null mass is ``1 / (1 + Σ_j w_j)``, and when BOS carries
  value 0 the output is ``Σ_j w_j v_j / (1 + Σ_j w_j)``: the same second-order-cone
  program, so the same certificates bound the null mass.  (It holds for any ``b``, even
  one that depends on the query.)
- ``"gate split"`` (softmax weights times a query gate ``g``: gated softmax).  The measure
  is the null mass ``(1 - g) + g α_0``.  A gate scales a row by a factor of the query
  alone instead of adding a logit to the normaliser, so the ratios above do not absorb
  it; but ``g`` is one number for a whole block (same query token and position), and
  accuracy ``ε`` of the gated head at a content query is accuracy ``ε/g`` of the softmax
  head with the same scores.  Splitting the gate's range into intervals and solving the
  softmax program at ``ε/g_k`` on each bounds the null mass (:mod:`.gated`); Theorem 3's
  hull bound (the effective weights ``g α_j`` and the slot ``1 - g`` lie on the simplex)
  is kept where it is better.
- ``"hull"`` (the other maps on the simplex: sparsemax, entmax-1.5).  Only the hull
  argument is used: the output is ``(1 - m) z`` with ``z`` in the hull of the values
  seen, so the mass ``1 - m`` off BOS is at most ``ε / d_t``.  Logit sharing does not
  carry over: the threshold of a projection couples a whole row, so no weight ratio is
  shared between sequences.
- ``"witness"`` (off the simplex, no null slot: sigmoid, ReLU, ReLU/length): no bound at
  all; an explicit sink-free head checked by the trusted checker shows it, position by
  position.  The measure is the one the search bounds for the map: the BOS *weight* for
  maps with exact zeros (ReLU, ReLU/length reach 0 exactly), the BOS *share*
  ``α_0 / Σ_j α_j`` for sigmoid (never 0, as small as one likes).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..attention import MAPS, get_map

__all__ = ["ROUTES", "SinkMeasure", "sink_measure"]

ROUTES = ("logit sharing", "gate split", "hull", "witness")


@dataclass(frozen=True)
class SinkMeasure:
    """The sink measure of map ``kind``: ``name`` (``"BOS mass"``, ``"null mass"``,
    ``"BOS weight"`` or ``"BOS share"``), ``null`` (the measure includes a zero-valued slot
    or gate share), and the ``route`` that bounds it (:data:`ROUTES`)."""

    kind: str
    name: str
    null: bool
    route: str

    @property
    def witness_measure(self) -> str:
        """The trusted witness checker's name for the measure (``"weight"``/``"share"``)."""
        return "share" if self.name == "BOS share" else "weight"

    @property
    def description(self) -> str:
        """The measure in words."""
        if not self.null:
            return {"BOS share": "BOS share a_0 / sum_j a_j"}.get(self.name, self.name)
        if MAPS[self.kind].properties.gated:
            return "null mass (the gate's 1 - g plus g times the BOS weight)"
        return "null mass (the virtual slot plus BOS)"


def sink_measure(kind: str) -> SinkMeasure:
    """The :class:`SinkMeasure` of the map called ``kind`` (ValueError for unknown names)."""
    amap = get_map(kind)
    props = amap.properties
    if amap.factorisation == "normalised":
        route = "gate split" if props.gated else "logit sharing"
        return SinkMeasure(kind, "BOS mass" if props.on_simplex else "null mass",
                           not props.on_simplex, route)
    if props.on_simplex or props.null_slot:
        return SinkMeasure(kind, "BOS mass" if props.on_simplex else "null mass",
                           not props.on_simplex, "hull")
    return SinkMeasure(kind, "BOS weight" if props.exact_zeros else "BOS share", False,
                       "witness")
