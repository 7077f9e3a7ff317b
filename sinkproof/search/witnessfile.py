"""Load a witness file back as a model: :func:`load_witness`.

A witness file (kind ``witness``, written by ``sinkproof check --witness FILE`` when a
claim is refuted, or by :meth:`SearchResult.save`) holds a model's score
matrices ``A_h``, values (``U_h`` or ``U_fix``) and, for the maps that have them, the
map's parameters and gate, as exact rationals, with the claim
that the model has error ``<= ε`` on the task's family and BOS mass ``<= b`` at the
named positions.  :func:`load_witness` reads the file with the trusted checker's
strict parser, rebuilds the task and the :class:`~sinkproof.AttentionModel`, and (by
default) has the trusted checker re-verify the claim, so a file whose numbers were
changed is refused with the first inequality that fails.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

from .. import checker
from ..checker.rules.witness import read_witness
from ..checker.schema import check_envelope
from ..convex.certfile import instance_difference, task_instance
from ..errors import CertificateError
from ..model import AttentionModel
from ..tasks import TriggerTask


@dataclass(frozen=True)
class WitnessInfo:
    """What a witness file claims about its model, and what loading it established.

    ``max_error`` and ``max_bos_mass``: the claimed bounds, exactly as written;
    ``where``: ``"nontrigger"``, ``"trigger"``, ``"all"`` or the named prefixes (tuples
    of tokens, ``sp.TRIG`` for the trigger) whose last position is bounded;
    ``bos_measure``: ``"weight"`` (``α_0``) or ``"share"`` (``α_0 / Σ_j α_j``);
    ``verified``: the trusted checker confirmed the claim (``None``: not asked);
    ``digest``: SHA-256 of the verified statement (``sinkproof verify`` prints it);
    ``exact``: every parameter of the file is a float64, so the loaded model is exactly
    the model the file describes (otherwise the model holds the nearest floats).
    """

    path: Path
    statement: str
    max_error: Fraction
    max_bos_mass: Fraction
    where: str | frozenset[tuple[int, ...]]
    bos_measure: str
    verified: bool | None
    digest: str | None
    exact: bool


def _floats(values: Any) -> tuple[Any, bool]:
    """Nested lists of rationals as floats, and whether every float is the rational exactly
    (``None`` stays ``None``)."""
    if values is None:
        return None, True
    if isinstance(values, Fraction):
        f = float(values)
        return f, Fraction(f) == values
    pairs = [_floats(v) for v in values]
    return [f for f, _ in pairs], all(ok for _, ok in pairs)


def _trigger_prefixes(where: Any) -> Any:
    """The checker's named prefixes in the user's tokens (the checker writes the trigger
    as -1, which is ``sp.TRIG``)."""
    if isinstance(where, str):
        return where
    return frozenset(tuple(int(c) for c in prefix) for prefix in where)


def load_witness(path: str | Path, *, verify: bool = True
                 ) -> tuple[AttentionModel, WitnessInfo]:
    """Read the witness file at ``path``: returns ``(model, info)``.

    ``model`` is the :class:`~sinkproof.AttentionModel` the file describes, on the task
    rebuilt from it; ``info`` is a :class:`WitnessInfo`.  With ``verify`` (the default)
    the trusted checker re-checks the file's claim in exact or interval arithmetic first.

    Raises :class:`~sinkproof.errors.CertificateError` (a one-line reason naming the
    field or the failing inequality) when the file is not a well-formed witness, when its
    task description and its content vectors disagree, or when it does not verify.
    """
    path = Path(path)
    doc = checker.load(path)
    kind = check_envelope(doc)
    if kind != "witness":
        raise CertificateError(f"{path}: a {kind!r} certificate, not a witness (a model); "
                               "load_witness reads the files of `sinkproof check --witness`")
    witness = read_witness(doc)
    task = TriggerTask.from_description(doc["instance"]["task"])
    differs = instance_difference(task_instance(task), witness.inst.statement())
    if differs is not None:
        raise CertificateError(f"{path}: the task description and the listed content "
                               f"vectors disagree ({differs})")
    converted = [_floats(part) for part in (witness.A, witness.U, witness.map_params,
                                            witness.gate_w, witness.gate_c)]
    (A, U, map_params, gate_w, gate_c) = (f for f, _ in converted)
    model = AttentionModel(task, witness.kind, A, U, map_params=map_params, gate_w=gate_w,
                           gate_c=gate_c)
    verified = digest = None
    if verify:
        verdict = checker.verify(doc)
        if not verdict.ok:
            raise CertificateError(f"{path}: the witness does not verify: {verdict.failure}")
        verified, digest = True, verdict.digest
    info = WitnessInfo(path=path, statement=str(doc["claim"].get("statement", "")),
                       max_error=witness.max_error, max_bos_mass=witness.max_bos_mass,
                       where=_trigger_prefixes(witness.where), bos_measure=witness.measure,
                       verified=verified, digest=digest,
                       exact=all(ok for _, ok in converted))
    return model, info
