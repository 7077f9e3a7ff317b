"""JSON Schemas (draft 2020-12) of the files sinkproof reads, generated from the tables its
readers use, so that an editor completes and checks a file as sinkproof would.

- ``sweep``: a sweep file (TOML or JSON): ``kind``, ``name``, ``[base]``, ``[grid]``,
  ``[zip]``; each job kind's settings (with their defaults) from
  :data:`sinkproof.sweep.jobs.JOB_KINDS`.
- ``claim``: a claim file (TOML or JSON): ``title`` and the sections ``[task]``, ``[model]``,
  ``[hypothesis]``, ``[conclusion]``, ``[check]``; the task's fields by its ``setting``
  and the other sections' by what the task has (positions or not), from the readers'
  own field tables.
- ``certificate``: a certificate or witness file: the envelope every kind shares (format,
  version, kind, instance, claim, data), the kind names the trusted checker reads, and
  exact rationals written as strings ``"p/q"``.

The schemas describe a file's shape; the readers remain the judges (a file the schema
accepts may still be refused, e.g. a size beyond a limit or a certificate whose
inequalities fail).  ``sinkproof schema NAME`` prints one (``--out FILE`` writes it); the
package ships them as ``sinkproof/data/schemas/NAME.schema.json`` (:func:`schema_path`).  A
TOML file names its schema on its first line for Taplo / Even Better TOML
(``#:schema ./sweep.schema.json``); a JSON file with ``"$schema"`` — not a field sinkproof
reads, so name it in the editor's settings instead.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from . import certformat
from .claims.options import STACK_OPTIONS, CheckOptions
from .claims.schema import CONCLUSION_FIELDS, HYPOTHESIS_FIELDS, StackClass
from .modelclass import ModelClass
from .sweep.grid import _TOP_LEVEL
from .sweep.jobs import JOB_KINDS, REQUIRED
from .tasks import TASKS

DIALECT = "https://json-schema.org/draft/2020-12/schema"

RATIONAL_PATTERN = r"^[+-]?[0-9]+(/[0-9]+)?$"
"""An exact rational as certificates write it (the checker's own pattern)."""


def _describe(value: Any) -> dict[str, Any]:
    """The JSON type of a setting with this default (``None``: any)."""
    if isinstance(value, bool):
        return {"type": "boolean", "default": value}
    if isinstance(value, int):
        return {"type": ["integer", "string"], "default": value}
    if isinstance(value, float):
        return {"type": ["number", "string"], "default": value}
    if isinstance(value, str):
        return {"type": ["string", "number"], "default": value}
    return {}


def sweep_schema() -> dict[str, Any]:
    """The schema of a sweep file, one branch per job kind."""

    branches = []
    for name, kind in JOB_KINDS.items():
        settings = {k: ({"description": "required"} if v is REQUIRED else _describe(v))
                    for k, v in kind.settings.items()}
        dotted = {f"^({'|'.join(kind.dotted_prefixes)})\\.": {}} if kind.dotted_prefixes else {}
        table = {"type": "object", "properties": settings, "patternProperties": dotted,
                 "additionalProperties": False}
        axes = {"type": "object", "additionalProperties": False,
                "properties": {k: {"type": "array", "minItems": 1} for k in settings},
                "patternProperties": {p: {"type": "array", "minItems": 1} for p in dotted}}
        needed = [{"anyOf": [{"required": [part], "properties": {part: {"required": [k]}}}
                             for part in ("base", "grid", "zip")]}
                  for k, v in kind.settings.items() if v is REQUIRED]  # set somewhere
        branches.append({
            "if": {"properties": {"kind": {"const": name}}},
            "then": {"properties": {"base": table, "grid": axes, "zip": axes},
                     **({"allOf": needed} if needed else {})},
            "description": kind.help,
        })
    top = {
        "kind": {"enum": sorted(JOB_KINDS), "description": "the job every point runs"},
        "name": {"type": "string"},
        "base": {"type": "object", "description": "settings shared by every job"},
        "grid": {"type": "object", "description": "product axes: name -> list of values"},
        "zip": {"type": "object", "description": "axes swept together (equal lengths)"},
    }
    assert set(top) == set(_TOP_LEVEL), "the schema's top level is the reader's"
    return {"$schema": DIALECT, "title": "sinkproof sweep file", "type": "object",
            "required": ["kind"], "properties": top, "additionalProperties": False,
            "allOf": branches}


def certificate_schema() -> dict[str, Any]:
    """The schema of a certificate or witness file's envelope."""

    return {
        "$schema": DIALECT, "title": "sinkproof certificate", "type": "object",
        "required": ["format", "version", "kind", "instance", "claim", "data"],
        "additionalProperties": False,
        "properties": {
            "format": {"const": certformat.FORMAT},
            "version": {"const": certformat.VERSION},
            "kind": {"enum": list(certformat.KINDS),
                     "description": "the proof rule the trusted checker applies"},
            "instance": {"type": "object",
                         "description": "the explicit instance: task, map, values, ..."},
            "claim": {"type": "object", "description": "what the file claims to prove"},
            "data": {"type": "object", "description": "the evidence, in exact rationals"},
        },
        "$defs": {"rational": {"type": ["string", "integer"], "pattern": RATIONAL_PATTERN,
                               "description": "an exact rational, \"p/q\" or \"p\""}},
    }


def _section(fields: Any, required: tuple[str, ...] = ()) -> dict[str, Any]:
    """A table of exactly ``fields`` (each any JSON value: the reader checks its type)."""
    return {"type": "object", "properties": {f: {} for f in sorted(fields)},
            "additionalProperties": False, **({"required": list(required)} if required else {})}


def claim_schema() -> dict[str, Any]:
    """The schema of a claim file: ``title`` and the five sections; the ``[task]``
    section's ``setting`` (default ``"trigger"``) picks the task's fields, and whether the
    task has positions picks the model's (a model class, or a stack of layers) and the
    search options the ``[check]`` section takes."""
    branches = []
    for name, cls in TASKS.items():
        model = ModelClass if cls.has_positions else StackClass
        check = set(CheckOptions.__dataclass_fields__) - (
            set(STACK_OPTIONS) if cls.has_positions else set())
        setting = {"properties": {"setting": {"const": name}}, "required": ["setting"]}
        if name == "trigger":  # the default setting
            setting = {"anyOf": [setting, {"not": {"required": ["setting"]}}]}
        branches.append({
            "if": {"properties": {"task": setting}},
            "then": {"properties": {
                "task": _section({"setting", *cls.DESCRIPTION_FIELDS}),
                "model": _section(model.__dataclass_fields__),
                "check": _section(check)}},
        })
    return {
        "$schema": DIALECT, "title": "sinkproof claim file", "type": "object",
        "required": ["task", "model", "hypothesis", "conclusion"],
        "additionalProperties": False,
        "properties": {
            "title": {"type": "string"},
            "task": {"type": "object", "properties": {"setting": {"enum": sorted(TASKS)}}},
            "model": {"type": "object"},
            "hypothesis": _section(HYPOTHESIS_FIELDS, ("max_error",)),
            "conclusion": _section(CONCLUSION_FIELDS),
            "check": {"type": "object"},
        },
        "allOf": branches,
    }


SCHEMAS = {"claim": claim_schema, "sweep": sweep_schema, "certificate": certificate_schema}
"""Every schema, by the name ``sinkproof schema NAME`` takes."""


def schema_path(name: str) -> Path:
    """The shipped file of the schema ``name`` (equal to :func:`schema_text`'s text)."""
    return Path(__file__).resolve().parent / "data" / "schemas" / f"{name}.schema.json"


def schema_text(name: str) -> str:
    """The schema ``name`` as indented JSON text (one trailing newline)."""
    if name not in SCHEMAS:
        raise ValueError(f"no schema named {name!r} (known: {', '.join(sorted(SCHEMAS))})")
    return json.dumps(SCHEMAS[name](), indent=2, sort_keys=False) + "\n"


__all__ = ["RATIONAL_PATTERN", "SCHEMAS", "certificate_schema", "claim_schema", "schema_path",
           "schema_text", "sweep_schema"]
