"""Reading and validating the CSV tables of ``data/`` against their Table Schemas.

The mechanics behind :mod:`analyses.data` (the one module models and notebooks read facts from).
Which tables exist, their files and their schemas are the Frictionless Data Package
``data/datapackage.json`` (:mod:`analyses.table_schema`, which also lists the schema properties of
the book's own). :func:`load_table` checks the header, UTF-8 text, one field per header column, a
minimum row count, and every cell against its field:

- its type: finite numbers (``inf``, ``nan``, ``1e400`` refused), integers as digits (at most
  :data:`MAX_DIGITS`), booleans as Table Schema writes them, dates that are calendar days within
  the field's ``years``;
- its constraints: ``minimum``/``maximum``/``exclusiveMinimum``, ``enum``, ``pattern``, ``unique``,
  ``required``, ``primaryKey`` and ``uniqueKeys``; ``range_by`` (bounds chosen by another column's
  value); ``within`` (between two columns of its row); ``ordered`` groups (low <= central <= high);
- row rules (``rows``): columns a kind of row needs, must leave empty, or must match;
- referential integrity (:mod:`analyses.table_refs`): foreign keys, list references, expressions.

Every fault raises :class:`DataError` in one line naming file, row and column and what is allowed;
a data file the package does not list is a fault too (:func:`load_all`). Schemas and tables are
parsed once per process (:func:`clear_cache`). Every file read or folder listed is noted in
:data:`READS` for the build's dependency tracking.
"""

from __future__ import annotations

import csv
import datetime
import functools
import io
import math
import re
from pathlib import Path
from typing import Any

import pandas as pd

from analyses import table_refs, table_schema
from analyses.table_refs import items as _items
from analyses.table_refs import value_names  # noqa: F401  (re-exported)
from analyses.table_schema import (  # noqa: F401  (re-exported: the data module's API)
    COLUMN_TYPES,
    DATE_RE,
    READS,
    REPO_ROOT,
    SOURCE_SPLIT,
    Column,
    DataError,
    DataKeyError,
    RowRule,
    Schema,
    allowed_text,
    load_schema,
    orphans,
    record,
    table_files,
    table_names,
)
from analyses.table_schema import cut as _cut
from analyses.table_schema import rel_path as _rel

MAX_DIGITS = 30  # an integer cell longer than this is a typo (Python refuses int() past 4,300 digits)
INT_RE = re.compile(r"[-+]?\d+")
TRUE, FALSE = ("true", "True", "TRUE", "1"), ("false", "False", "FALSE", "0")  # Table Schema's defaults


def clear_cache() -> None:
    """Forget the package, parsed schemas and loaded tables (after editing files under ``data/``)."""
    table_schema.clear_cache()
    _loaded.cache_clear()


def _column_at(raw: bytes, offset: int, header: list[str]) -> str | None:
    start = raw.rfind(b"\n", 0, offset) + 1
    before = raw[start:offset].decode("utf-8", "replace")
    index = len(next(csv.reader([before]), [""])) - 1 if before else 0
    return header[index] if 0 <= index < len(header) else None


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
    header_cells = _csv_header(raw)
    text = table_schema.decode(raw, rel, lambda data, at: _column_at(data, at, header_cells))
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


def _parse_cell(value: str, col: Column, file: str, row: int) -> Any:
    """Parse one CSV cell to the column's type, or raise DataError naming the cell."""
    text = value.strip()
    if text == "":
        if col.required:
            raise DataError(file, "empty, but the column is required", row, col.name)
        return None
    try:
        if col.type == "int":
            if not INT_RE.fullmatch(text):
                raise ValueError
            if len(text.lstrip("+-")) > MAX_DIGITS:
                raise DataError(
                    file, f"an integer of {len(text.lstrip('+-')):,} digits; at most {MAX_DIGITS}", row, col.name
                )
            parsed: Any = int(text)
        elif col.type == "float":
            parsed = float(text)
        elif col.type == "bool":
            if text not in TRUE + FALSE:
                raise ValueError
            parsed = text in TRUE
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


def _parse_date(text: str, col: Column, file: str, row: int) -> str:
    """A date cell (YYYY, YYYY-MM or YYYY-MM-DD) that names a real calendar day, month or year
    within the column's ``min``/``max`` years."""
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


def _check_row(rec: dict[str, Any], schema: Schema, rel: str, row: int) -> None:
    """The checks that read several cells of one row: range_by, within, row rules, ordered groups."""
    for c in schema.columns:
        if c.range_by is not None:
            _check_range_by(rec, c, rel, row)
        if c.year_of is not None and rec[c.name] is not None and rec[c.year_of] is not None:
            if int(str(rec[c.year_of])[:4]) != rec[c.name]:
                message = (
                    f"{rec[c.name]} is not the year of this row's {c.year_of} {rec[c.year_of]}; the two must agree"
                )
                raise DataError(rel, message, row, c.name)
        if c.within is not None:
            lo, hi = (rec[w] for w in c.within)
            value = rec[c.name]
            if value is not None and lo is not None and hi is not None and not lo <= value <= hi:
                message = f"{value:g} is outside this row's {c.within[0]} {lo:g} to {c.within[1]} {hi:g}"
                raise DataError(rel, message, row, c.name)
    for rule in schema.rows:
        if not rule.matches(rec):
            continue
        why = f" ({rule.why})" if rule.why else ""
        for c in rule.requires:
            if rec[c] is None:
                raise DataError(rel, f"empty, but a row with {rule.text()} needs it{why}", row, c)
        for c in rule.forbids:
            if rec[c] is not None:
                message = f"'{_cut(str(rec[c]))}' given, but a row with {rule.text()} must leave it empty{why}"
                raise DataError(rel, message, row, c)
        for c, pattern in rule.patterns:
            if rec[c] is not None and not re.fullmatch(pattern, str(rec[c])):
                message = f"'{_cut(str(rec[c]))}' is not of the form a row with {rule.text()} needs: {pattern}{why}"
                raise DataError(rel, message, row, c)
    for group in schema.ordered:
        present = [(c, rec[c]) for c in group if rec[c] is not None]
        for (a, va), (b, vb) in zip(present, present[1:], strict=False):
            if vb < va:
                raise DataError(rel, f"{b} {vb} is below {a} {va}; the schema needs {' <= '.join(group)}", row, b)


def _read_file(path: Path, schema: Schema, root: Path) -> tuple[str, list[tuple[int, list[str]]], dict[str, int]]:
    """One data file's rows, with its header checked against the schema: (file, rows, column index)."""
    rel = _rel(path, root)
    header, rows = read_csv_rows(path, rel)
    missing = [c for c in schema.column_names if c not in header]
    if missing:
        message = f"missing column(s) {missing}; the schema {_rel(schema.path, root)} requires them"
        raise DataError(rel, message, row=1, column=missing[0])
    extra = [c for c in header if c not in schema.column_names]
    if extra:
        raise DataError(rel, f"column(s) {extra} not in the schema {_rel(schema.path, root)}", row=1, column=extra[0])
    return rel, rows, {c: header.index(c) for c in schema.column_names}


def _read_validated(name: str, root: Path) -> tuple[pd.DataFrame, Schema, list[dict[str, Any]]]:
    schema = load_schema(name, root)
    records: list[dict[str, Any]] = []
    seen: dict[tuple[str, ...], dict[tuple, tuple[str, int]]] = {(c.name,): {} for c in schema.columns if c.unique}
    seen |= {k: {} for k in schema.keys}
    for path in table_files(name, root):
        rel, rows, index = _read_file(path, schema, root)
        for row, cells in rows:
            rec = {c.name: _parse_cell(cells[index[c.name]], c, rel, row) for c in schema.columns}
            for group, values in seen.items():
                key = tuple(rec[c] for c in group)
                if key in values and (len(group) > 1 or key[0] is not None):
                    first = values[key]
                    what = f"value '{key[0]}'" if len(group) == 1 else f"{' + '.join(group)} {key}"
                    raise DataError(
                        rel,
                        f"duplicate {what} (first in {first[0]} row {first[1]}); no two rows may share it",
                        row,
                        group[-1],
                    )
                values[key] = (rel, row)
            _check_row(rec, schema, rel, row)
            rec["_file"], rec["_row"] = rel, row
            records.append(rec)
    if len(records) < schema.min_rows:
        files = ", ".join(_rel(p, root) for p in table_files(name, root))
        message = f"{len(records)} data rows below the header; table '{name}' needs at least {schema.min_rows}"
        raise DataError(files, message, row=2)
    frame = pd.DataFrame.from_records(records, columns=[*schema.column_names, "_file", "_row"])
    for c in schema.columns:
        if c.type == "float":
            frame[c.name] = frame[c.name].astype(float)
        elif c.type == "int" and frame[c.name].notna().all():
            frame[c.name] = frame[c.name].astype("int64")
    return frame, schema, records


_LOADING: list[str] = []  # tables being loaded, innermost last (a reference loop is a fault)


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
        raise DataError(_rel(load_schema(name, root).path, root), f"tables reference each other in a loop: {loop}")
    _LOADING.append(name)
    try:
        frame, schema, records = _read_validated(name, root)
        table_refs.check(name, schema, records, root, lambda other: _loaded(other, root)[1])
    finally:
        _LOADING.pop()
    return frame, records


def load_all(root: Path) -> dict[str, pd.DataFrame]:
    """Every table of the package, validated; a data file the package does not list is a fault."""
    found = table_names(root)
    for path in orphans(root):
        raise DataError(
            _rel(path, root),
            f"the data package (data/datapackage.json) lists no table with this file (tables: {allowed_text(found)})",
        )
    return {name: load_table(name, root) for name in found}
