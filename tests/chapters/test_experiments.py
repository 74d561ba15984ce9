"""The experiments chapter: compute, figures and sentences over its parameters, its verdicts and what decides them."""

from __future__ import annotations

import dataclasses
import importlib
import inspect

import altair as alt
import numpy as np
import pytest

from analyses import data, scenario, verdicts
from analyses.chapters import experiments as ch
from analyses.chapters.experiments import checks, figures, text
from analyses.scenario import generations
from analyses.units import DAYS_PER_MONTH

SWEEP = "001-2.5-hyperparam-sweep-36-to-9-days"
WEEKLY = "000-4-monthly-to-weekly-updates"


def _grid() -> list[dict]:
    """Every parameter at its minimum and maximum (every choice of a bool), the rest at the defaults."""
    cases = [{}]
    for p in ch.SPEC.params:
        cases += [{p.name: v} for v in ((False, True) if p.kind == "bool" else (p.min, p.max))]
    return cases


def _render(res: ch.Result) -> None:
    for chart in (figures.timeline_chart(res), figures.early_stopping_chart(res), *figures.slider_charts(res)):
        assert isinstance(chart, alt.TopLevelMixin)
        chart.to_dict()
    glued = text.glued(res)
    assert all(isinstance(v, str) and v for v in glued.values()), "every glued value is formatted, non-empty text"
    for key in ("sweep_takeaway", "model_takeaway", "rounds_sentence", "cadence", "cap_speedup"):
        assert len(glued[key]) > 20 and "nan" not in glued[key] and "{" not in glued[key]


@pytest.mark.parametrize("values", _grid(), ids=lambda v: ",".join(f"{k}={v[k]}" for k in v) or "defaults")
def test_compute_figures_and_sentences_over_the_parameters(values, result):
    res = result(**values)
    assert list(res.ledger["id"]) == [c.id for c in data.claims() if c.chapter == ch.SPEC.slug] and set(
        res.ledger["verdict"]
    ) <= set(verdicts.VERDICTS)
    assert 0 < res.early.fraction <= 1 and 0 <= res.early.p_best_kept <= 1
    assert len(res.timeline) == 3 * res.sweep.case.configs
    _render(res)


def test_the_early_stopping_chart_names_each_line_on_the_chart(default, text_labels):
    """Issue 35: both panels name their lines at their ends (each eta; the two quantities in short words),
    not by the colour legend alone."""
    words = text_labels(figures.early_stopping_chart(default).to_dict())
    etas = list(dict.fromkeys(default.by_rank["eta"]))
    assert sorted(words) == sorted([*etas, "compute spent", "P(best kept)"])
    assert default.by_eta["quantity"].nunique() == 2


def test_what_decides_the_verdicts(default):
    led = default.ledger.set_index("id")
    # 30.44 / 22 = 1.38 and 30.44 / 8 = 3.80 runs a month round to the stated 1 and 4
    assert "3.80 runs a month" in led.loc["000-2.1-13b-experiments-1-to-4", "recomputed"]
    # an 11-day run allows 2.77 updates a month: weeks-scale, not exactly weekly (4.35 a month)
    assert DAYS_PER_MONTH / 11 == pytest.approx(2.767, abs=1e-3)
    # kind arithmetic (the documents' own days): the strict reading, exactly weekly, fails the arithmetic
    assert "read strictly, 4.35 updates/month, it would be inconsistent" in led.loc[WEEKLY, "reason"]
    assert led.loc[WEEKLY, "holds"] < 1
    # the sweep: 36 days serially, 4x stated; at 9.9x per GPU and e_slice/e_full = 1.05 (the one step-time
    # model: 95.0% on 48 B300s, 99.6% on one server), 10.4x
    sw = default.sweep
    assert sw.stated_speedup == pytest.approx(4.0)
    per_gpu = generations.speedup(default.s, "sweep-8b")
    assert per_gpu != pytest.approx(default.s["speedup_b300_a100"], rel=0.01)  # its own workload, not the reference
    assert sw.speedup == pytest.approx(per_gpu * sw.e_slice / sw.e_full)
    assert sw.e_slice / sw.e_full == pytest.approx(1.048, abs=0.01)
    assert sw.required_ratio == pytest.approx(4.0)
    assert sw.old_concurrent_days == pytest.approx(36 * sw.e_full / sw.e_slice)
    assert led.loc[SWEEP, "reason"].startswith("Plausible: the stated 4× falls short")
    assert "at the documents' own 2.5× per GPU: implausible" in led.loc[SWEEP, "reason"]
    # where it flips (the snapshot's figures): on the reference speed-up, and on the claim's own workload
    assert led.loc[SWEEP, "flips_if"].startswith("implausible if B300/A100 per-GPU speed-up <")
    assert led.loc[SWEEP, "flips_if"].endswith(
        "on the claim's own workload (an 8B hyper-parameter sweep, one 8-GPU server per run (001 §2.5))"
    )
    # 27 / 36 = 75%
    assert "75%" in led.loc["001-2.5-labour-75pct", "recomputed"]
    # 10 runs of 2.8 days fit in a month (10.9 possible)
    assert "10.9 full runs" in led.loc["001-4-runs-per-month-4-plus-6", "recomputed"]
    # one 8-GPU B300 server: 8 x 7 = 56 MIG instances, "dozens"
    assert "56 MIG instances" in led.loc["001-2.5-dozens-parallel-experiments", "recomputed"]
    assert led.loc["001-2.1-7b-experiments-12-to-8", "holds"] == 1.0


def test_a_parameter_moves_a_verdict(result):
    slow = result(**{"speedup_b300_a100": 2.0})
    assert slow.verdict(SWEEP) == "implausible"
    assert "needs" in text.sweep_takeaway(slow)
    # the slider finds the flip between 2 and the central 10.2 (4 / 1.25 / 1.05 = 3.05 on the workload)
    (slider,) = result().sliders
    assert not slider.flips.empty and 2.7 < float(slider.flips["x"].iloc[0]) < 3.6


def test_phrase_branches(default):
    assert "already lands there" in text.rounds_sentence(default)
    assert "does not reach it" in text.rounds_sentence(dataclasses.replace(default, rounds_after=5.0))
    assert "on the order of a week" in text.cadence(default)
    assert "cannot keep a weekly cadence" in text.cadence(
        dataclasses.replace(default, ledger=default.ledger.assign(verdict="implausible"))
    )
    assert "gains" in text.model_takeaway(default)
    generous = dataclasses.replace(default, sweep=dataclasses.replace(default.sweep, required_ratio=1.0))
    assert "would give the stated saving" in text.model_takeaway(generous)
    assert "no verdict flips" in text.slider_caption(
        dataclasses.replace(default.sliders[0], flips=default.sliders[0].flips.iloc[:0])
    )


def test_every_assumption_comes_from_the_scenario(result):
    names = scenario.assumptions()
    view = {"sh_eta", "sh_min_budget", "sh_resume"}  # the early-stopping illustration; they judge no claim
    for p in ch.SPEC.params:
        if p.name in view:
            continue
        assert p.name in names and p.default == names[p.name].central
    # no parameter judges a claim: the verdicts are the same at every view setting
    base = ch.SPEC.defaults()
    for values in ({"sh_eta": 2, "sh_min_budget": 0.5, "sh_resume": False},):
        moved = result(**values).ledger["verdict"].tolist()
        assert moved == result(**base).ledger["verdict"].tolist()
    # the chapter imports no other chapter
    for mod in ("", ".checks", ".figures", ".text"):
        source = inspect.getsource(importlib.import_module(f"analyses.chapters.experiments{mod}"))
        assert "analyses.chapters.scaling" not in source and "from analyses.chapters import scaling" not in source


def test_the_sweep_check_is_vectorised_in_the_speedup():
    claim = data.claim(SWEEP)
    xs = np.array([1.0, 4.0, 10.2, 20.0])
    s = scenario.values() | {"speedup_b300_a100": xs}
    many = checks.check_hyperparam_sweep_36_to_9_days(claim, s, {}).value
    one = [
        float(checks.check_hyperparam_sweep_36_to_9_days(claim, scenario.values() | {"speedup_b300_a100": x}, {}).value)
        for x in xs
    ]
    np.testing.assert_allclose(many, one, rtol=1e-12)
    assert np.all(np.diff(many) > 0)
