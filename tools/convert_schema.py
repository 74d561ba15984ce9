"""Convert a table schema of the book's old YAML dialect (``columns:``) to a Frictionless Table Schema.

    python tools/convert_schema.py data/new_table.schema.yaml [...]   # rewrites each file in place

The schemas of ``data/`` are Frictionless Table Schemas (v2) with a few properties of our own
(``analyses/table_schema.py`` lists them). A branch that still adds a schema in the old dialect
(``columns: [{name, type: str|int|float|bool|date|source|sources|expression, min, max, positive,
allowed, unique, required, references, ...}]``) is converted by this script; loading refuses the
old dialect with a line that names it. Then add the table to ``data/datapackage.json``.
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import yaml

TABLE_SCHEMA = "https://datapackage.org/profiles/2.0/tableschema.json"
TYPES = {"str": "string", "int": "integer", "float": "number", "bool": "boolean", "date": "string"}
TYPES |= {"source": "string", "expression": "string", "sources": "list"}
DATE_PATTERN = r"\d{4}(-\d{2}(-\d{2})?)?"


def convert(raw: dict) -> dict:
    """The Table Schema descriptor of an old-dialect schema ``raw``."""
    columns = raw["columns"]
    key = next((c["name"] for c in columns if c.get("unique") and c.get("required")), None)
    fields, foreign = [], []
    for c in columns:
        kind = c.get("type", "str")
        f: dict = {"name": c["name"], "type": TYPES[kind]}
        cons: dict = {}
        if c.get("required") and c["name"] != key:
            cons["required"] = True
        if c.get("unique") and c["name"] != key:
            cons["unique"] = True
        if kind in ("int", "float"):
            if c.get("min") is not None:
                cons["minimum"] = c["min"]
            if c.get("positive"):
                cons["exclusiveMinimum"] = 0
            if c.get("max") is not None:
                cons["maximum"] = c["max"]
        if kind == "date":
            cons["pattern"] = DATE_PATTERN
            f["years"] = [c.get("min"), c.get("max")]
        if c.get("allowed") is not None:
            cons["enum"] = list(c["allowed"])
        if c.get("pattern") is not None:
            cons["pattern"] = c["pattern"]
        if kind == "sources" or c.get("separator"):
            f["type"], f["delimiter"], f["itemType"] = "list", c.get("separator", ";"), "string"
        refs = c.get("references")
        if kind == "expression":
            f["expression"] = refs
            f["bounds"] = [c.get("min"), c.get("max")]
        elif kind == "source":
            foreign.append({"fields": [c["name"]], "reference": {"resource": "sources", "fields": ["id"]}})
        elif kind == "sources":
            f["references"] = "sources.id"
        elif isinstance(refs, str) and f["type"] == "string":
            table, _, column = refs.rpartition(".")
            foreign.append({"fields": [c["name"]], "reference": {"resource": table, "fields": [column]}})
        elif refs is not None:
            f["references"] = refs
        if cons:
            f["constraints"] = cons
        for extra in ("unit", "range_by", "within", "present_in", "unlisted", "description"):
            if c.get(extra) is not None:
                f[extra] = list(c[extra]) if extra == "within" else c[extra]
        fields.append(f)
    out: dict = {"$schema": TABLE_SCHEMA, "description": raw.get("description", "")}
    if raw.get("sourced") is False:
        out["sourced"] = False
    out["fields"] = fields
    if key is not None:
        out["primaryKey"] = [key]
    if raw.get("keys"):
        out["uniqueKeys"] = [list(k) for k in raw["keys"]]
    if foreign:
        out["foreignKeys"] = foreign
    for extra in ("min_rows", "ordered", "rows", "derived"):
        if raw.get(extra) is not None:
            out[extra] = raw[extra]
    return out


class _Dumper(yaml.SafeDumper):
    """Floats as people write them: 1.0e+8, not 100000000.0 (a dot and a signed exponent, which
    YAML 1.1 readers such as PyYAML need to read a float)."""


def _float(dumper: yaml.SafeDumper, value: float) -> yaml.Node:
    text = repr(value)
    if abs(value) >= 1e5 and "e" not in text:
        mantissa, _, exponent = f"{value:e}".partition("e")
        text = f"{mantissa.rstrip('0').rstrip('.')}e{exponent}".replace("e+0", "e+").replace("e-0", "e-")
        text = text if "." in text.partition("e")[0] else text.replace("e", ".0e", 1)
    return dumper.represent_scalar("tag:yaml.org,2002:float", text)


_Dumper.add_representer(float, _float)


def _flow(value: object) -> str:
    text = yaml.dump(value, Dumper=_Dumper, default_flow_style=True, width=10**6, allow_unicode=True, sort_keys=False)
    return text.removesuffix("\n...\n").strip()


def dump(schema: dict) -> str:
    """YAML with one field, foreign key or rule per line and the description folded."""
    lines = [f"$schema: {schema['$schema']}"]
    text = " ".join(str(schema["description"]).split())
    lines += ["description: >-", *textwrap.wrap(text, 100, initial_indent="  ", subsequent_indent="  ")]
    for key, value in schema.items():
        if key in ("$schema", "description"):
            continue
        if isinstance(value, list) and value and isinstance(value[0], dict):
            lines.append(f"{key}:")
            anchors: dict[str, str] = {}  # a repeated range_by or expression map is written once
            for v in value:
                line = _flow(v)
                for prop in ("range_by", "expression"):
                    if prop in v:
                        shared = _flow(v[prop])
                        alias = anchors.setdefault(shared, f"{prop}_{v['name']}")
                        mark = f"&{alias} " if alias.endswith(f"_{v['name']}") else f"*{alias}"
                        line = line.replace(f"{prop}: {shared}", f"{prop}: {mark}{shared if mark[0] == '&' else ''}")
                lines.append(f"  - {line}")
        else:
            lines.append(f"{key}: {_flow(value)}")
    return "\n".join(lines) + "\n"


def main(paths: list[str]) -> int:
    for name in paths:
        path = Path(name)
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
        if "columns" not in raw:
            print(f"{path}: already a Table Schema")
            continue
        path.write_text(dump(convert(raw)), encoding="utf-8")
        print(f"{path}: converted")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
