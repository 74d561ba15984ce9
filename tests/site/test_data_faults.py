"""Fault injection into a copy of data/: every mutation is refused with one line naming its place.

The mutations are generated from the schemas themselves (:func:`mutations`): for every column of
every table, each fault its type and declarations allow (a reference to a row that does not
exist, a value above its maximum or below its minimum, one outside the bounds its row's kind
gives, a non-finite number, a word where a number belongs, a fraction in a count, a date that is
no calendar day, an empty required cell, a duplicated key, a broken row rule, a bad expression);
for every table, its data file or its schema deleted; and for the claims, a row deleted under its
check and a stated value removed that a check reads. Each mutation is run through
``python -m analyses verdicts`` in-process (the data module pointed at one link farm of data/,
restored after each mutation) and must exit with status 2 and exactly one line,
``error: <file>, row <n>, column '<c>': ...`` at the place the mutation broke: no traceback, no
silent acceptance. A sample also goes through ``run``, ``plan`` and ``build`` in-process (their
kernels and planners stubbed: validation must stop them first), and three through the command
line in a process of their own.

``make test`` runs a stratified sample (every table and kind of fault, every reference; about 300
mutations, see :data:`ALWAYS_KINDS`); ``DATA_FAULTS=all pytest tests/site/test_data_faults.py``
runs every mutation the schemas give.

The counts (mutations, one-line errors, tracebacks, silent acceptances, out-of-range values
accepted) are printed at the end of the run (tests/site/conftest.py).
"""

from __future__ import annotations

import collections
import contextlib
import csv
import functools
import io
import math
import os
import subprocess
import sys
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from analyses import chapters, claim_values, data, scenario
from analyses.chapters import ledger
from analyses.data import REPO_ROOT
from analyses.site import cli

DATA = REPO_ROOT / "data"

# --------------------------------------------------------------------------------------------
# Reading the pristine tables (independently of analyses.tables: csv records and their lines)
# --------------------------------------------------------------------------------------------


def _read(path: Path) -> list[list[str]]:
    return list(csv.reader(io.StringIO(path.read_text(encoding="utf-8-sig"), newline="")))


def _record_lines(path: Path) -> list[int]:
    """The line each record of a CSV file starts on (1 = the header)."""
    reader = csv.reader(io.StringIO(path.read_text(encoding="utf-8-sig"), newline=""))
    starts, end = [], 0
    for _ in reader:
        starts.append(end + 1)
        end = reader.line_num
    return starts


def _write(path: Path, rows: list[list[str]]) -> None:
    with path.open("w", newline="", encoding="utf-8") as f:
        csv.writer(f, lineterminator="\n").writerows(rows)


def _files(name: str) -> list[str]:
    """The data files of a table, relative to data/ (a folder table has several)."""
    if (DATA / f"{name}.csv").exists():
        return [f"{name}.csv"]
    return sorted(p.relative_to(DATA).as_posix() for p in (DATA / name).glob("*.csv"))


def _row_of(rel: str, column: str, value: str) -> int:
    """The record index of the first row of ``rel`` whose ``column`` is ``value``."""
    rows = _read(DATA / rel)
    return next(k for k, r in enumerate(rows[1:]) if r[rows[0].index(column)] == value)


def _empty(cell: str) -> bool:
    return not cell.strip()


# --------------------------------------------------------------------------------------------
# Mutations
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Mutation:
    """One fault: ``op`` applied to the copy of data/; where the error must point (``file``
    relative to data/, the record index whose line is the row, the column), and what it tests."""

    id: str
    kind: str
    file: str
    op: tuple  # ("cell", record, column, value) | ("append-copy", record) | ("drop", record) | ("delete", rel)
    column: str | None = None
    record: int | None = None  # 0 = the first data row; None: the error names no row
    out_of_range: bool = False
    needle: str = ""  # a word the message must hold (the claim id of a deleted row, ...)
    via_ledger: bool = False  # found when the checks run, not when the tables load
    at: tuple[str, int | None, str | None] | None = None  # where the error must point, when not at the edit


def _number(x: float, kind: str) -> str:
    return str(int(x)) if kind == "int" else repr(float(x))


def _column_mutations(name: str, col: data.Column, rel: str, rows: list[list[str]]) -> list[Mutation]:
    header, body = rows[0], rows[1:]
    if col.name not in header or not body:
        return []
    i = header.index(col.name)
    filled = [k for k, r in enumerate(body) if not _empty(r[i])]
    first = filled[0] if filled else 0
    out: list[Mutation] = []

    def cell(kind: str, value: str, record: int = first, out_of_range: bool = False, tag: str = "") -> None:
        out.append(
            Mutation(
                f"{rel}:{col.name}:{tag or kind}",
                kind,
                rel,
                ("cell", record, col.name, value),
                col.name,
                record,
                out_of_range,
            )
        )

    if col.required:
        cell("missing value", "", record=0)
    if col.unique and len(body) > 1:
        value = body[0][i]
        out.append(
            Mutation(f"{rel}:{col.name}:duplicate", "duplicate key", rel, ("cell", 1, col.name, value), col.name, 1)
        )
    if col.type in ("int", "float"):
        if col.max is not None:
            cell("out of range", _number(col.max + max(1.0, abs(col.max)), col.type), out_of_range=True, tag="above")
        if col.min is not None:
            low = col.min - max(1.0, abs(col.min))
            cell("out of range", _number(low, col.type), out_of_range=True, tag="below")
        elif col.positive:
            cell("out of range", "0", out_of_range=True, tag="zero")
        cell("non-finite", "inf" if col.type == "float" else "nan", tag="inf")
        if col.type == "float":
            cell("non-finite", "1e400", tag="overflow")
        cell("wrong type", "twelve")
        if col.type == "int":
            cell("wrong type", "2.5", tag="fraction")
        if col.range_by is not None:
            by = header.index(col.range_by["column"])
            for k in filled:
                bounds = col.range_by["ranges"].get(body[k][by])
                if bounds is None:
                    continue
                lo, hi = bounds
                too_big = hi * 10 + 1
                if col.max is None or too_big <= col.max:
                    cell("out of range", repr(too_big), k, True, tag=f"above-for-{body[k][by]}")
                elif lo > 0 and (col.min is None or lo / 10 >= col.min) and not (col.positive and lo / 10 <= 0):
                    cell("out of range", repr(lo / 10), k, True, tag=f"below-for-{body[k][by]}")
                break
        if col.within is not None:
            hi_col = header.index(col.within[1])
            for k in filled:
                top = float(body[k][hi_col]) * 2 + 1
                if col.max is None or top <= col.max:
                    cell("out of range", repr(top), k, True, tag="outside-row-bounds")
                    break
    elif col.type == "date":
        cell("calendar", "2025-02-30")
        cell("calendar", "2026-13-45", tag="month")
        if col.min is not None:
            cell("out of range", str(int(col.min) - 1), out_of_range=True, tag="year")
        cell("wrong type", "soon")
    elif col.type in ("source", "sources"):
        cell("unknown reference", "no-such-source")
    elif col.type == "expression":
        cell("unknown reference", "model:no-such-model:params", tag="reference")
        cell("unknown reference", "claim:000-1-param-growth-18mo:no_such_value", tag="field")
        cell("wrong type", "lots")
        cell("non-finite", "inf")
        if col.max is not None:
            cell("out of range", repr(col.max * 100), out_of_range=True, tag="literal")
    else:
        if col.allowed is not None:
            cell("allowed", "no-such-value")
        if col.pattern is not None:
            cell("pattern", "Not A Valid Id!")
        if col.references is not None:
            targets = col.references.values() if isinstance(col.references, dict) else [col.references]
            k = first
            if isinstance(col.references, dict):  # chosen by another column: a row whose choice references
                by = header.index(col.references["by"])
                k = next((j for j in filled if body[j][by] in col.references), None)
            if k is not None and targets:
                value = "no-such-ref"
                if col.separator:
                    value = body[k][i].split(col.separator)[0] + col.separator + "no-such-ref"
                cell("unknown reference", value, k)
        if col.present_in is not None:
            out += _present_mutations(col, rel, header, body)
    return out


def _present_mutations(col: data.Column, rel: str, header: list[str], body: list[list[str]]) -> list[Mutation]:
    """A value the referenced row lacks (a precision the GPU does not offer)."""
    via = header.index(col.present_in["via"])
    gpus = data.table("gpus").set_index("name")
    for k, r in enumerate(body):
        for name in [v.strip() for v in r[via].split(";") if v.strip()]:
            if name not in gpus.index:
                continue
            for value in col.allowed or data.PRECISIONS:
                column = col.present_in["column"].format(value)
                if column in gpus.columns and math.isnan(gpus.loc[name, column]):
                    op = ("cell", k, col.name, value)
                    return [Mutation(f"{rel}:{col.name}:not-offered", "unknown reference", rel, op, col.name, k)]
    return []


def _row_rule_mutations(name: str, schema: data.Schema, rel: str, rows: list[list[str]]) -> list[Mutation]:
    header, body = rows[0], rows[1:]
    out = []
    for n, rule in enumerate(schema.rows):

        def matches(r: list[str], rule=rule) -> bool:
            for c, want in rule.when:
                v = r[header.index(c)].strip()
                ok = (want == "" and not v) or (want == "*" and v) or (isinstance(want, list) and v in want)
                ok = ok or (isinstance(want, str) and want not in ("", "*") and v == want)
                if not ok:
                    return False
            return True

        hits = [k for k, r in enumerate(body) if matches(r)]
        for c in rule.requires:
            k = next((k for k in hits if not _empty(body[k][header.index(c)])), None)
            if k is not None:
                op = ("cell", k, c, "")
                out.append(Mutation(f"{rel}:rule{n}:requires-{c}", "row rule", rel, op, c, k))
                break
        for c in rule.forbids:
            i = header.index(c)
            k = next((k for k in hits if _empty(body[k][i])), None)
            donor = next((r[i] for r in body if not _empty(r[i])), None)
            if k is not None and donor is not None:
                if c in ("low", "central", "high"):  # a value inside the row's own min-max
                    donor = body[k][header.index("min")] if "min" in header else donor
                op = ("cell", k, c, donor)
                out.append(Mutation(f"{rel}:rule{n}:forbids-{c}", "row rule", rel, op, c, k))
                break
    return out


def _key_mutations(schema: data.Schema, rel: str, rows: list[list[str]]) -> list[Mutation]:
    if not schema.keys or any(c.unique for c in schema.columns) or len(rows) < 2:
        return []
    group = schema.keys[0]
    return [Mutation(f"{rel}:keys:duplicate-row", "duplicate key", rel, ("append-copy", 0), group[-1], len(rows) - 1)]


def _table_mutations(name: str) -> list[Mutation]:
    files = _files(name)
    out = []
    for rel in files[:1]:
        out.append(Mutation(f"{name}:missing-file", "missing file", rel, ("delete-table", name), needle=name))
    schema_rel = f"{name}.schema.yaml"
    out.append(Mutation(f"{name}:missing-schema", "missing schema", schema_rel, ("delete", schema_rel)))
    return out


def _claim_mutations() -> list[Mutation]:
    """A claim row deleted under its check, and a stated value its check reads removed (one of each
    per chapter with checks); the claims' values cell made non-finite and malformed."""
    rows = _read(DATA / "claims.csv")
    header, body = rows[0], rows[1:]
    index = {r[header.index("id")]: k for k, r in enumerate(body)}
    out = []
    read: list[tuple[str, str]] = []
    original = data.Claim.value

    def recording(self, key):
        read.append((self.id, key))
        return original(self, key)

    presets = (DATA / "plan_presets.csv").read_text()  # claims a preset names fail there first
    for slug in chapters.CHAPTERS:
        found = [c for c in sorted(ledger.checks(slug), key=index.get) if c not in presets]
        if not found:
            continue
        claim_id = found[0]
        # the claim's Chinese row then names a claim that is not there: loading stops at it
        zh = _row_of("claims_zh.csv", "id", claim_id)
        at = ("data/claims_zh.csv", _record_lines(DATA / "claims_zh.csv")[1 + zh], "id")
        out.append(
            Mutation(
                f"claims.csv:{slug}:row-deleted",
                "missing claim row",
                "claims.csv",
                ("drop", index[claim_id]),
                needle=claim_id,
                at=at,
            )
        )
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(data.Claim, "value", recording)
            read.clear()
            for cid in found:
                ledger.evaluate(data.claim(cid), robust=False)
                if read:
                    break
        if read:
            cid, key = read[0]
            values = body[index[cid]][header.index("values")]
            kept = "; ".join(p for p in values.split(";") if p.split("=")[0].strip() != key and p.strip())
            op = ("cell", index[cid], "values", kept)
            # without the key, a figure of `stated` may lose the value that carried it: then loading
            # stops at 'stated'; otherwise the check that reads the key stops at 'values'
            stated = body[index[cid]][header.index("stated")]
            try:
                claim_values.check({"stated": stated, "_file": "", "_row": 0}, claim_values.parse_values(kept))
                column, needle, via_ledger = "values", key, True
            except data.DataError:
                column, needle, via_ledger = "stated", "", False
            out.append(
                Mutation(
                    f"claims.csv:{cid}:values-without-{key}",
                    "claim values missing a key",
                    "claims.csv",
                    op,
                    column,
                    index[cid],
                    needle=needle,
                    via_ledger=via_ledger,
                )
            )
    k = next(k for k, r in enumerate(body) if "=" in r[header.index("values")])
    out.append(
        Mutation("claims.csv:values:inf", "non-finite", "claims.csv", ("cell", k, "values", "x=inf"), "values", k)
    )
    out.append(
        Mutation("claims.csv:values:malformed", "wrong type", "claims.csv", ("cell", k, "values", "x"), "values", k)
    )
    return out


# The default run (make test) evaluates a stratified sample in-process, one mutation per table and
# kind (two out-of-range values per table); every table's file and schema deletion, every unknown
# reference and every claim fault run whatever the sample. DATA_FAULTS=all runs the whole campaign
# (every mutation the schemas give, about 1,300).
ALWAYS_KINDS = (
    "missing file",
    "missing schema",
    "unknown reference",
    "missing claim row",
    "claim values missing a key",
)
PER_TABLE = {"out of range": 2}  # mutations of a kind per table in the sample (1 for the other kinds)
FULL = os.environ.get("DATA_FAULTS") == "all"


def _sampled(found: list[Mutation], full: bool = FULL) -> list[Mutation]:
    if full:
        return found
    taken: collections.Counter = collections.Counter()
    out = []
    for m in found:
        if m.kind not in ALWAYS_KINDS:
            key = (_table_of(m.file), m.kind)
            if taken[key] >= PER_TABLE.get(m.kind, 1):
                continue
            taken[key] += 1
        out.append(m)
    return out


def _table_of(rel: str) -> str:
    stem = rel[: -len(".csv")]
    return stem if (DATA / f"{stem}.schema.yaml").exists() else stem.rpartition("/")[0]


def mutations(full: bool = FULL) -> list[Mutation]:
    """Every mutation the schemas give, each once (by id); unless ``full``, the default run's sample
    of them (see :data:`ALWAYS_KINDS`)."""
    out: list[Mutation] = []
    for name in data.table_names():
        schema = data.schema(name)
        rel = _files(name)[0]
        rows = _read(DATA / rel)
        for col in schema.columns:
            out += _column_mutations(name, col, rel, rows)
        out += _row_rule_mutations(name, schema, rel, rows)
        out += _key_mutations(schema, rel, rows)
        out += _table_mutations(name)
    out += _claim_mutations()
    unique = {m.id: m for m in out}
    return _sampled(list(unique.values()), full)


def _issue_38() -> list[Mutation]:
    """The faults issue 38 found accepted silently or ending in a traceback, each with the place its
    one-line error must name."""

    def cell(tag: str, rel: str, key: tuple[str, str], column: str, value: str, at: str | None = None) -> Mutation:
        k = _row_of(rel, *key)
        return Mutation(f"issue38:{tag}", "issue 38", rel, ("cell", k, column, value), at or column, k)

    def schema(tag: str, name: str, column: str, edit: dict) -> Mutation:
        rel = f"{name}.schema.yaml"
        return Mutation(f"issue38:{tag}", "issue 38", rel, ("schema", rel, column, edit), column)

    def drop(tag: str, rel: str, key: tuple[str, str], column: str, needle: str, at: tuple | None = None) -> Mutation:
        op = ("drop", _row_of(rel, *key))
        return Mutation(f"issue38:{tag}", "issue 38", rel, op, column, None, needle=needle, via_ledger=True, at=at)

    def term_row(group: str, term: str) -> tuple[str, int, str]:
        """Where a deleted scenario row stops: its Chinese term (terms_zh names every scenario input)."""
        rows = _read(DATA / "terms_zh.csv")
        k = next(k for k, r in enumerate(rows[1:]) if r[0] == group and r[1] == term)
        return ("data/terms_zh.csv", _record_lines(DATA / "terms_zh.csv")[1 + k], "term")

    claim = ("id", "000-0-centuries")
    return [
        schema("schema-type-changed-max-kept", "gpus", "tdp_w", {"type": "string"}),
        schema(
            "schema-max-nan",
            "gpus",
            "hbm_capacity_gib",
            {"constraints": {"required": True, "minimum": 1, "maximum": float("nan")}},
        ),
        schema("schema-without-min", "gpus", "tdp_w", {"constraints": {"required": True, "maximum": 5000}}),
        drop(
            "scenario-row-deleted-mfu",
            "scenario.csv",
            ("name", "mfu_a100_bf16"),
            "name",
            "mfu_a100_bf16",
            term_row("input", "mfu_a100_bf16"),
        ),
        drop(
            "scenario-row-deleted-utilisation",
            "scenario.csv",
            ("name", "utilisation"),
            "name",
            "utilisation",
            term_row("input", "utilisation"),
        ),
        cell(
            "values-key-twice",
            "claims.csv",
            claim,
            "values",
            "params=100000000000; params=1; server_years_low=200; server_years_high=900",
        ),
        cell(
            "values-low-above-high",
            "claims.csv",
            claim,
            "values",
            "params=100000000000; server_years_low=900; server_years_high=200",
        ),
        cell(
            "stated-without-values",
            "claims.csv",
            claim,
            "stated",
            "300B-parameter model; several hundred years of an ordinary server",
        ),
        cell("usable-above-capacity", "gpus.csv", ("name", "B300"), "hbm_usable_gib", "300", at="hbm_capacity_gib"),
        cell("precision-typo", "scenario.csv", ("name", "speedup_b300_a100"), "argument", "B300:fp9/A100:bf16"),
        cell("launch-year-not-date", "gpus.csv", ("name", "A100"), "launch_year", "2019"),
        drop("claims-zh-row-deleted", "claims_zh.csv", claim, "id", "000-0-centuries"),
        cell("claims-zh-unknown-id", "claims_zh.csv", claim, "id", "000-9-no-such-claim"),
        drop("terms-zh-row-deleted", "terms_zh.csv", ("term", "implausible"), "term", "implausible"),
        cell("terms-zh-unknown-term", "terms_zh.csv", ("term", "overstates"), "term", "exaggerates"),
        drop("calculator-zh-row-deleted", "calculator_zh.csv", ("key", "choice:USD"), "key", "choice:USD"),
        drop("calculator-zh-words-row-deleted", "calculator_zh.csv", ("key", "months"), "key", "'months'"),
        # an input's label and unit: the keys come from the inputs the calculator declares
        drop(
            "calculator-zh-input-row-deleted",
            "calculator_zh.csv",
            ("key", "input:n_gpus_{gpu}"),
            "key",
            "input:n_gpus_{gpu}",
        ),
        drop("calculator-zh-unit-row-deleted", "calculator_zh.csv", ("key", "unit:GPUs"), "key", "'unit:GPUs'"),
        cell("calculator-zh-unknown-input", "calculator_zh.csv", ("key", "input:pue"), "key", "input:pue_typo"),
        cell("calculator-zh-unknown-key", "calculator_zh.csv", ("key", "days"), "key", "dayz"),
    ]


MUTATIONS = mutations() + _issue_38()
data.clear_cache()
scenario.clear_cache()


def apply(root: Path, m: Mutation) -> tuple[str, int | None, str | None]:
    """Break the copy ``root`` as ``m`` says; return where the error must point: (file under the
    repository as the message names it, row, column)."""
    kind = m.op[0]
    if kind == "delete":
        (root / m.op[1]).unlink()
        return f"data/{m.file}", None, None
    if kind == "delete-table":
        for rel in _files(m.op[1]):
            (root / rel).unlink()
        return f"data/{m.file}" if len(_files(m.op[1])) == 1 else f"data/{m.op[1]}", None, None
    path = root / m.file
    if kind == "schema":  # a field of a Table Schema edited: the error names the schema and the field
        _, rel, column, edit = m.op
        schema = yaml.safe_load((DATA / rel).read_text(encoding="utf-8"))
        field = next(f for f in schema["fields"] if f["name"] == column)
        field.update(edit)
        path.unlink()
        path.write_text(yaml.safe_dump(schema, allow_unicode=True, sort_keys=False), encoding="utf-8")
        return f"data/{m.file}", None, column
    rows = _read(path)
    path.unlink()  # a link to the committed file: written anew below
    if kind == "cell":
        _, record, column, value = m.op
        rows[1 + record][rows[0].index(column)] = value
    elif kind == "append-copy":
        rows.append(list(rows[1 + m.op[1]]))
    elif kind == "drop":
        del rows[1 + m.op[1]]
    _write(path, rows)
    row = None if m.record is None else _record_lines(path)[1 + m.record]
    return m.at or (f"data/{m.file}", row, m.column)


# --------------------------------------------------------------------------------------------
# Running a command on the broken copy
# --------------------------------------------------------------------------------------------


def _stub(monkeypatch) -> None:
    """Nothing may execute: the kernel, the planner and the build's chapters are stubbed to fail."""

    def no(*a, **k):
        raise AssertionError("validation let a faulty input through to execution")

    from analyses.chapters import plan as plan_chapter
    from analyses.site import build

    monkeypatch.setattr(cli, "run_chapter", no)
    monkeypatch.setattr(plan_chapter, "run", no)
    monkeypatch.setattr(build, "execute_chapters", no)


def run_command(args: list[str], root: Path, monkeypatch) -> tuple[int | None, str]:
    """``python -m analyses ARGS`` in this process with data/ at ``root``: exit status, stderr."""
    monkeypatch.setattr(data, "DATA_DIR", root)
    data.clear_cache()
    scenario.clear_cache()
    err, out = io.StringIO(), io.StringIO()
    code: int | None = None
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
            try:
                code = cli.main(args)
            except SystemExit as exit_:
                code = exit_.code
    except Exception:  # what a reader would see as a traceback
        err.write(traceback.format_exc())
        code = 1
    finally:
        data.clear_cache()
        scenario.clear_cache()
    return code, err.getvalue()


def load_table_first(m: Mutation, root: Path, monkeypatch) -> tuple[int | None, str] | None:
    """The data loader alone on the table a cell or row mutation broke (the tables it references
    load with it): the exit status and the line ``verdicts`` prints for the fault it raises, or
    None when the table loads (the fault lies beyond it: a scenario derivation, a check's claim
    values) or the mutation removed a file (the whole data folder is listed): then the whole
    command runs. The default run's fast path; ``DATA_FAULTS=all`` runs the command for every one."""
    if m.op[0] in ("delete", "delete-table", "schema") or m.via_ledger or m.kind == "missing claim row":
        return None
    monkeypatch.setattr(data, "DATA_DIR", root)
    data.clear_cache()
    scenario.clear_cache()
    try:
        data.table(_table_of(m.file))
        if m.file == "claims.csv":
            data.claims()  # the stated values are parsed with the claims
    except data.DataError as err:
        return 2, f"error: {cli._one_line(err)}\n"
    except Exception:  # what a reader would see as a traceback
        return 1, traceback.format_exc()
    finally:
        data.clear_cache()
        scenario.clear_cache()
    return None


def classify(figures, m: Mutation, code: int | None, err: str) -> str:
    """Count one outcome: a clean one-line error, a silent acceptance, or a traceback (anything else)."""
    figures["mutations"] += 1
    if code == 0:
        figures["silent acceptances"] += 1
        figures["out-of-range values accepted"] += m.out_of_range
        return "accepted"
    if code == 2 and err.startswith("error: ") and err.count("\n") == 1 and "Traceback" not in err:
        figures["one-line errors"] += 1
        return "clean"
    figures["tracebacks"] += 1
    return "traceback"


def where_text(file: str, row: int | None, column: str | None) -> str:
    text = f"error: {file}"
    if row is not None:
        text += f", row {row}"
    if column is not None:
        text += f", column '{column}'"
    return text


def _link_farm(root: Path) -> None:
    """A copy of data/ made of links to the committed files (folders are real, so listings see the
    same files); :func:`apply` replaces a link by a real file before it writes, never the original."""
    for path in DATA.rglob("*"):
        target = root / path.relative_to(DATA)
        if path.is_dir():
            target.mkdir(parents=True, exist_ok=True)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.symlink_to(path)


def restore(root: Path, m: Mutation) -> None:
    """Undo :func:`apply` on the link farm ``root``: every file it deleted or rewrote links to the
    committed one again."""
    kind = m.op[0]
    rels = [m.op[1]] if kind == "delete" else _files(m.op[1]) if kind == "delete-table" else [m.file]
    for rel in rels:
        target = root / rel
        target.unlink(missing_ok=True)
        target.symlink_to(DATA / rel)


@pytest.fixture(scope="module")
def farm(tmp_path_factory) -> Path:
    """One link farm of data/ for the module's mutations (each restored after its test)."""
    root = tmp_path_factory.mktemp("faults") / "data"
    _link_farm(root)
    return root


@pytest.fixture
def broken(farm) -> Iterator[Callable[[Mutation], tuple[Path, tuple[str, int | None, str | None]]]]:
    applied: list[Mutation] = []

    def make(m: Mutation):
        applied.append(m)
        return farm, apply(farm, m)

    yield make
    for m in applied:
        restore(farm, m)


@pytest.mark.parametrize("m", MUTATIONS, ids=lambda m: m.id)
def test_every_fault_is_one_line_at_its_place(m, broken, monkeypatch, fault_figures):
    _stub(monkeypatch)
    root, (file, row, column) = broken(m)
    found = None if FULL else load_table_first(m, root, monkeypatch)
    code, err = found or run_command(["verdicts", "--format", "csv"], root, monkeypatch)
    fault_figures[f"kind: {m.kind}"] += 1
    outcome = classify(fault_figures, m, code, err)
    assert outcome == "clean", (m, err[-2000:])
    assert err.startswith(where_text(file, row, column)), (m, err)
    if m.needle:
        assert m.needle in err, (m, err)


COMMANDS = {
    "run": lambda m: ["run", "claims" if m.kind != "missing claim row" else m.id.split(":")[1]],
    "plan": lambda m: ["plan", "--no-html"],
    "build": lambda m: ["build", "--no-html", "--only", "tco"],
}
# A small sample goes through run, plan and build in-process (their kernels and planners stubbed) ...
SAMPLE = [m for m in MUTATIONS if m.kind in ("unknown reference", "out of range", "missing file")][:: 6 if FULL else 16]
# the plan command needs no claim row (its chapter checks no claim), so a deleted one does not stop it
CASES = [(m, c) for m in SAMPLE for c in COMMANDS] + [
    (m, c) for m in MUTATIONS if m.kind == "missing claim row" for c in ("run", "build")
][:4]


@pytest.mark.parametrize("m, command", CASES, ids=lambda x: x if isinstance(x, str) else x.id)
def test_run_plan_and_build_stop_at_the_fault_before_anything_runs(m, command, broken, monkeypatch, fault_figures):
    _stub(monkeypatch)
    root, (file, row, column) = broken(m)
    code, err = run_command(COMMANDS[command](m), root, monkeypatch)
    assert classify(fault_figures, m, code, err) == "clean", (m, err[-2000:])
    assert err.startswith(where_text(file, row, column)), (m, err)
    if m.needle:
        assert m.needle in err, (m, err)


# ... and a few through the real command line, in a process of their own (the data module pointed at
# the broken copy by AUDIT_DATA_DIR): the entry point itself prints the one line, nothing executes.
PROCESS_CASES = [
    (next(m for m in MUTATIONS if m.kind == kind), command)
    for kind, command in (
        ("unknown reference", ["verdicts", "--format", "csv"]),
        ("out of range", ["run", "claims"]),
        ("missing file", ["plan", "--no-html"]),
    )
]


@pytest.mark.parametrize("m, command", PROCESS_CASES, ids=lambda x: x.id if isinstance(x, Mutation) else x[0])
def test_the_command_line_stops_at_the_fault_in_its_own_process(m, command, broken, fault_figures):
    root, (file, row, column) = broken(m)
    env = os.environ | {"AUDIT_DATA_DIR": str(root)}
    proc = subprocess.run(
        [sys.executable, "-m", "analyses", *command],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert classify(fault_figures, m, proc.returncode, proc.stderr) == "clean", (m, proc.stderr[-2000:])
    assert proc.stderr.startswith(where_text(file, row, column)), (m, proc.stderr)
    assert proc.stdout == ""


def test_the_suite_is_large_and_covers_every_kind_of_fault():
    kinds = {m.kind for m in MUTATIONS}
    assert len({m.id for m in MUTATIONS}) == len(MUTATIONS) >= 60  # distinct mutations, in the sample too
    assert {
        "unknown reference",
        "out of range",
        "non-finite",
        "wrong type",
        "missing value",
        "duplicate key",
        "missing file",
        "missing schema",
        "missing claim row",
        "claim values missing a key",
        "calendar",
        "row rule",
    } <= kinds
    out_of_range = [m for m in MUTATIONS if m.out_of_range]
    assert len(out_of_range) >= 30
    # every table has its file and schema deleted, and every referencing column an unknown reference
    names = data.table_names()
    assert {m.id for m in MUTATIONS} >= {f"{n}:missing-file" for n in names} | {f"{n}:missing-schema" for n in names}
    referencing = {
        f"{_files(n)[0]}:{c.name}:unknown reference"
        for n in names
        for c in data.schema(n).columns
        if c.references is not None and c.type != "expression"
    }
    assert referencing <= {m.id for m in MUTATIONS}


# --------------------------------------------------------------------------------------------
# The schemas declare what the faults above rely on
# --------------------------------------------------------------------------------------------

NAMES_A_ROW = {
    "gpu": "gpus.name",
    "gpus": "gpus.name",
    "shape": "model_shapes.name",
    "model_shape": "model_shapes.name",
    "cluster": "cluster_configs.name",
    "run_id": "failure_logs.id",
    "pair": "scaling_benchmarks.id",
    "claims": "claims.id",
    "holdout_sources": "sources.id",
}


# Columns whose name reads as one of NAMES_A_ROW but means something else: what they reference (None: nothing)
OWN_MEANING = {
    "failure_rates.cluster": None,  # the cluster as the study names it (free text), not an InfiniBand configuration
    "memory_measured.run_id": "published_runs.id",  # the published run measured in the same run
}


def test_every_numeric_column_has_a_physical_range_and_every_naming_column_a_reference():
    unbounded, unreferenced = [], []
    for name in data.table_names():
        for c in data.schema(name).columns:
            if c.type in ("int", "float") and (c.max is None or (c.min is None and not c.positive)):
                unbounded.append(f"{name}.{c.name}")
            wanted = OWN_MEANING.get(f"{name}.{c.name}", NAMES_A_ROW.get(c.name))
            if c.type == "str" and c.name in NAMES_A_ROW and c.references != wanted:
                unreferenced.append(f"{name}.{c.name}")
    assert unbounded == [] and unreferenced == []


def test_unlisted_names_are_dropped_once_their_row_exists():
    """A schema may let a reference name a row not there yet (GB200): once data/gpus.csv has it,
    the exception must go (this fails), so it never hides a later misspelling."""
    stale = []
    for name in data.table_names():
        for c in data.schema(name).columns:
            if not c.unlisted:
                continue
            spec = c.references if isinstance(c.references, str) else "gpus.name"
            table, _, key = spec.rpartition(".")
            present = set(data.table(table)[key])
            stale += [f"{name}.{c.name}: {u}" for u in c.unlisted if u in present]
    assert stale == []


def test_a_monte_carlo_that_meets_a_non_finite_draw_names_the_input(monkeypatch):
    """scenario.sample stops with the assumption's row, not a silent inf in every figure after it."""
    from analyses.models import uncertainty

    original = uncertainty.Range.quantile

    def overflowing(self, z):
        out = original(self, z)
        return out * float("inf") if self.central == scenario.assumption("pue").central else out

    monkeypatch.setattr(uncertainty.Range, "quantile", overflowing)
    with pytest.raises(data.DataError) as info:
        scenario.sample(["pue", "utilisation"], 100, 1)
    file, row = data.where("scenario", "name", "pue")
    assert (info.value.file, info.value.row, info.value.column) == (file, row, "central")
    assert "assumption 'pue': its Monte Carlo draws are not all finite" in str(info.value)


def test_a_price_outside_its_assumptions_bounds_names_the_price_row(data_copy, monkeypatch):
    """The scenario's min and max apply to the data row an assumption is derived from."""
    rows = _read(data_copy / "prices.csv")
    k = next(k for k, r in enumerate(rows) if r[0] == "b300-server")
    rows[k][rows[0].index("high")] = "500000"  # inside the column's bounds, above the scenario's 200,000
    _write(data_copy / "prices.csv", rows)
    code, err = run_command(["verdicts"], data_copy, monkeypatch)
    line = _record_lines(data_copy / "prices.csv")[k]
    assert code == 2 and err == (
        f"error: data/prices.csv, row {line}, column 'high': 500000 is above the maximum 200000 that "
        f"data/scenario.csv row {data.where('scenario', 'name', 'server_b300_usd_per_gpu')[1]} "
        "('server_b300_usd_per_gpu') allows\n"
    )


# --------------------------------------------------------------------------------------------
# Frictionless on the same faults (issue 37 item 5)
# --------------------------------------------------------------------------------------------
# `frictionless validate data/datapackage.json` checks what Table Schema declares. For each fault
# above, either the table's Table Schema declares the rule it breaks (type, minimum and maximum, enum,
# pattern, required, unique, primary, unique and foreign keys: then frictionless names the file, row
# and column, as the book's loader does), or the rule is the book's own, for one of the reasons below
# (then frictionless lets it through). The count says how much of the checking stays ours, and why.

OURS = {
    "list": "a list whose items each name a row (a Table Schema foreign key takes one value per cell)",
    "chosen table": "a reference whose table another column of the row chooses",
    "partial date": "a date written YYYY, YYYY-MM or YYYY-MM-DD that must be a calendar day in a span of years",
    "range_by": "bounds chosen by another column's value (range_by)",
    "within": "bounds taken from two other columns of the row (within)",
    "expression": "an expression: numbers and references joined by ' * ' (expression, bounds)",
    "present_in": "a value its referenced row must offer (present_in: a precision the GPU has)",
    "row rule": "a row rule (the columns a kind of row needs or must leave empty)",
    "stated vs values": "a claim's values: name=number pairs, each once, low <= high, carrying every figure of stated",
    "read by a check": "a value a claim's check reads (found when the checks run)",
    "ordered": "columns ordered along a row (usable <= capacity)",
    "year_of": "a year that must be its date's year (year_of)",
    "covers": "a row for every value of another table (covers: each claim's Chinese row)",
    "schema lint": "the schema's own faults: a bound on a non-numeric field, a non-finite or missing bound",
    "unique keys": "a key of several columns (Table Schema 2's uniqueKeys, which frictionless 5 does not check)",
    "several files": "a table in several files (data/sources/*.csv): frictionless joins them and names no file or row",
    "read by the code": "a row the code reads by name (an assumption, a tensor format, a word the Chinese pages write)",
}
ISSUE_38_OURS = {
    "schema-type-changed-max-kept": "schema lint",
    "schema-max-nan": "schema lint",
    "schema-without-min": "schema lint",
    "values-key-twice": "stated vs values",
    "values-low-above-high": "stated vs values",
    "stated-without-values": "stated vs values",
    "usable-above-capacity": "ordered",
    "launch-year-not-date": "year_of",
    "claims-zh-row-deleted": "covers",
    "claims-zh-unknown-id": None,  # claims_zh.id is a foreign key to claims.id
}


@functools.cache
def _table_schema(name: str) -> dict:
    """A table's Table Schema as written (not as the book's loader reads it)."""
    return yaml.safe_load((DATA / f"{name}.schema.yaml").read_text(encoding="utf-8"))


def _keyed(schema: dict, column: str | None) -> bool:
    """Whether frictionless holds ``column`` unique: its own constraint, or part of the primary key."""
    field = next((f for f in schema["fields"] if f["name"] == column), {})
    return bool(field.get("constraints", {}).get("unique")) or column in schema.get("primaryKey", [])


def ours_only(m: Mutation) -> str | None:
    """Why only the book's own layer catches the fault ``m`` (a key of :data:`OURS`), or None where the
    table's Table Schema declares the rule it breaks."""
    tag = m.id.rsplit(":", 1)[-1]
    if m.kind == "issue 38":
        return ISSUE_38_OURS.get(m.id.split(":")[1], "read by the code")
    if m.kind == "missing file" and len(_files(_table_of(m.file))) > 1:
        return "several files"
    if m.kind in ("missing file", "missing schema"):
        return None
    if m.kind == "missing claim row":  # its Chinese row then names no claim: a foreign key
        return None
    if m.kind == "claim values missing a key" or m.column == "values" and m.file == "claims.csv":
        return "read by a check" if m.via_ledger else "stated vs values"
    if m.kind == "row rule":
        return "row rule"
    if len(_files(_table_of(m.file))) > 1:
        return "several files"
    schema = _table_schema(_table_of(m.file))
    field = next(f for f in schema["fields"] if f["name"] == m.column)
    constraints = field.get("constraints", {})
    if m.kind == "missing value":
        return None if constraints.get("required") or m.column in schema.get("primaryKey", []) else "row rule"
    if "expression" in field:
        return "expression"
    if "years" in field and m.kind in ("calendar", "out of range"):
        return "partial date"
    if m.kind == "unknown reference":
        if tag == "not-offered":
            return "present_in"
        if isinstance(field.get("references"), dict):
            return "chosen table"
        if field.get("type") == "list":
            return "list"
        return None if any(fk["fields"] == [m.column] for fk in schema.get("foreignKeys", [])) else "list"
    if m.kind == "out of range" and tag.startswith(("above-for-", "below-for-")):
        return "range_by"
    if m.kind == "out of range" and tag == "outside-row-bounds":
        return "within"
    if m.kind == "duplicate key":
        return None if _keyed(schema, m.column) else "unique keys"
    if m.kind == "allowed":
        return None if "enum" in constraints else "list"
    return None  # a type, a bound, a pattern: Table Schema's own


def _columns(error, resource: str) -> list[str | None]:
    """The columns a frictionless error names: its field, a foreign key's fields, or for a primary-key
    error (which names the row and says "violates the primary key") the table's primary key."""
    if getattr(error, "field_name", None):
        return [error.field_name]
    if getattr(error, "field_names", None):
        return list(error.field_names)
    if error.type == "primary-key":
        return list(_table_schema(resource).get("primaryKey", []))
    return [None]


def _frictionless_places(m: Mutation, root: Path, package) -> set[tuple[str, int | None, str | None]]:
    """Where frictionless reports a fault after ``m``: (file as the book names it, line of the row,
    column), validating only the resources the fault can show in (the broken table and, for a deleted
    row, the tables whose foreign keys reference it); a schema that fails to load names its file."""
    import frictionless

    name = m.op[1][: -len(".schema.yaml")] if m.op[0] == "schema" else _table_of(m.file)
    if m.op[0] in ("delete", "schema"):  # the package itself: its schemas load with it
        try:
            package = frictionless.Package(str(root / "datapackage.json"))
        except frictionless.FrictionlessException as err:
            return {(f"data/{m.file}", None, None)} if m.file in str(err) else {("package", None, None)}
    names = [name] + [
        r.name
        for r in package.resources
        if m.op[0] == "drop"
        and any(fk["reference"]["resource"] == name for fk in _table_schema(r.name).get("foreignKeys", []))
    ]
    places = set()
    for resource in names:
        try:
            report = package.get_resource(resource).validate()
        except Exception as err:  # a NaN maximum: decimal.InvalidOperation inside frictionless, no place named
            places.add((f"frictionless failed: {type(err).__name__}", None, None))
            continue
        for task in report.tasks:
            for error in task.errors:
                row = getattr(error, "row_number", None)
                path = root / task.place if isinstance(task.place, str) and (root / task.place).is_file() else None
                line = _record_lines(path)[row - 1] if row is not None and path is not None else None
                for column in _columns(error, resource):
                    places.add((f"data/{task.place}" if isinstance(task.place, str) else f"data/{name}", line, column))
    return places


@pytest.fixture(scope="module")
def package(farm):
    """The data package of the link farm, loaded once (its schemas parsed): each fault is validated
    against the resources it touches."""
    import frictionless

    return frictionless.Package(str(farm / "datapackage.json"))


def _frictionless_sample(found: list[Mutation]) -> list[Mutation]:
    """Two faults of each reason (one of them through the whole command line's sample) and two of each
    kind Table Schema expresses, at most one per table and kind; every one with DATA_FAULTS=all."""
    if FULL:
        return found
    taken: collections.Counter = collections.Counter()
    seen: set[tuple[str, str]] = set()
    out = []
    for m in found:
        reason = ours_only(m)
        key = reason or m.kind
        if taken[key] >= 2 or (_table_of(m.file), key) in seen:
            continue
        taken[key] += 1
        seen.add((_table_of(m.file), key))
        out.append(m)
    return out


FRICTIONLESS = _frictionless_sample(MUTATIONS)


@pytest.mark.parametrize("m", FRICTIONLESS, ids=lambda m: m.id)
def test_frictionless_names_the_faults_table_schema_declares(m, broken, package):
    """frictionless, on the broken copy, names the fault's file, row and column where the Table Schema
    declares the rule it breaks, and names no row where the rule is the book's own (:func:`ours_only`)."""
    root, place = broken(m)
    found = _frictionless_places(m, root, package)
    if ours_only(m) is None:
        assert place in found, (m, place, found)
    else:  # a schema with a bound on a string field fails to load, but frictionless names no file or field
        assert place not in found and not any(row for _, row, _ in found), (m, ours_only(m), found)


def test_how_much_of_the_checking_stays_ours(fault_figures):
    """The figures for the closing note: of every fault the schemas give (and issue 38's), how many
    Table Schema expresses (frictionless names them) and how many only the book's layer catches, by reason."""
    every = {m.id: m for m in mutations(full=True) + _issue_38()}.values()
    reasons = collections.Counter(ours_only(m) for m in every)
    fault_figures["frictionless: faults"] = len(every)
    fault_figures["frictionless: named by frictionless"] = reasons.pop(None)
    for reason, n in reasons.items():
        fault_figures[f"frictionless: ours only: {reason}"] = n
    assert set(reasons) <= set(OURS)
    assert fault_figures["frictionless: named by frictionless"] > sum(reasons.values())
