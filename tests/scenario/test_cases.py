"""The documents' cases (analyses.scenario.cases): every field read from its claim by one builder."""

from __future__ import annotations

import csv
import dataclasses

import pytest

from analyses import data
from analyses.scenario import cases, generations

CASES = [
    cases.Recommender,
    cases.CustomerService,
    cases.Fintech,
    cases.Sweep,
    cases.DeploymentPlan,
    cases.Startup7B,
    cases.GdsRun,
    cases.CloudProvider,
]


@pytest.mark.parametrize("cls", CASES, ids=lambda c: c.__name__)
def test_every_field_is_the_stated_figure_of_its_claim(cls):
    case = cases.build(cls)
    for f in dataclasses.fields(cls):
        if "claim" not in f.metadata:
            continue
        raw = data.claim(f.metadata["claim"]).value(f.metadata["value"])
        convert = f.metadata["convert"]
        if convert is None:
            assert getattr(case, f.name) == raw, f.name
        elif convert is cases.PERCENT:
            assert getattr(case, f.name) == pytest.approx(raw / 100) and 0 <= getattr(case, f.name) <= 1, f.name
        else:
            assert getattr(case, f.name) == pytest.approx(1 - raw / 100), f.name
    assert case.claims and all(data.claim(c).id == c for c in case.claims)


def test_a_case_reads_the_documents_generations_and_its_own_claims():
    r = cases.recommender()
    assert (r.gpu_before, r.gpu_after) == (generations.OLD, generations.NEW)
    assert r.claims[:2] == ("000-4-128-a100-to-96-b300", "000-4-training-days-28-to-11")
    assert cases.customer_service().gpus == cases.customer_service().servers * cases.customer_service().gpus_per_server


def test_a_case_follows_its_claim_in_a_copy_of_the_data(data_copy, monkeypatch):
    path = data_copy / "claims.csv"
    rows = list(csv.DictReader(path.open(encoding="utf-8")))
    for row in rows:
        if row["id"] == cases.REC_GPUS:
            row["values"] = row["values"].replace("gpus_after=96", "gpus_after=64")
            row["stated"] = row["stated"].replace("96", "64")  # stated and values must agree (claim_values)
    with path.open("w", encoding="utf-8", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    monkeypatch.setattr(data, "DATA_DIR", data_copy)
    assert cases.recommender().gpus_after == 64
