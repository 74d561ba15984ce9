"""The Chinese edition's calculator (issue 25 item 4, issue 24 item 1): the buy-or-rent page's very
fragment with Chinese labels from data/calculator_zh.csv, never its formulas retyped. In Chromium, at
seeded random inputs its results are the Python model's to 4 significant figures; a bad input shows
its allowed range in Chinese; money shows in 万/亿; on a 390 px phone nothing scrolls sideways."""

from __future__ import annotations

import html
import re

import numpy as np
import pytest

from analyses import data
from analyses.chapters import buy_or_rent as ch
from analyses.chapters import config
from analyses.pages import calculator as pc
from analyses.scenario import buying
from analyses.units import zh as zh_units

SEED = 2412
CASES = 12
CJK = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture(scope="module")
def res():
    return ch.compute(config("buy-or-rent"))


@pytest.fixture(scope="module")
def system(res):
    return pc.buy_or_rent_system(res)[0]


@pytest.fixture(scope="module")
def words():
    return pc.Words.zh()


@pytest.fixture(scope="module")
def fragment(res, words):
    return pc.buy_or_rent(res, words).data


def test_the_chinese_words_cover_every_english_one_and_every_input(system, words):
    table = data.calculator_zh()
    assert set(pc.WORDS_EN) <= set(table)
    gens = buying.gpus()
    for i in system.inputs:
        label = words.label(i, gens)
        assert CJK.search(label) or label == "PUE" or label.startswith("PUE"), (i.name, label)
        assert CJK.search(words.allowed(i)), (i.name, words.allowed(i))
    for w in buying.WORKLOADS:
        assert CJK.search(table[f"workload:{w[0]}"])
    with pytest.raises(KeyError, match="lack"):
        pc.Words("zh", {"preset": "x"}, ())


HINTS = re.compile(r'<small class="calc-range" id="[^"]+">([^<]*)</small>|<span data-unit-of="[^"]+">([^<]*)</span>')
RANGE = re.compile(r"^([\d.]+)(万|亿)?至([\d.]+)(万|亿)?(.*)之间的(?:整)?数$")


def _bounds(hint: str) -> tuple[float, float, str]:
    """An allowed range as the Chinese form writes it ("28.4万至1136万元/台（8卡）之间的数"): its ends and unit."""
    lo, lo_scale, hi, hi_scale, unit = RANGE.match(hint).groups()
    times = {None: 1.0, "万": 1e4, "亿": 1e8}
    return float(lo) * times[lo_scale], float(hi) * times[hi_scale], unit


def test_every_hint_and_unit_is_in_yuan_without_thousands_separators(system, fragment):
    """Issue 36 item 4: as the page opens (before its script runs, and what search indexes), every unit and
    allowed range of the Chinese form is in 元 per server, per GPU-hour, per kWh, with 万 for large sums
    and no thousands separator; a price's range is the model's USD range converted at the page's rate."""
    visible = re.sub(r"<(script|style)\b.*?</\1>", " ", fragment, flags=re.S)
    assert zh_units.style_faults(html.unescape(re.sub(r"<[^>]+>", "\n", visible))) == []  # notes/zh-style.md
    hints = [a or b for a, b in HINTS.findall(fragment)]
    assert len(hints) >= 40
    assert not [h for h in hints if "USD" in h or "per" in h or re.search(r"\d,\d{3}", h)], hints
    range_of = dict(re.findall(r'<small class="calc-range" id="bc-([^"]+)-range">([^<]*)</small>', fragment))
    rate = system.input["usd_cny"].default
    per_server = int(data.table("cluster_configs").query("gpu == 'B300'")["gpus_per_node"].max())
    for name, factor, unit in (
        ("server_b300_usd_per_gpu", rate * per_server, f"元/台（{per_server}卡）"),
        ("rent_b300_usd_per_gpu_hour", rate, "元/卡时"),
        ("electricity_usd_per_kwh", rate, "元/千瓦时"),
        ("n_gpus_b300", 1.0, "张"),
    ):
        lo, hi, shown = _bounds(range_of[name])
        i = system.input[name]
        assert (shown, lo, hi) == (
            unit,
            pytest.approx(i.min * factor, rel=5e-4),
            pytest.approx(i.max * factor, rel=5e-4),
        )


def test_only_the_labels_change_never_the_formulas(system, words):
    zh = pc.localised(system, words, buying.gpus())
    assert zh.formulas == system.formulas and zh.constants == system.constants and zh.grids == system.grids
    assert [(i.name, i.min, i.max, i.default, i.scale, [c for _, c in i.choices]) for i in zh.inputs] == [
        (i.name, i.min, i.max, i.default, i.scale, [c for _, c in i.choices]) for i in system.inputs
    ]
    # the generated arithmetic is the English page's, byte for byte, once the labels are taken out
    strip = re.compile(r"const META = .*?;\n", re.S)
    assert strip.sub("", zh.to_js(comments=False)) == strip.sub("", system.to_js(comments=False))


@pytest.fixture(scope="module")
def page(browser, tmp_path_factory, fragment, calculators):
    ready = f'#{pc.ELEMENT_ID}[data-state="ok"]'
    context, p = calculators.open_page(
        browser, tmp_path_factory.mktemp("zh-calc"), fragment, ready, width=390, lang="zh-CN", title="计算器"
    )
    yield p
    context.close()


def test_random_inputs_give_the_python_model_to_4_significant_figures(system, page, calculators):
    rng = np.random.default_rng(SEED)
    for _ in range(CASES):
        calculators.set_inputs(page, calculators.draw(system, rng))  # written in 元 per server, 万 for large sums
        assert page.get_attribute(f"#{pc.ELEMENT_ID}", "data-state") == "ok", page.inner_text("[data-calc-error]")
        expected, got = calculators.python(system, page), calculators.values(page)
        bad = {k: (got[k], expected[k]) for k in got if not calculators.same(got[k], expected[k])}
        assert not bad, bad
        text = page.inner_text(f"#{pc.ELEMENT_ID}")
        assert "NaN" not in text and "undefined" not in text
    assert not page.errors


def test_money_in_wan_and_yi_and_the_verdict_in_chinese(system, page, calculators):
    calculators.set_inputs(page, {i.name: i.default for i in system.inputs if not i.choices})
    assert page.input_value('[data-param="currency"]') == "1"  # 元 by default
    cost = page.inner_text('[data-result="cost_owned_b300"]')
    value = float(page.get_attribute('[data-result="cost_owned_b300"]', "data-value"))
    assert value >= 1e4 and cost.endswith(("万", "亿")), cost
    size = 1e8 if cost.endswith("亿") else 1e4
    assert float(cost[:-1].replace(",", "")) == pytest.approx(value / size, rel=5e-4)
    assert page.inner_text('[data-result="cost_owned_b300"] + .calc-unit') == "元"
    verdict = page.inner_text('[data-result="claim_payback_verdict"]')
    assert verdict in data.terms_zh("verdict").values()


def test_a_bad_input_shows_its_allowed_range_in_chinese(system, words, page, calculators):
    defaults = {i.name: i.default for i in system.inputs if not i.choices}
    for name, bad in (("owned_busy_share", "200"), ("n_gpus_b300", "12.5"), ("pue", "")):
        calculators.set_inputs(page, defaults)
        calculators.set_fields(page, {name: bad})
        assert page.get_attribute(f"#{pc.ELEMENT_ID}", "data-state") == "error"
        message = page.inner_text(f"#{pc.FIELD_ID}-{name}-error")  # under the field itself
        i = system.input[name]
        assert words.allowed(i) in message and words.label(i, buying.gpus()) in message, message
        assert name not in message  # the reader's words, never the internal name
        assert set(page.eval_on_selector_all("[data-result]", "els => els.map(e => e.textContent)")) == {"—"}
    calculators.set_inputs(page, defaults)
    assert page.get_attribute(f"#{pc.ELEMENT_ID}", "data-state") == "ok"


def test_a_preset_sets_the_documents_workload_by_its_chinese_name(res, system, page, calculators):
    name = data.calculator_zh()[f"workload:{res.workloads[1].key}"]
    page.select_option("[data-preset]", label=name)
    assert calculators.inputs(page)["n_params"] == pytest.approx(res.workloads[1].shape.n_params)
    got, expected = calculators.values(page), calculators.python(system, page)
    assert all(calculators.same(got[k], expected[k]) for k in got)


def test_on_a_phone_nothing_scrolls_sideways(page):
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    right = page.eval_on_selector_all(
        "[data-result]", "els => Math.max(...els.filter(e => e.offsetParent).map(e => e.getBoundingClientRect().right))"
    )
    assert right <= 390
