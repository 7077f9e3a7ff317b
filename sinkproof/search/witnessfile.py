"""Load a witness file back as a model: :func:`load_witness`.

A witness file (kind ``witness``, written by ``sinkproof check --witness FILE`` when a
claim is refuted, or by :meth:`SearchResult.save`) holds a model's score
matrices ``A_h``, values (``U_h`` or ``U_fix``) and, for the maps that have them, the
map's parameters and gate, as exact rationals, with the claim
that the model has error ``<= ε`` on the task's family and BOS mass ``<= b`` at the
named positions.  :func:`load_witness` reads the file as strict JSON (the checker's
``load``), takes its fields exactly, rebuilds the task and the
:class:`~sinkproof.AttentionModel`, and (by default) has the trusted checker re-verify the
claim, so a file whose numbers were changed is refused with the first inequality that fails.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

from .. import checker
from ..certformat import FORMAT, VERSION, instance_statement
from ..convex.certfile import instance_difference, task_instance
from ..errors import CertificateError
from ..exact_numbers import exact
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


def _field(obj: Any, key: str, where: str) -> Any:
    if not isinstance(obj, dict):
        raise CertificateError(f"{where}: expected an object")
    if key not in obj:
        raise CertificateError(f"{where}.{key}: required field is missing")
    return obj[key]


def _rationals(value: Any, where: str) -> Any:
    """Nested arrays of exact rationals as Fractions (``None`` stays ``None``)."""
    if value is None:
        return None
    if isinstance(value, list):
        return [_rationals(v, f"{where}[{i}]") for i, v in enumerate(value)]
    try:
        return exact(value, where)
    except (TypeError, ValueError) as exc:
        raise CertificateError(str(exc)) from None


def _where(claim: dict[str, Any]) -> Any:
    """``claim.where``: a word, or the named prefixes ``x_1..x_position``."""
    where = _field(claim, "where", "claim")
    if isinstance(where, str):
        return where
    if not isinstance(where, list):
        raise CertificateError("claim.where: expected a word or a list of positions")
    out = set()
    for i, item in enumerate(where):
        seq, pos = (_field(item, k, f"claim.where[{i}]") for k in ("sequence", "position"))
        if not isinstance(seq, list) or isinstance(pos, bool) or not isinstance(pos, int):
            raise CertificateError(f"claim.where[{i}]: expected a sequence and a position")
        out.add(tuple(seq[:pos]))
    return frozenset(out)


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
    if doc.get("format") != FORMAT or doc.get("version") != VERSION:
        raise CertificateError(f"{path}: format: not a {FORMAT!r} file of version {VERSION}")
    kind = doc.get("kind")
    if kind != "witness":
        raise CertificateError(f"{path}: a {kind!r} certificate, not a witness (a model); "
                               "load_witness reads the files of `sinkproof check --witness`")
    instance, claim, data = (_field(doc, k, "certificate") for k in ("instance", "claim", "data"))
    description = _field(instance, "task", "instance")
    try:
        task = TriggerTask.from_description(description)
    except (TypeError, ValueError, KeyError) as exc:
        raise CertificateError(f"{path}: instance.task: {exc}") from None
    content = (_rationals(_field(instance, "content_vectors", "instance"),
                          "instance.content_vectors")
               if task.content_scheme != "signed" else
               [[Fraction(float(x)) for x in row] for row in task.content])
    differs = instance_difference(task_instance(task), instance_statement(description, content))
    if differs is not None:
        raise CertificateError(f"{path}: the task description and the listed content "
                               f"vectors disagree ({differs})")
    U = _field(data, "U", "data")
    parts = [_rationals(_field(data, "A", "data"), "data.A"),
             None if U == "fixed" else _rationals(U, "data.U"),
             *(_rationals(data.get(k), f"data.{k}") for k in ("map_params", "gate_w", "gate_c"))]
    converted = [_floats(part) for part in parts]
    (A, U, map_params, gate_w, gate_c) = (f for f, _ in converted)
    try:
        model = AttentionModel(task, _field(_field(claim, "model_class", "claim"), "kind",
                                            "claim.model_class"), A, U,
                               map_params=map_params, gate_w=gate_w, gate_c=gate_c)
    except (TypeError, ValueError) as exc:
        raise CertificateError(f"{path}: the model: {exc}") from None
    bounds = [_rationals(_field(claim, k, "claim"), f"claim.{k}")
              for k in ("max_error", "max_bos_mass")]
    verified = digest = None
    if verify:
        verdict = checker.verify(doc)
        if not verdict.ok:
            raise CertificateError(f"{path}: the witness does not verify: {verdict.failure}")
        verified, digest = True, verdict.digest
    info = WitnessInfo(path=path, statement=str(claim.get("statement", "")),
                       max_error=bounds[0], max_bos_mass=bounds[1],
                       where=_trigger_prefixes(_where(claim)),
                       bos_measure=claim.get("bos_measure", "weight"),
                       verified=verified, digest=digest,
                       exact=all(ok for _, ok in converted))
    return model, info
