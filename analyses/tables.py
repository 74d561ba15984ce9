"""Reading and validating the CSV tables of ``data/`` against their YAML schemas.

The mechanics behind :mod:`analyses.data` (the one module models and notebooks read facts from):
each table is ``<name>.csv`` or a folder ``<name>/*.csv`` with a sidecar ``<name>.schema.yaml``;
:func:`load_table` checks the header, every cell's type, unit bounds, allowed values, uniqueness,
ordered columns, a minimum row count, UTF-8 text, one field per header column and that every
source id resolves, raising :class:`DataError` with file, row and column in one line. Every file
read or folder listed is noted in :data:`READS` for the build's dependency tracking.
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

COLUMN_TYPES = ("str", "int", "float", "bool", "date", "source", "sources")
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
    path = root / f"{name}.schema.yaml"
    record(path, root)
    rel = _rel(path, root)
    if not path.exists():
        raise DataError(rel, f"no schema for table '{name}'; tables: {', '.join(table_names(root))}")
    try:
        raw = yaml.safe_load(_decode(path.read_bytes(), rel)) or {}
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        row = None if mark is None else mark.line + 1
        problem = " ".join(str(getattr(err, "problem", None) or err).split())
        raise DataError(rel, f"not valid YAML: {problem}", row) from None
    if not isinstance(raw, dict) or not isinstance(raw.get("columns", []), list):
        raise DataError(rel, "a schema is a mapping with a list of 'columns'")
    unknown_keys = set(raw) - {"description", "columns", "sourced", "min_rows", "ordered"}
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
        unknown = set(spec) - set(Column.__dataclass_fields__)
        if unknown:
            raise DataError(rel, f"unknown schema key(s) {sorted(unknown)}", column=spec.get("name"))
        cols.append(Column(**spec))
    names = [c.name for c in cols]
    ordered = tuple(tuple(group) for group in raw.get("ordered", []))
    for group in ordered:
        missing = [c for c in group if c not in names]
        if missing:
            raise DataError(rel, f"'ordered' names unknown column(s) {missing}")
    schema = Schema(
        name,
        raw.get("description", ""),
        tuple(cols),
        raw.get("sourced", True),
        path,
        int(raw.get("min_rows", 1)),
        ordered,
    )
    if schema.sourced and not any(c.type in ("source", "sources") for c in cols):
        raise DataError(rel, "a sourced table needs a column of type 'source' or 'sources'")
    return schema


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
            if not math.isfinite(parsed):
                raise ValueError
        elif col.type == "bool":
            if text.lower() not in ("true", "false"):
                raise ValueError
            parsed = text.lower() == "true"
        else:
            parsed = text
    except (ValueError, OverflowError):
        raise DataError(file, f"'{_cut(text)}' is not a valid {col.type}", row, col.name) from None
    if col.type == "date" and not DATE_RE.match(text):
        raise DataError(file, f"'{_cut(text)}' is not a date (YYYY, YYYY-MM or YYYY-MM-DD)", row, col.name)
    if col.allowed is not None:
        items = SOURCE_SPLIT.split(text) if col.type == "sources" else [text]
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


def _cut(text: str, limit: int = 60) -> str:
    """A cell's text for a one-line message: at most ``limit`` characters, on one line."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _read_validated(name: str, root: Path) -> pd.DataFrame:
    schema = load_schema(name, root)
    records: list[dict[str, Any]] = []
    seen: dict[str, dict[Any, tuple[str, int]]] = {c.name: {} for c in schema.columns if c.unique}
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
    frame.attrs["schema"] = schema
    return frame


@functools.cache
def load_table(name: str, root: Path) -> pd.DataFrame:
    """One validated table whose source ids resolve in the sources table (read only as needed)."""
    frame = _read_validated(name, root)
    source_cols = [c for c in frame.attrs["schema"].columns if c.type in ("source", "sources")]
    if source_cols:
        if name == "sources":
            known = set(frame["id"])
        else:
            sources_schema = root / "sources.schema.yaml"
            record(sources_schema, root)
            if not sources_schema.exists():
                raise DataError(_rel(sources_schema, root), "the sources table is missing")
            known = set(load_table("sources", root)["id"])
        for col in source_cols:
            for value, file, row in zip(frame[col.name], frame["_file"], frame["_row"], strict=False):
                if value is None or (isinstance(value, float) and math.isnan(value)):
                    if not col.required:
                        continue  # an optional source column (tables marked `sourced: false`)
                    raise DataError(file, "row has no source", row, col.name)
                for sid in SOURCE_SPLIT.split(value) if col.type == "sources" else [value]:
                    if sid not in known:
                        raise DataError(
                            file, f"source '{sid}' is not in the sources table (data/sources/)", row, col.name
                        )
    return frame


def load_all(root: Path) -> dict[str, pd.DataFrame]:
    found = table_names(root)
    if "sources" not in found:
        raise DataError(_rel(root / "sources.schema.yaml", root), "the sources table is missing")
    return {name: load_table(name, root) for name in found}
