"""The one formatter set (analyses.units.formats): what the rules, checks, text and tables print."""

from __future__ import annotations

import numpy as np
import pytest

from analyses.units import SECONDS_PER_DAY, SECONDS_PER_HOUR, formats


@pytest.mark.parametrize(
    ("args", "kwargs", "shown"),
    [
        ((126_431.0,), {}, "126,000"),
        ((0.352,), {"pct": True}, "35.2%"),
        ((1.18,), {"pct": True, "sig": 2}, "118%"),  # a percentage keeps its units digit
        ((3.1e23, "FLOP"), {}, "3.10×10²³ FLOP"),
        ((45_076,), {}, "45,076"),  # an int below 1e7 is a count: every digit
        ((2.54, "x"), {"sig": 2}, "2.5×"),
        ((float("inf"), "months"), {}, "∞ months"),
        ((float("nan"),), {}, "n/a"),
    ],
)
def test_fmt(args, kwargs, shown):
    assert formats.fmt(*args, **kwargs) == shown


def test_a_last_bit_never_changes_what_is_printed():
    # 2.5 x 7.1 x 1.3 = 23.075 lands a few ulps either side of it; settled first, it prints one way
    assert formats.fmt(2.5 * 7.1 * 1.3, sig=4) == formats.fmt(23.075, sig=4) == "23.07"


def test_stated_figures_print_as_a_document_writes_them():
    assert formats.stated(64.0) == "64" and formats.stated(2.5) == "2.5" and formats.stated(0.35) == "0.35"
    assert formats.in_words(6) == "six" and formats.in_words(12) == "12"


def test_prose_helpers_round_and_name_their_units():
    assert formats.percent(np.float64(0.4567)) == "46%" and formats.percent(np.array(0.4567), sig=3) == "45.7%"
    assert formats.times(np.array(10.24)) == "10×" and formats.times(2.54, sig=3) == "2.54×"
    assert formats.amount(126_431.0, "RMB") == "126,000 RMB"
    assert formats.amount(12_345_678.0, "RMB") == "12.3 million RMB"
    assert formats.millions_of(480_000.0, "USD") == "0.480 million USD"
    assert formats.stated_amount(3e6) == "3 million RMB" and formats.stated_amount(42_000.0) == "42,000 RMB"
    assert formats.months(5.71) == "5.7 months" and formats.months(formats.NEVER_MONTHS) == "never"
    assert formats.duration(3 * SECONDS_PER_DAY) == "3.0 days" and formats.duration(5 * SECONDS_PER_HOUR) == "5.0 h"
    assert formats.millions(4e6) == "4.0M" and formats.billions(13e9) == "13B"
    assert formats.billions(1.234e11, sig=2) == "120B"
    assert formats.round_sig(408_250.0) == 408_000.0 and formats.round_sig(0.0) == 0.0


def test_table_cells_never_print_e_notation():
    assert formats.readable(1.3e10) == "1.3×10¹⁰" and formats.readable(0.78) == "0.78"
    assert formats.readable(6250.0) == "6,250" and formats.count(2_147_483_647) == "2,147,483,647"
    assert formats.money(6250.4) == "6,250" and formats.money(2.494) == "2.49"
    assert formats.share(0.45) == "45%" and formats.share(0.452) == "45.2%"
    assert formats.ratio(1.3571) == "1.36" and formats.year(2025.0) == "2025"
    assert formats.readable_text("compute for 2.0e+12 tokens; 1e9 bytes") == "compute for 2.0×10¹² tokens; 10⁹ bytes"


def test_round_sig_array_is_round_sig_elementwise_and_passes_non_finite_through():
    x = np.array([408_250.0, -0.0012345, 0.0, 1.0e-310, np.inf, -np.inf, np.nan])
    out = formats.round_sig_array(x, 3)
    assert out[:4].tolist() == [formats.round_sig(v, 3) for v in x[:4]]  # 1e-310 rounds through text
    assert out[4] == np.inf and out[5] == -np.inf and np.isnan(out[6])
    assert formats.round_sig_array([1234.5678, 0.000987654], 4).tolist() == [1235.0, 0.0009877]


@pytest.mark.parametrize(
    "value, unit, shown",
    [
        (1.234e7, "RMB", "12.3 million RMB"),
        (126_431.0, "RMB", "126,000 RMB"),
        (3.4e9, "USD per GPU", "3.40 billion USD per GPU"),
        (2.494, "USD per GPU-hour", "2.49 USD per GPU-hour"),
        (5e25, "FLOP", "5.00×10²⁵ FLOP"),  # not money: powers of ten stay
    ],
)
def test_money_is_never_a_power_of_ten(value, unit, shown):
    assert formats.fmt(value, unit) == shown


def test_one_figure_prints_the_same_in_a_table_and_a_sentence():
    assert formats.money(7_583.2) == "7,580" and str(formats.fmt(7_583.2, "RMB")) == "7,580 RMB"
    assert formats.money(1.23e7) == "12.3 million"


def test_a_span_names_its_unit_once_unless_the_scales_differ():
    assert formats.span(1.1e6, 1.5e6, "RMB") == "1.1–1.5 million RMB"
    assert formats.span(9.8e5, 1.5e6, "RMB") == "980,000 RMB–1.5 million RMB"
    assert formats.span(14, 20.4, "days") == "14–20 days"
