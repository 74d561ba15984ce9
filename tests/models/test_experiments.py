"""Tests of analyses.models.experiments: serial vs concurrent closed forms and successive halving."""

import numpy as np
import pytest

from analyses import units
from analyses.models import experiments as ex


def test_concurrency_on_a_fixed_cluster_gains_only_the_efficiency_ratio():
    # 12 runs of 3 days; 6 at a time on 1/6 slices: two waves of 3*6 days, times e_full/e_slice.
    assert float(ex.concurrent_days(12, 3.0, 6, 1.0, 1.0, 1.0)) == pytest.approx(36.0)
    assert float(ex.concurrent_days(12, 3.0, 6, 0.8, 0.95, 1.0)) == pytest.approx(36.0 * 0.8 / 0.95)
    assert ex.required_speedup(12, 36.0, 6, 9.0, 1.0, 1.0) == pytest.approx(4.0)
    # a cluster x times faster per GPU divides the sweep by x; a last partial wave leaves slices idle
    assert float(ex.concurrent_days(12, 3.0, 6, 0.8, 0.95, 10.0)) == pytest.approx(36.0 * 0.8 / 0.95 / 10)
    assert float(ex.sweep_speedup(12, 6, 0.8, 0.95, 10.0)) == pytest.approx(10 * 0.95 / 0.8)
    assert float(ex.sweep_speedup(10, 6, 1.0, 1.0, 1.0)) == pytest.approx(10 / 12)
    speedups = ex.sweep_speedup(12, 6, 0.9, 0.99, np.array([1.0, 4.0, 10.2]))
    assert speedups == pytest.approx(np.array([1.0, 4.0, 10.2]) * 0.99 / 0.9)


def test_runs_per_month():
    assert float(ex.runs_per_month(units.DAYS_PER_MONTH)) == pytest.approx(1.0)
    assert float(ex.runs_per_month(11.0)) == pytest.approx(2.767, abs=1e-3)


def test_successive_halving_cost():
    # Li et al. 2018 (Hyperband) bracket: n = eta^R configs, R + 1 rungs each costing n*eta^-R runs.
    # 16 configs, eta 2: 5 rungs x 1 run = 5 full runs = 5/16 of training all fully.
    assert ex.successive_halving_cost(16, 2) == pytest.approx(5 / 16)
    assert ex.successive_halving_cost(27, 3) == pytest.approx(4 / 27)


# --------------------------------------------------------------------------------------------
# Successive halving
# --------------------------------------------------------------------------------------------

# Li et al. 2018, "Hyperband: A Novel Bandit-Based Approach to Hyperparameter Optimization",
# JMLR 18(185), Table 1: n_i and r_i of every bracket s for R = 81, eta = 3 (published values,
# exact integers).
HYPERBAND_TABLE_1 = {
    4: [(81, 1), (27, 3), (9, 9), (3, 27), (1, 81)],
    3: [(34, 3), (11, 9), (3, 27), (1, 81)],
    2: [(15, 9), (5, 27), (1, 81)],
    1: [(8, 27), (2, 81)],
    0: [(5, 81)],
}


def test_hyperband_table_1_reproduced_exactly():
    rows = ex.hyperband_brackets(81, 3)
    got: dict[int, list[tuple[int, float]]] = {}
    for r in rows:
        got.setdefault(r["s"], []).append((r["n_i"], r["r_i"]))
    assert set(got) == set(HYPERBAND_TABLE_1)
    for s, published in HYPERBAND_TABLE_1.items():
        assert [n for n, _ in got[s]] == [n for n, _ in published], s
        assert [r for _, r in got[s]] == pytest.approx([r for _, r in published], rel=1e-12), s


def test_hyperband_bracket_budgets_stay_within_b():
    # Li et al. 2018, Sec 3: each bracket uses about B = (s_max + 1) R resources, never more.
    # From Table 1, bracket s = 4 spends 81·1 + 27·3 + 9·9 + 3·27 + 1·81 = 405 = 5·81 exactly.
    for s, published in HYPERBAND_TABLE_1.items():
        n = published[0][0]
        spent = float(ex.successive_halving_full_runs(n, 3, 3.0**-s)) * 81
        assert spent == pytest.approx(sum(n_i * r_i for n_i, r_i in published), rel=1e-12)
        assert spent <= 5 * 81 + 1e-9
    assert float(ex.successive_halving_full_runs(81, 3, 1 / 81)) * 81 == pytest.approx(405)


@pytest.mark.parametrize("resume", [False, True])
@pytest.mark.parametrize(
    ("configs", "eta", "min_budget"),
    [
        (12, 3, 0.1),
        (12, 2, 0.1),
        (16, 2, None),
        (27, 3, None),
        (100, 3, 0.01),
        (7, 4, 0.05),
        (2, 3, 1 / 9),
        (5, 2, 1.0),
    ],
)
def test_closed_form_equals_rung_by_rung_simulation(configs, eta, min_budget, resume):
    # The vectorised closed form must equal a direct simulation that trains, ranks and promotes
    # configurations one rung at a time, exactly (same floors), for power and non-power counts.
    rng = np.random.default_rng(configs * 10 + eta)
    scores = rng.standard_normal((12, configs))
    trace = ex.successive_halving_trace(scores, eta, min_budget, resume)
    rungs = ex.successive_halving_rungs(configs, eta, min_budget)
    assert [len(r) for r in trace["rungs"]] == list(rungs["configs"][rungs["active"]].astype(int))
    assert trace["full_runs"] == pytest.approx(float(ex.successive_halving_full_runs(configs, eta, min_budget, resume)))


def test_closed_form_vectorises_and_power_of_eta_limit():
    n = np.array([9, 27, 81, 243])
    # configs = eta^s with first budget eta^-s: (s + 1) rungs of configs·eta^-s full runs each.
    assert ex.successive_halving_cost(n, 3) == pytest.approx((np.log(n) / np.log(3) + 1) / n)
    # resuming, rung i adds n·eta^-i configurations × (eta^(i-s) − eta^(i-1-s)) budget
    s = 4
    resume = sum(3**s / 3**i * (3.0 ** (i - s) - (3.0 ** (i - 1 - s) if i else 0)) for i in range(s + 1))
    assert float(ex.successive_halving_full_runs(81, 3, 1 / 81, resume=True)) == pytest.approx(resume)
    with pytest.raises(ValueError):
        ex.successive_halving_rungs(12, 2.5, 0.1)
    with pytest.raises(ValueError):
        ex.successive_halving_rungs(12, 3, 0.0)


def test_without_early_stopping_wall_clock_is_the_concurrent_sweep():
    # min_budget = 1: one rung, every configuration trained fully = concurrent_days.
    wall = ex.successive_halving_wall_days(12, 3, 1.0, 3.0, 6, 0.8, 0.95, 1.0)
    assert wall == pytest.approx(float(ex.concurrent_days(12, 3.0, 6, 0.8, 0.95, 1.0)))


def test_wall_clock_conserves_work_when_waves_are_full():
    # 12 configs, eta 2, first rung 1/4, 3 slices, perfect efficiency, fixed slices: rungs of
    # 12, 6 and 3 jobs fill 4, 2 and 1 whole waves, so wall time = compute / cluster = 6 runs × 3 d.
    wall = ex.successive_halving_wall_days(12, 2, 0.25, 3.0, 3, 1.0, 1.0, 1.0, regroup=False)
    assert float(ex.successive_halving_full_runs(12, 2, 0.25, resume=True)) == pytest.approx(6.0)
    assert wall == pytest.approx(6.0 * 3.0)


def test_required_efficiency_ratio():
    # 36 -> 9 days with 12 runs, 6 at a time: e_slice/e_full = ceil(12/6)·6·3/9 = 4.
    assert ex.required_efficiency_ratio(12, 36.0, 6, 9.0, 1.0) == pytest.approx(4.0)
    assert ex.required_efficiency_ratio(12, 36.0, 6, 9.0, speedup=4.0) == pytest.approx(1.0)


def test_rank_correlation_closed_form_matches_sampling():
    # Spearman of a bivariate normal with Pearson rho is (6/pi) arcsin(rho/2) (Pearson 1907).
    from scipy.stats import spearmanr

    rng = np.random.default_rng(3)
    x = rng.standard_normal(200_000)
    for noise in (0.3, 1.0, 2.0):
        rs = spearmanr(x, x + noise * rng.standard_normal(x.size)).statistic
        assert rs == pytest.approx(float(ex.rank_correlation_for_noise(noise)), abs=5e-3)
    assert float(ex.noise_for_rank_correlation(ex.rank_correlation_for_noise(0.8))) == pytest.approx(0.8)


def test_monte_carlo_zero_noise_always_keeps_the_best():
    for eta, r0 in [(2, 0.1), (3, 0.1), (4, 1 / 16)]:
        out = ex.successive_halving_selection(12, eta, r0, noise=0.0, trials=2000, seed=1)
        assert out["p_best_kept"] == 1.0
        assert out["mean_regret"] == 0.0


@pytest.mark.parametrize("noise", [0.25, 1.0, 3.0])
def test_monte_carlo_matches_sheppard_for_two_configurations(noise):
    # Two configurations, one halving (eta 2, first rung 1/2): the best survives when the sign of
    # the measured difference matches the true one; for jointly normal differences with correlation
    # rho = 1/sqrt(1 + noise²) Sheppard's formula gives 1/2 + arcsin(rho)/pi. 4 standard errors.
    out = ex.successive_halving_selection(2, 2, 0.5, noise=noise, trials=200_000, seed=2)
    exact = 0.5 + np.arcsin(1 / np.sqrt(1 + noise**2)) / np.pi
    assert abs(out["p_best_kept"] - exact) < 4 * out["p_best_kept_se"]


def test_monte_carlo_pure_noise_keeps_the_best_at_the_survivor_share():
    # With overwhelming noise the first cut is random: 12 -> 4 survivors (eta 3, first rung 1/3),
    # then the full-budget rung picks exactly, so P(best kept) = 4/12.
    out = ex.successive_halving_selection(12, 3, 1 / 3, noise=1e9, trials=100_000, seed=4)
    assert abs(out["p_best_kept"] - 4 / 12) < 4 * out["p_best_kept_se"]


def test_gpu_days_of_the_documents_sweep_by_hand():
    # 12 configurations, eta 3, first rung 10%, resuming: rungs of 12 at 0.1, 4 at 0.3 and 1 at a
    # full run add 12·0.1 + 4·0.2 + 1·0.7 = 2.7 full runs; at 3 days on 48 GPUs, 388.8 GPU-days.
    assert float(ex.successive_halving_full_runs(12, 3, 0.1, resume=True)) == pytest.approx(2.7)
    assert float(ex.successive_halving_gpu_days(12, 3, 0.1, 3.0, 48)) == pytest.approx(2.7 * 3 * 48)
    # from scratch: 12·0.1 + 4·0.3 + 1·1 = 3.4 full runs
    assert float(ex.successive_halving_full_runs(12, 3, 0.1, resume=False)) == pytest.approx(3.4)


def test_slices_gain_efficiency_with_the_one_step_time_model():
    # One run of the Megatron-Bridge Llama 3 8B FP8 recipe on B300, timed by the book's one step-time model
    # at its calibration: its efficiency (compute / step) falls as it spreads over more GPUs with the same
    # batch (strong scaling), is 1 on a single GPU (no communication), and the ratio of two efficiencies
    # is the ratio of their per-GPU throughputs (compute × GPUs is the same on every slice).
    from analyses.chapters.experiments import checks
    from analyses.models import performance
    from analyses.scenario import validation

    setup = checks.sweep_setup()
    eff = ex.run_efficiency(setup.coef, [1, 8, 16, 48, 96], **setup.run)
    assert eff[0] == pytest.approx(1.0)
    assert np.all(np.diff(eff) < 0)
    rate = [float(performance.step_time(setup.coef, n_gpus=n, **setup.run).tokens_per_s_per_gpu) for n in (8, 48)]
    assert setup.e_full / setup.e_slice == pytest.approx(rate[1] / rate[0], rel=1e-9)
    assert setup.gpus == 48 and setup.gpus_per_node == 8
    # the model's MFU of the recipe on one B300 server, against the same recipe published on 8 GB300 (the
    # same die; Megatron-Bridge 25.11: 37,556 tokens/s per GPU, 46% MFU on the book's FLOP definition):
    # within the model's typical step-time error (out of sample on that row it is 13% low)
    published = validation.step_time().set_index("id").loc["mb2511-llama3-8b-gb300-fp8-cs-8", "published_mfu"]
    assert setup.mfu_slice == pytest.approx(published, rel=0.2)
