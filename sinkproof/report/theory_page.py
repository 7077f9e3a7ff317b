"""Generate ``docs/theory.md``: every theorem's statement, proof sketch, hypotheses as data
and its exact constants on the default instance, printed by code.

    python -m sinkproof.report.theory_page > docs/theory.md

``tests/test_symbolic_docs.py`` asserts the committed page equals this output.
"""

from __future__ import annotations

import sys
from itertools import combinations

import sympy

from ..symbolic.bounds import ray_gap
from ..symbolic.normbound import (
    eps_min,
    eps_min_enclosure,
    eps_min_expr,
    norm_needed_closed_form,
)
from ..symbolic.theorem4 import verify_theorem4
from ..task import TriggerTask
from ..theorems import FORMULAS, THEOREMS, Theorem
from .tightness import theorem1_tightness_section, theorem5_sandwich_section

DEFAULT_TASK = TriggerTask(p=2, T=6)
DEFAULT_EPS = sympy.Rational(1, 100)
COMMAND = "python -m sinkproof.report.theory_page > docs/theory.md"


def _s(x: object) -> str:
    return sympy.sstr(x)


def _header(th: Theorem) -> list[str]:
    classes = "; ".join(f"`{c}`" for c in th.model_classes)
    who = "the witness belongs to" if th.conclusion == "witness" else "covers every model of"
    lines = [f"## Theorem {th.number}: {th.title}", "",
             f"**Statement.** {th.statement}", "",
             f"**Proof sketch.** {th.proof}", "",
             f"**Hypotheses as data** (`THEOREMS[{th.name!r}]`):", "",
             f"- model class ({who}): {classes}",
             f"- error `<= ε` needed at: {th.error_hypothesis}",
             f"- side conditions: {', '.join(th.conditions) if th.conditions else 'none'}"]
    for name in th.formulas:
        if name in FORMULAS:
            lines.append(f"- `{name}`: `{_s(FORMULAS[name].expr)}`")
    return lines + [""]


def _table(columns: list[str], rows: list[list[object]]) -> list[str]:
    out = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return out + [""]


def _seq(seq: tuple[int, ...]) -> str:
    return "(" + ", ".join("TRIG" if x == -1 else str(x) for x in seq) + ")"


def _theorem1(task: TriggerTask, eps: sympy.Expr) -> list[str]:
    inst = THEOREMS["theorem1"].instantiate(task, eps)
    rows = []
    for c in range(task.k):
        item = inst.bound_at((c,) * task.T, task.T)
        vector = tuple(sympy.Rational(x) for x in task.token_features_exact(c)[: task.p])
        rows.append([c, f"`{_s(vector)}`", item.note, f"`{_s(item.bound)}`"])
    return (["Fixed values, ε = " + _s(eps) + ": the same bound at every `n = 1..T` of `X^c_n`.",
             ""] + _table(["c", "vector", "norm", "BOS mass >="], rows))


def _theorem2(task: TriggerTask, eps: sympy.Expr) -> list[str]:
    inst = THEOREMS["theorem2"].instantiate(task, eps, lengths=[1])
    rows = []
    for c, d in combinations(range(task.k), 2):
        gap = ray_gap(task.content[c], task.content[d])
        item = next(i for i in inst.items if i.targets[0][0][0] == c and i.targets[1][0][0] == d)
        rows.append([f"{c}, {d}", f"`{_s(gap.exact)}`", gap.case,
                     f"`{_s(item.bound)}` ≈ {item.value:.6f}"])
    return (["Ray gaps of every pair (exact) and the pair bound at ε = " + _s(eps)
             + " (the same for every `m`):", ""]
            + _table(["c, c'", "g(c, c')", "case", "max BOS mass of the pair >="], rows))


def _theorem3(task: TriggerTask, eps: sympy.Expr) -> list[str]:
    inst = THEOREMS["theorem3"].instantiate(task, eps)
    rows = [[f"`{_seq(i.targets[0][0])}`", i.targets[0][1], i.note,
             f"`{_s(i.bound)}` ≈ {i.value:.6f}"] for i in inst.items]
    rows += [[f"`{_seq(s)}`", t, "—", why] for (s, t), why in inst.no_bound]
    return (["Fixed values, ε = " + _s(eps) + "; one representative per set of tokens seen "
             "(every other sequence with the same set has the same `d_t`):", ""]
            + _table(["prefix", "t", "hull distance", "BOS mass >="], rows))


def _theorem7(task: TriggerTask, eps: sympy.Expr) -> list[str]:
    inst = THEOREMS["theorem7"].instantiate(task, eps, positions=[((0, 1), 2), ((0,) * 3, 3)])
    rows = [[f"`{_seq(i.targets[0][0])}`", i.targets[0][1], f"`{_s(i.bound)}` ≈ {i.value:.6f}"]
            for i in inst.items]
    return (["The same exact numbers as Theorem 3 with fixed values, now for every head of a "
             f"model with any number of heads (ε = {_s(eps)}), for example:", ""]
            + _table(["prefix", "t", "BOS mass >= (every head)"], rows))


def _theorem4(task: TriggerTask) -> list[str]:
    v = verify_theorem4(task.p)
    check = THEOREMS["theorem4"].instantiate(task).family_check()
    rows = [[i.group, i.case, "yes" if i.holds else "**no**"] for i in v.identities]
    return ([f"Symbolic check for p = {task.p} (every length, every content vocabulary; "
             f"`t = m + 2`, `m >= 0`): **holds = {v.holds}**.", ""]
            + _table(["group", "case", "holds"], rows)
            + [f"Exact rational check on all of S_T (p = {task.p}, T = {task.T}, "
               f"{check.n_prefixes} distinct prefixes): max error² = {check.max_error_sq}, "
               f"max BOS weight = {check.max_bos_weight}, **holds = {check.holds}**.", ""])


def _theorem5(task: TriggerTask) -> list[str]:
    rows = []
    for B in (1, 2, 4, 8, 16):
        lo, hi = eps_min_enclosure(task, B)
        rows.append([B, f"{eps_min(task, B):.6e}", f"[{lo:.6e}, {hi:.6e}]"])
    needed = THEOREMS["theorem5"].instantiate(task, sympy.Rational(1, 100)).needed
    return (["`ε_min(B)` with the exact constants of the default instance:", "", "```text",
             _s(eps_min_expr(task)), "```", ""]
            + _table(["B", "ε_min(B)", "certified enclosure"], rows)
            + ["Error `<= ε` needs (closed form, valid for ε < 1): `B >= "
               + _s(norm_needed_closed_form(task)) + "`; by bisection for ε = 1/100: "
               f"`‖A‖_2 > {needed.below:.6f}` (certified).", ""]
            + _report_tables(task))


def _report_tables(task: TriggerTask) -> list[str]:
    """The tightness tables of ``sinkproof report`` (Theorems 5 and 1 against the construction)."""
    out = ["Both sides of the sandwich, and Theorem 1 against the same construction "
           f"(`sinkproof report --p {task.p} --T {task.T}` prints these tables):", ""]
    for section in (theorem5_sandwich_section, theorem1_tightness_section):
        for table in section(task):
            out += [f"*{table.title}.*", ""]
            out += _table(table.columns, [[_cell(c) for c in row] for row in table.rows])
            out += [table.caption, ""]
    return out


def _cell(x: object) -> str:
    return f"{x:.4g}" if isinstance(x, float) else str(x)


def _session(lines: list[str]) -> list[str]:
    """A ``pycon`` block: each line run here, its value's repr written under it."""
    namespace: dict[str, object] = {}
    out = ["```pycon"]
    for line in lines:
        out.append(">>> " + line)
        try:
            code = compile(line, "<theory_page>", "eval")
        except SyntaxError:
            exec(compile(line, "<theory_page>", "exec"), namespace)
            continue
        value = eval(code, namespace)
        if value is not None:
            out.append(repr(value))
    return out + ["```"]


def generate(task: TriggerTask = DEFAULT_TASK, eps: sympy.Expr = DEFAULT_EPS) -> str:
    """The whole page as a string."""
    lines = [
        "# Theory: the statements, their hypotheses, and their constants",
        "",
        f"<!-- generated by `{COMMAND}`; do not edit by hand -->",
        "",
        "This page is generated by code from the theorem registry "
        "(`sinkproof.theorems.THEOREMS`); a test fails when it differs from a fresh run. "
        "The mathematical contract is THEORY.md (section 4); the statements below are its "
        f"text. Instance: `{task!r}` (content indices: 0 = e1, 1 = e2, 2 = -e1, 3 = -e2), "
        f"ε = {_s(eps)}.",
        "",
        "Everything here can be reproduced in a shell:",
        "",
        *_session([
            "import sinkproof as sp",
            "from sinkproof.modelclass import ModelClass",
            "from sinkproof.symbolic import verify_theorem4",
            "from sinkproof.theorems import THEOREMS",
            "task = sp.TriggerTask(p=2, T=6)",
            'bound = THEOREMS["theorem1"].instantiate(task, "1/100")',
            "bound.bound_at((0, 0, 0), 3)",
            "THEOREMS['theorem1'].applies_to(ModelClass('softmax', heads=2, values='fixed'))",
            "verify_theorem4(p=2).holds",
        ]),
        "",
        "`applies_to` compares model classes field by field; the checker says *proved by "
        "Theorem k* only when it returns `True`. `instantiate` returns exact SymPy bounds with "
        "the (sequence, position) pairs where the error hypothesis is needed "
        "(`bound.hypothesis`); `bound.check(model)` holds a model against them.",
        "",
    ]
    sections = {
        "theorem1": lambda: _theorem1(task, eps),
        "theorem2": lambda: _theorem2(task, eps),
        "theorem3": lambda: _theorem3(task, eps),
        "theorem4": lambda: _theorem4(task),
        "theorem5": lambda: _theorem5(task),
        "theorem6": lambda: ["Instantiated by the sink map (`sinkproof.sink_map`), which "
                             "solves the SOCP and certifies its bound; see that page.", ""],
        "theorem7": lambda: _theorem7(task, eps),
    }
    for name, th in THEOREMS.items():
        lines += _header(th)
        lines += ["**On the default instance.**", ""] + sections[name]()
    return "\n".join(lines).rstrip() + "\n"


def main() -> int:
    sys.stdout.write(generate())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
