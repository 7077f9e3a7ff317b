"""The house rules, checked on the source: no import cycles, every import points down the
declared layers, the trusted checker imports only the standard library and mpmath, and the
entry points stay light (``sinkproof verify`` and ``--help`` load no numerical layer).

The import graph is read from the source with :mod:`ast` (every ``import`` statement,
including those inside functions), not by importing it.  Importing ``a.b.c`` also runs
``a/__init__`` and ``a/b/__init__``, so an import adds an edge to each package on the way
that is not already a package of the importer.
"""

from __future__ import annotations

import ast
import importlib
import json
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest

import sinkproof
from sinkproof import checker

ROOT = Path(sinkproof.__file__).resolve().parent

LAYERS: list[tuple[str, ...]] = [
    ("errors", "interrupts"),
    ("_version", "_validate", "_lazy", "_callable", "numerics", "progress", "exact_numbers",
     "executor", "stats", "tokens", "certformat", "shipped", "files"),
    ("tables", "work"),
    ("checker", "params"),           # checker TRUSTED: stdlib + mpmath (+ errors) only
    ("tasks",), ("task",),
    ("attention",), ("models", "stack"), ("model", "adversary"),
    ("forward", "autodiff", "evaluation"), ("kernel", "stackeval"), ("treekernel",),
    ("modelclass",), ("objective",), ("measures",),
    ("constructions",),
    ("symbolic",), ("convex",), ("bnb",), ("sinkmap", "reduced"),
    ("theorems",),
    ("search",),
    ("claims",),
    ("experiment", "stackwitness"), ("variants",), ("sweep",),
    ("report", "schemas"),
    ("strategies", "testing"), ("pytest_plugin",),
    ("cli_common",), ("commands",), ("cli",), ("__main__",),
]
"""The floors of the package, from the ground up.  A unit (a top-level module or
subpackage of ``sinkproof``) may import only units on floors strictly below its own (and
itself); units on one floor are independent.  ``sinkproof/__init__`` is the lobby: it
names every entry point lazily (by string, no import statement) and sits above all."""

TRUSTED = ("sinkproof.checker", "sinkproof.errors")
"""The trust boundary: these import only the standard library, mpmath and each other."""
LAZY_ALLOWED = {
    "sinkproof.theorems.theorem6": "the sink map needs CVXPY: loaded when Theorem 6 is used",
    "sinkproof.sweep.jobs": "a job kind loads its own layer, in the worker that runs it",
    "sinkproof.sweep.evidence": "a cached verdict is checked by its job kind's layer (claims, "
                                "convex), loaded only when such an entry is read",
    "sinkproof.cli_common": "verify and --help stay light: the task and model layers load "
                            "when a command that builds a task registers or runs",
    "sinkproof.pytest_plugin": "pytest loads the plugin in every run of the environment: "
                               "each fixture imports its layer when a test uses it",
    "sinkproof.claims.check": "each route loads its layer when it runs (certificates, the "
                              "engine, the search: JAX): a claim a theorem proves loads none",
    "sinkproof.claims.certified": "the certificate makers (sink map, convex programs) load "
                                  "when they run: verifying a given file needs the checker only",
    "sinkproof.claims.implications": "the engine's package loads only for the claimed "
                                     "prefixes of a task without positions",
}
"""Modules outside ``sinkproof.commands`` that may import sinkproof modules inside functions,
and why.  Commands import their layers when they run, so that ``COMMAND --help`` stays
light; everywhere else an import inside a function hides a dependency (and, before
``tests/test_architecture.py``, hid two import circles)."""
HEAVY = ("numpy", "scipy", "sympy", "cvxpy", "jax", "jaxlib", "optax", "matplotlib", "dask")


def render_floors() -> str:
    """The floors as docs/architecture.md lists them (top floor first)."""
    width = max(len(", ".join(f)) for f in LAYERS)
    lines = [f"{i:>3}  {', '.join(f):<{width}}" for i, f in enumerate(LAYERS)]
    return "\n".join(reversed([line.rstrip() for line in lines]))


def _module_name(path: Path) -> str:
    parts = ["sinkproof", *path.relative_to(ROOT).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@cache
def modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(ROOT.rglob("*.py"))}


def _imported(name: str, path: Path) -> set[str]:
    """Absolute names of everything ``name`` imports (anywhere in the file)."""
    is_pkg = path.name == "__init__.py"
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".") if is_pkg else name.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            out.add(target)
            out.update(f"{target}.{a.name}" for a in node.names)  # submodules, if they are
    return out


@cache
def graph() -> dict[str, frozenset[str]]:
    """Module -> sinkproof modules it runs on import (with the packages on the way)."""
    mods = modules()
    edges = {}
    for name, path in mods.items():
        own = {".".join(name.split(".")[:i]) for i in range(1, name.count(".") + 1)}
        if path.name == "__init__.py":
            own.add(name)
        deps = set()
        for target in _imported(name, path):
            parts = target.split(".")
            for i in range(1, len(parts) + 1):
                prefix = ".".join(parts[:i])
                if prefix in mods and prefix not in own:
                    deps.add(prefix)
        deps.discard(name)
        edges[name] = frozenset(deps)
    return edges


def external(name: str) -> set[str]:
    """Top-level names of the non-sinkproof modules ``name`` imports."""
    return {t.split(".")[0] for t in _imported(name, modules()[name])} - {"", "sinkproof"}


def unit(name: str) -> str:
    parts = name.split(".")
    return parts[1] if len(parts) > 1 else ""


def floor_of() -> dict[str, int]:
    return {u: i for i, floor in enumerate(LAYERS) for u in floor}


def test_docs_list_the_floors_of_this_test():
    doc = (ROOT.parent / "docs" / "architecture.md").read_text(encoding="utf-8")
    assert f"```text\n{render_floors()}\n```" in doc, (
        "docs/architecture.md must show LAYERS as tests/test_architecture.py renders them:\n"
        + render_floors())


def test_every_theorem_module_is_registered():
    from sinkproof.theorems import THEOREMS

    files = sorted(p.stem for p in (ROOT / "theorems").glob("theorem[0-9]*.py"))
    assert [f"theorem{t.number}" for t in THEOREMS.values()] == files
    assert [t.name for t in THEOREMS.values()] == files
    for thm in THEOREMS.values():
        assert thm.model_classes and thm.statement and thm.proof
        if thm.conclusion == "bos_lower_bound" and thm.name != "theorem6":
            assert thm._bound is not None, f"{thm.name}: bound() is how claims use it"


def test_every_task_setting_runs_the_conformance_suite():
    from sinkproof.tasks import TASKS
    from tests.test_tasks_protocol import ALL

    assert {task.setting for task in ALL.values()} == set(TASKS)


def test_the_graph_is_read_from_the_source():
    g = graph()
    assert "sinkproof.checker" in g["sinkproof.commands.verify"]  # an import inside run()
    assert "sinkproof.symbolic.bounds" in g["sinkproof.theorems.theorem1"]
    assert "sinkproof.symbolic" in g["sinkproof.theorems.theorem1"]  # the package on the way
    assert "sinkproof.theorems" not in g["sinkproof.theorems.theorem1"]  # its own package


def test_every_unit_has_a_floor():
    floors = floor_of()
    missing = sorted({unit(m) for m in modules()} - set(floors) - {""})
    assert not missing, f"add these modules to LAYERS in tests/test_architecture.py: {missing}"


def test_no_import_cycles():
    g = graph()
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles = []

    def visit(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in g[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                cycles.append(sorted(comp))

    for v in sorted(g):
        if v not in index:
            visit(v)
    assert not cycles, f"import cycles: {cycles}"


def test_every_import_points_down_the_layers():
    floors = floor_of()
    bad = []
    for name, deps in graph().items():
        src = unit(name)
        if src == "":
            continue  # the package __init__: lazy names only (checked below)
        for dep in deps:
            dst = unit(dep)
            if dst == src:
                continue
            if dst == "" or floors.get(dst, -1) >= floors.get(src, -1):
                bad.append(f"{name} imports {dep}")
    assert not bad, "imports that do not point down the layers:\n" + "\n".join(sorted(bad))


def _imports_inside_functions(name: str) -> list[str]:
    path = modules()[name]
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for sub in ast.walk(node):
                if isinstance(sub, ast.ImportFrom):
                    ours = bool(sub.level) or (sub.module or "").startswith("sinkproof")
                elif isinstance(sub, ast.Import):
                    ours = any(a.name.startswith("sinkproof") for a in sub.names)
                else:
                    continue
                if ours:
                    out.append(f"{path.relative_to(ROOT.parent)}:{sub.lineno} ({node.name})")
    return out


def test_sinkproof_imports_sit_at_the_top_of_modules():
    bad = [line for name in modules()
           if not name.startswith("sinkproof.commands") and name not in LAZY_ALLOWED
           for line in _imports_inside_functions(name)]
    assert not bad, ("imports of sinkproof modules inside functions (move them to the top, "
                     "or add the module to LAZY_ALLOWED with the reason):\n" + "\n".join(bad))


def test_the_trusted_checker_imports_only_the_standard_library_and_mpmath():
    allowed = set(sys.stdlib_module_names) | {"mpmath", "__future__"}
    bad = []
    for name in modules():
        if not name.startswith(TRUSTED):
            continue
        bad += [f"{name} imports {dep}" for dep in graph()[name] if not dep.startswith(TRUSTED)]
        bad += [f"{name} imports {ext}" for ext in external(name) - allowed]
    assert not bad, "\n".join(bad)


def test_the_package_init_imports_nothing_heavy():
    assert graph()["sinkproof"] <= {"sinkproof._version"}
    assert external("sinkproof") <= set(sys.stdlib_module_names) | {"__future__"}


def test_lazy_names_resolve_and_dir_lists_the_entry_points():
    assert set(dir(sinkproof)) == {*sinkproof.__all__, "__version__"}
    for name in sinkproof.__all__:
        assert getattr(sinkproof, name) is not None
    assert sinkproof.TriggerTask(p=1, T=2).n_sequences > 0
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        sinkproof.nope  # noqa: B018
    importlib.import_module("sinkproof.kernel")  # a submodule, bound on the package

    listed = dir(sinkproof)
    assert {"check", "search", "sink_map", "convex", "load_witness", "evaluate",
            "TriggerTask", "AttentionModel", "testing", "strategies"} <= set(listed)
    # the package's own machinery and its submodules are not entry points
    assert not {"annotations", "import_module", "Any", "kernel", "task", "_LAZY"} & set(listed)


def test_the_command_table_matches_the_command_modules():
    from sinkproof.cli import build_parser
    from sinkproof.commands import COMMANDS, module_of

    found = {p.stem for p in (ROOT / "commands").glob("*.py") if p.stem != "__init__"}
    assert {module_of(c) for c in COMMANDS} == found, \
        "sinkproof/commands/__init__.py COMMANDS (and MODULES) is out of date"
    sub = next(a for a in build_parser()._actions if a.__class__.__name__ == "_SubParsersAction")
    assert {a.dest: a.help for a in sub._choices_actions} == COMMANDS


def _fresh(code: str, *args: str) -> subprocess.CompletedProcess:
    """``code`` in a fresh interpreter; it prints the heavy modules loaded as JSON last."""
    probe = (f"print(json.dumps(sorted(set({HEAVY!r}) & set(sys.modules))))\n"
             "sys.exit(globals().get('rc', 0))")
    return subprocess.run([sys.executable, "-c", f"import json, sys\n{code}\n{probe}", *args],
                          capture_output=True, text=True, cwd=ROOT.parent, timeout=120)


def _loaded(run: subprocess.CompletedProcess) -> list[str]:
    return json.loads(run.stdout.strip().splitlines()[-1])


def test_import_and_help_load_no_numerical_layer():
    assert _loaded(_fresh("import sinkproof")) == []
    run = _fresh("from sinkproof.cli import main\ntry:\n main(['--help'])\n"
                 "except SystemExit:\n pass\nprint(sorted(m for m in sys.modules "
                 "if m.startswith('sinkproof.commands.')))")
    assert "verify" in run.stdout and _loaded(run) == []
    assert "[]" in run.stdout.splitlines()[-2]  # no command module was imported


@pytest.fixture(scope="module")
def certificates(tmp_path_factory) -> dict[str, Path]:
    """One real certificate of every kind, written by the producer."""
    from sinkproof.bnb import prove, prove_heads
    from sinkproof.convex import family_certificate, paper_family_certificate, position_certificate
    from sinkproof.search import witness_document

    out = tmp_path_factory.mktemp("certs")
    task = sinkproof.TriggerTask(p=1, T=3)
    files = {kind: out / f"{kind}.json" for kind in ("hull-family", "hull", "witness",
                                                     "sinkmap-socp", "bnb-learned-values",
                                                     "paper-hull-family", "bnb-heads",
                                                     "paper-witness",
                                                     "paper-bnb-learned-values",
                                                     "sinkmap-gated", "paper-subfamily-bnb",
                                                     "paper-composition")}
    # a new certificate kind needs a line here: the test below runs on every kind
    family_certificate(task, "1/100", "fixed").save(files["hull-family"])
    paper = sinkproof.PaperTask(n=4, L=5, content="grid", grid=2)
    paper_family_certificate(paper, "1/100").save(files["paper-hull-family"])
    from sinkproof.claims import claim_from_dict
    from sinkproof.claims.witness import stack_witness_document as paper_witness
    pclaim = claim_from_dict({"task": {"setting": "paper", "n": 4, "L": 4, "content": [[1.0]]},
                              "model": {"kind": "relu_length"},
                              "hypothesis": {"max_error": "1/100"},
                              "conclusion": {"min_bos_mass": "1/2"}})
    model = sinkproof.constructions.paper_relu_solution(pclaim.task)
    files["paper-witness"].write_text(json.dumps(paper_witness(pclaim, model)[0]))
    position_certificate(task, (0, 0), 2, "1/100").save(files["hull"])
    doc = witness_document(sinkproof.constructions.relu_solution(task), 1e-3, 0.0, "all")
    files["witness"].write_text(json.dumps(doc))
    sinkproof.sink_map(task, 0.1).save_certificate(files["sinkmap-socp"])
    sinkproof.sink_map(task, 0.1, kind="gated_softmax").save_certificate(files["sinkmap-gated"])
    claim = ROOT.parent / "examples" / "claims" / "learned_values_homogeneous.toml"
    files["bnb-learned-values"].write_text(json.dumps(prove(str(claim)).certificate))
    prove_heads(task, "1/20", 2, [(0, 1)]).save(files["bnb-heads"])
    from sinkproof.bnb import prove_paper
    one = sinkproof.PaperTask(n=4, L=4, content=[[1.0]])
    prove_paper(one, "1/20", min_bos_mass="1/2", some=True).save(
        files["paper-bnb-learned-values"])
    from sinkproof.reduced import prove_subfamily
    prove_subfamily(one, "1/20", targets=[(0,)], max_nodes=20).save(files["paper-subfamily-bnb"])
    from sinkproof.theorems.composition import composition_bound
    two = sinkproof.PaperTask(n=4, L=5, content=[[-1.0], [1.0]])
    files["paper-composition"].write_text(
        json.dumps(composition_bound(two, "1/20", 2).certificate(two)))
    return files


@pytest.mark.parametrize("kind", sorted(checker.KIND_MODULES))
def test_verify_loads_no_numerical_layer(certificates, kind):
    assert kind in certificates, f"add a {kind!r} certificate to the certificates fixture"
    cert = json.loads(certificates[kind].read_text())
    assert cert["kind"] == kind
    run = _fresh("from sinkproof.cli import main; rc = main(['verify', sys.argv[1]])",
                 str(certificates[kind]))
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("verified"), run.stdout
    assert _loaded(run) == [], f"sinkproof verify ({kind}) loaded {_loaded(run)}"


# ------------------------------------------------------------ the checker's face
FACE = frozenset({"verify", "verify_file", "load", "Verdict", "Limits", "LimitExceeded",
                  "CertificateError", "weigh", "MAP_NAMES"})
"""What a producer may take from ``sinkproof.checker``: the rest is the trusted kernel's
inside, free to change (and kept out of the producers' utility library).  ``weigh`` (a
head's rigorous weights from the rule table, and the maps it knows, ``MAP_NAMES``) is a
public service: a construction bounded with it needs no producer twin of the rule table."""
SETTING_MODULE_HOMES = ("sinkproof/tasks", "sinkproof/checker/family")
"""The only folders where a module may be named after a setting: a setting's task and its
trusted family reader.  Everything else is written once against the task protocol."""


def test_no_module_is_named_after_a_setting_outside_the_tasks_and_family_readers():
    """A module named ``paper*`` or ``trigger*`` (a setting of :data:`sinkproof.tasks.TASKS`)
    outside :data:`SETTING_MODULE_HOMES` is a fork of a module of another setting: its job
    belongs in the one module of that job, asking the task's capabilities.  No exceptions."""
    from sinkproof.tasks import TASKS

    named = []
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT.parent).as_posix()
        home = any(rel.startswith(h + "/") for h in SETTING_MODULE_HOMES)
        parts = path.relative_to(ROOT).with_suffix("").parts
        if not home and any(part.startswith(tuple(TASKS)) for part in parts):
            named.append(rel)
    assert not named, f"modules named after a setting (fold each into its job's module): {named}"
    assert {p.stem for p in (ROOT / "tasks").glob("*.py")} >= set(TASKS)  # the rule's homes


INTERNALS_DEBT: dict[str, str] = {}
"""Producer modules that still import the checker's inside (issue 23, item 4), and why.  The
list may only shrink: a module that no longer needs its entry fails the test below."""


def _checker_imports(name: str, path: Path) -> set[str]:
    """What ``name`` takes from the checker: ``sinkproof.checker.X`` for a submodule or name
    imported, ``checker.X`` for an attribute used on an imported ``checker`` package."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    taken, aliases = set(), set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom):
            continue
        base = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        base = base[: len(base) - (node.level - 1)] if node.level else []
        target = ".".join(base + ([node.module] if node.module else [])) if node.level \
            else node.module or ""
        for alias in node.names:
            if target == "sinkproof" and alias.name == "checker":
                aliases.add(alias.asname or "checker")
            elif target == "sinkproof.checker":
                taken.add(f"sinkproof.checker.{alias.name}")
            elif target.startswith("sinkproof.checker."):
                taken.add(target)
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                and node.value.id in aliases):
            taken.add(f"sinkproof.checker.{node.attr}")
    return taken


def test_producers_import_only_the_checkers_face():
    allowed = {f"sinkproof.checker.{n}" for n in FACE}
    inside = {}
    for name, path in modules().items():
        if name.startswith(TRUSTED):
            continue
        extra = _checker_imports(name, path) - allowed
        if extra:
            inside[name] = sorted(extra)
    new = {m: used for m, used in inside.items() if m not in INTERNALS_DEBT}
    assert not new, f"producers reaching into the checker (import only {sorted(FACE)}): {new}"
    done = sorted(set(INTERNALS_DEBT) - set(inside))
    assert not done, f"no longer import checker internals: remove from INTERNALS_DEBT: {done}"


def test_the_producers_copy_of_the_format_agrees_with_the_checker():
    """``sinkproof.certformat`` is the producers' own copy of what the checker reads."""
    from sinkproof import attention, certformat
    from sinkproof.checker import KIND_MODULES, family, maps, schema

    assert (certformat.FORMAT, certformat.VERSION) == (schema.FORMAT, schema.VERSION)
    assert certformat.TRIGGER == family.TRIGGER
    assert set(attention.MAPS) <= set(maps.MAP_NAMES)  # a rule for every producer map
    assert tuple(sorted(KIND_MODULES)) == certformat.KINDS


CHECKER_LINE_BUDGET = 4277
"""Lines of ``sinkproof/checker`` (``cat sinkproof/checker/*.py sinkproof/checker/*/*.py |
wc -l``) not to be exceeded: 4,269 today (12 more for the tree rule's integer sums and
its per-prefix memo, issue 26), of which 86 are the ``paper-composition`` rule
(an instance of the pure-composition theorem, issue 25's (P2) certificate); 4,171 before it
(4,345 before one integer, eps and bound-list reader
in ``schema.py``, one tree verdict, one witness claim reader and one witness-figures type
replaced their per-kind copies; 4,531 before the alias modules went and the rules'
soundness arguments moved to ``docs/soundness.md``) and 20 lines of slack; the goal of
issue 23 is under 2,500."""


def test_checker_line_count_is_reported_and_within_budget(capsys):
    files = sorted((ROOT / "checker").rglob("*.py"))
    lines = sum(len(p.read_text(encoding="utf-8").splitlines()) for p in files)
    with capsys.disabled():
        print(f"\ntrusted checker: {lines} lines in {len(files)} files "
              f"(budget {CHECKER_LINE_BUDGET})")
    assert lines <= CHECKER_LINE_BUDGET


# ------------------------------------------------------------ what each path loads
LATER_LAYERS = ("jax", "optax", "cvxpy", "dask", "distributed", "scipy.optimize")
"""Libraries of the search (JAX, its optimiser), the convex programs and the cluster: a path
that does not run them must not import them (``benchmarks/bench_coldstart.py`` times it)."""
CLAIMS = ROOT.parent / "examples" / "claims"


def _later_layers_after(code: str, *args: str) -> tuple[str, list[str]]:
    run = _fresh(f"import sinkproof as sp\n{code}\n"
                 f"print(json.dumps([m for m in {LATER_LAYERS!r} if m in sys.modules]))", *args)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.strip().splitlines()
    return lines[-3], json.loads(lines[-2])


def test_a_theorem_proof_and_an_evaluation_load_no_search_convex_or_cluster_layer():
    said, loaded = _later_layers_after(
        f"print(sp.check({str(CLAIMS / 'fixed_values_homogeneous.toml')!r}, progress=False).by)\n"
        "sp.evaluate(sp.constructions.relu_solution(sp.TriggerTask(p=2, T=4)))\n"
        "sp.evaluate(sp.AttentionModel(sp.TriggerTask(p=1, T=4), 'softmax', [[0.0] * 6] * 6))")
    assert said == "theorem1" and loaded == [], loaded


@pytest.mark.slow  # makes the certificate with CVXPY first (~4 s)
def test_a_stored_certificate_proof_loads_no_search_convex_or_cluster_layer(tmp_path):
    claim = CLAIMS / "paper_p1_fixed_values_certificate.toml"
    cert = tmp_path / "p1.certificate.json"
    assert sinkproof.check(claim, certificate_out=cert, progress=False).by.startswith(
        "certificate")
    said, loaded = _later_layers_after(
        "print(sp.check(sys.argv[1], certificate=sys.argv[2], progress=False).by)",
        str(claim), str(cert))
    assert said == "certificate" and loaded == [], loaded


@pytest.mark.slow  # a fresh interpreter that imports CVXPY, then JAX (~4 s)
def test_a_convex_program_loads_cvxpy_without_jax_and_jax_still_imports_after():
    run = _fresh("from sinkproof.convex import min_norm_point\n"
                 "d = min_norm_point([[1.0, 0.0], [0.0, 1.0]]).distance\n"
                 "print(round(d, 6), 'cvxpy' in sys.modules, 'jax' in sys.modules)\n"
                 "import jax.numpy as jnp\nprint(float(jnp.ones(2).sum()))")
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines()[:2] == ["0.707107 True False", "2.0"], run.stdout


@pytest.mark.parametrize("package", ["sinkproof.convex", "sinkproof.bnb"])
def test_a_lazy_packages_names_are_its_exports_and_each_resolves(package):
    lazy = importlib.import_module(package)
    assert set(lazy._LAZY) == set(lazy.__all__)
    for name, entry in lazy._LAZY.items():
        module, _, attribute = entry.partition(":")
        value = getattr(lazy, name)
        assert value is getattr(importlib.import_module(f"{package}.{module}"), attribute or name)
        assert value.__module__ == f"{package}.{module}", name


def test_the_target_prefixes_load_without_the_engines_programs():
    run = subprocess.run([sys.executable, "-c", (
        "import sys\nfrom sinkproof.bnb.targets import nontrigger_targets\n"
        "print(sorted(m for m in ('sinkproof.bnb.api', 'sinkproof.bnb.conic', 'clarabel',"
        " 'scipy.sparse') if m in sys.modules))")], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "[]", run.stdout
