"""The data package: which tables ``data/`` holds and what each table's schema says.

``data/datapackage.json`` is a Frictionless Data Package (v2): one resource per table, its CSV
file (or, for a folder of files such as ``sources/``, the list of them) and its Table Schema,
``<name>.schema.yaml``. ``frictionless validate data/datapackage.json`` checks the tables with the
standard's own rules: field types, ``constraints`` (``required``, ``unique``, ``minimum``,
``maximum``, ``exclusiveMinimum``, ``enum``, ``pattern``), ``primaryKey``, ``uniqueKeys`` and
``foreignKeys``. The book reads the same files with its own faster checker (:mod:`analyses.tables`)
and a few properties of its own, which other tools ignore:

- on a field: ``unit``; ``covers: table.column`` (every value there has a row here: each claim
  its Chinese wording); ``year_of: <date column>`` (an integer that is that date's year);
  ``years: [min, max]`` (a string field holding a date of the form YYYY,
  YYYY-MM or YYYY-MM-DD: a calendar day within those years); ``references: table.column`` on a
  ``list`` field (each item names a row; Table Schema's foreign keys take one value per cell), or
  ``{by: column, <value>: table.column}`` (the table chosen by another column); ``present_in``
  (the referenced row has a column named by this cell filled: a precision the GPU offers);
  ``range_by`` (bounds chosen by another column's value); ``within: [low, high]`` (between two
  columns of the row); ``expression`` and ``bounds`` (numbers and ``prefix:key[:field]``
  references joined by `` * ``); ``unlisted`` (names allowed before their row exists, with why);
- on a schema: ``sourced`` (false: no source column needed), ``min_rows``, ``ordered`` (columns
  whose values never decrease along a row), ``rows`` (row rules: columns a kind of row needs or
  must leave empty, or patterns it must match), ``derived`` (a field that is a product of columns).

Every numeric field declares both bounds (``minimum`` or ``exclusiveMinimum: 0``, and
``maximum``), finite numbers; a bound on a field that is not numeric is a fault. Every fault is a
:class:`DataError` in one line naming file, row (or line) and column.
"""

from __future__ import annotations

import functools
import json
import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

REPO_ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "datapackage.json"
DATE_RE = re.compile(r"^\d{4}(-\d{2}(-\d{2})?)?$")
SOURCE_SPLIT = re.compile(r"\s*;\s*")
COLUMN_TYPES = ("str", "int", "float", "bool", "date", "source", "sources", "expression")
# Table Schema types and the checker's: a `list` is a str column with a separator
TYPES = {"string": "str", "integer": "int", "number": "float", "boolean": "bool", "list": "str"}
FIELD_KEYS = {"name", "type", "description", "constraints", "unit", "years", "expression", "bounds", "delimiter"}
FIELD_KEYS |= {"itemType", "references", "range_by", "within", "present_in", "unlisted", "year_of", "covers"}
CONSTRAINTS = {"required", "unique", "minimum", "maximum", "exclusiveMinimum", "enum", "pattern"}
SCHEMA_KEYS = {"$schema", "description", "fields", "primaryKey", "uniqueKeys", "foreignKeys", "sourced"}
SCHEMA_KEYS |= {"min_rows", "ordered", "rows", "derived"}

# What this process read from data/: file paths and glob patterns (a listing), relative to the
# repository root (absolute outside it). The build stores a chapter's set in its notebook's
# metadata, so a change to a file the chapter never read does not re-execute it.
READS: set[str] = set()


def record(path: Path, root: Path) -> None:
    """Note that ``path`` (a file, read or probed, or a glob pattern that was listed) was read.

    A path under the data folder in use (``root``) is recorded as ``data/...`` even when
    ``AUDIT_DATA_DIR`` puts that folder outside the repository, so no machine's absolute path
    reaches a notebook's metadata (the build resolves ``data/...`` against the data folder in use).
    """
    absolute = Path(os.path.abspath(path))
    data_dir = Path(os.path.abspath(root))
    if absolute == data_dir or data_dir in absolute.parents:
        rel = absolute.relative_to(data_dir).as_posix()
        READS.add("data" if rel == "." else f"data/{rel}")
        return
    try:
        READS.add(absolute.relative_to(REPO_ROOT).as_posix())
    except ValueError:
        READS.add(absolute.as_posix())


class DataError(ValueError):
    """A data file breaks its schema; the message names file, row and column."""

    def __init__(self, file: str | Path, message: str, row: int | None = None, column: str | None = None):
        self.file, self.row, self.column = str(file), row, column
        where = str(file)
        if row is not None:
            where += f", row {row}"
        if column is not None:
            where += f", column '{column}'"
        super().__init__(f"{where}: {message}")

    def __str__(self) -> str:  # KeyError's own str() would quote the message (see DataKeyError)
        return str(self.args[0]) if self.args else ""


class DataKeyError(DataError, KeyError):
    """A name looked up in a data table is not there (an unknown GPU, claim, price or table): a
    :class:`DataError` (one line naming the file, for the command line) that code written for the
    older ``KeyError`` still catches."""


def allowed_text(values: Any, limit: int = 20) -> str:
    """Allowed values for a one-line message: the first ``limit`` and how many there are in all."""
    items = [str(v) for v in dict.fromkeys(values)]
    if len(items) <= limit:
        return ", ".join(items) or "none"
    return ", ".join(items[:limit]) + f", ... ({len(items)} in all)"


def cut(text: str, limit: int = 60) -> str:
    """A cell's text for a one-line message: at most ``limit`` characters, on one line."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


@dataclass(frozen=True)
class Column:
    """One field of a table schema, as the checker reads it (``type`` one of :data:`COLUMN_TYPES`)."""

    name: str
    type: str = "str"
    required: bool = False
    unique: bool = False
    unit: str | None = None
    allowed: tuple[str, ...] | None = None
    min: float | None = None
    max: float | None = None
    positive: bool = False  # strictly above zero (exclusiveMinimum: 0): a peak, a bandwidth
    pattern: str | None = None
    description: str = ""
    # "table.column" (every item names a row there), or {by: <column>, <value>: "table.column", ...}
    # (chosen by another column of the row); for an expression, {<prefix>: "table.column[:values|:column]"}
    references: Any = None
    separator: str | None = None  # the cell is a list of items separated by this (a Table Schema `list`)
    range_by: Any = None  # {column: <column>, ranges: {<value>: [min, max], ...}}
    present_in: Any = None  # {via: <referencing column>, column: "peak_tflops_dense_{}"}
    within: tuple[str, str] | None = None  # two columns of the row that bound this one (min, max)
    # names a reference may use before the referenced table has their row, each with the reason
    # (tests/site/test_data_faults.py fails once the row exists, so the exception does not outlive it)
    unlisted: dict[str, str] | None = None
    year_of: str | None = None  # a date column of the row whose year this (integer) column is
    covers: str | None = None  # "table.column": every value there has a row here (each claim its Chinese row)


@dataclass(frozen=True)
class RowRule:
    """Rows matching ``when`` (column -> value; "" empty, "*" any value, a list: one of) need the
    ``requires`` columns filled, the ``forbids`` columns empty and each ``match`` column to match
    its pattern (a whole-cell regular expression); ``why`` says why."""

    when: tuple[tuple[str, Any], ...]
    requires: tuple[str, ...] = ()
    forbids: tuple[str, ...] = ()
    why: str = ""
    patterns: tuple[tuple[str, str], ...] = ()

    def matches(self, rec: dict[str, Any]) -> bool:
        return all(_matches(rec.get(c), v) for c, v in self.when)

    def text(self) -> str:
        def one(c: str, v: Any) -> str:
            if v == "":
                return f"{c} empty"
            if v == "*":
                return f"{c} given"
            return f"{c} {' or '.join(map(str, v))}" if isinstance(v, list) else f"{c} {v}"

        return ", ".join(one(c, v) for c, v in self.when)


def _matches(value: Any, wanted: Any) -> bool:
    if wanted == "":
        return value is None
    if wanted == "*":
        return value is not None
    if isinstance(wanted, list):
        return value is not None and str(value) in [str(w) for w in wanted]
    return value is not None and str(value) == str(wanted)


@dataclass(frozen=True)
class Schema:
    """A table's schema, read from its Table Schema ``<name>.schema.yaml``."""

    name: str
    description: str
    columns: tuple[Column, ...]
    sourced: bool = True
    path: Path = field(default=Path("."), compare=False)
    min_rows: int = 1  # a table the models read needs rows: a header alone is a fault
    ordered: tuple[tuple[str, ...], ...] = ()  # columns whose values never decrease along a row
    keys: tuple[tuple[str, ...], ...] = ()  # column combinations no two rows share (uniqueKeys)
    rows: tuple[RowRule, ...] = ()
    derived: dict[str, tuple[str, ...]] = field(default_factory=dict, compare=False)  # field = product of columns

    @property
    def column_names(self) -> list[str]:
        return [c.name for c in self.columns]


def rel_path(path: Path, data_dir: Path) -> str:
    try:
        return "data/" + path.relative_to(data_dir).as_posix()
    except ValueError:
        return str(path)


_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml's, where PyYAML has it: 20x faster


def decode(raw: bytes, rel: str, column_at: Any = None) -> str:
    """``raw`` as UTF-8 text (a leading byte-order mark dropped); a byte that is not UTF-8 raises
    :class:`DataError` naming its line and, where ``column_at(raw, offset)`` names one, its column."""
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        line = raw[: err.start].count(b"\n") + 1
        column = column_at(raw, err.start) if column_at is not None else None
        message = f"byte 0x{raw[err.start]:02x} is not UTF-8 text (save the file as UTF-8)"
        raise DataError(rel, message, line, column) from None


# --------------------------------------------------------------------------------------------
# The package: tables and their files
# --------------------------------------------------------------------------------------------


@functools.cache
def package(root: Path) -> dict[str, tuple[tuple[str, ...], str]]:
    """Each resource of ``data/datapackage.json``: table name -> (data files, schema file), relative to ``root``."""
    path = root / PACKAGE
    record(path, root)
    rel = rel_path(path, root)
    if not path.exists():
        raise DataError(rel, "the data package is missing: it lists every table with its files and schema")
    try:
        raw = json.loads(decode(path.read_bytes(), rel))
    except json.JSONDecodeError as err:
        raise DataError(rel, f"not valid JSON: {err.msg}", err.lineno) from None
    resources = raw.get("resources") if isinstance(raw, dict) else None
    if not isinstance(resources, list) or not resources:
        raise DataError(rel, "a data package has a list of 'resources'")
    out: dict[str, tuple[tuple[str, ...], str]] = {}
    for res in resources:
        ok = isinstance(res, dict) and isinstance(res.get("name"), str) and isinstance(res.get("schema"), str)
        paths = res.get("path") if ok else None
        paths = [paths] if isinstance(paths, str) else paths
        if not ok or not isinstance(paths, list) or not paths or not all(isinstance(p, str) for p in paths):
            raise DataError(
                rel, f"a resource is {{name, path (or a list of paths), schema (a file)}}, got {cut(repr(res))}"
            )
        if res["name"] in out:
            raise DataError(rel, f"resource '{res['name']}' is listed twice")
        out[res["name"]] = (tuple(paths), res["schema"])
    return out


def table_names(root: Path) -> list[str]:
    """Names of every table of the package (``measurements/x`` for subfolders)."""
    return sorted(package(root))


def table_files(name: str, root: Path) -> list[Path]:
    """The data files of table ``name`` (a missing one is a fault naming it)."""
    files = [root / p for p in _resource(name, root)[0]]
    for path in files:
        record(path, root)
        if not path.exists():
            raise DataError(rel_path(path, root), f"table '{name}' has a schema but this data file is missing")
    return files


def _resource(name: str, root: Path) -> tuple[tuple[str, ...], str]:
    found = package(root)
    if name not in found:
        raise DataError(rel_path(root / PACKAGE, root), f"no table '{name}'; tables: {allowed_text(sorted(found))}")
    return found[name]


def orphans(root: Path) -> list[Path]:
    """Data files the package does not list (a table added without its resource)."""
    record(root / "**" / "*.csv", root)
    listed = {p for paths, _ in package(root).values() for p in paths}
    return [p for p in sorted(root.rglob("*.csv")) if p.relative_to(root).as_posix() not in listed]


# --------------------------------------------------------------------------------------------
# A table's schema
# --------------------------------------------------------------------------------------------


def load_schema(name: str, root: Path) -> Schema:
    """The schema of table ``name`` under ``root`` (parsed once per process: see :func:`clear_cache`)."""
    return _load_schema(name, root)


def clear_cache() -> None:
    """Forget the package and parsed schemas (after editing files under ``data/``)."""
    package.cache_clear()
    _load_schema.cache_clear()


def _bound(value: Any, rel: str, column: str, what: str) -> float:
    """A schema bound as a finite float (``.nan``, ``.inf`` and words are faults)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise DataError(rel, f"{what} must be a finite number, got {cut(repr(value))}", column=column)
    try:
        number = float(value)  # PyYAML reads 1.0e6 (no exponent sign) as a string
    except ValueError:
        raise DataError(rel, f"{what} must be a finite number, got {cut(repr(value))}", column=column) from None
    if not math.isfinite(number):
        raise DataError(rel, f"{what} must be a finite number, got {value!r}", column=column)
    return number


def _column(spec: Any, rel: str, foreign: dict[str, str]) -> Column:
    """One Table Schema field as the checker's :class:`Column` (see the module's docstring)."""
    if not isinstance(spec, dict) or not isinstance(spec.get("name"), str):
        raise DataError(rel, f"a field is a mapping with a 'name', got {cut(repr(spec))}")
    name = spec["name"]
    unknown = set(spec) - FIELD_KEYS
    if unknown:
        raise DataError(rel, f"unknown field propert(ies) {sorted(unknown)}", column=name)
    kind = TYPES.get(spec.get("type", "string"))
    if kind is None:
        raise DataError(rel, f"type '{spec.get('type')}' is not one of {', '.join(TYPES)}", column=name)
    cons = spec.get("constraints") or {}
    if not isinstance(cons, dict) or set(cons) - CONSTRAINTS:
        raise DataError(rel, f"constraints are a mapping of {', '.join(sorted(CONSTRAINTS))}", column=name)
    numeric = kind in ("int", "float")
    bounds = {k: _bound(cons[k], rel, name, k) for k in ("minimum", "maximum", "exclusiveMinimum") if k in cons}
    if bounds and not numeric:
        raise DataError(
            rel,
            f"{'/'.join(bounds)} bound(s) a {spec.get('type')} field: bounds apply to integer and number fields",
            column=name,
        )
    if numeric and ("maximum" not in bounds or ("minimum" not in bounds and bounds.get("exclusiveMinimum") != 0)):
        raise DataError(
            rel, "a numeric field needs both bounds: minimum (or exclusiveMinimum: 0) and maximum", column=name
        )
    if bounds.get("exclusiveMinimum", 0) != 0:
        raise DataError(rel, "exclusiveMinimum is 0 or absent (a quantity above zero)", column=name)
    out: dict[str, Any] = {
        "name": name,
        "type": kind,
        "required": bool(cons.get("required", False)),
        "unique": bool(cons.get("unique", False)),
        "unit": spec.get("unit"),
        "allowed": tuple(str(a) for a in cons["enum"]) if "enum" in cons else None,
        "min": bounds.get("minimum"),
        "max": bounds.get("maximum"),
        "positive": "exclusiveMinimum" in bounds,
        "pattern": cons.get("pattern"),
        "description": spec.get("description", ""),
        "references": spec.get("references", foreign.get(name)),
        "present_in": spec.get("present_in"),
        "within": tuple(spec["within"]) if "within" in spec else None,
        "unlisted": spec.get("unlisted"),
        "year_of": spec.get("year_of"),
        "covers": spec.get("covers"),
    }
    if spec.get("type") == "list":
        out["separator"] = spec.get("delimiter", ",")
        if out["references"] == "sources.id":
            out["type"] = "sources"
    elif out["references"] == "sources.id" and kind == "str":
        out["type"] = "source"
    if "years" in spec:
        years = spec["years"]
        if kind != "str" or not isinstance(years, list) or len(years) != 2:
            raise DataError(rel, "years (a date field's) is [first, last] on a string field", column=name)
        out |= {
            "type": "date",
            "min": _bound(years[0], rel, name, "years"),
            "max": _bound(years[1], rel, name, "years"),
        }
    if "expression" in spec:
        low, high = spec.get("bounds") or [None, None]
        if kind != "str" or not isinstance(spec["expression"], dict):
            raise DataError(rel, "an expression field is a string field mapping its prefixes to tables", column=name)
        out |= {"type": "expression", "references": spec["expression"], "min": _bound(low, rel, name, "bounds")}
        out["max"] = _bound(high, rel, name, "bounds")
    if "range_by" in spec:
        out["range_by"] = _range_by(spec["range_by"], rel, name)
    return Column(**out)


@functools.cache
def _load_schema(name: str, root: Path) -> Schema:
    path = root / _resource(name, root)[1]
    rel = rel_path(path, root)
    record(path, root)
    if not path.exists():
        raise DataError(rel, f"the schema of table '{name}' is missing ({PACKAGE} names it)")
    try:
        raw = yaml.load(decode(path.read_bytes(), rel), Loader=_YAML_LOADER) or {}  # noqa: S506 (a safe loader)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        problem = " ".join(str(getattr(err, "problem", None) or err).split())
        raise DataError(rel, f"not valid YAML: {problem}", None if mark is None else mark.line + 1) from None
    if isinstance(raw, dict) and "columns" in raw:
        raise DataError(rel, "'columns' is the old schema dialect; convert it: python tools/convert_schema.py " + rel)
    if not isinstance(raw, dict) or not isinstance(raw.get("fields"), list):
        raise DataError(rel, "a schema is a Table Schema: a mapping with a list of 'fields'")
    if set(raw) - SCHEMA_KEYS:
        raise DataError(rel, f"unknown schema key(s) {sorted(set(raw) - SCHEMA_KEYS)}")
    foreign = {}
    for fk in raw.get("foreignKeys", []):
        ref = fk.get("reference", {}) if isinstance(fk, dict) else {}
        fields, targets = fk.get("fields") if isinstance(fk, dict) else None, ref.get("fields")
        if not (isinstance(fields, list) and isinstance(targets, list) and len(fields) == len(targets) == 1):
            raise DataError(rel, f"a foreign key here names one field and one referenced field, got {cut(repr(fk))}")
        foreign[fields[0]] = f"{ref.get('resource') or name}.{targets[0]}"
    cols = [_column(spec, rel, foreign) for spec in raw["fields"]]
    key = raw.get("primaryKey", [])
    cols = [Column(**(vars(c) | {"required": True, "unique": True})) if [c.name] == key else c for c in cols]
    names = [c.name for c in cols]
    ordered = tuple(tuple(group) for group in raw.get("ordered", []))
    keys = tuple(tuple(group) for group in raw.get("uniqueKeys", []))
    for what, groups in (
        ("ordered", ordered),
        ("uniqueKeys", keys),
        ("primaryKey", (tuple(key),)),
        ("foreignKeys", [foreign]),
    ):
        missing = [c for group in groups for c in group if c not in names]
        if missing:
            raise DataError(rel, f"'{what}' names unknown column(s) {missing}")
    derived = {k: tuple(v) for k, v in (raw.get("derived") or {}).items()}
    schema = Schema(
        name,
        raw.get("description", ""),
        tuple(cols),
        raw.get("sourced", True),
        path,
        int(raw.get("min_rows", 1)),
        ordered,
        keys,
        tuple(_row_rule(spec, rel, names) for spec in raw.get("rows", [])),
        derived,
    )
    _check_names(schema, rel)
    return schema


def _check_names(schema: Schema, rel: str) -> None:
    names = schema.column_names
    for fname, parts in schema.derived.items():
        if [c for c in parts if c not in names]:
            raise DataError(
                rel, f"derived field '{fname}' names unknown column(s) {[c for c in parts if c not in names]}"
            )
    for c in schema.columns:
        by = c.references.get("by") if isinstance(c.references, dict) and c.type != "expression" else None
        others = [by, (c.range_by or {}).get("column"), (c.present_in or {}).get("via"), c.year_of, *(c.within or ())]
        for other in others:
            if other is not None and other not in names:
                raise DataError(rel, f"names unknown column '{other}'", column=c.name)
    if schema.sourced and not any(c.type in ("source", "sources") for c in schema.columns):
        raise DataError(rel, "a sourced table needs a column that references sources.id")


def _row_rule(spec: Any, rel: str, names: list[str]) -> RowRule:
    rule_keys = {"when", "requires", "forbids", "match", "why"}
    if not isinstance(spec, dict) or not isinstance(spec.get("when"), dict) or set(spec) - rule_keys:
        raise DataError(
            rel,
            f"a row rule is {{when: {{column: value}}, requires: [...], forbids: [...], match: {{column: pattern}}}}, got {cut(repr(spec))}",
        )
    rule = RowRule(
        tuple(spec["when"].items()),
        tuple(spec.get("requires", ())),
        tuple(spec.get("forbids", ())),
        spec.get("why", ""),
        tuple((spec.get("match") or {}).items()),
    )
    missing = [c for c in [*dict(rule.when), *rule.requires, *rule.forbids, *dict(rule.patterns)] if c not in names]
    if missing:
        raise DataError(rel, f"a row rule names unknown column(s) {missing}")
    return rule


def _range_by(spec: Any, rel: str, column: str) -> dict[str, Any]:
    """``{column: c, ranges: {value: [min, max]}}`` with the bounds as finite floats."""
    if not isinstance(spec, dict) or set(spec) != {"column", "ranges"} or not isinstance(spec["ranges"], dict):
        raise DataError(rel, "range_by is {column: <column>, ranges: {<value>: [min, max]}}", column=column)
    ranges = {}
    for key, bounds in spec["ranges"].items():
        if not isinstance(bounds, list) or len(bounds) != 2:
            raise DataError(rel, f"range_by of '{key}' is [min, max], got {bounds!r}", column=column)
        ranges[str(key)] = (_bound(bounds[0], rel, column, "range_by"), _bound(bounds[1], rel, column, "range_by"))
    return {"column": spec["column"], "ranges": ranges}
