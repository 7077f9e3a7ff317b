"""A claim in the paper's own setting (``[task] setting = "paper"``), as data.

    for every model of the paper's class (any attention map of ``MAPS``: the paper's
    softmax and ReLU/length, and the variants; H heads x N layers, residual when N > 1,
    learned or fixed values) whose error ``max ||f_t - y_t||_2`` over every position of
    every sequence of the family is ``<= max_error``, at every (or some) non-trigger
    position ``t >= 1``, some (or every) head of some layer has BOS measure
    ``>= min_bos_mass``: the BOS weight ``α_t0`` for a map on the simplex (softmax,
    sparsemax, entmax-1.5), the BOS share ``α_t0 / Σ_k α_tk`` off it (0 when every weight
    is 0; a virtual slot and a gate cancel in it), as claims of our setting measure it.

A claim file::

    title = "..."
    [task]        # setting = "paper", n, L, content = "uniform" | "grid" | [[...], ...], grid
    [model]       # kind = "softmax" | "relu_length" | "sparsemax" | ... (any map), heads,
                  # layers, values = "learned" | "fixed"
    [hypothesis]  # max_error
    [conclusion]  # min_bos_mass; at = "nontrigger"; positions = "every" | "some";
                  # heads = "some" | "every"  (over every head of every layer)
    [check]       # optional: restarts, seed, budget, steps, samples, certificate, witness,
                  # max_work

With a finite content set (a list of content vectors, or a grid) the family is finite
and the claim is decided exactly; with ``content = "uniform"`` the family is continuous,
a refuting model can only be evaluated on seeded samples plus an adversarial content
search (a lower estimate of its worst error), and such a claim is never refuted, only
proved (by a bound that holds for every content) or left open.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from fractions import Fraction
from typing import Any

from .._validate import as_int, choice
from ..attention import MAPS
from ..certformat import format_rational
from ..exact_numbers import bos_mass, error_level, exact, show
from ..modelclass import ModelClass
from ..tasks.paper import PaperTask
from .fields import no_unknown, section
from .options import CheckOptions, ClaimParts

MODEL_KINDS = tuple(MAPS)
VALUES = ("learned", "fixed")
QUANTIFIERS = ("every", "some")
SECTIONS = ("task", "model", "hypothesis", "conclusion", "check")


@dataclass(frozen=True)
class PaperModelClass:
    """The paper's models: ``kind`` attention, ``heads`` full-width heads per layer,
    ``layers`` layers (residual connections when there are several, as in the paper), and
    ``values``: ``"learned"`` (any ``W_V``, ``W_O``) or ``"fixed"`` (one layer of one head
    with ``W_O W_V = I - e_0 e_0^T``: a token's value is the token without its BOS
    coordinate, so ``v_BOS = 0``)."""

    kind: str = "softmax"
    heads: int = 1
    layers: int = 1
    values: str = "learned"

    def __post_init__(self) -> None:
        choice("model.kind", self.kind, MODEL_KINDS)
        object.__setattr__(self, "heads", as_int("model.heads", self.heads, minimum=1))
        object.__setattr__(self, "layers", as_int("model.layers", self.layers, minimum=1))
        choice("model.values", self.values, VALUES)
        if self.values == "fixed" and (self.heads, self.layers) != (1, 1):
            raise ValueError("model.values = \"fixed\" is defined for one layer of one head "
                             "(W_O W_V = I - e_0 e_0^T); use values = \"learned\"")

    @property
    def measure(self) -> str:
        """``"weight"`` (``α_t0``) on the simplex, ``"share"`` (``α_t0 / Σ_k α_tk``) off it."""
        return "weight" if MAPS[self.kind].properties.on_simplex else "share"

    @property
    def residual(self) -> bool:
        """Residual connections (and residual targets): when there is more than one layer."""
        return self.layers > 1

    def as_model_class(self) -> ModelClass | None:
        """The same class in the theorem registry's terms (one layer: any scores, token-only
        values; fixed values are ``U_fix``); ``None`` for several layers, which the
        registry's classes do not describe."""
        if self.layers != 1:
            return None
        return ModelClass(kind=self.kind, heads=self.heads, values=self.values,
                          positions="any", value_features="token")

    def contains(self, kind: str, heads: int, layers: int, values: str) -> bool:
        """Whether a model of that shape belongs to this class (fixed values are learned
        values of one particular kind)."""
        return ((kind, heads, layers) == (self.kind, self.heads, self.layers)
                and (self.values == "learned" or values == "fixed"))

    def to_dict(self) -> dict[str, Any]:
        return dict(kind=self.kind, heads=self.heads, layers=self.layers, values=self.values)

    def __str__(self) -> str:
        shape = f"{self.layers} layer{'s' if self.layers > 1 else ''} x {self.heads} " \
                f"head{'s' if self.heads > 1 else ''}"
        res = ", residual" if self.residual else ""
        share = "; BOS weight read as the BOS share" if self.measure == "share" else ""
        return f"paper {self.kind} ({shape}{res}, {self.values} values{share})"


@dataclass(frozen=True)
class PaperHypothesis:
    """``max ||f_t - y_t||_2 <= max_error`` over every position of every sequence (read
    exactly as written, a Fraction in ``[0, 1)``)."""

    max_error: Fraction

    def __post_init__(self) -> None:
        object.__setattr__(self, "max_error", error_level(self.max_error, "hypothesis.max_error"))

    @property
    def eps_exact(self) -> Fraction:
        return self.max_error

    def describe(self) -> str:
        return (f"error (Euclidean) <= {show(self.max_error)} at every position of every "
                "sequence of the family")


@dataclass(frozen=True)
class PaperConclusion:
    """BOS weight ``>= min_bos_mass`` at (every | some) non-trigger position ``t >= 1``, in
    (some | every) head, the heads of every layer counted together."""

    min_bos_mass: Fraction
    positions: str = "every"
    heads: str = "some"
    at: str = "nontrigger"

    def __post_init__(self) -> None:
        object.__setattr__(self, "min_bos_mass", bos_mass(
            self.min_bos_mass, "conclusion.min_bos_mass", positive=True))
        choice("conclusion.positions quantifier", self.positions, QUANTIFIERS)
        choice("conclusion.heads quantifier", self.heads, QUANTIFIERS)
        choice("conclusion.at", self.at, ("nontrigger",))

    @property
    def b_exact(self) -> Fraction:
        return self.min_bos_mass

    def describe(self) -> str:
        heads = "in some head of some layer" if self.heads == "some" else "in every head"
        where = ("at every non-trigger position" if self.positions == "every"
                 else "at some non-trigger position")
        return f"BOS weight >= {show(self.min_bos_mass)} {heads}, {where} (t >= 1)"


@dataclass(frozen=True)
class PaperCheckOptions(CheckOptions):
    """How hard to look: search ``restarts``, ``seed``, ``budget`` (seconds: no restart and
    no chunk of 100 steps starts after it, so one compile or chunk may overrun it),
    ``steps`` of gradient descent per restart, ``samples`` (seeded sequences when content is
    continuous), a ``certificate`` file to try, where to write a ``witness``, and
    ``max_work`` (the most prefixes an exact route enumerates)."""

    restarts: int = 4
    steps: int = 1500
    samples: int = 256

    def __post_init__(self) -> None:
        super().__post_init__()
        as_int("check.steps", self.steps, minimum=1)
        as_int("check.samples", self.samples, minimum=1)


@dataclass(frozen=True)
class PaperClaim(ClaimParts):
    """A statement about every accurate model of a paper class; see the module docstring.
    The task carries residual targets exactly when the class has several layers."""

    task: PaperTask
    model_class: PaperModelClass
    hypothesis: PaperHypothesis
    conclusion: PaperConclusion
    options: PaperCheckOptions = field(default_factory=PaperCheckOptions)
    title: str = ""
    source: str | None = None

    setting = "paper"

    def __post_init__(self) -> None:
        if not isinstance(self.task, PaperTask):
            raise TypeError(f"a paper claim's task must be a PaperTask, got "
                            f"{type(self.task).__name__}")
        if not isinstance(self.model_class, PaperModelClass):
            raise TypeError("a paper claim's model_class must be a PaperModelClass")
        if self.task.residual != self.model_class.residual:
            object.__setattr__(self, "task", self.task.replace(residual=self.model_class.residual))

    def same_instance(self, instance: Mapping[str, Any]) -> bool:
        """Whether a verified statement's ``instance`` (``n``, ``L``, the content vectors as
        exact rationals) is this claim's task exactly."""
        task = self.task
        if not task.finite:
            return False
        vectors = [[format_rational(Fraction(float(v))) for v in c] for c in task.content]
        return (instance.get("n"), instance.get("L"),
                instance.get("content", {}).get("vectors")) == (task.n, task.L, vectors)

    @property
    def exhaustive(self) -> bool:
        """Whether the family is finite (exact decisions) or continuous (sampled)."""
        return self.task.finite

    def to_dict(self) -> dict[str, Any]:
        con = self.conclusion
        task = self.task.describe()
        task.pop("residual", None)
        opts = {k: v for k, v in vars(self.options).items() if v is not None}
        return dict(title=self.title, task=task, model=self.model_class.to_dict(),
                    hypothesis=dict(max_error=show(self.hypothesis.max_error)),
                    conclusion=dict(min_bos_mass=show(con.min_bos_mass), at=con.at,
                                    positions=con.positions, heads=con.heads),
                    check=opts)

    def __repr__(self) -> str:
        label = f"{self.title!r}: " if self.title else ""
        return f"PaperClaim({label}{self.statement()})"


def is_paper_claim_data(data: Any) -> bool:
    """Whether parsed claim data names the paper's setting (``[task] setting = "paper"``)."""
    return (isinstance(data, Mapping) and isinstance(data.get("task"), Mapping)
            and data["task"].get("setting") == "paper")


def paper_claim_from_dict(data: Mapping[str, Any], source: str | None = None) -> PaperClaim:
    """Build a :class:`PaperClaim` from parsed TOML/JSON data, checking every field."""
    unknown = sorted(set(data) - {*SECTIONS, "title"})
    if unknown:
        raise ValueError(f"unknown section or field {unknown[0]!r} in the claim "
                         f"(allowed: title, {', '.join(f'[{s}]' for s in SECTIONS)})")
    title = data.get("title", "")
    if not isinstance(title, str):
        raise TypeError("title must be a string")
    task_d = section(data, "task")
    no_unknown("task", task_d, {"setting", "n", "L", "content", "grid"})
    content = task_d.get("content")
    if isinstance(content, list):  # decimals as written -> the floats the task holds
        task_d["content"] = [[float(exact(v, "task.content")) for v in row]
                             if isinstance(row, list) else row for row in content]
    task = PaperTask.from_description(dict(task_d))
    model = section(data, "model")
    no_unknown("model", model, {"kind", "heads", "layers", "values"})
    model_class = PaperModelClass(**model)
    hyp = section(data, "hypothesis")
    no_unknown("hypothesis", hyp, {"max_error"})
    if "max_error" not in hyp:
        raise ValueError("[hypothesis] needs max_error (the error bound epsilon)")
    con = section(data, "conclusion")
    no_unknown("conclusion", con, {"min_bos_mass", "at", "positions", "heads"})
    if "min_bos_mass" not in con:
        raise ValueError("[conclusion] needs min_bos_mass (a paper claim states a number)")
    check = section(data, "check", required=False)
    no_unknown("check", check, set(PaperCheckOptions.__dataclass_fields__))
    if isinstance(check.get("budget"), (Decimal, Fraction, str)):
        check["budget"] = float(exact(check["budget"], "check.budget"))
    return PaperClaim(task=task, model_class=model_class,
                      hypothesis=PaperHypothesis(hyp["max_error"]),
                      conclusion=PaperConclusion(**con), options=PaperCheckOptions(**check),
                      title=title, source=source)


__all__ = ["MODEL_KINDS", "PaperCheckOptions", "PaperClaim", "PaperConclusion",
           "PaperHypothesis", "PaperModelClass", "is_paper_claim_data", "paper_claim_from_dict"]
