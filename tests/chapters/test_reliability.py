"""The reliability chapter: compute, figures and sentences over its parameters, its verdicts and what decides them."""

from __future__ import annotations

import dataclasses
import math

import altair as alt
import numpy as np
import pytest

from analyses import data, scenario, verdicts
from analyses.chapters import reliability as ch
from analyses.chapters.reliability import checks, figures, text
from analyses.models import reliability as rel
from analyses.scenario import failures, generations


def _grid() -> list[dict]:
    """Every parameter at its minimum and its maximum (every choice of a choice), the rest at the defaults."""
    cases = [{}]
    for p in ch.SPEC.params:
        choices = p.choices() if callable(p.choices) else p.choices
        cases += [{p.name: c} for c in choices] if choices else [{p.name: p.min}, {p.name: p.max}]
    return cases


def _id(values: dict) -> str:
    return ",".join(f"{k}={v:g}" if isinstance(v, float | int) else f"{k}={v}" for k, v in values.items()) or "defaults"


def _render(res: ch.Result) -> None:
    charts = [figures.goodput_chart(res), figures.failures_chart(res), figures.causes_chart(res)]
    charts += [figures.validation_chart(res)]
    for frame in (figures.rates_table(res), figures.goodput_table(res), figures.recovery_table(res)):
        assert len(frame) >= 2 and frame["source"].notna().all()
    charts += list(figures.slider_charts(res))
    for chart in charts:
        assert isinstance(chart, alt.TopLevelMixin)
        chart.to_dict()
    glued = text.glued(res)
    assert all(isinstance(v, str) and v for v in glued.values()), "every glued value is formatted, non-empty text"
    for phrase in glued.values():
        assert "nan" not in phrase and "{" not in phrase


@pytest.mark.parametrize("values", _grid(), ids=_id)
def test_compute_figures_and_sentences_over_the_parameters(values, result):
    res = result(**values)
    assert list(res.ledger["id"]) == [c.id for c in data.claims() if c.chapter == ch.SPEC.slug] and set(
        res.ledger["verdict"]
    ) <= set(verdicts.VERDICTS)
    assert 0 < res.policy.ratio <= 1 + 1e-12
    assert res.optimum.goodput_exact >= max(res.optimum.goodput_young, res.optimum.goodput_daly) - 1e-12
    _render(res)


def test_phrase_branches(default, result):
    # the other side of each phrase's branch, reached by moving an assumption
    fast = result(**{"checkpoint_write_s": 1.0, "b300_failure_ratio": 0.05})
    assert "do better than" in text.policy_checkpoints(fast)
    assert text.clean_run_rate(default) == "the scenario's per-GPU rate"
    assert text.clean_run_rate(fast) == "0.050× the scenario's per-GPU rate"
    assert text.clean_run_ending(default).startswith(", and the ledger finds the anecdote unverifiable, plausible only")
    fragile = result(**{"b300_failure_ratio": 6.0})
    assert "less often than published failure rates allow" in text.clean_run_ending(fragile)
    # no single rate lies within a factor of two of every published log (they span 4.7x); with Llama 3 alone it does
    llama_only = dataclasses.replace(default, logs=default.logs[default.logs["id"].str.startswith("llama3")])
    assert "Every log lies within" in text.logs_sentence(llama_only)
    assert "cost more than they save" in text.policy_checkpoints(default)
    assert text.policy_keeps(default).endswith("which serves its purpose")
    assert "opt-175b-hardware-all" in text.logs_sentence(default)
    assert text.cut_reach(default) == "out of reach"
    assert text.cut_reach(result(**{"preventable_interruption_share": 0.9})) == "within reach"
    assert "keeps only" in text.policy_keeps(result(**{"checkpoint_write_s": 600.0}))
    assert "percentage points of goodput" in text.mc_takeaway(default)
    stuck = dataclasses.replace(default, monte_carlo=default.monte_carlo.iloc[:0])
    assert text.mc_takeaway(stuck).startswith("at this failure rate no interval")


def test_what_decides_the_verdicts(default):
    led = default.ledger.set_index("id")
    # recovery (恢复) is the restart from the last checkpoint: hours where it waits for an operator (the state
    # before the hot migration the documents credit), minutes where automated; the lost work is counted apart
    hours = led.loc["000-2.4-weeks-long-runs-hours-to-recover"]
    assert "takes 120 min where recovery waits for an operator" in hours["recomputed"]
    assert hours["flips_if"].startswith("inconsistent if restart after an interruption (manual operations) <")
    assert "read as a restart on a platform with automated recovery" in hours["reason"] and hours["holds"] < 1
    # the time a crash loses (001): the automated restart + the work since the document's 60-min checkpoint
    assert "= 40.4 min lost per crash" in led.loc["001-2.4-loss-hours-to-minutes", "recomputed"]
    # the best interval for 512 GPUs at Llama 3's rate and 60 s checkpoints is 1.81 h: hours can be lost
    # the best interval for 512 GPUs at the automated rate (0.226 per GPU-year: one interruption every 75.7 h)
    assert default.job_mtbf_s / 3600 == pytest.approx(365.25 * 24 / (0.226 * 512), rel=1e-9)
    assert default.optimum.exact_s / 3600 == pytest.approx(1.58, abs=0.005)
    assert "read strictly, 2–9 h, it would be inconsistent" in led.loc["001-2.4-weeks-long-runs-hours-lost", "reason"]
    # 50 clean days need a job MTBF of 50 / ln 20 = 16.7 days. A crash every 5 days is a job of 365.25 / 0.226 / 5
    # = 323 GPUs at the scenario's automated rate; the same work on 323 / 9.77 (the model's speed-up of a 10B-class
    # risk model) = 33 B300s fails every 49 days
    assert default.fintech.need_mtbf_days == pytest.approx(50 / math.log(20))
    rate = default.s["interruptions_per_gpu_year"]
    assert rate == pytest.approx(0.226)
    old_gpus = 365.25 / rate / 5
    x = float(generations.speedup(default.s, "risk-10b"))
    assert x != pytest.approx(default.s["speedup_b300_a100"], rel=0.01)  # its own workload, not the reference
    assert default.fintech.b300_gpus == pytest.approx(old_gpus / x, rel=1e-6)
    assert default.fintech.b300_mtbf_days == pytest.approx(365.25 / rate / default.fintech.b300_gpus, rel=1e-6)
    assert "16.7 days" in led.loc["001-2.4-fintech-crash-every-5-days", "reason"]
    # 30 h of 1,200 h is 2.5%, not 18%
    assert default.fintech.saved_share == pytest.approx(0.025)
    # productive hours after over before: 1,200 / 1,170 = +2.56% (18% needs 18.3 h lost per crash)
    assert "2.56%" in led.loc["001-2.4-rd-efficiency-18pct", "reason"]
    assert "18.3 h lost per crash" in led.loc["001-2.4-rd-efficiency-18pct", "recomputed"]
    # even every GPU and host failure (289 of 419) leaves 31%: 3.2x fewer, not the 6.7-20x of "about 90%"
    assert 1 / (1 - default.s["preventable_interruption_share"]) == pytest.approx(3.23, abs=0.01)
    stability = led.loc["000-3-table-stability"]
    assert "A100 already has ECC on GPU memory" in stability["reason"] and "3.23× fewer, not 10×" in stability["reason"]
    assert stability["direction"] == "overstates"
    # the policy keeps 99.3% of the best goodput, within the recommendation rule's 5%
    assert default.policy.ratio == pytest.approx(0.9934, abs=1e-4)
    assert default.policy.ratio >= 1 / (1 + verdicts.RULES["recommendation"].tolerance)
    # nothing public gives B300's failure rate
    assert led.loc["000-2.4-failure-rate-industry-lowest", "holds"] == 1.0


@pytest.mark.parametrize(
    ("values", "claim", "verdict"),
    [
        ({"checkpoint_write_s": 600.0}, checks.POLICY, "inconsistent"),
        ({"restart_s_manual": 1800.0}, "000-2.4-weeks-long-runs-hours-to-recover", "inconsistent"),
        ({"restart_s": 5000.0}, "000-2.4-recovery-hours-to-minutes", "inconsistent"),
        ({"b300_failure_ratio": 6.0}, "001-2.4-fintech-crash-every-5-days", "implausible"),
        ({"checkpoint_write_s": 6.3}, "001-2.4-weeks-long-runs-hours-lost", "inconsistent"),
        # a cluster run by hand restarts in hours (2 h central), not minutes
        ({"operations": "manual"}, "000-2.4-recovery-hours-to-minutes", "inconsistent"),
    ],
)
def test_a_parameter_moves_a_verdict(values, claim, verdict, result):
    res = result(**values)
    assert res.verdict(claim) == verdict
    assert result().verdict(claim) != verdict


def test_every_parameter_is_a_scenario_assumption_and_checks_read_only_the_scenario():
    names = scenario.assumptions()
    for p in ch.SPEC.params:
        if p.name == "operations":  # a choice between the scenario's assumptions, not one of its own
            assert set(p.choices) == set(failures.RATE) == set(failures.RESTART)
            assert {*failures.RATE.values(), *failures.RESTART.values()} <= set(names)
            continue
        assert p.name in names, f"{p.name} is not an assumption of the scenario"
        assert p.default == names[p.name].central
    # the checks react to the scenario values they are given, and to nothing else of the config
    s = scenario.values()
    claim = data.claim(checks.POLICY)
    base = float(checks.check_checkpoint_15min_then_hourly(claim, s, {}).value)
    slower = float(checks.check_checkpoint_15min_then_hourly(claim, s | {"checkpoint_write_s": 300.0}, {}).value)
    assert slower < base
    # vectorised: arrays of draws in, arrays out, element by element equal to scalar calls
    draws = scenario.sample(["checkpoint_write_s", "job_gpus"], 5, 1)
    many = checks.check_checkpoint_15min_then_hourly(claim, draws, {}).value
    one = [
        float(checks.check_checkpoint_15min_then_hourly(claim, {k: float(v[i]) for k, v in draws.items()}, {}).value)
        for i in range(5)
    ]
    np.testing.assert_allclose(many, one, rtol=1e-12)


def test_the_page_agrees_with_the_models(default):
    s = default.s
    m = rel.cluster_mtbf_s(s["job_gpus"], rel.per_gpu_mtbf_from_rate_s(s["interruptions_per_gpu_year"]))
    assert default.job_mtbf_s == pytest.approx(float(m))
    # the Monte Carlo table agrees with the closed form (sampling error only)
    mc = default.monte_carlo
    assert (mc["Monte Carlo mean"] - mc["closed form"]).abs().max() < 2e-3
    # the logs table: each log's all-cause rate against the mode's fitted rate (Llama 3's 466 in 54 days
    # on 16,384 GPUs: 0.192 per GPU-year, 15% below the automated fit)
    llama = default.logs.set_index("id").loc["llama3-405b-all"]
    assert llama["rate vs scenario"] == pytest.approx(
        466 * 365.25 / (16384 * 54) / default.s["interruptions_per_gpu_year"]
    )
    assert default.downtime_bound_s / 60 == pytest.approx(16.69, abs=0.01)


def test_operations_mode_sets_the_pages_rate_and_restart(default, result):
    manual = result(operations="manual")
    every = scenario.values()
    assert (default.rate, default.restart_s) == (every["interruptions_per_gpu_year"], every["restart_s"])
    assert (manual.rate, manual.restart_s) == (every["interruptions_per_gpu_year_manual"], every["restart_s_manual"])
    assert manual.job_mtbf_s < default.job_mtbf_s and manual.optimum.goodput_exact < default.optimum.goodput_exact
    assert (manual.rate_low, manual.rate_high) == scenario.ranges()["interruptions_per_gpu_year_manual"][::2][:2]
    # the validation tables do not depend on the chapter's mode
    assert manual.rates.equals(default.rates)


def test_the_validation_phrases_say_what_the_tables_show(default):
    glued = text.glued(default)
    assert (glued["named_within"], glued["tolerance"]) == ("all within", "30%")
    v = default.rates
    scored = v[v["role"].isin(["calibrate", "validate"]) & v["predicted"].notna()]
    assert (glued["val_inside"], glued["val_scored"]) == (f"{int(scored['inside'].sum())}", f"{len(scored)}")
    assert glued["llama_vs_scenario_job"] == "32×"  # 16,384 / 512
    assert glued["rsc_job_gpus"] == "1,024"
    # a table without misses says so plainly
    clean = dataclasses.replace(default, rates=v.assign(inside=v["inside"].where(v["inside"].isna(), True)))
    assert text.validation_misses(clean) == "." and text.validation_misses(default).startswith("; the misses: ")
    g = default.goodput_check
    assert text.goodput_outside(dataclasses.replace(default, goodput_check=g.assign(inside=True))) == "."
    assert text.goodput_outside(dataclasses.replace(default, goodput_check=g.assign(inside=False))).startswith(
        " (outside: "
    )
    assert (
        text.named_runs_within(dataclasses.replace(default, rates=v.assign(error=v["error"] * 100))) == "not all within"
    )
