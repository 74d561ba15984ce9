"""The utilisation chapter: compute, figures and sentences over its parameters; its verdicts and what
decides them; every assumption read through the scenario."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from analyses import chapters, data, scenario
from analyses.chapters import ledger
from analyses.chapters import utilisation as ch
from analyses.chapters.utilisation import figures, text, wiring
from analyses.models import mig, pipeline
from analyses.scenario import cases

SCENARIO_PARAMS = ("utilisation", "idle_power_fraction", "mig_small_job_compute", "mig_small_job_memory")
VIEW_PARAMS = ("gpu", "mean_jobs", "snapshots", "seed", "prefetch_cv")


def render(res: ch.Result) -> list[str]:
    """Every figure (as a spec) and every sentence of the page."""
    specs = [figures.utilisation_chart(res).to_dict(), figures.mig_chart(res).to_dict()]
    specs += [figures.slider(res, i).to_dict() for i in range(len(ch.SLIDERS))]
    assert all(specs)
    glued = text.glued(res)
    assert all(isinstance(v, str) and v for v in glued.values()), "every glued value is formatted, non-empty text"
    return glued


# -------------------------------------------------------------------------- the parameter grid

GRID = (
    [{}]
    + [
        {p.name: getattr(p, end)}
        for p in ch.SPEC.params
        if p.kind in ("int", "float") and p.name != "mean_jobs"
        for end in ("min", "max")
    ]
    + [{"gpu": g} for g in ch.mig_gpus()]
    + [{"mean_jobs": 5.0}, {"mean_jobs": 2000.0, "snapshots": 10}]
)


@pytest.mark.parametrize("over", GRID, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()) or "defaults")
def test_compute_figures_and_sentences_over_the_grid(over, result):
    res = result(**over)
    glued = render(res)
    assert glued["n_model"].endswith("B") and "nan" not in " ".join(glued.values())
    assert len(res.ledger) == len([c for c in data.claims() if c.chapter == "utilisation"])
    assert set(res.ledger["verdict"]) <= {"consistent", "inconsistent", "implausible", "unverifiable"}
    assert [s.input for s in res.sliders] == [name for name, _ in ch.SLIDERS]
    assert len(res.sim) == res.cfg["snapshots"] and (res.sim["util_mig"] <= 1 + 1e-9).all()


def test_phrase_branches(result):
    # the electricity saving: does not hold at the scenario, holds when waiting servers draw nearly full power
    assert "does not" in text.electricity_takeaway(result())
    assert "and so does the electricity saving" in text.electricity_takeaway(result(idle_power_fraction=0.95))
    # no flip within the slider's span: nothing drawn while waiting reaches the stated cut
    res = result()
    flipless = dataclasses.replace(
        res, sliders=tuple(dataclasses.replace(s, flips=s.flips.iloc[:0]) for s in res.sliders)
    )
    assert "no power drawn while waiting gives it" in text.electricity_takeaway(flipless)
    assert "turns at" in text.below_50_verdict(res) and "turns at" not in text.below_50_verdict(flipless)
    assert text.provider_verdict(flipless) == res.verdict(text.PROVIDER)
    assert "turns implausible where partial-GPU jobs hold about 41%" in text.provider_verdict(res)
    assert text.provider_agree(res) == "agree"
    other = dataclasses.replace(res, provider=dataclasses.replace(res.provider, gpus_after=3.0))
    assert text.provider_agree(other) == "disagree"
    # the days: the stated 2.5 days matches the loading shares (2.61), not the utilisations (2.95)
    assert text.days_sentence(res) == "the stated 2.5 days matches the loading shares"
    load = dataclasses.replace(res.loading, days_saved_util=2.5)
    assert "matches both" in text.days_sentence(dataclasses.replace(res, loading=load))
    load = dataclasses.replace(res.loading, days_saved_shares=4.0, days_saved_util=2.5)
    assert "matches the utilisations" in text.days_sentence(dataclasses.replace(res, loading=load))
    load = dataclasses.replace(res.loading, days_saved_shares=4.0, days_saved_util=4.0)
    assert "matches neither" in text.days_sentence(dataclasses.replace(res, loading=load))
    # MIG generations: identical slicing everywhere, or not
    assert "gives the same answer" in text.generations_sentence(res)
    gens = res.generations.copy()
    gens.loc[0, "GPUs MIG"] += 1
    assert "profiles differ" in text.generations_sentence(dataclasses.replace(res, generations=gens))
    other = dataclasses.replace(res, same_slicing=False)
    assert text.same_slicing(res) == "A100 offers the same MIG profiles as B300"
    assert text.same_slicing(other) == "A100 and B300 offer different MIG profiles"
    assert text.mig_new(res).startswith("it is not new in B300") and "profiles differ from" in text.mig_new(other)
    # the loading pairs: hang together at the documents' figures
    assert text.electricity_takeaway(res).startswith("the two pairs and the days saved hang together")


# -------------------------------------------------------------------------- verdicts at the defaults


def test_what_decides_the_verdicts(result):
    led = result().ledger.set_index("id")
    # MIG on A100 is MIG on B300: the same 7 instances and slice shapes contradict "finer" MIG
    assert wiring.same_slicing("A100", "B300")
    assert "A100 already has Multi-Instance GPU" in led.loc["000-3-table-mig", "reason"]
    assert "A100 and B300 share the slice shapes" in led.loc["000-3-table-mig", "reason"]
    # 45% on whole GPUs: 79% partial-GPU jobs; packed, at most 80% (fluid bound), so ">= 80%" holds
    b = wiring.mig_bound(0.45, scenario.values())
    assert float(b.small_share) == pytest.approx(0.786, abs=1e-3)
    assert float(b.utilisation_mig) == pytest.approx(0.80, abs=5e-3)
    assert led.loc["001-2.3-cloud-utilisation-45-to-80", "flips_if"].startswith(
        "implausible if GPU memory share of a partial-GPU job >"
    )
    # electricity against the stated 25% (the figures, and the flip beyond the 90% range that the ledger
    # still names with the range, are the snapshot's: tests/test_snapshots.py)
    assert "stated 25% lies above the recomputed" in led.loc["001-2.2-days-saved-2p5-of-10", "reason"]
    assert "(90% range" in led.loc["001-2.2-days-saved-2p5-of-10", "flips_if"]
    # the loading pair: 1 - 35% = 65% against 62%, within the arithmetic tolerance
    assert "stated 62% agrees with the recomputed 65.0%" in led.loc["001-2.2-loading-share-35-to-12", "reason"]
    # utilisation below 50% as the norm: the scenario's 70% flips it below some utilisation, no speed-up does
    # (the flip and the data rate, tokens/s of a 100B model on B300 at 4 bytes a token, are the snapshot's)
    flips = led.loc["001-2.2-utilisation-below-50pct", "flips_if"]
    assert flips.startswith("consistent if GPU utilisation (a job's busy share) <")
    assert flips.endswith("no B300/A100 per-GPU speed-up from 0.50–100× turns it")
    # the procurement cut is below the 43% that 4-for-7 allows: no arithmetic failure, so unverifiable
    assert 30 < 100 * (1 - 4 / 7)
    assert "business result" in led.loc["001-2.3-procurement-30pct", "reason"]
    # the +50% is 87/58
    assert "recomputed 50.0%" in led.loc["000-4-utilisation-58-to-87", "reason"]
    # GDS: nothing public isolates the latency cut
    assert led.loc["001-2.2-gds-latency-60-80pct", "reason"].startswith("Nothing public recomputes this figure")


def test_parameters_move_verdicts(result):
    assert result(utilisation=0.5).verdict("001-2.2-utilisation-below-50pct") == "consistent"
    assert result(idle_power_fraction=0.9).verdict("001-2.2-days-saved-2p5-of-10") == "consistent"
    assert result(mig_small_job_memory=0.5).verdict("001-2.3-cloud-utilisation-45-to-80") == "implausible"
    # the after-fix utilisations are compared with goodput, the reliability model's (not a parameter here):
    # plausible, and implausible only at job sizes far outside the scenario's range
    for cid in ("001-4-utilisation-55-to-89", "000-6-half-idle-to-near-full"):
        row = result().ledger.set_index("id").loc[cid]
        assert row["verdict"] == "unverifiable" and row["reason"].startswith("Plausible")
        assert row["flips_if"].startswith("implausible if GPUs of a large training job >")
        assert "(90% range 260–2,000 GPUs)" in row["flips_if"]
    # a view parameter moves no verdict
    assert result(gpu="A100", snapshots=10).ledger["verdict"].equals(result().ledger["verdict"])


def test_strict_reading_of_near_full_load_changes_nothing(result):
    fn = ledger.checks("utilisation")["000-6-half-idle-to-near-full"]
    f = fn(data.claim("000-6-half-idle-to-near-full"), scenario.values(), ch.SPEC.defaults())
    assert f.strict is not None and f.strict.lo == 1.0
    assert "strict reading" not in result().ledger.set_index("id").loc["000-6-half-idle-to-near-full", "reason"]


def test_the_chapter_ledger_at_defaults_is_the_book_ledger(result):
    own = result().ledger.set_index("id")
    book = ledger.ledger(ids=list(own.index)).set_index("id")
    assert own.equals(book.loc[own.index])


# -------------------------------------------------------------------------- one scenario


def test_scenario_parameters_are_the_scenarios():
    for name in SCENARIO_PARAMS:
        p, a = ch.SPEC.param(name), scenario.assumption(name)
        assert (p.default, p.min, p.max, p.unit) == (a.central, a.min, a.max, a.unit)
    assert tuple(p.name for p in ch.SPEC.params if p.name not in SCENARIO_PARAMS) == VIEW_PARAMS


def test_new_assumptions_have_sources_and_ranges():
    for name in ("idle_power_fraction", "mig_small_job_compute", "mig_small_job_memory", "input_bytes_per_token"):
        a = scenario.assumption(name)
        assert a.source and a.range.low < a.range.central and a.description
        for sid in a.source.split(";"):
            assert data.source(sid)["reference"]


def test_checks_read_nothing_but_the_scenario():
    """A view parameter changes no finding: the checks read assumptions only from ``s``."""
    base, other = ch.SPEC.defaults(), ch.SPEC.validate({"gpu": "A100", "snapshots": 10, "seed": 3, "mean_jobs": 7})
    s = scenario.values(base)
    for claim_id, fn in ledger.checks("utilisation").items():
        claim = data.claim(claim_id)
        a, b = fn(claim, s, base), fn(claim, s, other)
        assert (a.stated, a.value, a.low, a.high, a.contradiction) == (
            b.stated,
            b.value,
            b.low,
            b.high,
            b.contradiction,
        )


def test_checks_are_vectorised():
    """Every check evaluates arrays of draws in one call (the ledger's robustness pass)."""
    draws = scenario.sample(tuple(scenario.assumptions()), 64, 1)  # goodput reads the reliability inputs too
    cfg = ch.SPEC.defaults()
    for claim_id, fn in ledger.checks("utilisation").items():
        assert getattr(fn, "vectorised", True), claim_id
        f = fn(data.claim(claim_id), draws, cfg)
        if f.value is not None:
            assert np.broadcast_to(np.asarray(f.value), (64,)).shape == (64,)


def test_the_page_uses_the_checks_scenario_values(result):
    res = result(idle_power_fraction=0.6, mig_small_job_compute=0.2, mig_small_job_memory=0.15)
    assert res.loading.electricity_saving == pytest.approx(float(wiring.electricity_saving(res.s)))
    row = res.mig_cases.set_index("claim").loc["001-2.3-cloud-utilisation-45-to-80"]
    b = mig.mig_utilisation_bound(0.45, 0.2, 0.15, wiring.profiles())
    assert row["MIG at most"] == pytest.approx(float(b.utilisation_mig))
    assert res.small_share == pytest.approx(float(b.small_share))
    # the simulated cluster reproduces the provider's 45% on whole GPUs
    assert res.sim["util_whole"].mean() == pytest.approx(cases.cloud_provider().utilisation_before, abs=0.02)
    # the input a text model needs uses the scenario's speed-up and A100 MFU
    s = res.s
    flops = s["speedup_b300_a100"] * data.gpu("A100").peak_flops("bf16") * s["mfu_a100_bf16"]
    assert res.input_need.tokens_per_s == pytest.approx(float(pipeline.llm_tokens_per_s_per_gpu(1e11, flops)))


def test_readings_are_the_claims_table():
    s, cfg = scenario.values(), ch.SPEC.defaults()
    for claim_id, fn in ledger.checks("utilisation").items():
        claim = data.claim(claim_id)
        assert claim.reading and fn(claim, s, cfg).reading == claim.reading


def test_the_chapter_is_registered():
    assert "utilisation" in chapters.CHAPTERS and chapters.spec("utilisation") is ch.SPEC
