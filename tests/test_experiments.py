"""Tests of analyses.experiments: serial vs concurrent closed forms and successive halving."""

import pytest

from analyses import experiments as ex


def test_concurrency_on_a_fixed_cluster_gains_only_the_efficiency_ratio():
    # 12 runs of 3 days; 6 at a time on 1/6 slices: two waves of 3*6 days, times e_full/e_slice.
    assert ex.concurrent_days(12, 3.0, 6, 1.0, 1.0) == pytest.approx(36.0)
    assert ex.concurrent_days(12, 3.0, 6, 0.8, 0.95) == pytest.approx(36.0 * 0.8 / 0.95)
    assert ex.required_speedup(12, 36.0, 6, 9.0, 1.0, 1.0) == pytest.approx(4.0)


def test_runs_per_month():
    assert float(ex.runs_per_month(ex.DAYS_PER_MONTH)) == pytest.approx(1.0)
    assert float(ex.runs_per_month(11.0)) == pytest.approx(2.767, abs=1e-3)


def test_successive_halving_cost():
    # Li et al. 2018 (Hyperband) bracket: n = eta^R configs, R + 1 rungs each costing n*eta^-R runs.
    # 16 configs, eta 2: 5 rungs x 1 run = 5 full runs = 5/16 of training all fully.
    assert ex.successive_halving_cost(16, 2) == pytest.approx(5 / 16)
    assert ex.successive_halving_cost(27, 3) == pytest.approx(4 / 27)
