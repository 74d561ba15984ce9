"""Plausibility warnings: the shipped data has none; typos inside the bounds are named (issue 38)."""

from __future__ import annotations

import csv

from analyses import data, plausibility


def _edit(path, key: str, column: str, value: str) -> int:
    """Set ``column`` of the row whose first cell is ``key``; return that row's line."""
    rows = list(csv.reader(path.open(encoding="utf-8")))
    k = next(k for k, r in enumerate(rows) if r[0] == key)
    rows[k][rows[0].index(column)] = value
    with path.open("w", newline="", encoding="utf-8") as f:
        csv.writer(f, lineterminator="\n").writerows(rows)
    return k + 1


def test_the_shipped_data_has_no_plausibility_warning():
    assert plausibility.warnings() == []


def test_a_tdp_of_110_w_for_1100_is_named(data_copy, monkeypatch):
    monkeypatch.setattr(data, "DATA_DIR", data_copy)
    line = _edit(data_copy / "gpus.csv", "B300", "tdp_w", "110")
    found = plausibility.warnings()
    assert len(found) == 1 and found[0].startswith(f"data/gpus.csv, row {line}, column 'tdp_w': B300 has 20.5")
    assert "x9.8 off its generation's (B200, GB300, GB200)" in found[0]


def test_a_claim_of_1e14_parameters_is_named(data_copy, monkeypatch):
    monkeypatch.setattr(data, "DATA_DIR", data_copy)
    line = _edit(data_copy / "claims.csv", "000-0-centuries", "values", "params=1e14; server_years_low=200; server_years_high=900")
    _edit(data_copy / "claims.csv", "000-0-centuries", "stated", "100T-parameter model; several hundred years")
    found = plausibility.warnings()
    assert found == [
        f"data/claims.csv, row {line}, column 'values': params=1e+14 lies beyond x1.5 the span of the models in "
        "data/models.csv (1.1e+08 to 1.04e+12); a typo?"
    ]
