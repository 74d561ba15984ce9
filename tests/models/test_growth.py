"""Growth fits and compute arithmetic against closed forms and published figures."""

from __future__ import annotations

import numpy as np
import pytest

from analyses import data
from analyses.models import growth, units


def test_fit_recovers_an_exact_exponential():
    years = np.arange(2015, 2025, dtype=float)
    fit = growth.fit_exponential(years, 3.0 * 4.0 ** (years - 2015))
    assert fit.factor(12)[0] == pytest.approx(4.0)
    assert fit.factor(18)[0] == pytest.approx(8.0)  # 4**1.5
    assert fit.doubling_months == pytest.approx(6.0)


def test_interval_widens_with_noise_and_covers_truth():
    rng = np.random.default_rng(0)
    years = np.linspace(2015, 2025, 40)
    values = 2.0 ** (years - 2015) * 10 ** rng.normal(0, 0.2, years.size)
    fit = growth.fit_exponential(years, values, confidence=0.9)
    central, low, high = fit.factor(12)
    assert low < 2.0 < high and low < central < high


def test_ten_x_per_18_months_is_4_64_per_year():
    assert growth.factor_per_period(10, 18, 12) == pytest.approx(10 ** (2 / 3))


def test_six_n_d_reproduces_gpt3_table_d1():
    # Brown et al. 2020, Table D.1: GPT-3 175B (174.6B params, 300B tokens) = 3.14e23 FLOP.
    gpt3 = data.model("GPT-3 175B")
    assert growth.training_flop(gpt3["params"], gpt3["training_tokens"]) == pytest.approx(3.14e23, rel=0.01)


def test_frontier_mask():
    mask = growth.running_max_frontier([2019, 2018, 2020, 2021], [5, 1, 3, 9])
    assert mask.tolist() == [True, True, False, True]


def test_years_of_compute():
    assert growth.years_of_compute(units.SECONDS_PER_YEAR * 2e12, 1e12, 0.5) == pytest.approx(4.0)
