"""Reading and validating the CSV tables of ``data/`` against their YAML schemas.

The mechanics behind :mod:`analyses.data` (the one module models and notebooks read facts from):
each table is ``<name>.csv`` or a folder ``<name>/*.csv`` with a sidecar ``<name>.schema.yaml``;
:func:`load_table` checks the header, UTF-8 text, one field per header column, a minimum row
count, and every cell against its column:

- its type: finite numbers (``inf``, ``nan``, ``1e400`` refused), integers without a fraction,
  dates that are calendar days (``date`` columns take ``min``/``max`` as years);
- its bounds: ``min``/``max``/``positive``; ``range_by`` (bounds chosen by another column's value,
  such as a price's ``item`` or a figure's ``unit``); ``within`` (between two columns of its row);
  ``ordered`` groups (low <= central <= high);
- ``allowed`` values, ``pattern``, ``unique`` (and ``keys``: combinations no two rows share);
- row rules (``rows``): columns a kind of row needs, or must leave empty;
- referential integrity: every ``source`` id resolves in the sources table, and a column that
  names a row elsewhere declares ``references: table.column`` (a ``separator`` for lists; a mapping
  ``{by: column, value: table.column}`` when another column chooses the table; ``unlisted`` names
  the rare name allowed before its row exists, with the reason); ``present_in`` requires a filled
  column of the referenced row (a precision the GPU offers); an ``expression`` column holds
  numbers and ``prefix:key[:field]`` references joined by `` * ``, each row and field checked.

Every fault raises :class:`DataError` in one line naming file, row and column and what is allowed;
a data file no schema describes is a fault too (:func:`load_all`). Schemas and tables are parsed
once per process (:func:`clear_cache`). Every file read or folder listed is noted in :data:`READS`
for the build's dependency tracking.
"""

from __future__ import annotations

import csv
import functools
import io
import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

REPO_ROOT = Path(__file__).resolve().parent.parent

COLUMN_TYPES = ("str", "int", "float", "bool", "date", "source", "sources", "expression")
DATE_RE = re.compile(r"^\d{4}(-\d{2}(-\d{2})?)?$")
SOURCE_SPLIT = re.compile(r"\s*;\s*")

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


@dataclass(frozen=True)
class Column:
    """One column of a table schema."""

    name: str
    type: str = "str"
    required: bool = False
    unique: bool = False
    unit: str | None = None
    allowed: tuple[str, ...] | None = None
    min: float | None = None
    max: float | None = None
    positive: bool = False  # strictly above zero: a quantity no model can use at 0 (peak, bandwidth)
    pattern: str | None = None
    description: str = ""
    # "table.column" (every item names a row there), or {by: <column>, <value>: "table.column", ...}
    # (chosen by another column of the row); for an expression, {<prefix>: "table.column[:values|:column]"}
    references: Any = None
    separator: str | None = None  # the cell is a list of items separated by this (e.g. ";")
    range_by: Any = None  # {column: <column>, ranges: {<value>: [min, max], ...}}
    present_in: Any = None  # {via: <referencing column>, column: "peak_tflops_dense_{}"}
    within: tuple[str, str] | None = None  # two columns of the row that bound this one (min, max)
    # names a reference may use before the referenced table has their row, each with the reason
    # (tests/site/test_data_faults.py fails once the row exists, so the exception does not outlive it)
    unlisted: dict[str, str] | None = None


@dataclass(frozen=True)
class RowRule:
    """Rows matching ``when`` (column -> value; "" empty, "*" any value, a list: one of) need the
    ``requires`` columns filled and the ``forbids`` columns empty; ``why`` says why."""

    when: tuple[tuple[str, Any], ...]
    requires: tuple[str, ...] = ()
    forbids: tuple[str, ...] = ()
    why: str = ""

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
    """A table's schema, read from ``<name>.schema.yaml``."""

    name: str
    description: str
    columns: tuple[Column, ...]
    sourced: bool = True
    path: Path = field(default=Path("."), compare=False)
    min_rows: int = 1  # a table the models read needs rows: a header alone is a fault
    ordered: tuple[tuple[str, ...], ...] = ()  # columns whose values never decrease along a row
    keys: tuple[tuple[str, ...], ...] = ()  # column combinations no two rows share
    rows: tuple[RowRule, ...] = ()
    derived: dict[str, tuple[str, ...]] = field(default_factory=dict, compare=False)  # field = product of columns

    @property
    def column_names(self) -> list[str]:
        return [c.name for c in self.columns]


def _rel(path: Path, data_dir: Path) -> str:
    try:
        return "data/" + path.relative_to(data_dir).as_posix()
    except ValueError:
        return str(path)


def table_names(root: Path) -> list[str]:
    """Names of every table with a schema under ``root`` (``measurements/x`` for subfolders)."""
    record(root / "**" / "*.schema.yaml", root)
    return sorted(p.relative_to(root).as_posix()[: -len(".schema.yaml")] for p in root.rglob("*.schema.yaml"))


def load_schema(name: str, root: Path) -> Schema:
    """The schema of table ``name`` under ``root`` (parsed once per process: see :func:`clear_cache`)."""
    record(root / f"{name}.schema.yaml", root)
    return _load_schema(name, root)


def clear_cache() -> None:
    """Forget parsed schemas and loaded tables (after editing files under ``data/``)."""
    _load_schema.cache_clear()
    _loaded.cache_clear()


_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml's, where PyYAML has it: 20x faster


@functools.cache
def _load_schema(name: str, root: Path) -> Schema:
    path = root / f"{name}.schema.yaml"
    rel = _rel(path, root)
    if not path.exists():
        raise DataError(rel, f"no schema for table '{name}'; tables: {', '.join(table_names(root))}")
    try:
        raw = yaml.load(_decode(path.read_bytes(), rel), Loader=_YAML_LOADER) or {}  # noqa: S506 (a safe loader)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        row = None if mark is None else mark.line + 1
        problem = " ".join(str(getattr(err, "problem", None) or err).split())
        raise DataError(rel, f"not valid YAML: {problem}", row) from None
    if not isinstance(raw, dict) or not isinstance(raw.get("columns", []), list):
        raise DataError(rel, "a schema is a mapping with a list of 'columns'")
    unknown_keys = set(raw) - {"description", "columns", "sourced", "min_rows", "ordered", "keys", "rows", "derived"}
    if unknown_keys:
        raise DataError(rel, f"unknown schema key(s) {sorted(unknown_keys)}")
    cols = []
    for spec in raw.get("columns", []):
        if not isinstance(spec, dict) or "name" not in spec:
            raise DataError(rel, f"a column needs a mapping with a 'name', got {spec!r}")
        spec = dict(spec)
        if spec.get("type", "str") not in COLUMN_TYPES:
            raise DataError(rel, f"type '{spec.get('type')}' not one of {COLUMN_TYPES}", column=spec.get("name"))
        if "allowed" in spec:
            spec["allowed"] = tuple(str(a) for a in spec["allowed"])
        for bound in ("min", "max"):  # PyYAML reads 1.0e6 (no exponent sign) as a string
            if spec.get(bound) is not None:
                spec[bound] = float(spec[bound])
        if "range_by" in spec:
            spec["range_by"] = _range_by(spec["range_by"], rel, spec["name"])
        if "within" in spec:
            spec["within"] = tuple(spec["within"])
        unknown = set(spec) - set(Column.__dataclass_fields__)
        if unknown:
            raise DataError(rel, f"unknown schema key(s) {sorted(unknown)}", column=spec.get("name"))
        cols.append(Column(**spec))
    names = [c.name for c in cols]
    ordered = tuple(tuple(group) for group in raw.get("ordered", []))
    keys = tuple(tuple(group) for group in raw.get("keys", []))
    for what, groups in (("ordered", ordered), ("keys", keys)):
        for group in groups:
            missing = [c for c in group if c not in names]
            if missing:
                raise DataError(rel, f"'{what}' names unknown column(s) {missing}")
    rules = []
    for spec in raw.get("rows", []):
        rule_keys = {"when", "requires", "forbids", "why"}
        if not isinstance(spec, dict) or not isinstance(spec.get("when"), dict) or set(spec) - rule_keys:
            raise DataError(
                rel, f"a row rule is {{when: {{column: value}}, requires: [...], forbids: [...]}}, got {spec!r}"
            )
        rule = RowRule(
            tuple(spec["when"].items()),
            tuple(spec.get("requires", ())),
            tuple(spec.get("forbids", ())),
            spec.get("why", ""),
        )
        missing = [c for c in [*dict(rule.when), *rule.requires, *rule.forbids] if c not in names]
        if missing:
            raise DataError(rel, f"a row rule names unknown column(s) {missing}")
        rules.append(rule)
    derived = {k: tuple(v) for k, v in (raw.get("derived") or {}).items()}
    for fname, parts in derived.items():
        missing = [c for c in parts if c not in names]
        if missing:
            raise DataError(rel, f"derived field '{fname}' names unknown column(s) {missing}")
    for c in cols:
        if c.separator is not None and c.type not in ("str",):
            raise DataError(rel, "only a str column can hold a list ('separator')", column=c.name)
        if c.type == "expression" and not isinstance(c.references, dict):
            raise DataError(rel, "an expression column maps its reference prefixes to tables", column=c.name)
        by = c.references.get("by") if isinstance(c.references, dict) and c.type != "expression" else None
        for other in [by, (c.range_by or {}).get("column"), (c.present_in or {}).get("via"), *(c.within or ())]:
            if other is not None and other not in names:
                raise DataError(rel, f"names unknown column '{other}'", column=c.name)
    schema = Schema(
        name,
        raw.get("description", ""),
        tuple(cols),
        raw.get("sourced", True),
        path,
        int(raw.get("min_rows", 1)),
        ordered,
        keys,
        tuple(rules),
        derived,
    )
    if schema.sourced and not any(c.type in ("source", "sources") for c in cols):
        raise DataError(rel, "a sourced table needs a column of type 'source' or 'sources'")
    return schema


def _range_by(spec: Any, rel: str, column: str) -> dict[str, Any]:
    """``{column: c, ranges: {value: [min, max]}}`` with the bounds as floats."""
    if not isinstance(spec, dict) or set(spec) != {"column", "ranges"} or not isinstance(spec["ranges"], dict):
        raise DataError(rel, "range_by is {column: <column>, ranges: {<value>: [min, max]}}", column=column)
    ranges = {}
    for key, bounds in spec["ranges"].items():
        if not isinstance(bounds, list) or len(bounds) != 2:
            raise DataError(rel, f"range_by of '{key}' is [min, max], got {bounds!r}", column=column)
        ranges[str(key)] = (float(bounds[0]), float(bounds[1]))
    return {"column": spec["column"], "ranges": ranges}


def _decode(raw: bytes, rel: str, header: list[str] | None = None) -> str:
    """``raw`` as UTF-8 text (a leading byte-order mark dropped); a byte that is not UTF-8 raises
    :class:`DataError` naming its line and, in a CSV file, its column."""
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        line = raw[: err.start].count(b"\n") + 1
        column = None
        if header is not None:
            start = raw.rfind(b"\n", 0, err.start) + 1
            before = raw[start : err.start].decode("utf-8", "replace")
            index = len(next(csv.reader([before]), [""])) - 1 if before else 0
            column = header[index] if 0 <= index < len(header) else None
        message = f"byte 0x{raw[err.start]:02x} is not UTF-8 text (save the file as UTF-8)"
        raise DataError(rel, message, line, column) from None


def _csv_header(raw: bytes) -> list[str]:
    first = raw.split(b"\n", 1)[0].decode("utf-8-sig", "replace")
    return next(csv.reader([first]), [])


def read_csv_rows(path: Path, rel: str) -> tuple[list[str], list[tuple[int, list[str]]]]:
    """The header and the ``(line, cells)`` records of a CSV file, as strings.

    Every fault is a :class:`DataError` naming file, line and column: an empty file, bytes that
    are not UTF-8, a NUL byte or broken quoting, a header naming a column twice, a record with
    more or fewer fields than the header. Blank lines are skipped.
    """
    raw = path.read_bytes()
    text = _decode(raw, rel, _csv_header(raw))
    if not text.strip():
        raise DataError(rel, "the file is empty; it needs a header row naming the columns", row=1)
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    records: list[tuple[int, list[str]]] = []
    header: list[str] | None = None
    line = 0
    try:
        for cells in reader:
            start, line = line + 1, reader.line_num
            if not cells or all(not c.strip() for c in cells) and len(cells) <= 1:
                continue
            if header is None:
                header = [c.strip() for c in cells]
                repeated = sorted({c for c in header if header.count(c) > 1})
                if repeated:
                    raise DataError(rel, f"the header names column(s) {repeated} more than once", start, repeated[0])
                continue
            if len(cells) != len(header):
                if len(cells) > len(header):
                    message = (
                        f"{len(cells)} fields but the header names {len(header)} columns: a field beyond the "
                        "last column (an unquoted comma?)"
                    )
                    column = header[-1]
                else:
                    column = header[len(cells)]
                    message = f"{len(cells)} fields but the header names {len(header)} columns: '{column}' is missing"
                raise DataError(rel, message, start, column)
            records.append((start, cells))
    except csv.Error as err:
        raise DataError(rel, f"not valid CSV: {err}", reader.line_num) from None
    if header is None:
        raise DataError(rel, "the file holds no header row naming the columns", row=1)
    return header, records


def _table_files(name: str, root: Path) -> list[Path]:
    single, folder = root / f"{name}.csv", root / name
    record(single, root)
    record(folder / "*.csv", root)
    files = [single] if single.exists() else []
    if folder.is_dir():
        files += sorted(folder.glob("*.csv"))
    if not files:
        raise DataError(_rel(single, root), f"table '{name}' has a schema but no data file")
    return files


def _parse_cell(value: str, col: Column, file: str, row: int) -> Any:
    """Parse one CSV cell to the column's type, or raise DataError naming the cell."""
    text = value.strip()
    if text == "":
        if col.required:
            raise DataError(file, "empty, but the column is required", row, col.name)
        return None
    try:
        if col.type == "int":
            number = float(text)
            if not number.is_integer():
                raise ValueError
            parsed: Any = int(number)
        elif col.type == "float":
            parsed = float(text)
        elif col.type == "bool":
            if text.lower() not in ("true", "false"):
                raise ValueError
            parsed = text.lower() == "true"
        else:
            parsed = text
    except (ValueError, OverflowError):
        if col.type in ("int", "float") and _is_non_finite(text):
            raise DataError(file, f"'{_cut(text)}' is not a finite number", row, col.name) from None
        raise DataError(file, f"'{_cut(text)}' is not a valid {col.type}", row, col.name) from None
    if col.type == "float" and not math.isfinite(parsed):
        raise DataError(file, f"'{_cut(text)}' is not a finite number", row, col.name)
    if col.type == "date":
        return _parse_date(text, col, file, row)
    if col.type == "expression":
        return text  # checked once every table it may reference is loaded (load_table)
    if col.allowed is not None:
        items = _items(text, col)
        for item in items:
            if item not in col.allowed:
                raise DataError(
                    file, f"'{_cut(item)}' is not allowed; allowed: {', '.join(col.allowed)}", row, col.name
                )
    if col.min is not None and parsed < col.min:
        raise DataError(file, f"{parsed} is below the minimum {col.min:g} {col.unit or ''}".rstrip(), row, col.name)
    if col.max is not None and parsed > col.max:
        raise DataError(file, f"{parsed} is above the maximum {col.max:g} {col.unit or ''}".rstrip(), row, col.name)
    if col.positive and parsed <= 0:
        raise DataError(file, f"{parsed} must be above 0 {col.unit or ''}".rstrip(), row, col.name)
    if col.pattern is not None and not re.fullmatch(col.pattern, text):
        raise DataError(file, f"'{_cut(text)}' does not match the pattern {col.pattern}", row, col.name)
    return parsed


def _is_non_finite(text: str) -> bool:
    try:
        return not math.isfinite(float(text))
    except ValueError:
        return False


def _items(text: str, col: Column) -> list[str]:
    """The items of a cell: a ``sources`` list, a list column (``separator``) or the one value."""
    if col.type == "sources":
        return SOURCE_SPLIT.split(text)
    if col.separator is not None:
        return [t.strip() for t in text.split(col.separator) if t.strip()]
    return [text]


def _parse_date(text: str, col: Column, file: str, row: int) -> str:
    """A date cell (YYYY, YYYY-MM or YYYY-MM-DD) that names a real calendar day, month or year
    within the column's ``min``/``max`` years."""
    import datetime

    what = "is not a date (YYYY, YYYY-MM or YYYY-MM-DD)"
    if not DATE_RE.match(text):
        raise DataError(file, f"'{_cut(text)}' {what}", row, col.name)
    parts = [int(p) for p in text.split("-")]
    try:
        datetime.date(parts[0], parts[1] if len(parts) > 1 else 1, parts[2] if len(parts) > 2 else 1)
    except ValueError as err:
        raise DataError(file, f"'{text}' is not a calendar date ({err})", row, col.name) from None
    if col.min is not None and parts[0] < col.min:
        raise DataError(file, f"'{text}' is before the year {col.min:.0f}", row, col.name)
    if col.max is not None and parts[0] > col.max:
        raise DataError(file, f"'{text}' is after the year {col.max:.0f}", row, col.name)
    return text


def _check_range_by(rec: dict[str, Any], col: Column, file: str, row: int) -> None:
    """Bounds a numeric cell takes from another column's value (a price's item, a figure's unit)."""
    value, key = rec[col.name], rec[col.range_by["column"]]
    bounds = col.range_by["ranges"].get(str(key)) if value is not None and key is not None else None
    if bounds is None:
        return
    lo, hi = bounds
    if not lo <= value <= hi:
        side = f"below the minimum {lo:g}" if value < lo else f"above the maximum {hi:g}"
        raise DataError(file, f"{value:g} is {side} for {col.range_by['column']} '{key}'", row, col.name)


def _cut(text: str, limit: int = 60) -> str:
    """A cell's text for a one-line message: at most ``limit`` characters, on one line."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _read_validated(name: str, root: Path) -> tuple[pd.DataFrame, Schema, list[dict[str, Any]]]:
    schema = load_schema(name, root)
    records: list[dict[str, Any]] = []
    seen: dict[str, dict[Any, tuple[str, int]]] = {c.name: {} for c in schema.columns if c.unique}
    seen_keys: dict[tuple[str, ...], dict[tuple, tuple[str, int]]] = {k: {} for k in schema.keys}
    bounded_by = [c for c in schema.columns if c.range_by is not None]
    within = [c for c in schema.columns if c.within is not None]
    for path in _table_files(name, root):
        rel = _rel(path, root)
        header, rows = read_csv_rows(path, rel)
        missing = [c for c in schema.column_names if c not in header]
        if missing:
            raise DataError(
                rel,
                f"missing column(s) {missing}; the schema {_rel(schema.path, root)} requires them",
                row=1,
                column=missing[0],
            )
        extra = [c for c in header if c not in schema.column_names]
        if extra:
            raise DataError(
                rel, f"column(s) {extra} not in the schema {_rel(schema.path, root)}", row=1, column=extra[0]
            )
        index = {c: header.index(c) for c in schema.column_names}
        for row, cells in rows:
            rec = {c.name: _parse_cell(cells[index[c.name]], c, rel, row) for c in schema.columns}
            for cname, values in seen.items():
                key = rec[cname]
                if key is not None and key in values:
                    first = values[key]
                    raise DataError(rel, f"duplicate value '{key}' (first in {first[0]} row {first[1]})", row, cname)
                values[key] = (rel, row)
            for group, values in seen_keys.items():
                key = tuple(rec[c] for c in group)
                if key in values:
                    first = values[key]
                    raise DataError(
                        rel,
                        f"duplicate {' + '.join(group)} {key} (first in {first[0]} row {first[1]}); no two rows may share it",
                        row,
                        group[-1],
                    )
                values[key] = (rel, row)
            for c in bounded_by:
                _check_range_by(rec, c, rel, row)
            for c in within:
                lo, hi = (rec[w] for w in c.within)
                value = rec[c.name]
                if value is not None and lo is not None and hi is not None and not lo <= value <= hi:
                    raise DataError(
                        rel,
                        f"{value:g} is outside this row's {c.within[0]} {lo:g} to {c.within[1]} {hi:g}",
                        row,
                        c.name,
                    )
            for rule in schema.rows:
                if not rule.matches(rec):
                    continue
                why = f" ({rule.why})" if rule.why else ""
                for c in rule.requires:
                    if rec[c] is None:
                        raise DataError(rel, f"empty, but a row with {rule.text()} needs it{why}", row, c)
                for c in rule.forbids:
                    if rec[c] is not None:
                        raise DataError(
                            rel,
                            f"'{_cut(str(rec[c]))}' given, but a row with {rule.text()} must leave it empty{why}",
                            row,
                            c,
                        )
            for group in schema.ordered:
                present = [(c, rec[c]) for c in group if rec[c] is not None]
                for (a, va), (b, vb) in zip(present, present[1:], strict=False):
                    if vb < va:
                        order = " <= ".join(group)
                        raise DataError(rel, f"{b} {vb} is below {a} {va}; the schema needs {order}", row, b)
            rec["_file"], rec["_row"] = rel, row
            records.append(rec)
    if len(records) < schema.min_rows:
        files = ", ".join(_rel(p, root) for p in _table_files(name, root))
        raise DataError(
            files,
            f"{len(records)} data rows below the header; table '{name}' needs at least {schema.min_rows}",
            row=2,
        )
    frame = pd.DataFrame.from_records(records, columns=[*schema.column_names, "_file", "_row"])
    for c in schema.columns:
        if c.type == "float":
            frame[c.name] = frame[c.name].astype(float)
        elif c.type == "int" and frame[c.name].notna().all():
            frame[c.name] = frame[c.name].astype("int64")
    return frame, schema, records


_LOADING: list[str] = []  # tables being loaded, innermost last (a reference loop is a fault)


def _null(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def load_table(name: str, root: Path) -> pd.DataFrame:
    """One validated table whose references resolve: source ids in the sources table, and every
    column that declares ``references`` (read only as needed; columns ``_file`` and ``_row`` say
    where each row is). Cached per process (see :func:`clear_cache`)."""
    return _loaded(name, root)[0]


@functools.cache
def _loaded(name: str, root: Path) -> tuple[pd.DataFrame, list[dict[str, Any]]]:
    """The table and its rows as plain dicts (checked cell by cell without pandas)."""
    if name in _LOADING:
        loop = " -> ".join([*_LOADING[_LOADING.index(name) :], name])
        raise DataError(_rel(root / f"{name}.schema.yaml", root), f"tables reference each other in a loop: {loop}")
    _LOADING.append(name)
    try:
        frame, schema, records = _read_validated(name, root)
        _check_sources(name, schema, records, root)
        _check_references(name, schema, records, root)
    finally:
        _LOADING.pop()
    return frame, records


def _check_sources(name: str, schema: Schema, records: list[dict[str, Any]], root: Path) -> None:
    source_cols = [c for c in schema.columns if c.type in ("source", "sources")]
    if not source_cols:
        return
    if name == "sources":
        known = [r["id"] for r in records]
    else:
        sources_schema = root / "sources.schema.yaml"
        record(sources_schema, root)
        if not sources_schema.exists():
            raise DataError(_rel(sources_schema, root), "the sources table is missing")
        known = list(load_table("sources", root)["id"])
    known_set = set(known)
    for col in source_cols:
        for rec in records:
            value, file, row = rec[col.name], rec["_file"], rec["_row"]
            if _null(value):
                if not col.required:
                    continue  # an optional source column (tables marked `sourced: false`)
                raise DataError(file, "row has no source", row, col.name)
            for sid in SOURCE_SPLIT.split(value) if col.type == "sources" else [value]:
                if sid not in known_set:
                    raise DataError(
                        file, _unknown(sid, "an id of the sources table (data/sources/)", known), row, col.name
                    )


def _unknown(item: str, what: str, known: list[Any]) -> str:
    """'x' is not <what> (did you mean ...?); allowed: ..."""
    import difflib

    close = difflib.get_close_matches(str(item), [str(k) for k in known], n=1)
    hint = f" (did you mean '{close[0]}'?)" if close else ""
    return f"'{_cut(str(item))}' is not {what}{hint}; allowed: {allowed_text(known)}"


def _target(spec: str, owner: str, column: str, root: Path) -> tuple[str, str, str]:
    """``table.column[:field kind]`` of a reference, with the table's schema checked to hold the column."""
    target, _, kind = str(spec).partition(":")
    table, dot, key = target.rpartition(".")
    rel = _rel(root / f"{owner}.schema.yaml", root)
    if not dot or not table:
        raise DataError(rel, f"a reference is 'table.column', got '{spec}'", column=column)
    if not (root / f"{table}.schema.yaml").exists():
        raise DataError(rel, f"references table '{table}', which has no schema", column=column)
    if key not in load_schema(table, root).column_names:
        raise DataError(rel, f"references '{target}', but table '{table}' has no column '{key}'", column=column)
    return table, key, kind


def _keyed(table: str, key: str, name: str, records: list[dict[str, Any]], root: Path) -> dict[Any, dict[str, Any]]:
    """The referenced table's rows by ``key`` (the first row of each key; this table for a self-reference)."""
    rows = records if table == name else _loaded(table, root)[1]
    out: dict[Any, dict[str, Any]] = {}
    for r in rows:
        if not _null(r[key]):
            out.setdefault(r[key], r)
    return out


def _where(table: str, root: Path) -> str:
    if (root / table).is_dir() and not (root / f"{table}.csv").exists():
        return f"data/{table}/"
    return f"data/{table}.csv"


def _a(word: str) -> str:
    return ("an " if word[:1] in "aeiou" else "a ") + word


def _check_references(name: str, schema: Schema, records: list[dict[str, Any]], root: Path) -> None:
    """Every column declaring ``references`` names rows that exist (and ``present_in`` columns that
    are filled there); expressions name rows and fields that exist. Raises DataError (file, row, column)."""
    for col in schema.columns:
        if col.references is None:
            continue
        if col.type == "expression":
            _check_expressions(name, records, col, root)
            continue
        by = col.references.get("by") if isinstance(col.references, dict) else None
        targets: dict[str, tuple[str, str, dict[Any, dict[str, Any]]]] = {}
        for rec in records:
            value = rec[col.name]
            if _null(value):
                continue
            spec = col.references if by is None else col.references.get(str(rec[by]))
            if spec is None:
                continue
            if spec not in targets:
                table, key, _ = _target(spec, name, col.name, root)
                targets[spec] = (table, key, _keyed(table, key, name, records, root))
            table, key, rows = targets[spec]
            for item in _items(str(value), col):
                if item not in rows and item not in (col.unlisted or {}):
                    what = f"{_a(key)} in {_where(table, root)}"
                    if by is not None:
                        what += f" (as {by} is '{rec[by]}')"
                    raise DataError(rec["_file"], _unknown(item, what, list(rows)), rec["_row"], col.name)
    for col in schema.columns:
        if col.present_in is not None:
            _check_present(name, schema, records, col, root)


def _check_present(name: str, schema: Schema, records: list[dict[str, Any]], col: Column, root: Path) -> None:
    """``present_in: {via: gpu, column: peak_tflops_dense_{}}``: the row that column ``via`` references
    has the column named by this cell's value filled (a precision the GPU offers)."""
    via = schema.columns[schema.column_names.index(col.present_in["via"])]
    pattern = col.present_in["column"]
    head, _, tail = pattern.partition("{}")
    table, key, _ = _target(via.references, name, via.name, root)
    rows = _keyed(table, key, name, records, root)
    for rec in records:
        value, refs = rec[col.name], rec[via.name]
        if _null(value) or _null(refs):
            continue
        for ref in _items(str(refs), via):
            if ref not in rows:
                continue  # an `unlisted` name (any other unknown name was refused above)
            target = rows[ref]
            column = pattern.format(value)
            if column not in target:
                raise DataError(
                    rec["_file"], f"'{value}' names no column {column} of {_where(table, root)}", rec["_row"], col.name
                )
            if _null(target[column]):
                offered = [
                    c[len(head) : len(c) - len(tail) if tail else None]
                    for c in target
                    if c.startswith(head) and c.endswith(tail) and not _null(target[c])
                ]
                raise DataError(
                    rec["_file"],
                    f"{ref} has no {value} ({column} is empty in {_where(table, root)}); {ref} offers {', '.join(offered)}",
                    rec["_row"],
                    col.name,
                )


def value_names(text: Any) -> list[str]:
    """The names of a ``name=number; ...`` cell (a claim's ``values``)."""
    if not isinstance(text, str):
        return []
    return [part.partition("=")[0].strip() for part in SOURCE_SPLIT.split(text) if part.strip()]


def _check_expressions(name: str, records: list[dict[str, Any]], col: Column, root: Path) -> None:
    """An expression is numbers and references joined by `` * ``; each reference ``prefix:key`` (or
    ``prefix:key:field``) names a row of the table its prefix maps to, and the field a filled
    numeric column of it (``:column``), a declared product of columns, or a name in its ``values``
    (``:values``). A product of numbers alone keeps the column's bounds."""
    prefixes = dict(col.references)
    cached: dict[str, tuple[str, str, str, dict[Any, dict[str, Any]]]] = {}

    def target_rows(prefix: str) -> tuple[str, str, str, dict[Any, dict[str, Any]]]:
        if prefix not in cached:
            table, key, kind = _target(prefixes[prefix], name, col.name, root)
            cached[prefix] = (table, key, kind, _keyed(table, key, name, records, root))
        return cached[prefix]

    for rec in records:
        text, file, row = rec[col.name], rec["_file"], rec["_row"]
        if _null(text):
            continue
        literal = 1.0
        only_numbers = True
        for factor in (f.strip() for f in str(text).split(" * ")):
            prefix, sep, rest = factor.partition(":")
            if not sep or prefix not in prefixes:
                try:
                    number = float(factor)
                except ValueError:
                    forms = ", ".join(f"{p}:..." for p in prefixes)
                    raise DataError(
                        file, f"'{_cut(factor)}' is neither a number nor a reference ({forms})", row, col.name
                    ) from None
                if not math.isfinite(number):
                    raise DataError(file, f"'{_cut(factor)}' is not a finite number", row, col.name)
                literal *= number
                continue
            only_numbers = False
            table, key, kind, rows = target_rows(prefix)
            item, field_name = (rest.rpartition(":")[0], rest.rpartition(":")[2]) if kind else (rest, "")
            if kind and not item:
                raise DataError(file, f"'{_cut(factor)}' names no field: {prefix}:<{key}>:<field>", row, col.name)
            if item not in rows:
                raise DataError(file, _unknown(item, f"{_a(key)} in {_where(table, root)}", list(rows)), row, col.name)
            target = rows[item]
            if kind == "values":
                names = value_names(target.get("values"))
                if field_name not in names:
                    raise DataError(
                        file,
                        f"'{_cut(factor)}': {item} states no '{field_name}'; it states {allowed_text(names)}",
                        row,
                        col.name,
                    )
            elif kind == "column":
                ref_schema = load_schema(table, root)
                numeric = [c.name for c in ref_schema.columns if c.type in ("int", "float")]
                parts = ref_schema.derived.get(field_name, (field_name,))
                if field_name not in numeric and field_name not in ref_schema.derived:
                    raise DataError(
                        file,
                        f"'{_cut(factor)}': {_where(table, root)} has no numeric column '{field_name}'; "
                        f"allowed: {allowed_text([*numeric, *ref_schema.derived])}",
                        row,
                        col.name,
                    )
                empty = [p for p in parts if _null(target[p])]
                if empty:
                    raise DataError(
                        file,
                        f"'{_cut(factor)}': {empty[0]} is empty for {item} in {_where(table, root)}",
                        row,
                        col.name,
                    )
        if only_numbers:
            unit = f" {col.unit}" if col.unit else ""
            if col.min is not None and literal < col.min:
                raise DataError(file, f"{literal:g} is below the minimum {col.min:g}{unit}", row, col.name)
            if col.max is not None and literal > col.max:
                raise DataError(file, f"{literal:g} is above the maximum {col.max:g}{unit}", row, col.name)


def orphans(root: Path) -> list[Path]:
    """Data files no schema describes: ``x.csv`` (or ``x/*.csv``) without ``x.schema.yaml``."""
    record(root / "**" / "*.csv", root)
    out = []
    for path in sorted(root.rglob("*.csv")):
        rel = path.relative_to(root)
        single = root / rel.with_suffix(".schema.yaml")
        folder = root / f"{rel.parent.as_posix()}.schema.yaml" if rel.parent != Path(".") else None
        if not single.exists() and not (folder is not None and folder.exists()):
            out.append(path)
    return out


def load_all(root: Path) -> dict[str, pd.DataFrame]:
    found = table_names(root)
    if "sources" not in found:
        raise DataError(_rel(root / "sources.schema.yaml", root), "the sources table is missing")
    for path in orphans(root):
        stem = path.relative_to(root).with_suffix("").as_posix()
        raise DataError(
            _rel(path, root),
            f"no schema describes this file: data/{stem}.schema.yaml is missing (tables: {allowed_text(found)})",
        )
    return {name: load_table(name, root) for name in found}
