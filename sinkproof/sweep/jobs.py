"""The job kinds a sweep can run; each maps its settings to flat outcome fields.

A job is a pure function of its settings (every random choice is seeded by them), so
its result is the same on any executor and any worker.  Outcome fields are scalars
(``str``, ``int``, ``float``, ``bool``) so the results form one tidy table.
"""

from __future__ import annotations

import statistics
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import SINK_MAP_MAX_WORK, InputError, check_work
from .documents import EVIDENCE, certificate_evidence, check_evidence

TASK_SETTINGS = {"p": 2, "T": 4, "content": "signed", "positions": "inverse",
                 "triggers": "single", "k": None, "content_seed": 0}
"""Task settings shared by the job kinds that build a trigger task, with defaults."""


@dataclass(frozen=True)
class JobKind:
    """A job kind: its known settings with defaults (``REQUIRED`` for none), the outcome
    field a sweep plots against each axis, and the function that runs one job."""

    name: str
    settings: Mapping[str, Any]
    metric: str
    run: Callable[[dict[str, Any], Path | None], dict[str, Any]]
    dotted_prefixes: tuple[str, ...] = ()
    help: str = ""

    def knows(self, name: str) -> bool:
        """Whether ``name`` is a setting of this kind."""
        return name in self.settings or name.split(".", 1)[0] in self.dotted_prefixes

    def validate(self, settings: Mapping[str, Any], only: str | None = None) -> None:
        """Refuse unknown settings (all, or just ``only``) and missing required ones."""
        names = [only] if only is not None else list(settings)
        unknown = [n for n in names if not self.knows(n)]
        if unknown:
            known = ", ".join([*self.settings, *(p + ".*" for p in self.dotted_prefixes)])
            raise InputError(f"a {self.name} job has no setting {unknown[0]!r} "
                                 f"(known: {known})")
        if only is None:
            missing = [n for n, v in self.settings.items() if v is REQUIRED and n not in settings]
            if missing:
                raise InputError(f"a {self.name} job needs the setting {missing[0]!r}")

    def full(self, settings: Mapping[str, Any]) -> dict[str, Any]:
        """``settings`` with every default filled in (what the job really runs with)."""
        self.validate(settings)
        out = {n: v for n, v in self.settings.items() if v is not REQUIRED}
        out.update(settings)
        return out


class _Required:
    def __repr__(self) -> str:
        return "REQUIRED"


REQUIRED: Any = _Required()


def _task(s: Mapping[str, Any]) -> Any:
    from ..task import TriggerTask

    kwargs: dict[str, Any] = dict(p=int(s["p"]), T=int(s["T"]), content=s["content"],
                                  positions=s["positions"], triggers=s["triggers"],
                                  seed=int(s["content_seed"]))
    if s.get("k") is not None:
        kwargs["k"] = int(s["k"])
    return TriggerTask(**kwargs)


job_task = _task
"""The trigger task of a job's settings."""


def _exact_text(q: Any) -> str:
    from ..exact_numbers import show

    return show(q)


# --------------------------------------------------------------------- check
def _set_dotted(data: dict[str, Any], name: str, value: Any) -> None:
    section, _, key = name.partition(".")
    if not key:
        raise InputError(f"a claim setting is written section.key, got {name!r}")
    table = data.setdefault(section, {})
    if not isinstance(table, dict):
        raise InputError(f"claim section {section!r} is not a table")
    table[key] = value


def claim_data(s: Mapping[str, Any], data: dict[str, Any]) -> dict[str, Any]:
    """A claim file's tables ``data`` with the job's dotted overrides (``task.T = 4``)."""
    for name, value in s.items():
        if "." in name:
            _set_dotted(data, name, value)
    return data


def run_check(s: dict[str, Any], workdir: Path | None, engine: bool = True) -> dict[str, Any]:
    """``sinkproof check`` on a claim file with dotted overrides (``task.T = 4``).  The
    witness and the certificate it writes go to ``workdir`` (a fresh temporary folder
    without one), never to a path written in the claim file; a rerun replaces the files of
    its own folder (the sweep's, under ``--out``).  ``engine=False`` skips the
    branch-and-bound engine."""
    from ..claims import check
    from ..claims.schema import claim_from_dict
    from ..exact_numbers import load_toml

    data: dict[str, Any] = {}
    if s.get("claim"):
        data = load_toml(Path(s["claim"]).read_text(encoding="utf-8"))
    claim = claim_from_dict(claim_data(s, data), source=s.get("claim"))
    with tempfile.TemporaryDirectory(prefix="sinkproof-job-") as scratch:
        folder = Path(scratch) if workdir is None else workdir
        outcome = check(claim, search=bool(s["search"]), progress=False, bnb=engine,
                        witness=folder / "witness.json",
                        certificate_out=folder / "certificate.json",
                        force=True)  # the job's own folder: a rerun replaces its files
        evidence = check_evidence(outcome)
    bound = getattr(outcome, "bound", None)
    return {"outcome": type(outcome).__name__, "by": getattr(outcome, "by", ""),
            "bound": float("nan") if bound is None else float(bound),
            "witness_error": float(getattr(outcome, "error", float("nan"))),
            "interrupted": bool(getattr(outcome, "interrupted", False)), EVIDENCE: evidence}


# ------------------------------------------------------------------- certify
def run_certify(s: dict[str, Any], workdir: Path | None) -> dict[str, Any]:
    """Theorem 3's family certificate at ``eps`` (fixed values), re-verified exactly."""
    from ..convex import family_certificate
    cert = family_certificate(_task(s), s["eps"], values=s["values"])
    report = cert.verify()
    if workdir is not None:
        cert.save(workdir / "certificate.json")
    bound = cert.min_bound
    return {"min_bound": float("nan") if bound is None else float(bound),
            "min_bound_exact": "" if bound is None else _exact_text(bound),
            "verified": bool(report.ok), EVIDENCE: certificate_evidence(cert.to_dict())}


# ------------------------------------------------------------------- sinkmap
def run_sinkmap(s: dict[str, Any], workdir: Path | None) -> dict[str, Any]:
    """A Theorem 6 sink map (least certified BOS mass per non-trigger position)."""
    from ..sinkmap import sink_map
    from ..sinkmap.work import estimate

    task = _task(s)
    check_work("work units of the sink map", estimate(task, s["values"], s["subfamily"],
                                                      int(s["radius"])),
               SINK_MAP_MAX_WORK, flag="'sinkproof sinkmap --max-work'")
    result = sink_map(task, s["eps"], values=s["values"], subfamily=s["subfamily"],
                      radius=int(s["radius"]), progress=False)
    certified = [e for e in result.entries.values() if e.status == "certified"]
    bounds = [e.bound for e in certified]
    verified = bool(result.verify().ok) if certified else True
    return {"n_positions": len(result.entries), "n_bounded": len(bounds),
            "min_bound": min(bounds) if bounds else float("nan"),
            "mean_bound": statistics.fmean(bounds) if bounds else float("nan"),
            "verified": verified,
            EVIDENCE: certificate_evidence(result.certificate) if certified else {}}


# -------------------------------------------------------------------- search
def run_search(s: dict[str, Any], workdir: Path | None) -> dict[str, Any]:
    """Counterexample search (one process per job: the sweep spreads the jobs)."""
    from ..search import search

    result = search(_task(s), kind=s["kind"], heads=int(s["heads"]), values=s["values"],
                    max_error=float(_exact(s["max_error"])),
                    max_bos_mass=float(_exact(s["max_bos_mass"])), where=s["where"],
                    restarts=int(s["restarts"]), seed=int(s["seed"]),
                    budget=None if s["budget"] is None else float(s["budget"]),
                    processes=1, maxiter=int(s["maxiter"]), progress=False)
    return {"found": bool(result.found), "verified": bool(result.verified),
            "error": float(result.error), "bos_mass": float(result.bos_mass),
            "restarts_done": int(result.restarts)}


# ------------------------------------------------------------------- variant
YES_SCORE = {"yes": 1.0, "no": 0.0}
"""The ``yes`` outcome of a variant cell: 1 for yes, 0 for no, NaN for open (so its mean
over a group of cells is the share of yes among the decided ones)."""


def run_variant(s: dict[str, Any], workdir: Path | None) -> dict[str, Any]:
    """One cell of the variants table: attention map ``map``, question ``question``, on
    the trigger task of the settings; its answer (yes/no/open), how it was settled
    (certificate/construction/theorem/none) and the detail of the evidence."""
    from ..variants import cell

    answer = cell(str(s["map"]), str(s["question"]), task=_task(s))
    return {"answer": answer.answer, "how": answer.how, "detail": answer.detail,
            "yes": YES_SCORE.get(answer.answer, float("nan"))}


def _exact(value: Any) -> Any:
    from ..exact_numbers import exact

    return exact(value)


# --------------------------------------------------------------------- train
def run_train(s: dict[str, Any], workdir: Path | None) -> dict[str, Any]:
    """Train one model from random initialisation and measure its sinks."""
    from ..experiment.config import ExperimentConfig
    from ..experiment.runner import _one_run

    cfg = ExperimentConfig(p=int(s["p"]), T=int(s["T"]), contents=(s["content"],),
                           kinds=(s["kind"],), heads=(int(s["heads"]),), seeds=(int(s["seed"]),),
                           steps=int(s["steps"]), lr=float(_exact(s["lr"])),
                           batch_size=int(s["batch_size"]), n_train=int(s["n_train"]),
                           n_heldout=int(s["n_heldout"]), longer_T=int(s["longer_T"]),
                           n_longer=int(s["n_longer"]), n_probe=int(s["n_probe"]),
                           record_every=int(s["record_every"]))
    run, _ = _one_run(cfg, s["content"], s["kind"], int(s["heads"]), int(s["seed"]))
    return {"error": float(run.error), "error_longer": float(run.error_longer),
            "sink_score_min": min(run.sink_score), "sink_score_max": max(run.sink_score),
            "bos_share_max": max(run.bos_share)}


_TASK = dict(TASK_SETTINGS)
JOB_KINDS: dict[str, JobKind] = {
    "check": JobKind("check", {"claim": None, "search": True}, "bound", run_check,
                     dotted_prefixes=("task", "model", "hypothesis", "conclusion", "check"),
                     help="settle a claim (file plus dotted overrides such as task.T)"),
    "certify": JobKind("certify", {**_TASK, "eps": REQUIRED, "values": "fixed"}, "min_bound",
                       run_certify, help="Theorem 3 family certificate"),
    "sinkmap": JobKind("sinkmap", {**_TASK, "eps": REQUIRED, "values": "fixed",
                                   "subfamily": "auto", "radius": 2}, "min_bound",
                       run_sinkmap, help="Theorem 6 sink map"),
    "search": JobKind("search", {**_TASK, "kind": "softmax", "heads": 1, "values": "learned",
                                 "max_error": "1/10", "max_bos_mass": "1/2",
                                 "where": "nontrigger", "restarts": 2, "seed": 0,
                                 "budget": None, "maxiter": 300}, "bos_mass", run_search,
                      help="counterexample search"),
    "train": JobKind("train", {"p": 2, "T": 4, "content": "signed", "kind": "softmax",
                               "heads": 1, "seed": 0, "steps": 200, "lr": "0.01",
                               "batch_size": 32, "n_train": 512, "n_heldout": 128,
                               "longer_T": 6, "n_longer": 32, "n_probe": 16,
                               "record_every": 25}, "error", run_train,
                     help="train one model and measure its sinks"),
    "variant": JobKind("variant", {**_TASK, "T": 3, "map": REQUIRED, "question": REQUIRED},
                       "yes", run_variant,
                       help="one cell of the variants table (one map, one question)"),
}
"""Every job kind, by name."""
