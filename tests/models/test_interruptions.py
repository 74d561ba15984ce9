"""The interruption-rate model by operations mode: closed forms and hand-worked cases."""

import numpy as np
import pytest
from scipy.stats import t

from analyses.models import interruptions as intr
from analyses.models import reliability as rel


def test_fleet_rates_convert_to_per_gpu_year():
    # Meta RSC-1: 6.50 failures per 1,000 node-days of 8 GPUs = 0.0065 x 365.25 / 8 per GPU-year
    assert float(intr.per_gpu_year_from_node_days(6.50, 8)) == pytest.approx(0.0065 * 365.25 / 8, rel=1e-12)
    assert float(intr.per_gpu_year_from_node_days(6.50, 8)) == pytest.approx(0.2968, abs=1e-4)
    # 1,024-GPU jobs failing every 7.9 h: 8,766 h / (7.9 h x 1,024) per GPU-year
    assert float(intr.per_gpu_year_from_job_mttf(7.9, 1024)) == pytest.approx(8766 / (7.9 * 1024), rel=1e-12)


def test_fit_is_the_geometric_mean_per_mode_with_a_pooled_spread():
    # automated logs 0.1 and 0.4 (geometric mean 0.2), manual 1.0 and 1.0: pooled
    # sd = sqrt((ln2^2 + ln2^2 + 0 + 0) / (4 - 2)) = ln 2
    f = intr.fit([0.1, 0.4, 1.0, 1.0], ["automated", "automated", "manual", "manual"])
    assert f.rates == pytest.approx({"automated": 0.2, "manual": 1.0})
    assert f.counts == {"automated": 2, "manual": 2} and f.dof == 2
    assert f.log_sd == pytest.approx(np.log(2.0), rel=1e-12)
    # the band of a new automated log with 100 interruptions: t(0.95, 2) x sqrt(sd^2 x 1.5 + 1/100)
    lo, hi = f.band("automated", 100)
    half = t.ppf(0.95, 2) * np.sqrt(np.log(2.0) ** 2 * 1.5 + 0.01)
    assert float(hi) == pytest.approx(np.exp(half), rel=1e-12) and float(lo) == pytest.approx(np.exp(-half))
    assert float(f.band("automated")[1]) < float(hi)  # no counting noise for a new cluster's rate
    with pytest.raises(KeyError, match="automated, manual"):
        f.rate("hybrid")


def test_fit_refuses_a_missing_mode_or_no_spread():
    with pytest.raises(ValueError, match="manual"):
        intr.fit([0.1, 0.2], ["automated", "automated"])
    with pytest.raises(ValueError, match="more calibration logs"):
        intr.fit([0.1, 1.0], ["automated", "manual"])


def test_leave_one_out_drops_a_whole_group():
    rates, modes = [0.1, 0.4, 0.2, 1.0, 1.2], ["automated"] * 3 + ["manual"] * 2
    loo = intr.leave_one_out(rates, modes, groups=["a", "a", "b", "c", "d"])
    # without group a the automated rate is the one log left, 0.2
    assert loo[0].rates["automated"] == pytest.approx(0.2) and loo[0] is not loo[1]
    assert loo[1].rates == loo[0].rates
    # without b: geometric mean of 0.1 and 0.4
    assert loo[2].rates["automated"] == pytest.approx(0.2)
    # without c only one manual log remains and the fit still has a degree of freedom
    assert loo[3].rates["manual"] == pytest.approx(1.2)
    # one group per mode left: no spread to pool
    assert intr.leave_one_out([0.1, 0.2, 1.0], ["automated", "automated", "manual"])[2] is None


def test_share_of_all_names_the_kinds_it_knows():
    shares = {"hardware": 0.76}
    assert intr.share_of_all("all", shares) == 1.0 and intr.share_of_all("hardware", shares) == 0.76
    with pytest.raises(KeyError, match="hardware-manual-restarts"):
        intr.share_of_all("hardware-manual-restarts", shares)


def test_job_goodput_is_the_renewal_goodput_at_the_best_interval():
    gpus, rate, delta, restart = 512.0, 0.2, 60.0, 600.0
    m = 365.25 * 86400 / (gpus * rate)
    tau = float(rel.optimal_interval_s(delta, m))
    assert float(intr.job_goodput(gpus, rate, delta, restart)) == pytest.approx(
        float(rel.goodput(tau, delta, m, restart)), rel=1e-12
    )
    # first order: 1 - sqrt(2 delta / M) - R / M
    assert float(intr.job_goodput(gpus, rate, delta, restart)) == pytest.approx(
        1 - np.sqrt(2 * delta / m) - restart / m, abs=2e-3
    )
    # a larger job, a slower restart, a manual cluster's rate: less goodput
    g = intr.job_goodput(np.array([512.0, 16384.0]), rate, delta, restart)
    assert g[1] < g[0]
    assert float(intr.job_goodput(gpus, rate, delta, 7200.0)) < float(intr.job_goodput(gpus, rate, delta, restart))
    assert float(intr.job_goodput(gpus, rate, delta, restart, interval_s=60.0)) < float(
        intr.job_goodput(gpus, rate, delta, restart)
    )
