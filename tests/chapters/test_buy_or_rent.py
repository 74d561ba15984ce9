"""The buy-or-rent page and the one function behind its figure (:func:`analyses.scenario.buying.per_run`):
the cost chapter, the planner and this page give the same time and cost for the same workload, GPU
and basis; the documents' workloads come from their presets; money follows the page's currency."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from analyses import data, scenario
from analyses.chapters import buy_or_rent as ch  # noqa: F401 (the result fixtures read the module's ch)
from analyses.chapters import plan, tco
from analyses.chapters.buy_or_rent import figures, text
from analyses.pages import bottom_line, zh_buy
from analyses.scenario import buying, presets
from analyses.units import MB, formats
from analyses.units import zh as zh_units

KEYS = ["gpu", "basis"]


def _usd(frame: pd.DataFrame, currency: str, s) -> pd.DataFrame:
    """``frame``'s cost columns (``cost``, ``cost_lo``, ``cost_hi`` in ``currency``) back in USD."""
    k = float(buying.in_currency(1.0, currency, s))
    return frame.assign(**{c: frame[c] / k for c in ("cost", "cost_lo", "cost_hi")})


def plan_values(workload: str) -> dict:
    """The plan chapter's parameters for one of the documents' workloads, spelled out as a reader would
    (no preset: a preset fixes the documents' own GPU counts, a different question from this page's)."""
    s = scenario.values()
    w = next(w for w in buying.documents_workloads(s) if w.key == workload)
    p = presets.preset(w.preset, s)
    batch = w.batch_tokens / MB if w.batch_tokens is not None else s["batch_million_tokens"]
    return {
        "preset": "none",
        "model_shape": p["model_shape"],
        "tokens": w.tokens,
        "deadline_days": w.deadline_days,
        "batch_million_tokens": batch,
        "gpus": [tco.OLD, tco.NEW],
        "precision": tco.RUN_PRECISION,
    }


@pytest.mark.parametrize("workload", [w for w, _, _ in buying.WORKLOADS])
def test_cost_chapter_planner_and_buy_or_rent_agree(chapter_results, workload):
    """The done-when test of issue 23: one workload, GPU and basis, one figure on all three pages."""
    t = chapter_results("tco", workload=workload)
    p = chapter_results("plan", **plan_values(workload))
    b = chapter_results("buy-or-rent")
    from_tco = _usd(t.run, t.unit, t.s).set_index(KEYS)
    from_plan = p.run.per_run.set_index(KEYS)
    from_bor = _usd(b.of(workload), b.currency, b.s).set_index(KEYS)
    assert set(from_tco.index) == {(g, m) for g in (tco.OLD, tco.NEW) for m in ("rented", "owned")}
    for key in from_tco.index:
        for col, usd in (("cost", "cost_usd"), ("cost_lo", "cost_usd_lo"), ("cost_hi", "cost_usd_hi")):
            assert from_tco.loc[key, col] == pytest.approx(from_plan.loc[key, usd], rel=1e-9), (key, col)
            assert from_bor.loc[key, col] == pytest.approx(from_plan.loc[key, usd], rel=1e-9), (key, col)
        for col in ("n_gpus", "days"):
            assert from_tco.loc[key, col] == pytest.approx(from_plan.loc[key, col])
            assert from_bor.loc[key, col] == pytest.approx(from_plan.loc[key, col])


def test_the_planners_table_prints_the_shared_figure(chapter_results):
    p = chapter_results("plan", **plan_values("pretrain-13b"))
    shown = plan.wiring.recommended_table(
        p.run.recommended, {g: "calibrated" for g in p.run.recommended["gpu"]}, p.run.per_run, "USD"
    ).set_index("GPU")
    row = p.run.per_run.set_index(KEYS).loc[(tco.NEW, "rented")]
    assert shown.loc[tco.NEW, "rented (USD)"] == formats.money(row["cost_usd"])


def test_a_run_costs_its_gpu_hours_at_the_hourly_price(default):
    """The page's convention: GPUs x wall-clock hours x the price of a GPU-hour, no utilisation."""
    runs = default.runs
    usd = buying.in_currency(1.0, default.currency, default.s)
    hours = runs["n_gpus"] * runs["days"] * 24
    assert np.allclose(runs["gpu_hours"], hours, rtol=1e-9)
    assert np.allclose(runs["cost"], runs["gpu_hours"] * runs["per_gpu_hour"], rtol=1e-9, equal_nan=True)
    # a GPU with no sourced price (H800; H200 owned) is costed n/a, never invented
    assert runs["cost"].isna().eq(runs["per_gpu_hour"].isna()).all()
    priced = runs[runs["cost"].notna()]
    assert (priced["cost_lo"] <= priced["cost"]).all() and (priced["cost"] <= priced["cost_hi"]).all()
    assert float(usd) == pytest.approx(default.s["usd_cny"])  # RMB by default, at the scenario's rate


def test_workloads_come_from_their_presets():
    s = scenario.values()
    ws = {w.key: w for w in buying.documents_workloads(s)}
    assert list(ws) == [k for k, _, _ in buying.WORKLOADS]
    for key, pid, _ in buying.WORKLOADS:
        p = presets.preset(pid, s)
        assert ws[key].tokens == p["tokens"] and ws[key].deadline_days == p["deadline_days"]
        assert ws[key].claims == tuple(p["claims"])
        if "batch_million_tokens" in p:
            assert ws[key].batch_tokens == pytest.approx(p["batch_million_tokens"] * MB)
    # the 13B run: the document's 13B at the scenario's tokens per parameter, in the document's A100 days
    claim = data.claim("000-2.1-13b-anecdote-days")
    assert ws["pretrain-13b"].tokens == pytest.approx(s["tokens_per_param"] * claim.value("params"))
    assert ws["pretrain-13b"].deadline_days == claim.value("days_a100")


def test_every_workload_has_each_generation_rented_and_owned_and_one_cheapest_per_basis(default):
    for w in default.workloads:
        rows = default.of(w.key)
        assert set(rows["gpu"]) == set(buying.gpus()), w.key
        assert set(rows["basis"]) == {"rented", "owned"}
        per = rows.groupby("basis")["cheapest"].sum()
        assert (per == 1).all(), w.key
        for basis in ("rented", "owned"):
            pick = default.cheapest(w.key, basis)
            pool = rows[(rows["basis"] == basis) & rows["meets_deadline"]]
            pool = pool if not pool.empty else rows[rows["basis"] == basis]
            assert pick["cost"] == pool["cost"].min()
        answer = default.answer(
            w.key
        )  # what both editions' sentences say: the picks, and owning weighed against renting
        assert answer.rented.equals(default.cheapest(w.key, "rented"))
        assert answer.owned.equals(default.cheapest(w.key, "owned"))
        assert (answer.owned_rented["gpu"], answer.owned_rented["basis"]) == (answer.owned["gpu"], "rented")


def test_owning_pays_only_above_its_break_even_utilisation(default):
    rows = default.runs.pivot_table(index=["workload", "gpu"], columns="basis", values="per_gpu_hour")
    be = default.runs.groupby(["workload", "gpu"])["break_even_utilisation"].first()
    assert np.allclose(be, rows["owned"] / rows["rented"])
    assert ((be > 0) & (be < 1)).all()  # owned hours are cheaper; the question is how many are busy


def test_the_most_sensitive_input_brackets_the_cost(default):
    rows = default.runs
    assert rows["sensitive_to"].str.len().gt(0).all()
    assert (rows["sensitive_lo"] <= rows["sensitive_hi"]).all()
    # an owned run never names a rent, a rented one never the electricity price
    owned, rented = rows[rows["basis"] == "owned"], rows[rows["basis"] == "rented"]
    assert not owned["sensitive_to"].str.contains("rent", case=False).any()
    assert not rented["sensitive_to"].str.contains("electricity", case=False).any()


def test_a_readers_run_follows_the_parameters(result):
    small, big = result(n_params=1e9, deadline_days=30), result(n_params=3e10, deadline_days=30)
    assert big.cheapest("yours", "rented")["cost"] > 10 * small.cheapest("yours", "rented")["cost"]
    w = next(w for w in big.workloads if w.key == buying.READER)
    assert w.tokens == pytest.approx(big.s["tokens_per_param"] * w.shape.n_params)


def test_a_quoted_rent_moves_only_that_generations_rented_cost(default, result):
    quoted = result(rent_b300_usd_per_gpu_hour=2 * default.s["rent_b300_usd_per_gpu_hour"])
    a, b = default.runs.set_index(["workload", "gpu", "basis"]), quoted.runs.set_index(["workload", "gpu", "basis"])
    for (w, g, m), row in a.iterrows():
        moved = b.loc[(w, g, m), "cost"] != pytest.approx(row["cost"])
        assert moved == (g == "B300" and m == "rented"), (w, g, m)


def test_one_currency_per_page(default, result):
    usd = result(currency="USD")
    assert np.allclose(default.runs["cost"], usd.runs["cost"] * default.s["usd_cny"])
    for res, other in ((default, "USD"), (usd, "RMB")):
        words = " ".join(
            [text.basis(res)]
            + [text.cheapest_sentence(res, w.key) + text.sensitive_sentence(res, w.key) for w in res.workloads]
        )
        assert re.search(rf"\d {res.currency}\b", words)
        # no amount is written in the other currency (the rate and the prices' origin may name it)
        assert not re.search(rf"\d(?: million| billion)? {other}\b", words.replace(str(res.rate.unit), ""))
        line = figures.bottom_line(res)  # the page's first screen: each workload's options in its currency
        assert repr(line).count(f" {res.currency}") == 2 * len(res.workloads)
        assert not re.search(rf"\d(?: million| billion)? {other}\b", repr(line)) and "e+" not in repr(line)


def test_figures_render(default):
    assert figures.cost_chart(default).to_dict()
    for w in default.workloads:
        html = figures.answer_view(default, w.key)._repr_html_()
        assert "★" in html and default.currency in html


def test_bad_currency_is_refused():
    with pytest.raises(ValueError, match="currency must be one of"):
        buying.in_currency(1.0, "EUR", scenario.values())


def test_both_editions_give_one_break_even_in_their_bottom_lines(default):
    """The busy share above which owning wins is one quantity in one frame (the cheapest owned option
    against the cheapest rented one) in the English bottom line and the Chinese one."""
    english = bottom_line.answers(default.runs, default.workloads)
    shares = sorted({zh_units.percent(a.owning_wins_above) for a in english})
    chinese = zh_buy.bottom_line(default)
    expected = shares[0] if len(shares) == 1 else f"{shares[0]}{zh_units.RANGE}{shares[-1]}"
    assert f"忙碌时间超过{expected}才比租用便宜" in chinese, (expected, chinese)
