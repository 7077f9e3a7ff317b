"""The outcome of :func:`sinkproof.bnb.prove`: per-target trees, certified bounds, certificate."""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

from .. import checker
from ..convex.certfile import envelope, save_json, save_verified
from ..tables import Tabular
from ..task import TriggerTask
from .tree import Node, TreeResult

KIND = "bnb-learned-values"
PAPER_KIND = "paper-bnb-learned-values"
"""The certificate kinds of the engine's trees: position classes, token-pair classes."""


def _fmt(x: Fraction) -> str:
    return str(x.numerator) if x.denominator == 1 else f"{x.numerator}/{x.denominator}"


def round_down(x: Fraction, digits: int = 9) -> Fraction:
    """The largest multiple of ``10^-digits`` that is ``<= x``."""
    scale = 10**digits
    return Fraction(math.floor(x * scale), scale)


@dataclass
class TargetOutcome:
    """One target's tree, its float bound and (when every leaf certified) its exact bound.

    ``leaves``: leaf node -> ``(leaf entry, c0)`` for the certified leaves; ``certified``:
    the exact BOS-mass bound ``min 1/(1 + c0)`` over non-empty leaves (``None`` when some
    leaf has no certificate, so the tree proves nothing); ``skipped``: why the tree was left
    uncertified without a failed leaf (the budget ran out before or during its exact
    certification), else ``None``.
    """

    target: tuple[int, ...]
    tree: TreeResult
    leaves: dict[int, tuple[dict[str, Any], Fraction]] = field(default_factory=dict)
    certified: Fraction | None = None
    skipped: str | None = None

    def node_json(self, node: Node | None = None) -> dict[str, Any]:
        """The tree as the checker reads it (splits and certified leaves)."""
        node = self.tree.root if node is None else node
        if node.children is None:
            return {"leaf": copy.deepcopy(self.leaves[id(node)][0])}
        tok, coord, at = node.split
        return {"split": {"token": tok, "coord": coord, "at": _fmt(at)},
                "below": self.node_json(node.children[0]),
                "above": self.node_json(node.children[1])}


def verified(cert: dict[str, Any], save: str | Path | None = None) -> checker.Verdict:
    """The trusted checker's verdict on ``cert``: in memory, or with ``save`` on the file
    written there (:func:`~sinkproof.convex.certfile.save_verified`: the exact bytes
    verified once, the file kept only when they verify)."""
    return checker.verify(cert) if save is None else save_verified(cert, save)


class CertifiedResult:
    """A result that may carry a certificate (``self.certificate``, ``None`` when some target
    was not certified): writing it and re-checking it with the trusted checker."""

    certificate: dict[str, Any] | None

    def save(self, path: str | Path) -> Path:
        """Write the certificate (only when there is one)."""
        if self.certificate is None:
            raise ValueError("no certificate: some target was not certified")
        return save_json(self.certificate, path)

    def verify(self) -> Any:
        """Re-check the certificate with the trusted checker; returns its ``Verdict``."""
        if self.certificate is None:
            raise ValueError("no certificate: some target was not certified")
        return checker.verify(self.certificate)


@dataclass
class BnbResult(CertifiedResult, Tabular):
    """Outcome of the engine on a set of targets.

    ``status``: ``"proved"`` (every target certified at ``>= min_bos_mass``, certificate
    verified), ``"bounded"`` (no goal given: certified bounds where trees closed) or
    ``"open"``; ``bound``: the least certified BOS-mass bound over the targets (``None``
    when a target has none); ``norm_bound_needed`` is always ``False``: the engine assumes
    no bound on any parameter; ``stopped``: Ctrl-C came while a finished tree was being
    certified (see :attr:`interrupted`); ``verdict``: the trusted checker's verdict on the
    certificate (on the saved file when :func:`~sinkproof.bnb.prove` had ``save``).
    """

    task: TriggerTask
    eps: Fraction
    values: str
    min_bos_mass: Fraction | None
    targets: list[TargetOutcome]
    status: str
    certificate: dict[str, Any] | None
    seconds: float
    norm_bound_needed: bool = False
    stopped: bool = False
    verdict: checker.Verdict | None = None

    @property
    def bound(self) -> Fraction | None:
        got = [t.certified for t in self.targets]
        return None if any(b is None for b in got) or not got else min(got)

    def to_records(self) -> list[dict[str, Any]]:
        """One row per target prefix: its certified exact bound (``None``: not certified),
        the tree's node count and its certified leaves."""
        return [dict(target=list(t.target), certified=t.certified, nodes=t.tree.nodes,
                     certified_leaves=len(t.leaves)) for t in self.targets]

    @property
    def nodes(self) -> int:
        return sum(t.tree.nodes for t in self.targets)

    @property
    def skipped(self) -> list[str]:
        """Why trees were left uncertified for lack of budget (one line each)."""
        return [f"target {list(t.target)}: {t.skipped}" for t in self.targets if t.skipped]

    @property
    def interrupted(self) -> bool:
        """Whether Ctrl-C stopped a tree, or the certification of one (``stopped``)."""
        return self.stopped or any(t.tree.status == "interrupted" for t in self.targets)

    def __repr__(self) -> str:
        bound = "none" if self.bound is None else f"{float(self.bound):.6g}"
        goal = "" if self.min_bos_mass is None else f" >= {float(self.min_bos_mass):g}"
        return (f"BnbResult({self.status}{goal}: {len(self.targets)} targets, certified least "
                f"BOS mass {bound}, {self.nodes} nodes, {self.seconds:.2f}s, values={self.values}, "
                f"no norm bound)")


def certificate_dict(instance: dict[str, Any], outcomes: list[TargetOutcome],
                     stated: Fraction, statement: str, kind: str = KIND) -> dict[str, Any]:
    """The ``bnb-learned-values`` envelope (or ``kind``'s: the same trees) for fully
    certified ``outcomes``."""
    trees = [{"target": list(o.target), "bound": _fmt(round_down(o.certified)),
              "root": o.node_json()} for o in outcomes]
    claim = {"min_bos_mass": _fmt(stated), "targets": len(trees), "statement": statement}
    return envelope(kind, instance, claim, {"trees": trees})
