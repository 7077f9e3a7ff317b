"""What makes a cached verdict checkable, and the check made on reading it.

A sweep caches a job's outcome; a verdict (a claim Proved or Refuted, a certificate
verified) is stored with its evidence: the certificate or witness document itself and
the SHA-256 digest of the statement the trusted checker verified.  On reading, the
evidence is verified again through :func:`sinkproof.checker.verify` and must support
*this* job's claim or instance (exactly, as ``sinkproof check`` requires) with the
stored bound; a Proved by a named theorem (no document) is derived again (cheap: no
search, no engine).  An entry that fails is not reported: the job runs again.
"""

from __future__ import annotations

import json
import math
import tempfile
from collections.abc import Mapping
from fractions import Fraction
from pathlib import Path
from typing import Any

from ..checker import verify
from ..exact_numbers import exact
from .inputs import read_claim_data
from .jobs import claim_data, job_task, run_check


def _same_number(a: Any, b: Any) -> bool:
    try:
        x, y = float(a), float(b)
    except (TypeError, ValueError):
        return False
    return (math.isnan(x) and math.isnan(y)) or x == y


def _claim(settings: Mapping[str, Any]) -> Any:
    from ..claims.schema import claim_from_dict

    data = claim_data(settings, read_claim_data(settings["claim"]) if settings.get("claim")
                      else {})
    return claim_from_dict(data, source=settings.get("claim"))


def _recheck_proof(claim: Any, outcome: Mapping[str, Any], evidence: Mapping[str, Any]
                   ) -> str | None:
    from ..claims.certified import prove_by_certificate

    document = evidence.get("certificate")
    if not isinstance(document, dict):
        return "a Proved by certificate without its certificate"
    with tempfile.TemporaryDirectory(prefix="sinkproof-recheck-") as folder:
        path = Path(folder) / "certificate.json"
        path.write_text(json.dumps(document), encoding="utf-8")
        try:
            least, stated = prove_by_certificate(claim, path)
        except Exception as exc:  # noqa: BLE001 - NotImplied, CertificateError, ...
            return f"its certificate does not prove the claim ({str(exc).splitlines()[0]})"
    if f"sha256:{evidence.get('digest')}" not in stated:
        return "its verified-statement digest differs"
    if not _same_number(float(least), outcome.get("bound")):
        return f"its bound {outcome.get('bound')} is not the certificate's {float(least)}"
    return None


def _verified(evidence: Mapping[str, Any], what: str) -> tuple[Any, str | None]:
    """The checker's verdict on the stored ``what`` document (``None`` and why not, when
    it is missing, malformed, fails, or verifies another statement than the stored
    digest names)."""
    document = evidence.get(what)
    if not isinstance(document, dict):
        return None, f"no {what} stored"
    try:
        verdict = verify(document)
    except Exception as exc:  # noqa: BLE001 - a malformed document
        return None, f"its {what} is malformed ({str(exc).splitlines()[0]})"
    if not verdict.ok:
        return None, f"its {what} does not verify ({verdict.failure})"
    if verdict.digest != evidence.get("digest"):
        return None, "its verified-statement digest differs"
    return verdict, None


def _recheck_refutation(claim: Any, evidence: Mapping[str, Any]) -> str | None:
    from ..claims.witness import refuting_statement

    verdict, why = _verified(evidence, "witness")
    if verdict is None:
        return why
    why = refuting_statement(verdict.statement, claim)
    return None if why is None else f"its witness does not refute the claim ({why})"


def _rederive(settings: Mapping[str, Any], outcome: Mapping[str, Any]) -> str | None:

    with tempfile.TemporaryDirectory(prefix="sinkproof-recheck-") as folder:
        again = run_check({**settings, "search": False}, Path(folder), engine=False)
    if again["outcome"] != outcome.get("outcome") or again["by"] != outcome.get("by"):
        return f"derived again it is {again['outcome']} by {again['by'] or 'nothing'}"
    if not _same_number(again["bound"], outcome.get("bound")):
        return f"derived again its bound is {again['bound']}, not {outcome.get('bound')}"
    return None


def recheck_check(settings: Mapping[str, Any], outcome: Mapping[str, Any],
                  evidence: Mapping[str, Any]) -> str | None:
    """Why a cached ``check`` outcome may not be reported (``None``: it may).  Only a
    Proved or a Refuted is a verdict; an Open claims nothing and is reported as cached."""
    verdict = outcome.get("outcome")
    if verdict not in ("Proved", "Refuted"):
        return None if verdict == "Open" else f"an unknown outcome {verdict!r}"
    try:
        claim = _claim(settings)
    except Exception as exc:  # noqa: BLE001 - the claim no longer reads: run the job
        return f"its claim does not read ({str(exc).splitlines()[0]})"
    from ..claims.schema import Claim

    if not isinstance(claim, Claim) or not evidence:  # a theorem's proof, a paper claim
        return _rederive(settings, outcome)
    if verdict == "Proved":
        return _recheck_proof(claim, outcome, evidence)
    return _recheck_refutation(claim, evidence)


def _certificate_for_job(settings: Mapping[str, Any], evidence: Mapping[str, Any]
                         ) -> tuple[Any, str | None]:
    """The verdict on the stored certificate if it verifies (with the stored digest) and
    is about this job's task instance and ε exactly; else ``None`` and why not."""
    from ..convex.certfile import instance_difference, task_instance

    verdict, why = _verified(evidence, "certificate")
    if verdict is None:
        return None, why
    statement = verdict.statement
    differs = instance_difference(statement.get("instance", {}), task_instance(job_task(settings)))
    if differs is not None:
        return None, f"its certificate is about another instance ({differs})"
    if Fraction(statement.get("eps", "-1")) != exact(settings["eps"]):
        return None, (f"its certificate is for eps = {statement.get('eps')}, "
                      f"not {settings['eps']}")
    return verdict, None


def recheck_certify(settings: Mapping[str, Any], outcome: Mapping[str, Any],
                    evidence: Mapping[str, Any]) -> str | None:
    """Why a cached ``certify`` outcome may not be reported: its certificate must verify,
    be about this job's instance and ε exactly, and give the stored least bound."""
    if not outcome.get("verified"):
        return None  # "not verified" claims nothing
    verdict, why = _certificate_for_job(settings, evidence)
    if verdict is None:
        return why
    least = str(verdict.details.get("min_bound", "")).split(" ")[0]
    stored = outcome.get("min_bound_exact")
    if not least or not stored or exact(least) != exact(stored):
        return f"its least bound {stored!r} is not the certificate's {least!r}"
    return None


def recheck_sinkmap(settings: Mapping[str, Any], outcome: Mapping[str, Any],
                    evidence: Mapping[str, Any]) -> str | None:
    """Why a cached ``sinkmap`` outcome may not be reported: when it states a bound, its
    certificate must verify, be about this job's instance and ε exactly, and give the
    stored number of bounds and least bound."""
    if not outcome.get("n_bounded"):
        return None  # no bound claims nothing
    verdict, why = _certificate_for_job(settings, evidence)
    if verdict is None:
        return why
    count, least = verdict.details.get("bounds"), verdict.details.get("lowest_bound")
    if count != outcome.get("n_bounded"):
        return f"it states {outcome.get('n_bounded')} bounds, its certificate {count}"
    if least is None or not _same_number(float(exact(least)), outcome.get("min_bound")):
        return f"its least bound {outcome.get('min_bound')} is not the certificate's {least}"
    if not outcome.get("verified"):
        return "a certified bound marked not verified"
    return None


RECHECK = {"check": recheck_check, "certify": recheck_certify,
           "sinkmap": recheck_sinkmap}
"""Job kind -> the check made on a cached outcome before it is reported."""


def recheck(kind: str, settings: Mapping[str, Any], outcome: Mapping[str, Any],
            evidence: Mapping[str, Any]) -> str | None:
    """Why a cached outcome of a ``kind`` job may not be reported (``None``: it may)."""
    fn = RECHECK.get(kind)
    return None if fn is None else fn(settings, outcome, evidence)
