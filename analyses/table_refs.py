"""Referential integrity of the data tables: every name a cell gives is a row elsewhere.

A column names rows of another table by a Table Schema foreign key (one value per cell), or by the
book's own ``references`` (a ``list`` field: every item; ``{by: column, ...}``: the table chosen
by another column); ``present_in`` requires a filled column of the referenced row (a precision the
GPU offers); an ``expression`` field holds numbers and ``prefix:key[:field]`` references joined by
`` * ``, each reference and field checked, and a product of numbers alone kept within ``bounds``.
Each function takes the table's checked records and ``rows_of(table)``, the records of another
table (loaded and checked in turn by :mod:`analyses.tables`); a fault is a :class:`DataError`
naming file, row and column.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

from analyses.table_schema import (
    SOURCE_SPLIT,
    Column,
    DataError,
    Schema,
    allowed_text,
    load_schema,
    package,
    rel_path,
)
from analyses.table_schema import cut as _cut

Records = list[dict[str, Any]]
RowsOf = Callable[[str], Records]


def null(value: Any) -> bool:
    """An empty cell: None, or NaN in a numeric column."""
    return value is None or (isinstance(value, float) and math.isnan(value))


def items(text: str, col: Column) -> list[str]:
    """The items of a cell: a ``sources`` list, a list column (``separator``) or the one value."""
    if col.type == "sources":
        return SOURCE_SPLIT.split(text)
    if col.separator is not None:
        return [t.strip() for t in text.split(col.separator) if t.strip()]
    return [text]


def check(name: str, schema: Schema, records: Records, root: Path, rows_of: RowsOf) -> None:
    """Every column declaring a reference names rows that exist (and ``present_in`` columns that
    are filled there); expressions name rows and fields that exist. Raises DataError (file, row, column)."""
    for col in schema.columns:
        if col.references is None:
            continue
        if col.type == "expression":
            _check_expressions(name, records, col, root, rows_of)
        else:
            _check_column(name, records, col, root, rows_of)
    for col in schema.columns:
        if col.present_in is not None:
            _check_present(name, schema, records, col, root, rows_of)
        if col.covers is not None:
            _check_covers(name, records, col, root, rows_of)


def _check_covers(name: str, records: Records, col: Column, root: Path, rows_of: RowsOf) -> None:
    """``covers: table.column``: every value of that column has a row here (a claim its Chinese row)."""
    table, key, _ = _target(col.covers, name, col.name, root)
    have = {rec[col.name] for rec in records}
    for value, row in _keyed(table, key, name, records, rows_of).items():
        if value not in have:
            where = f"{row['_file']} row {row['_row']}"
            message = f"no row for '{value}' ({where}); every {key} of {_where(table, root)} needs one here"
            raise DataError(_where(name, root), message, column=col.name)


def _unknown(item: str, what: str, known: list[Any]) -> str:
    """'x' is not <what> (did you mean ...?); allowed: ..."""
    close = difflib.get_close_matches(str(item), [str(k) for k in known], n=1)
    hint = f" (did you mean '{close[0]}'?)" if close else ""
    return f"'{_cut(str(item))}' is not {what}{hint}; allowed: {allowed_text(known)}"


def _target(spec: str, owner: str, column: str, root: Path) -> tuple[str, str, str]:
    """``table.column[:field kind]`` of a reference, with the table's schema checked to hold the column."""
    target, _, kind = str(spec).partition(":")
    table, dot, key = target.rpartition(".")
    rel = rel_path(root / package(root)[owner][1], root)
    if not dot or not table:
        raise DataError(rel, f"a reference is 'table.column', got '{spec}'", column=column)
    if table not in package(root):
        raise DataError(rel, f"references table '{table}', which the data package does not list", column=column)
    if key not in load_schema(table, root).column_names:
        raise DataError(rel, f"references '{target}', but table '{table}' has no column '{key}'", column=column)
    return table, key, kind


def _keyed(table: str, key: str, name: str, records: Records, rows_of: RowsOf) -> dict[Any, dict[str, Any]]:
    """The referenced table's rows by ``key`` (the first row of each key; this table for a self-reference)."""
    rows = records if table == name else rows_of(table)
    out: dict[Any, dict[str, Any]] = {}
    for r in rows:
        if not null(r[key]):
            out.setdefault(r[key], r)
    return out


def _where(table: str, root: Path) -> str:
    paths = package(root)[table][0]
    return f"data/{paths[0]}" if len(paths) == 1 else f"data/{paths[0].rpartition('/')[0]}/"


def _a(word: str) -> str:
    return ("an " if word[:1] in "aeiou" else "a ") + word


def _check_column(name: str, records: Records, col: Column, root: Path, rows_of: RowsOf) -> None:
    """Each item of a referencing column names a row of the table its reference (or ``by``) chooses."""
    by = col.references.get("by") if isinstance(col.references, dict) else None
    targets: dict[str, tuple[str, str, dict[Any, dict[str, Any]]]] = {}
    for rec in records:
        value = rec[col.name]
        if null(value):
            continue
        spec = col.references if by is None else col.references.get(str(rec[by]))
        if spec is None:
            continue
        if spec not in targets:
            table, key, _ = _target(spec, name, col.name, root)
            targets[spec] = (table, key, _keyed(table, key, name, records, rows_of))
        table, key, rows = targets[spec]
        for item in items(str(value), col):
            if item not in rows and item not in (col.unlisted or {}):
                what = f"{_a(key)} in {_where(table, root)}"
                if by is not None:
                    what += f" (as {by} is '{rec[by]}')"
                raise DataError(rec["_file"], _unknown(item, what, list(rows)), rec["_row"], col.name)


def _check_present(name: str, schema: Schema, records: Records, col: Column, root: Path, rows_of: RowsOf) -> None:
    """``present_in: {via: gpu, column: peak_tflops_dense_{}}``: the row that column ``via`` references
    has the column named by this cell's value filled (a precision the GPU offers)."""
    via = schema.columns[schema.column_names.index(col.present_in["via"])]
    pattern = col.present_in["column"]
    head, _, tail = pattern.partition("{}")
    table, key, _ = _target(via.references, name, via.name, root)
    rows = _keyed(table, key, name, records, rows_of)
    for rec in records:
        value, refs = rec[col.name], rec[via.name]
        if null(value) or null(refs):
            continue
        for ref in items(str(refs), via):
            if ref not in rows:
                continue  # an `unlisted` name (any other unknown name was refused above)
            target = rows[ref]
            column = pattern.format(value)
            if column not in target:
                raise DataError(
                    rec["_file"], f"'{value}' names no column {column} of {_where(table, root)}", rec["_row"], col.name
                )
            if null(target[column]):
                offered = [
                    c[len(head) : len(c) - len(tail) if tail else None]
                    for c in target
                    if c.startswith(head) and c.endswith(tail) and not null(target[c])
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


def _check_expressions(name: str, records: Records, col: Column, root: Path, rows_of: RowsOf) -> None:
    """An expression is numbers and references joined by `` * ``; each reference ``prefix:key`` (or
    ``prefix:key:field``) names a row of the table its prefix maps to, and the field a filled
    numeric column of it (``:column``), a declared product of columns, or a name in its ``values``
    (``:values``). A product of numbers alone keeps the column's bounds."""
    prefixes = dict(col.references)
    cached: dict[str, tuple[str, str, str, dict[Any, dict[str, Any]]]] = {}

    def target_rows(prefix: str) -> tuple[str, str, str, dict[Any, dict[str, Any]]]:
        if prefix not in cached:
            table, key, kind = _target(prefixes[prefix], name, col.name, root)
            cached[prefix] = (table, key, kind, _keyed(table, key, name, records, rows_of))
        return cached[prefix]

    for rec in records:
        text, file, row = rec[col.name], rec["_file"], rec["_row"]
        if null(text):
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
                empty = [p for p in parts if null(target[p])]
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
