"""Growth fits and compute arithmetic against closed forms and published figures."""

from __future__ import annotations

import numpy as np
import pytest

from analyses import data, units
from analyses.models import flops, growth


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
    assert flops.training_flops(gpt3["params"], gpt3["training_tokens"]) == pytest.approx(3.14e23, rel=0.01)


def test_frontier_mask():
    mask = growth.running_max_frontier([2019, 2018, 2020, 2021], [5, 1, 3, 9])
    assert mask.tolist() == [True, True, False, True]


def test_years_of_compute():
    assert growth.years_of_compute(units.SECONDS_PER_YEAR * 2e12, 1e12, 0.5) == pytest.approx(4.0)


def test_decimal_year_mid_month_and_mid_year():
    import pandas as pd

    assert growth.decimal_year(pd.Series(["2020-05", "2020"])) == pytest.approx([2020 + 4.5 / 12, 2020 + 6.5 / 12])


def test_inverses_of_the_compute_arithmetic():
    # 6·N·(r·N) = C  <=>  N = sqrt(C / (6 r)), and the years <-> tokens-per-parameter round trip
    assert growth.params_for_compute(6 * 1e11 * 2e12, 20) == pytest.approx(1e11)
    years = growth.years_of_compute(flops.training_flops(1e11, 20 * 1e11), 1e13, 0.5)
    assert growth.tokens_per_param_for_years(years, 1e11, 1e13, 0.5) == pytest.approx(20)


def test_newer_generations():
    gpus = data.gpus()
    assert growth.newer_generations(gpus, "V100", 2018) == 0
    assert growth.newer_generations(gpus, "A100", 2023) == 1  # H100 (2022); H200 and H800 are variants of it
    assert growth.newer_generations(gpus, "H200", 2025) == 2  # B200 (2024), B300 (2025); GB200/GB300 are variants
    assert growth.newer_generations(gpus, "B300", 2024) == -1  # not launched yet
    assert growth.newer_generations(gpus, "TPUv3", 2020) == -1


def test_generations_count_each_compute_die_once():
    names = set(growth.generations(data.gpus())["name"])
    assert {"A100", "H100", "B200", "B300"} <= names
    assert not names & {"H200", "H800", "GB200", "GB300"}  # variants of H100, B200, B300


def test_gpu_bases():
    gpus = data.gpus()
    tensor = growth.gpu_points(gpus, "tensor16", 2020, 2020)
    assert tensor["flop_per_s"].tolist() == [312e12]  # A100 dense BF16
    lowest = growth.gpu_points(gpus, "lowest", 2025, 2025).set_index("name")["flop_per_s"]
    assert lowest["B300"] == data.gpu("B300").peak_flops("fp4") == 13.5e15  # dense FP4, the datasheet headline
    with pytest.raises(ValueError, match="basis"):
        growth.gpu_points(gpus, "int4", 2020, 2025)


def test_fitted_compute_growth_overlaps_epochs_published_rate():
    # Epoch AI (2024): training compute of notable models grows 4-5x a year; our own fit of the
    # book's model table over 2017-2025 must overlap that range (independent data and window).
    models = growth.model_points(data.models(), 2017, 2025)
    c = models[models["compute_flop"].notna()]
    _, low, high = growth.fit_exponential(c["t"], c["compute_flop"], 0.9).factor(12)
    epoch = data.growth_trends()
    summary = epoch[(epoch["source"] == "epoch-frontier-compute-2024") & epoch["rate_low_x_per_year"].notna()].iloc[0]
    assert low <= summary["rate_high_x_per_year"] and high >= summary["rate_low_x_per_year"]


def test_running_max_frontier_of_nothing():
    assert growth.running_max_frontier([], []).tolist() == []
