"""The cost chapter: compute, figures and sentences over its parameters; its verdicts and what decides
them; every assumption read through the scenario."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from analyses import data, scenario
from analyses.chapters import ledger
from analyses.chapters import tco as ch
from analyses.chapters.tco import figures, text, wiring
from analyses.scenario import buying, cases, costs, operations

VIEW = {"currency", "workload", "mc_samples", "seed"}  # settings that judge no claim


def render(res: ch.Result) -> list[str]:
    """Every figure (as a spec) and every sentence of the page."""
    charts = (
        figures.stack_chart,
        figures.pflop_day_chart,
        figures.recommender_chart,
        figures.tornado_chart,
        figures.payback_chart,
    )
    specs = [f(res).to_dict() for f in charts] + [figures.slider_figure(res, i).to_dict() for i in range(2)]
    assert all(specs)
    glued = text.glued(res)
    assert all(isinstance(v, str) and v for v in glued.values()), "every glued value is formatted, non-empty text"
    return list(glued.values())


# -------------------------------------------------------------------------- the parameter grid

GRID = (
    [{}]
    + [{p.name: getattr(p, end)} for p in ch.SPEC.params if p.kind in ("float", "int") for end in ("min", "max")]
    + [{"currency": c} for c in ch.CURRENCIES]
    + [{"workload": w} for w, _, _ in buying.WORKLOADS]
)


@pytest.mark.parametrize("over", GRID, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()) or "defaults")
def test_compute_figures_and_sentences_over_the_grid(over, result):
    res = result(**over)
    glued = render(res)
    assert "nan" not in " ".join(glued)
    assert len(res.ledger) == len([c for c in data.claims() if c.chapter == "tco"])
    assert {s.input for s in res.sliders} == {"speedup_b300_a100", "server_b300_usd_per_gpu"}
    assert len(res.payback) == len(ch.payback_cases())
    for frame in (res.pflop_day, res.recommender_readings, res.payback):
        assert (frame["5%"] <= frame["95%"]).all()
    assert (res.run["cost_lo"] <= res.run["cost"]).all() and (res.run["cost"] <= res.run["cost_hi"]).all()
    assert set(res.run["gpu"]) == {ch.OLD, ch.NEW} and set(res.run["basis"]) == {"rented", "owned"}


def test_phrase_branches(result):
    # per hour: B300 dearer at the defaults, not in every mode when its rent is at the floor
    assert "more work per hour" in text.gpu_hour_conclusion(result())
    assert "not dearer" in text.gpu_hour_conclusion(result(rent_b300_usd_per_gpu_hour=0.5))
    assert text.pflop_day_cheapest(result()) == "an owned B300"
    assert text.pflop_day_cheapest(result(rent_b300_usd_per_gpu_hour=0.5)) == "a rented B300"
    glued = text.glued(result())
    assert (glued["pfd_owned_word"], glued["pfd_rented_word"], glued["docs_owned_word"]) == (
        "cheaper",
        "cheaper",
        "dearer",
    )
    assert glued["docs_more_less"] == "more" and glued["tco_row_verdict"] == "consistent"
    # payback: some, none or every case within the stated window
    assert "only" in text.payback_caption(result())
    assert text.payback_caption(result(speedup_b300_a100=0.5)).startswith("No case")
    assert text.payback_caption(result(server_b300_usd_per_gpu=5000.0)).startswith("Every case")
    assert text.payback_where(result(speedup_b300_a100=0.5)).startswith("beyond")
    assert "faster than their 6-month" in text.payback_where(result())
    slower = text.payback_where(result(speedup_b300_a100=6.0))  # the paybacks' A100s are rented in China
    assert "within the 12 months" in slower and "faster" not in slower
    assert text.payback_ours(result()).startswith("pays back in ")
    assert text.payback_ours(result(speedup_b300_a100=0.5, electricity_usd_per_kwh=0.3)) == "never pays back"
    # document 001's case: the saving reverses at public prices, returns at the cheapest B300
    assert text.customer_saving(result()) == "the case's saving reverses" and text.customer_above(result()) == "above"
    cheap = result(server_b300_usd_per_gpu=5000.0)
    assert text.customer_saving(cheap).startswith("they save ") and text.customer_saving(cheap).endswith("%")
    assert text.tornado_reach(result()) == "no single input brings it near"
    # document 000's case: the scenario's speed-up beats the stated cut, a slow B300 does not
    assert text.recommender_than(result()) == "a larger saving than stated"
    # (the recommender reads its own workload's speed-up, 0.61 of the reference's: 5x gives it 3.1x)
    assert text.recommender_than(result(speedup_b300_a100=5.0)) == "a smaller saving than stated"
    assert text.recommender_than(result(speedup_b300_a100=0.5)) == "no saving at all"
    # runs per month (月均, a monthly average): 30.44 / 11 = 2.77 runs of 11 days, which rounds to the case's 3
    assert (glued["c0_run_days"], glued["c0_runs_fit"]) == ("11", "2.77")
    assert text.recommender_fit(result()) == "which the case's monthly average of 3 rounds"
    fewer = dataclasses.replace(result().recommender, runs_per_month_after=2.2)
    assert text.recommender_fit(dataclasses.replace(result(), recommender=fewer)) == "not the case's 3"
    # one run: B300 is cheaper rented and owned at the defaults; A100 rented when its rent is at the floor
    assert text.run_cheaper(result(), "rented") == text.run_cheaper(result(), "owned") == "B300"
    assert text.run_cheaper(result(rent_a100_usd_per_gpu_hour=0.1), "rented") == "A100"
    assert text.idle_share(result()).endswith(", short of half")
    assert "short of half" not in text.idle_share(result(utilisation=0.05))


def test_glued_values_are_rounded_text(result):
    glued = text.glued(result())
    assert glued["level"] == "90%" and glued["hours_year"] == "8,766 hours"
    assert glued["docs_speedup"] == "2.5-3×" and glued["c1_gpus"] == "eight"
    assert all(isinstance(v, str) for v in glued.values())


def test_recommender_caption_names_a_reading_that_reaches_the_stated_cut(result):
    frame = result().recommender_readings
    target = 1 - result().recommender.cut
    # the ledger's reading (the firm's A100s at the price paid new) reaches the stated cut
    assert (
        "lies inside the range of: one run, the case's GPU-days, A100s at the price paid new"
        in text.recommender_caption(result())
    )
    outside = frame.assign(**{"5%": target * 2.0, "95%": target * 2.2})
    res = dataclasses.replace(result(), recommender_readings=outside)
    assert "No reading" in text.recommender_caption(res)


# -------------------------------------------------------------------------- verdicts and what decides them


def verdicts(res: ch.Result) -> dict[str, str]:
    return dict(zip(res.ledger["id"], res.ledger["verdict"], strict=True))


def test_verdicts_at_the_defaults(result):
    v = verdicts(result())
    assert v == {
        "000-3-table-tco": "consistent",
        "000-4-monthly-cost-47pct-3m-rmb": "consistent",  # the firm's bill: its A100s at the price paid new
        "000-4-annual-saving-3m-rmb": "consistent",
        "001-1-hidden-costs-far-above-hardware": "consistent",
        "001-4-two-4-gpu-b300-servers": "inconsistent",  # B300 servers hold 8 GPUs
        "000-4-gmv-8pct": "unverifiable",
        "000-5-reserve-10-15pct-exploration": "unverifiable",
        "000-6-payback-6-12-months": "consistent",
        "001-0-several-million": "consistent",
        "001-1-inefficiency-over-half-of-cost": "consistent",
        "001-2.1-7b-rd-cost-55pct": "unverifiable",
        "001-4-rental-80k-rmb-month": "consistent",
        "001-4-own-42k-vs-rent-80k": "implausible",
        "001-6-effective-compute-cost-formula": "consistent",
        "001-6-payback-6-12-months": "consistent",
    }


def _finding(claim_id: str, **over):
    cfg = ch.SPEC.validate(over)
    claim = data.claim(claim_id)
    return ledger.checks("tco")[claim_id](claim, scenario.values(cfg), cfg)


def test_what_decides_the_tco_row(result):
    f = _finding("000-3-table-tco")
    s = scenario.values()
    # same task: the owned price ratio per GPU-hour over the scenario's speed-up
    assert float(f.value) == pytest.approx(float(costs.price_ratio(s)) / s["speedup_b300_a100"])
    assert (f.stated.lo, f.stated.hi) == (0.35, 0.45)
    assert 0.30 < float(f.value) < 0.40
    # with the documents' own 2.5-3x the same task would cost more on B300 than on A100
    assert "118%-141%" in f.recomputed()
    # the documents' speed-up turns it implausible (the verdict moves with the parameter)
    assert verdicts(result(speedup_b300_a100=3.0))["000-3-table-tco"] == "implausible"


def test_what_decides_payback(result):
    f = _finding("000-6-payback-6-12-months")
    assert (f.stated.lo, f.stated.hi) == (-np.inf, 12.0)  # "within 12 months"
    assert (f.strict.lo, f.strict.hi) == (6.0, 12.0)
    assert 4 < float(f.value) < 8  # one B300 against the rented A100s whose work it does
    assert "China" in f.recomputed() and "kept as busy as they would be" in f.recomputed()
    reason = ledger.ledger(ids=["000-6-payback-6-12-months"]).iloc[0]["reason"]
    assert (
        "read as 升级 as keeping owned A100s whose capital is spent" in reason and "it would be implausible" in reason
    )
    assert "implausible if B300/A100 per-GPU speed-up below 3.6× (outside its 90% range" in reason
    assert "China" in _finding("001-6-payback-6-12-months").recomputed()
    slow = verdicts(result(speedup_b300_a100=3.0))
    assert slow["000-6-payback-6-12-months"] == slow["001-6-payback-6-12-months"] == "implausible"


def test_what_decides_the_case_studies(result):
    r, c = cases.recommender(), cases.customer_service()
    f = _finding("000-4-monthly-cost-47pct-3m-rmb")
    s = scenario.values()
    want = (
        float(costs.price_ratio(s, "owned", wiring.RECOMMENDER_BASIS))
        * r.gpus_after
        * r.days_after
        / (r.gpus_before * r.days_before)
    )
    assert float(f.value) == pytest.approx(want)
    assert f.stated.shown == pytest.approx(1 - 0.47)
    own = _finding("001-4-own-42k-vs-rent-80k")
    assert float(own.value) > 2 * c.own_rmb_per_month
    assert float(wiring.own_implied_price(s)) < scenario.ranges()["server_b300_usd_per_gpu"].low
    assert "implies a system price" in own.recomputed()
    rent = _finding("001-4-rental-80k-rmb-month")
    assert float(rent.value) == pytest.approx(
        c.gpus * s["rent_a100_china_cny_per_gpu_hour"] * (1 + s["rental_overhead_fraction"]) * 730.5
    )
    # the 42k RMB turns consistent only at a B300 price far below every quote
    assert verdicts(result(server_b300_usd_per_gpu=5000.0))["001-4-own-42k-vs-rent-80k"] == "consistent"


def test_what_decides_the_other_claims(result):
    several = _finding("001-0-several-million")
    assert several.low < 2e6 and several.high > 9e6  # 7B costs less, 100B more than the stated band
    lo, hi = wiring.band_sizes(scenario.values())
    assert 7e9 < lo < hi < 1e11
    waste = _finding("001-1-inefficiency-over-half-of-cost")
    s = scenario.values()
    # goodput is the reliability model's (97.7% at the defaults, the scenario's derived row), not a typed 90%
    assert float(waste.value) == pytest.approx(1 - 0.7 * float(operations.goodput(s)) * s["mfu_a100_bf16"])
    assert float(operations.goodput(s)) == s["goodput"] == pytest.approx(0.977, abs=1e-9)
    assert (
        verdicts(result(utilisation=0.95, mfu_a100_bf16=0.7))["001-1-inefficiency-over-half-of-cost"] == "implausible"
    )
    assert _finding("001-2.1-7b-rd-cost-55pct").value is None
    assert "labour at least" in _finding("001-2.1-7b-rd-cost-55pct").recomputed()
    assert _finding("000-5-reserve-10-15pct-exploration").value is None
    assert _finding("000-4-gmv-8pct").value is None
    metric = _finding("001-6-effective-compute-cost-formula")
    # against the case's own A100s, rented in China, per useful PFLOP-day
    old, new = costs.pflop_day_cost(s, "A100", "rent in China"), costs.pflop_day_cost(s, "B300", "owned", "finetune")
    assert float(metric.value) == pytest.approx(1 - float(new / old))
    assert verdicts(result(speedup_b300_a100=1.2))["001-6-effective-compute-cost-formula"] == "inconsistent"


def test_every_claim_carries_its_reading():
    for c in data.claims():
        if c.chapter == "tco":
            assert c.reading, c.id
            assert _finding(c.id).reading == c.reading


# -------------------------------------------------------------------------- one scenario


def test_parameters_are_scenario_assumptions_or_view_settings():
    table = scenario.assumptions()
    for p in ch.SPEC.params:
        if p.name in table:
            assert p.default == table[p.name].central, p.name
            assert (p.min, p.max) == (table[p.name].min, table[p.name].max), p.name
        else:
            assert p.name in VIEW, f"{p.name} is neither an assumption of the scenario nor a view setting"
    # every assumption the page draws exists in the scenario
    assert set(ch.DRAWN) <= set(table)


def test_verdicts_do_not_depend_on_the_page_monte_carlo(result):
    assert result().ledger.equals(result(mc_samples=1000, seed=7).ledger)
    assert result().ledger.equals(ledger.ledger("tco"))


def test_a_parameter_moves_the_page_and_the_ledger_together(result):
    fast, slow = result(speedup_b300_a100=12.0), result(speedup_b300_a100=8.8)
    assert fast.same_task.central < slow.same_task.central
    assert fast.mfu["B300"] > slow.mfu["B300"]
    assert fast.payback["central"].iloc[0] < slow.payback["central"].iloc[0]
    usd = result(currency="USD")
    rmb = result().pflop_day["central"].iloc[0]
    assert usd.pflop_day["central"].iloc[0] == pytest.approx(rmb / usd.s["usd_cny"], rel=0.01)  # 3 figures shown
