"""The calculator's HTML fragment in a real browser (issue 25): inputs by ``data-param``, results by
``data-result``, every result equal to the Python model, out-of-range inputs shown with their range."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from analyses.pages import calculator as wiring

SUPERSCRIPT = str.maketrans("⁻⁰¹²³⁴⁵⁶⁷⁸⁹", "-0123456789")
PRESETS = (
    ("13B on 260B tokens", {"n_params": 1.3e10, "tokens": 2.6e11}),
    ("100B, tokens per parameter", {"n_params": 1e11, "tokens": 0.0}),
)


@pytest.fixture(scope="module")
def system():
    return wiring.system(["A100", "H100", "B300"], achieved={"H100": (4.0e14, 5.0e13, 9.4e14)})


@pytest.fixture(scope="module")
def fragment(system):
    return wiring.demo_html(system, presets=PRESETS)


def test_the_fragment_names_every_input_and_result_and_loads_nothing(system, fragment):
    markup = fragment.split("<script>")[0]
    assert re.findall(r'data-param="([a-z0-9_]+)"', markup) == [i.name for i in system.inputs]
    assert re.findall(r'data-result="([a-z0-9_]+)"', markup) == list(system.results)
    assert not re.search(r"<script[^>]*\bsrc=|<link|https?://|@import", fragment)
    assert fragment.count("<script>") == 1 and "</script>" not in fragment.split("<script>")[1][:-15]
    # defaults are the scenario's central values, shown in the inputs' display units
    assert 'data-param="utilisation" value="0.7" min="0.05" max="1"' in fragment
    assert 'data-param="achieved_flop_per_s_h100" value="400" min="50" max="940"' in fragment
    assert '<option value="1" selected>owned</option>' in fragment
    assert "a number from 5,000 to 200,000 USD per GPU" in fragment  # the range beside the server price
    assert len(fragment.encode()) < 60_000


def test_presets_may_only_set_inputs_the_system_has(system):
    with pytest.raises(KeyError, match="preset 'x' sets unknown inputs \\['nope'\\]"):
        wiring.demo_html(system, presets=(("x", {"nope": 1.0}),))


# --------------------------------------------------------------------------------------------
# In Chromium
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def page(fragment, tmp_path_factory, browser, calculators):
    """The fragment in a page of the session's one Chromium (tests/site/conftest.py: a second
    Playwright in the same worker would fail inside the first one's event loop)."""
    context, p = calculators.open_page(
        browser, tmp_path_factory.mktemp("calc"), fragment, '.audit-calculator[data-state="ok"]'
    )
    yield p
    context.close()


def _shown_number(text: str) -> float:
    """A result as the page prints it (``1,234``, ``1.2×10²⁴``, ``never``) back to a number."""
    if text in ("never", "∞"):
        return math.inf
    if "×10" in text:
        mantissa, exponent = text.split("×10")
        return float(mantissa) * 10.0 ** int(exponent.translate(SUPERSCRIPT))
    return float(text.replace(",", ""))


def _check_page_against_python(system, page, calculators) -> float:
    """Every result's value equals Python's to 1e-12 and its text to 4 significant figures; returns
    the largest relative difference of the values."""
    expected = calculators.python(system, calculators.fields(page))
    worst = 0.0
    for name, (value, text) in calculators.results(page).items():
        py = expected[name]
        got = float(value)
        if got != py:
            worst = max(worst, abs(got - py) / max(abs(got), abs(py)))
        shown, want = _shown_number(text), py / system.formula[name].scale  # the text is in the display unit
        assert shown == want or abs(shown - want) <= 5e-4 * abs(want), (name, text, py)
    assert worst <= 1e-12, worst
    return worst


def test_defaults_give_the_python_results(system, page, calculators):
    _check_page_against_python(system, page, calculators)
    # closed forms at the defaults (the scenario's central values): buying B300 pays back in finite time,
    # the A100's achieved FLOP/s is its dense peak x the scenario's MFU, the compute is 6 N D
    from analyses import scenario

    payback = _shown_number(page.text_content('[data-result="payback_b300_vs_rent_a100"]'))
    assert 0 < payback < math.inf
    achieved = system.constants["PEAK_FLOPS_A100"] * scenario.values()["mfu_a100_bf16"] / 1e12
    shown = _shown_number(page.text_content('[data-result="achieved_flop_per_s_a100"]'))
    assert shown == pytest.approx(achieved, rel=5e-4)
    assert page.text_content('[data-result="achieved_flop_per_s_a100"] + [data-unit]') == "TFLOP/s"
    fields = {k: float(v) * system.input[k].scale for k, v in calculators.fields(page).items()}
    n, tokens = fields["n_params"], fields["tokens"] or fields["tokens_per_param"] * fields["n_params"]
    flop = _shown_number(page.text_content('[data-result="training_flop"]'))
    assert flop == pytest.approx(6 * n * tokens, rel=0.05)  # printed to two figures
    assert page.errors == []


def test_fifty_random_input_combinations_match_python_to_4_significant_figures(system, page, calculators):
    rng = np.random.default_rng(2025)
    worst = 0.0
    for _ in range(50):
        fields = {}
        for i in system.inputs:
            if i.choices:
                fields[i.name] = format(rng.choice([c for _, c in i.choices]), "g")
                continue
            lo, hi = i.min / i.scale, i.max / i.scale
            v = math.exp(rng.uniform(math.log(lo), math.log(hi))) if lo > 0 and hi / lo > 20 else rng.uniform(lo, hi)
            fields[i.name] = str(int(round(v))) if i.integer else repr(float(v))
        calculators.set_fields(page, fields)
        assert page.get_attribute(".audit-calculator", "data-state") == "ok"
        worst = max(worst, _check_page_against_python(system, page, calculators))
    print(f"\nbrowser: max relative difference JavaScript vs Python over 50 combinations: {worst:.2e}")
    assert page.errors == []


def test_each_input_alone_changes_a_result_in_the_page(system, page, calculators):
    defaults = {
        i.name: (format(i.default, "g") if i.choices else format(i.default / i.scale, ".15g")) for i in system.inputs
    }
    calculators.set_fields(page, defaults)
    base = calculators.results(page)
    for i in system.inputs:
        if i.choices:
            moved = format(next(c for _, c in i.choices if c != i.default), "g")
        elif i.default == 0:
            moved = "1e12" if i.name == "tokens" else format((i.min + (i.max - i.min) * 0.01) / i.scale, "g")
        else:
            v = i.default * (1.1 if i.default * 1.1 <= i.max else 0.9) / i.scale
            moved = str(round(v)) if i.integer else repr(v)
        calculators.set_fields(page, defaults | {i.name: moved})
        now = calculators.results(page)
        assert [k for k in base if now[k][0] != base[k][0]], i.name
    calculators.set_fields(page, defaults)


@pytest.mark.parametrize(
    ("name", "text", "says"),
    [
        (
            "utilisation",
            "1.5",
            "GPU utilisation (a job's busy share) (utilisation) must be a number from 0.05 to 1; got 1.5",
        ),
        (
            "utilisation",
            "",
            "GPU utilisation (a job's busy share) (utilisation) must be a number from 0.05 to 1; got not a number",
        ),
        ("n_gpus_b300", "12.5", "B300 GPUs (n_gpus_b300) must be a whole number from 1 to 131,072 GPUs; got 12.5"),
        ("pue", "0.9", "PUE (pue) must be a number from 1 to 3; got 0.9"),
        (
            "achieved_flop_per_s_h100",
            "2000",
            "achieved FLOP/s per GPU (H100) (achieved_flop_per_s_h100) must be a number from 50 to 940 TFLOP/s; got 2000",
        ),
    ],
)
def test_an_out_of_range_input_shows_its_range_never_nan_or_a_blank(system, page, name, text, says, calculators):
    good = page.input_value(f'[data-param="{name}"]')
    calculators.set_fields(page, {name: text})
    assert page.get_attribute(".audit-calculator", "data-state") == "error"
    assert page.is_visible("[data-calc-error]") and page.text_content("[data-calc-error]") == says
    assert page.get_attribute(f'[data-param="{name}"]', "aria-invalid") == "true"
    cells = [text for _, text in calculators.results(page).values()]
    assert set(cells) == {"—"}
    assert "NaN" not in page.inner_text("body")
    calculators.set_fields(page, {name: good})
    assert page.get_attribute(".audit-calculator", "data-state") == "ok"
    assert not page.is_visible("[data-calc-error]")
    assert page.get_attribute(f'[data-param="{name}"]', "aria-invalid") is None


def test_presets_and_currency(system, page, calculators):
    page.select_option("[data-preset]", label="13B on 260B tokens")
    assert (page.input_value('[data-param="n_params"]'), page.input_value('[data-param="tokens"]')) == (
        "13000000000",
        "260000000000",
    )
    _check_page_against_python(system, page, calculators)
    usd = float(page.get_attribute('[data-result="cost_b300"]', "data-value"))
    page.select_option('[data-param="currency"]', label="CNY")
    cny = float(page.get_attribute('[data-result="cost_b300"]', "data-value"))
    rate = float(page.input_value('[data-param="usd_cny"]'))
    assert cny == pytest.approx(usd * rate, rel=1e-15)
    unit = page.text_content('[data-result="cost_b300"] + [data-unit]')
    assert unit == "CNY" and page.text_content('[data-result="hourly_owned_b300"] + [data-unit]') == "CNY per GPU-hour"
    page.select_option('[data-param="currency"]', label="USD")
    assert page.text_content('[data-result="cost_b300"] + [data-unit]') == "USD"


def test_usable_on_a_phone(page):
    page.set_viewport_size({"width": 375, "height": 800})
    width, client = page.evaluate("[document.documentElement.scrollWidth, document.documentElement.clientWidth]")
    page.set_viewport_size({"width": 1280, "height": 900})
    assert width <= client
