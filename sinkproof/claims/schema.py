"""A claim about every accurate model of a class, as data (TOML or JSON).

    for every model M in the class with error(M) <= max_error on the family,
    at every (or some) position of the set, some (or every) head of M has
    BOS mass >= min_bos_mass                (or: >= the named theorem's bound)

A claim file has four sections::

    title = "one softmax head with fixed values sinks on homogeneous sequences"
    [task]        # the task's description: setting (default "trigger") and its arguments
                  # (p, T, content, positions, triggers, k, seed | n, L, content, grid)
    [model]       # the model class: kind, heads, values, and by the task's capabilities
                  # positions, value_features (a task with positional features) or layers,
                  # residual (a task without them: a stack of layers, residual by default
                  # when there are several; residual = false: a pure composition)
    [hypothesis]  # max_error; family = "S_T" | "homogeneous" | "pairs" | [[seq], ...]
                  # (families other than the whole one need a task with positions)
    [conclusion]  # min_bos_mass or theorem; at (default "nontrigger" where the task has no
                  # positions; there also one prefix: at = [[c_1], [c_2], ...] with
                  # trigger = K, 1-based); positions = "every"|"some"; heads = "some"|"every"
    [check]       # optional: restarts, seed, budget, certificate, witness, max_work;
                  # steps, samples (the stack search of a task without positions)

One :class:`Claim` type holds every setting: the task is data (any
:class:`~sinkproof.tasks.Task`), and which parts a claim may hold is decided by the task's
capabilities (``has_positions``: position sets, hypothesis families and the
positional-scheme model class; without it: the stack class and the whole family), never by
the setting's name.  Every field is checked on load; an unknown field, a wrong type or a
missing section is a one-line ``ValueError``/``TypeError``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import Any

from .. import work
from .._validate import as_int, choice
from ..attention import MAPS
from ..exact_numbers import bos_mass, error_level, exact, load_json, load_toml, show
from ..modelclass import ModelClass
from ..task import TRIG, TriggerTask
from ..tasks import task_from_description
from ..tasks.protocol import Task, require
from .fields import no_unknown, section
from .options import STACK_OPTIONS, STACK_RESTARTS, CheckOptions, ClaimParts
from .positions import ContentPrefix, PositionSet, parse_sequence

FAMILIES: dict[str, str] = {
    "S_T": "every sequence of the task's family",
    "homogeneous": "the homogeneous sequences X^c_n = (BOS, c, ..., c), n <= T",
    "pairs": "X^c_m and T^c_m = (BOS, c^m, TRIG) for every c and m < T (Theorem 2's sequences)",
}
QUANTIFIERS = ("every", "some")
SECTIONS = ("task", "model", "hypothesis", "conclusion", "check")
STACK_VALUES = ("learned", "fixed")


@dataclass(frozen=True)
class StackClass:
    """Stacks of ``layers`` layers of ``heads`` full-width ``kind`` heads, for a task without
    positional features: ``residual`` connections (``x <- x + layer(x)``, and the residual
    targets; default: when there are several layers, as in the paper's code) or a **pure
    composition** (``residual = False``: layer ``l+1`` reads only layer ``l``'s output, the
    one-layer targets); ``values`` ``"learned"`` (any ``W_V``, ``W_O``) or ``"fixed"`` (one
    layer of one head with ``W_O W_V = I - e_0 e_0^T``: a token's value is the token without
    its BOS coordinate, so ``v_BOS = 0``)."""

    kind: str = "softmax"
    heads: int = 1
    layers: int = 1
    values: str = "learned"
    residual: bool | None = None

    def __post_init__(self) -> None:
        choice("model.kind", self.kind, tuple(MAPS))
        object.__setattr__(self, "heads", as_int("model.heads", self.heads, minimum=1))
        object.__setattr__(self, "layers", as_int("model.layers", self.layers, minimum=1))
        choice("model.values", self.values, STACK_VALUES)
        if self.residual is None:
            object.__setattr__(self, "residual", self.layers > 1)
        elif not isinstance(self.residual, bool):
            raise TypeError(f"model.residual must be true or false, got {self.residual!r}")
        elif self.residual and self.layers == 1:
            raise ValueError("model.residual = true needs layers > 1 (one layer has the "
                             "one-layer targets)")
        if self.values == "fixed" and (self.heads, self.layers) != (1, 1):
            raise ValueError("model.values = \"fixed\" is defined for one layer of one head "
                             "(W_O W_V = I - e_0 e_0^T); use values = \"learned\"")

    @property
    def measure(self) -> str:
        """``"weight"`` (``α_t0``) on the simplex, ``"share"`` (``α_t0 / Σ_k α_tk``) off it."""
        return "weight" if MAPS[self.kind].properties.on_simplex else "share"

    def as_model_class(self) -> ModelClass | None:
        """The same class in the theorem registry's terms (one layer: any scores, token-only
        values; fixed values are ``U_fix``); ``None`` for several layers, which the
        registry's classes do not describe."""
        if self.layers != 1:
            return None
        return ModelClass(kind=self.kind, heads=self.heads, values=self.values,
                          positions="any", value_features="token")

    @property
    def pure(self) -> bool:
        """A pure composition of several layers (no residual connections)."""
        return self.layers > 1 and not self.residual

    def contains(self, kind: str, heads: int, layers: int, values: str) -> bool:
        """Whether a model of that shape belongs to this class (fixed values are learned
        values of one particular kind)."""
        return ((kind, heads, layers) == (self.kind, self.heads, self.layers)
                and (self.values == "learned" or values == "fixed"))

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = dict(kind=self.kind, heads=self.heads, layers=self.layers,
                                   values=self.values)
        if self.residual != (self.layers > 1):  # only when not the default
            out["residual"] = self.residual
        return out

    def __str__(self) -> str:
        shape = f"{self.layers} layer{'s' if self.layers > 1 else ''} x {self.heads} " \
                f"head{'s' if self.heads > 1 else ''}"
        res = ", residual" if self.residual else ", pure composition" if self.pure else ""
        share = "; BOS weight read as the BOS share" if self.measure == "share" else ""
        return f"{self.kind} stack ({shape}{res}, {self.values} values{share})"


def decimal_fraction(x: Any) -> Fraction:
    """The number a reader sees in ``x``, exactly (:func:`sinkproof.exact_numbers.exact`).

    Claims state ε and b as decimals or ratios; ``0.05`` (float, Decimal or text) means
    ``1/20``, not the binary float nearest to it, so proofs and refutations compare
    against exactly that number.
    """
    return exact(x)


@dataclass(frozen=True)
class Hypothesis:
    """``error <= max_error`` on a family: ``"S_T"``, a named subfamily, or explicit sequences.

    ``max_error`` is read exactly as written (a Fraction, int, Decimal, text such as
    ``"1/20"``, or a float read by its shortest decimal) and stored as a ``Fraction``
    in ``[0, 1)``.
    """

    max_error: Fraction
    family: str = "S_T"
    sequences: tuple[tuple[int, ...], ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "max_error", error_level(self.max_error, "hypothesis.max_error"))
        if self.family != "explicit" and self.family not in FAMILIES:
            raise ValueError(f"unknown family {self.family!r}; expected one of "
                             f"{', '.join(FAMILIES)} or a list of sequences")

    @property
    def eps_exact(self) -> Fraction:
        """ε as written in the claim (``0.05`` is ``1/20``), exactly."""
        return self.max_error

    def family_size(self, task: TriggerTask, cap: int) -> int:
        """The prefixes of the family (its sequences' lengths summed; ``S_T``: its
        sequences), in closed form, or ``cap + 1`` beyond ``cap``: nothing is listed."""
        if self.family == "S_T":
            return task.n_sequences_at_most(cap)
        if self.family == "explicit":
            return min(sum(len(s) for s in self.sequences), cap + 1)
        triangle = task.T * (task.T + 1) // 2  # X^c_1 .. X^c_T
        pairs = triangle - 1 if self.family == "pairs" else 0  # T^c_m, m = 1..T-1
        return min(task.k * (triangle + pairs), cap + 1)

    def family_sequences(self, task: TriggerTask) -> list[tuple[int, ...]] | None:
        """The sequences of the family (``None`` for the whole of ``S_T``)."""
        if self.family == "S_T":
            return None
        if self.family == "explicit":
            return list(self.sequences)
        homogeneous = [(c,) * n for c in range(task.k) for n in range(1, task.T + 1)]
        if self.family == "homogeneous":
            return homogeneous
        return homogeneous + [(c,) * m + (TRIG,) for c in range(task.k) for m in range(1, task.T)]

    def describe(self) -> str:
        fam = (f"{len(self.sequences)} listed sequences" if self.family == "explicit"
               else FAMILIES[self.family])
        return f"error <= {show(self.max_error)} on {fam}"


@dataclass(frozen=True)
class Conclusion:
    """BOS mass ``>= min_bos_mass`` (or the named theorem's bound) at a set of positions.

    ``positions``: ``"every"`` position of the set, or ``"some"`` position of it.
    ``heads``: ``"some"`` head (a sink in at least one head) or ``"every"`` head.
    On a task without positional features ``at`` may name one position by its prefix
    (:class:`~sinkproof.claims.positions.ContentPrefix`: content vectors, ``trigger``).
    """

    at: PositionSet | ContentPrefix
    min_bos_mass: Fraction | None = None
    theorem: str | None = None
    positions: str = "every"
    heads: str = "some"

    def __post_init__(self) -> None:
        if (self.min_bos_mass is None) == (self.theorem is None):
            raise ValueError("the conclusion needs exactly one of 'min_bos_mass' and 'theorem'")
        if self.min_bos_mass is not None:
            object.__setattr__(self, "min_bos_mass", bos_mass(
                self.min_bos_mass, "conclusion.min_bos_mass", positive=True))
        if self.theorem is not None and not isinstance(self.theorem, str):
            raise TypeError("conclusion.theorem must be a theorem name such as \"theorem1\"")
        choice("conclusion.positions quantifier", self.positions, QUANTIFIERS)
        choice("conclusion.heads quantifier", self.heads, QUANTIFIERS)

    @property
    def b_exact(self) -> Fraction | None:
        """``min_bos_mass`` as written in the claim, exactly."""
        return self.min_bos_mass

    @property
    def some_sink_off_trigger(self) -> bool:
        """It asks a sink in some head at some non-trigger position (the weakest sink
        statement: what the pure-composition theorem proves)."""
        return (self.positions, self.heads, self.at.name) == ("some", "some", "nontrigger")

    def describe(self) -> str:
        what = (f"BOS mass >= {show(self.min_bos_mass)}" if self.theorem is None
                else f"BOS mass >= the bound of {self.theorem}")
        where = self.at.describe()
        quant = "at " + ("" if self.positions == "every" else "some position among ") + where
        heads = "in some head" if self.heads == "some" else "in every head"
        return f"{what} {heads}, {quant}"


@dataclass(frozen=True)
class Claim(ClaimParts):
    """A statement about every accurate model of a class on any task; see the module
    docstring.  The parts a claim may hold follow the task's capabilities: with
    positional features, a :class:`~sinkproof.modelclass.ModelClass`, any hypothesis
    family and any position set; without them, a :class:`StackClass`, the whole family,
    the non-trigger positions and a numeric bound (the task then carries residual targets
    exactly when the class has several layers)."""

    task: Task
    model_class: ModelClass | StackClass
    hypothesis: Hypothesis
    conclusion: Conclusion
    options: CheckOptions = field(default_factory=CheckOptions)
    title: str = ""
    source: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.task, Task):
            raise TypeError(f"a claim's task must be a Task, got {type(self.task).__name__}")
        if self.task.has_positions:
            self._check_positional()
        else:
            self._check_stack()

    def _check_positional(self) -> None:
        if not isinstance(self.model_class, ModelClass):
            raise TypeError("claim model_class must be a ModelClass on a task with positions")
        mc = self.model_class
        if mc.positions not in ("any", self.task.positions):
            raise ValueError(f"model positions {mc.positions!r} differ from the task's "
                             f"positional scheme {self.task.positions!r}")
        self.conclusion.at.check_task(self.task)
        for seq in self.hypothesis.sequences:
            self.task.encode(seq)

    def _check_stack(self) -> None:
        if not isinstance(self.model_class, StackClass):
            raise TypeError("claim model_class must be a StackClass on a task without "
                            "positional features")
        if self.hypothesis.family != "S_T":
            require(self.task, "has_positions", "hypothesis.family other than \"S_T\"")
        if self.conclusion.at.name not in ("nontrigger", "prefix"):
            require(self.task, "has_positions", "conclusion.at other than \"nontrigger\" "
                    "or a prefix of content vectors")
        if isinstance(self.conclusion.at, ContentPrefix):
            self.conclusion.at.check_task(self.task)
        if self.conclusion.min_bos_mass is None:
            raise ValueError("[conclusion] needs min_bos_mass on a task without positional "
                             "features (the claim states a number)")
        if self.task.residual_targets != self.model_class.residual:
            object.__setattr__(self, "task", self.task.replace(
                residual=self.model_class.residual))

    @property
    def exhaustive(self) -> bool:
        """Whether the family is finite (exact decisions) or continuous (sampled)."""
        return bool(self.task.finite)

    def to_dict(self) -> dict[str, Any]:
        """The claim as data (the inverse of :func:`claim_from_dict`)."""
        con, hyp = self.conclusion, self.hypothesis
        conclusion: dict[str, Any] = dict(at=con.at.to_json(), positions=con.positions,
                                          heads=con.heads)
        if getattr(con.at, "trigger", None) is not None:
            conclusion["trigger"] = con.at.trigger
        if con.theorem is None:
            conclusion["min_bos_mass"] = show(con.min_bos_mass)
        else:
            conclusion["theorem"] = con.theorem
        opts = {k: v for k, v in vars(self.options).items() if v is not None
                and (k not in STACK_OPTIONS or not self.task.has_positions)}
        task = self.task.describe()
        hypothesis: dict[str, Any] = dict(max_error=show(hyp.max_error))
        if self.task.has_positions:
            family: Any = hyp.family
            if family == "explicit":
                family = [["TRIG" if x == TRIG else x for x in s] for s in hyp.sequences]
            hypothesis["family"] = family
        else:
            task.pop("residual", None)  # the model's layers say it
        return dict(title=self.title, task=task, model=self.model_class.to_dict(),
                    hypothesis=hypothesis, conclusion=conclusion, check=opts)

    def __repr__(self) -> str:
        label = f"{self.title!r}: " if self.title else ""
        return f"Claim({label}{self.statement()})"

    def _repr_markdown_(self) -> str:
        title = f"**{self.title}**\n\n" if self.title else ""
        return title + f"Claim: {self.statement()}"


# ---------------------------------------------------------------- parsing
HYPOTHESIS_FIELDS = frozenset({"max_error", "family"})
"""The fields of ``[hypothesis]``."""
CONCLUSION_FIELDS = frozenset({"min_bos_mass", "theorem", "at", "trigger", "positions",
                               "heads"})
"""The fields of ``[conclusion]``."""


def _parse_hypothesis(d: dict[str, Any]) -> Hypothesis:
    no_unknown("hypothesis", d, HYPOTHESIS_FIELDS)
    if "max_error" not in d:
        raise ValueError("[hypothesis] needs max_error (the error bound epsilon)")
    family = d.get("family", "S_T")
    if isinstance(family, str):
        return Hypothesis(max_error=d["max_error"], family=family)
    if not isinstance(family, list) or not family:
        raise TypeError("hypothesis.family must be a family name or a non-empty list of sequences")
    return Hypothesis(max_error=d["max_error"], family="explicit",
                      sequences=tuple(parse_sequence(s) for s in family))


def _parse_at(d: dict[str, Any], default_at: str | None) -> PositionSet | ContentPrefix:
    """``at`` (and ``trigger``): a position set, or (a task without positional features:
    ``default_at`` is set) one prefix of content vectors."""
    at = d.get("at", default_at)
    prefix = (default_at is not None and isinstance(at, list) and bool(at)
              and all(isinstance(r, list) for r in at))
    if "trigger" in d and not prefix:
        raise ValueError("conclusion.trigger names the trigger among the tokens of a prefix "
                         "'at = [[...], ...]' (content vectors, a task without positions)")
    if prefix:
        rows = [[float(exact(v, "conclusion.at")) for v in r] for r in at]
        return ContentPrefix(tuple(tuple(r) for r in rows), d.get("trigger"))
    return PositionSet.parse(at)


def _parse_conclusion(d: dict[str, Any], default_at: str | None) -> Conclusion:
    no_unknown("conclusion", d, CONCLUSION_FIELDS)
    if "at" not in d and default_at is None:
        raise ValueError("[conclusion] needs 'at': a position set such as \"nontrigger\"")
    return Conclusion(at=_parse_at(d, default_at),
                      min_bos_mass=d.get("min_bos_mass"),
                      theorem=d.get("theorem"), positions=d.get("positions", "every"),
                      heads=d.get("heads", "some"))


def _parse_task(d: dict[str, Any]) -> Task:
    """The task a ``[task]`` section describes (``setting`` picks its class, by
    :func:`sinkproof.tasks.task_from_description`); content vectors written as decimals
    become the floats the task holds."""
    if "residual" in d:
        raise ValueError("unknown field in [task]: residual (residual connections are the "
                         "model's: [model] layers > 1)")
    content = d.get("content")
    if isinstance(content, list) and any(isinstance(row, list) for row in content):
        d["content"] = [[float(exact(v, "task.content")) for v in row]
                        if isinstance(row, list) else row for row in content]
    return task_from_description(d)


def _parse_model(d: dict[str, Any], task: Task) -> ModelClass | StackClass:
    """The ``[model]`` section as the class of the task's capabilities: a
    :class:`~sinkproof.modelclass.ModelClass` (positional scheme, value features) on a
    task with positions, a :class:`StackClass` (layers) without."""
    if task.has_positions:
        d.setdefault("positions", task.positions)
        return ModelClass.from_dict(d)
    no_unknown("model", d, set(StackClass.__dataclass_fields__))
    return StackClass(**d)


def _parse_options(d: dict[str, Any], task: Task) -> CheckOptions:
    """``[check]``: the stack search's ``steps`` and ``samples`` only where the task has no
    positions (their search is the stack search), which also starts from fewer restarts."""
    allowed = set(CheckOptions.__dataclass_fields__)
    if task.has_positions:
        allowed -= set(STACK_OPTIONS)
    else:
        d.setdefault("restarts", STACK_RESTARTS)
    no_unknown("check", d, allowed)
    if isinstance(d.get("budget"), (Decimal, Fraction, str)):  # seconds: a float is fine
        d["budget"] = float(exact(d["budget"], "check.budget"))
    return CheckOptions(**d)


def claim_from_dict(data: Mapping[str, Any], source: str | None = None) -> Claim:
    """Build a :class:`Claim` from parsed TOML/JSON data, checking every field; the
    ``[task]`` section's ``setting`` picks the task, and the task's capabilities which
    fields the other sections take."""
    if not isinstance(data, Mapping):
        raise TypeError(f"a claim must be a table of sections, got {type(data).__name__}")
    unknown = sorted(set(data) - {*SECTIONS, "title"})
    if unknown:
        raise ValueError(f"unknown section or field {unknown[0]!r} in the claim "
                         f"(allowed: title, {', '.join(f'[{s}]' for s in SECTIONS)})")
    title = data.get("title", "")
    if not isinstance(title, str):
        raise TypeError("title must be a string")
    task = _parse_task(section(data, "task"))
    model_class = _parse_model(section(data, "model"), task)
    options = _parse_options(section(data, "check", required=False), task)
    default_at = None if task.has_positions else "nontrigger"
    return refuse_oversized_model(Claim(
        task=task, model_class=model_class,
        hypothesis=_parse_hypothesis(section(data, "hypothesis")),
        conclusion=_parse_conclusion(section(data, "conclusion"), default_at),
        options=options, title=title, source=source))


def refuse_oversized_model(claim: Any) -> Any:
    """``claim``, or a refusal (:class:`~sinkproof.work.WorkLimitExceeded`, exit 4) when
    one model of its class (``heads`` x ``layers`` heads on rows of the task's dimension
    ``D``) would hold more than :data:`~sinkproof.work.MAX_MODEL_WEIGHTS` weights: every
    route that searches or checks a model builds one."""
    heads = claim.model_class.heads or 1
    layers = getattr(claim.model_class, "layers", 1)
    weights = work.model_weights(layers, heads, claim.task.D)
    if weights > work.MAX_MODEL_WEIGHTS:
        raise work.WorkLimitExceeded(
            f"not started: a model of {layers:,} layer(s) x {heads:,} head(s) on rows of "
            f"dimension {claim.task.D:,} holds about {weights:,} weights, beyond the limit of "
            f"{work.MAX_MODEL_WEIGHTS:,} (lower model.heads, model.layers or the task's size)")
    return claim


def load_claim(path: str | Path) -> Claim:
    """Read a claim (either setting) from a ``.toml`` or ``.json`` file."""
    path = Path(path)
    text = path.read_text(encoding="utf-8")
    try:
        data = load_json(text) if path.suffix.lower() == ".json" else load_toml(text)
    except ValueError as exc:  # TOMLDecodeError and JSONDecodeError are ValueErrors
        raise ValueError(f"{path}: not valid {path.suffix.lstrip('.') or 'TOML'}: {exc}") from None
    try:
        return claim_from_dict(data, source=str(path))
    except (ValueError, TypeError) as exc:
        raise type(exc)(f"{path}: {exc}") from None


def content_domain(claim: Claim) -> str:
    """What a claim on a task without positions quantifies over, in words: a finite set of
    content vectors, or every content vector of the box (worst case, not sampled)."""
    task = claim.task
    if task.finite:
        return f"the finite set of {task.m} content vectors (exhaustive)"
    text = (f"every content vector of [-1, 1]^{task.content_dim} (continuous: every "
            "sequence, worst case)")
    if claim.conclusion.at.name == "prefix":
        text += "; the vectors of 'at' fix only the position's trigger pattern"
    return text


def iter_sections(claim: Claim) -> Iterator[tuple[str, str]]:
    """(label, text) lines that describe the claim, for reports."""
    yield "task", repr(claim.task)
    if not claim.task.has_positions:
        yield "content domain", content_domain(claim)
    yield "model class", str(claim.model_class)
    yield "hypothesis", claim.hypothesis.describe()
    yield "conclusion", claim.conclusion.describe()
