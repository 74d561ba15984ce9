"""data/ is a Frictionless Data Package that frictionless itself validates, and that the book reads.

The book's loader (:mod:`analyses.tables`) and frictionless read the same Table Schemas; the
fault suite (tests/site/test_data_faults.py) checks that frictionless names the file, row and
column of each fault it can express.
"""

from __future__ import annotations

import json

import frictionless

from analyses import data
from analyses.data import DATA_DIR


def test_frictionless_validates_the_shipped_package():
    report = frictionless.validate(str(DATA_DIR / "datapackage.json"))
    problems = report.flatten(["title", "rowNumber", "fieldName", "type", "note"])
    assert report.valid, problems[:10]
    assert len(report.tasks) == len(data.table_names()) >= 30


def test_the_package_lists_every_table_with_its_files_and_schema():
    package = json.loads((DATA_DIR / "datapackage.json").read_text())
    assert package["$schema"].endswith("/2.0/datapackage.json")
    names = [r["name"] for r in package["resources"]]
    assert names == data.table_names() and len(set(names)) == len(names)
    listed = {p for r in package["resources"] for p in ([r["path"]] if isinstance(r["path"], str) else r["path"])}
    assert listed == {p.relative_to(DATA_DIR).as_posix() for p in DATA_DIR.rglob("*.csv")}
    for r in package["resources"]:
        schema = frictionless.Schema.from_descriptor(str(DATA_DIR / r["schema"]))
        assert [f.name for f in schema.fields] == data.schema(r["name"]).column_names
