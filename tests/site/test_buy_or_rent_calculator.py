"""The buy-or-rent page's cost calculator in Chromium (issue 25): 50 seeded random input combinations
give the Python model's numbers to 4 significant figures, each input alone moves a result, an
out-of-range input shows its allowed range (never NaN or a blank), and on a 390 px phone nothing
scrolls sideways; the built page stays under 150 KB."""

from __future__ import annotations

import numpy as np
import pytest

from analyses.chapters import buy_or_rent as ch
from analyses.chapters import config
from analyses.pages import calculator as pc

SEED = 2026
CASES = 50


@pytest.fixture(scope="module")
def res():
    return ch.compute(config("buy-or-rent"))


@pytest.fixture(scope="module")
def system(res):
    return pc.buy_or_rent_system(res)[0]


@pytest.fixture(scope="module")
def fragment(res):
    return pc.buy_or_rent(res).data


READY = f'#{pc.ELEMENT_ID}[data-state="ok"]'


@pytest.fixture(scope="module")
def page(browser, tmp_path_factory, fragment, calculators):
    context, p = calculators.open_page(browser, tmp_path_factory.mktemp("bor"), fragment, READY)
    yield p
    context.close()


def test_the_page_shows_every_result_and_starts_at_the_page_configuration(res, system, fragment, page, calculators):
    assert not page.errors
    shown = set(calculators.values(page))
    assert shown == set(system.results) == pc.shown(["A100", "H100", "B200", "B300"])
    fields = calculators.fields(page)
    assert set(fields) == {i.name for i in system.inputs}
    assert float(fields["n_params"]) == res.cfg["n_params"]
    # each generation's GPU count is the planner's for the reader's run, and so is its time per run
    mine = res.of("yours")
    values = calculators.values(page)
    for g in ("A100", "H100", "B200", "B300"):
        row = mine[(mine["gpu"] == g) & (mine["basis"] == "owned")].iloc[0]
        assert int(fields[f"n_gpus_{g.lower()}"]) == int(row["n_gpus"])
        assert (
            abs(float(values[f"days_{g.lower()}"]) / row["days"] - 1) < 0.025
        )  # the grid's interpolation (median bound of tests/models/test_calculator_grid.py)
    assert not any(s in fragment for s in ("http://", "https://", "<link", " src="))


def test_fifty_random_inputs_give_the_python_model_to_4_significant_figures(system, page, calculators):
    rng = np.random.default_rng(SEED)
    verdicts_seen = set()
    for _ in range(CASES):
        fields = calculators.draw(system, rng)
        calculators.set_fields(page, fields)
        assert page.get_attribute(f"#{pc.ELEMENT_ID}", "data-state") == "ok", page.inner_text("[data-calc-error]")
        expected = calculators.python(system, calculators.fields(page))
        got = calculators.values(page)
        bad = {k: (got[k], expected[k]) for k in got if not calculators.same(got[k], expected[k])}
        assert not bad, (fields, bad)
        verdicts_seen.add(got["claim_payback_verdict"])
        text = page.inner_text(f"#{pc.ELEMENT_ID}")
        assert "NaN" not in text and "undefined" not in text
    assert verdicts_seen == {"0", "2"}  # both sides of the rule are reached: consistent and implausible
    assert not page.errors


def test_each_input_alone_changes_a_result(system, page, calculators):
    defaults = {i.name: format(i.default / i.scale, ".15g") for i in system.inputs}
    calculators.set_fields(page, defaults)
    base = calculators.values(page)
    for i in system.inputs:
        if i.choices:
            other = next(c for _, c in i.choices if c != i.default)
        elif i.name == "tokens_per_param":
            other = i.default * 2 if i.default * 2 <= i.max else i.default / 2
            calculators.set_fields(
                page, {"tokens": "0"}
            )  # tokens per parameter count only when tokens is 0 (the default)
        else:
            other = i.default * 1.5 if i.default * 1.5 <= i.max else (i.default + i.min) / 2
            if i.default == 0:
                other = (i.min + i.max) / 2
            if i.integer:
                other = float(round(other))
        calculators.set_fields(page, {i.name: format(other / i.scale, ".15g")})
        moved = {k for k, v in calculators.values(page).items() if v != base[k]}
        assert moved, i.name
        calculators.set_fields(page, defaults)


def test_an_input_out_of_range_shows_its_allowed_range_never_nan(system, page, calculators):
    defaults = {i.name: format(i.default / i.scale, ".15g") for i in system.inputs}
    for name, bad in (("utilisation", "2"), ("n_gpus_b300", "12.5"), ("pue", ""), ("n_params", "1e15")):
        calculators.set_fields(page, defaults | {name: bad})
        assert page.get_attribute(f"#{pc.ELEMENT_ID}", "data-state") == "error"
        message = page.inner_text("[data-calc-error]")
        assert system.input[name].allowed in message, message
        assert page.get_attribute(f'[data-param="{name}"]', "aria-invalid") == "true"
        text = page.inner_text(f"#{pc.ELEMENT_ID}")
        assert "NaN" not in text and "undefined" not in text
        assert set(page.eval_on_selector_all("[data-result]", "els => els.map(e => e.textContent)")) == {"—"}
    calculators.set_fields(page, defaults)
    assert page.get_attribute(f"#{pc.ELEMENT_ID}", "data-state") == "ok"


def test_a_preset_sets_the_documents_workload(res, system, page, calculators):
    page.select_option("[data-preset]", label=res.workloads[1].label)
    fields = calculators.fields(page)
    assert float(fields["n_params"]) == pytest.approx(res.workloads[1].shape.n_params)
    assert float(fields["tokens"]) == pytest.approx(res.workloads[1].tokens)
    got, expected = calculators.values(page), calculators.python(system, fields)
    assert all(calculators.same(got[k], expected[k]) for k in got)


def test_on_a_390_px_phone_nothing_scrolls_sideways(browser, tmp_path_factory, fragment, calculators):
    context, p = calculators.open_page(browser, tmp_path_factory.mktemp("bor"), fragment, READY, width=390)
    errors = p.errors
    try:
        assert p.evaluate("document.documentElement.scrollWidth") <= 390
        # every result is visible without zooming: its cell lies inside the viewport
        right = p.eval_on_selector_all(
            "[data-result]", "els => Math.max(...els.map(e => e.getBoundingClientRect().right))"
        )
        assert right <= 390
        assert not errors
    finally:
        context.close()


def test_the_built_page_carries_the_calculator_and_stays_under_150_kb(site):
    page = site / "book" / "buy-or-rent.html"
    text = page.read_text(encoding="utf-8")
    assert f'id="{pc.ELEMENT_ID}"' in text and 'data-param="n_params"' in text
    assert page.stat().st_size < 150_000, page.stat().st_size
