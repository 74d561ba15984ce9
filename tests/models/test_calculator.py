"""The in-page calculator's arithmetic (issue 25): the book's cost models restated once in the formula
language give the book's numbers, and the generated JavaScript gives the Python's."""

from __future__ import annotations

import numpy as np
import pytest

from analyses import data, scenario
from analyses.chapters import plan
from analyses.models import calculator, tco
from analyses.models.formula import InputError, LogGrid
from analyses.pages import calculator as pages_calculator
from analyses.scenario import costs, generations
from analyses.units import PETA, SECONDS_PER_DAY

GENERATIONS = ["A100", "H100", "B200", "B300"]
# Achieved FLOP/s per GPU of the generations outside the scenario's pair: inputs for now (the
# throughput model's grid later); the default and range only need to be plausible for the test.
ACHIEVED = {"H100": (4.0e14, 5.0e13, 9.4e14), "B200": (9.0e14, 1.1e14, 2.1e15)}
REL = 1e-9  # Python formulas vs the book's models


class _Wiring:
    """The calculator bounded by the planner's workload parameters (as a page passes them)."""

    @staticmethod
    def system(generations=None, **kwargs):
        bounds = {p.name: p for p in plan.SPEC.params if p.name in ("n_params", "tokens", "max_gpus")}
        return pages_calculator.system(generations, workload=bounds, **kwargs)


wiring = _Wiring()


def _scenario_costs():
    """The cost models wired to the scenario (:mod:`analyses.scenario.costs`)."""
    return costs


def _achieved(s, gpu):
    return generations.achieved_flop_per_s(s, gpu)


@pytest.fixture(scope="module")
def pair():
    return wiring.system()


@pytest.fixture(scope="module")
def four():
    return wiring.system(GENERATIONS, achieved=ACHIEVED)


def _draws(system, n, seed):
    """``n`` joint draws of the scenario's assumptions (its 90% laws) and a random workload."""
    names = [i.name for i in system.inputs if i.name in scenario.assumptions()]
    drawn = scenario.sample(names, n, seed)
    # The scenario's laws have tails beyond the bounds a reader may set (a PUE under 1): clip to them.
    s = {k: np.clip(drawn[k], system.input[k].min, system.input[k].max) for k in names}
    rng = np.random.default_rng(seed)
    s["n_params"] = 10 ** rng.uniform(8, 13, n)
    s["tokens"] = np.where(rng.uniform(size=n) < 0.5, 0.0, 10 ** rng.uniform(7, 15, n))
    s["owned_busy_share"] = rng.uniform(0.05, 1.0, n)
    for i in system.inputs:
        if i.name.startswith("n_gpus_"):
            s[i.name] = np.round(10 ** rng.uniform(0, 5, n))
        if i.name.startswith("achieved_flop_per_s_"):
            s[i.name] = rng.uniform(i.min, i.max, n)
    return s


def _close(a, b, rel=REL):
    np.testing.assert_allclose(np.asarray(a, dtype=float), np.asarray(b, dtype=float), rtol=rel, atol=0)


# --------------------------------------------------------------------------------------------
# (a) The same numbers as the book's models
# --------------------------------------------------------------------------------------------


def test_cost_bases_and_defaults_are_the_books():
    assert calculator.COST_BASES == tco.COST_BASES
    s = wiring.system()
    central = scenario.values()
    for i in s.inputs:
        if i.name in central:
            a = scenario.assumption(i.name)
            assert (i.default, i.min, i.max, i.unit) == (central[i.name], a.min, a.max, a.unit)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_gpu_hour_costs_equal_the_tco_models(four, seed):
    s = _draws(four, 300, seed)
    s["cost_of_capital"] = np.where(np.arange(300) % 5 == 0, 0.0, s["cost_of_capital"])  # straight-line branch
    r = four.evaluate(s | {"currency": "USD"})
    for gpu in GENERATIONS:
        k, tdp = gpu.lower(), data.gpu(gpu).tdp_w
        owned = tco.owned_cost_per_gpu_hour(
            s[f"server_{k}_usd_per_gpu"],
            s["network_storage_fraction"],
            s["depreciation_years"],
            s["cost_of_capital"],
            tdp,
            s["server_power_overhead"],
            s["pue"],
            s["electricity_usd_per_kwh"],
            s["hosting_usd_per_kw_month"],
            s["staff_usd_per_gpu_year"],
        )
        _close(r[f"hourly_owned_{k}"], owned.total)
        _close(
            r[f"hourly_rented_{k}"],
            tco.rented_cost_per_gpu_hour(s[f"rent_{k}_usd_per_gpu_hour"], s["rental_overhead_fraction"]),
        )
        book = costs.per_gpu_hour(s, gpu, tdp, "neocloud", "china")
        _close(r[f"hourly_owned_{k}"], book["owned"])
        _close(r[f"hourly_rented_{k}"], book["rented"])
        capex = s[f"server_{k}_usd_per_gpu"] * (1 + s["network_storage_fraction"])
        opex = tco.opex_per_gpu_hour(
            tdp,
            s["server_power_overhead"],
            s["pue"],
            s["electricity_usd_per_kwh"],
            s["hosting_usd_per_kw_month"],
            s["staff_usd_per_gpu_year"],
        ).total
        busy = s["owned_busy_share"]  # the bought GPU does the work of that share of a rented one
        _close(r[f"payback_buy_vs_rent_{k}"], tco.replacement_payback_months(capex, busy, book["rented"], opex))


@pytest.mark.parametrize("seed", [4, 5])
def test_time_and_cost_per_run_equal_the_tco_models(four, seed):
    s = _draws(four, 300, seed)
    r = four.evaluate(s | {"currency": "USD"}, intermediates=True)
    tokens = np.where(s["tokens"] > 0, s["tokens"], s["tokens_per_param"] * s["n_params"])
    flop = 6.0 * s["n_params"] * tokens
    _close(r["training_flop"], flop)
    for gpu in GENERATIONS:
        k = gpu.lower()
        achieved = _achieved(s, gpu) if gpu in ("A100", "B300") else s[f"achieved_flop_per_s_{k}"]
        if f"achieved_flop_per_s_{k}" in four.formula:  # else an input
            _close(r[f"achieved_flop_per_s_{k}"], achieved)
        hours = tco.training_gpu_hours(flop, achieved, 1.0, s["goodput"])
        _close(r[f"gpu_hours_{k}"], hours)
        # time and cost read the same held hours: a job busy a share of them takes 1 / that share longer
        _close(r[f"days_{k}"], hours / s["utilisation"] / s[f"n_gpus_{k}"] / 24.0)
        busy = {"rented": 1.0, "owned": s["owned_busy_share"]}  # an owned GPU is paid every hour, busy or not
        for mode in ("owned", "rented"):
            hourly = r[f"hourly_{mode}_{k}"]
            per_pflop_day = tco.cost_per_effective_pflop_day(hourly, achieved, 1.0, s["utilisation"], s["goodput"])
            _close(r[f"cost_{mode}_{k}"], per_pflop_day * flop / (PETA * SECONDS_PER_DAY) / busy[mode])


def test_at_full_utilisation_a_run_costs_the_chapters_training_cost(pair):
    """tco.training_cost charges the run's GPU-hours only (no idle hours): utilisation 1 here."""
    costs = _scenario_costs()
    s = scenario.values()
    for n_params in (7e9, 1.3e10, 1e11, 4.05e11):
        r = pair.evaluate({"n_params": n_params, "tokens": 0.0, "utilisation": 1.0, "owned_busy_share": 1.0})
        for gpu in ("A100", "B300"):
            for mode in ("owned", "rented"):
                _close(r[f"cost_{mode}_{gpu.lower()}"], costs.training_cost(s, n_params, gpu, mode))
            _close(r[f"gpu_hours_{gpu.lower()}"], costs.training_hours(s, n_params, gpu))


@pytest.mark.parametrize("seed", [6, 7])
def test_ratio_and_payback_equal_the_cost_chapters(pair, seed):
    costs = _scenario_costs()
    s = _draws(pair, 300, seed)
    s["cost_of_capital"] = np.where(np.arange(300) % 7 == 0, 0.0, s["cost_of_capital"])
    s["owned_busy_share"] = np.ones(300)  # the cost chapter's bought GPU is scheduled every hour
    r = pair.evaluate(s, intermediates=True)
    for basis in ("owned", "rented"):
        _close(r[f"cost_{basis}_b300"] / r[f"cost_{basis}_a100"], costs.same_task_ratio(s, basis))
    _close(r["speedup_b300_vs_a100"], s["speedup_b300_a100"])
    _close(r["payback_b300_vs_rent_a100"], costs.payback(s, "rent"))
    _close(r["payback_b300_vs_owned_a100"], costs.payback(s, "keep owned"))
    _close(r["payback_b300_vs_rent_a100_china"], costs.payback(s, "rent in China"))


def test_the_documents_payback_at_the_scenarios_central_values(pair):
    """At the central values a B300 repays itself against renting A100s in about 5.7 months, within
    the documents' 6-12 (000 part 6): the number the cost chapter shows."""
    r = pair.evaluate()
    assert float(r["payback_b300_vs_rent_a100"]) == pytest.approx(
        float(_scenario_costs().payback(scenario.values(), "rent")), rel=1e-12
    )
    assert 5.0 < float(r["payback_b300_vs_rent_a100"]) < 6.5


def test_money_follows_the_chosen_currency(pair):
    usd = pair.evaluate({"currency": "USD"})
    cny = pair.evaluate({"currency": "CNY", "usd_cny": 7.3})
    for name in ("cost_rented_a100", "cost_owned_b300", "hourly_rented_b300", "best_owned"):
        _close(cny[name], usd[name] * 7.3, rel=1e-15)
    assert cny["days_b300"] == usd["days_b300"]  # no money in it
    for name in ("break_even_run", "payback_b300_vs_rent_a100"):
        # money over money: the currency cancels, up to the last bit of the two products
        _close(cny[name], usd[name], rel=1e-15)


def test_the_busy_share_of_owned_gpus_decides_between_owning_and_renting(four):
    """A rented GPU is paid for the hours a run holds it, an owned one every hour: owning wins exactly
    above owned / rented cost per GPU-hour (buying.break_even_utilisation), and the busy share moves the
    payback of buying in proportion to the work the bought GPU does."""
    from analyses.scenario import buying

    r = four.evaluate({}, intermediates=True)
    for gpu in GENERATIONS:
        k = gpu.lower()
        share = float(buying.break_even_utilisation(r[f"hourly_owned_{k}"], r[f"hourly_rented_{k}"]))
        _close(r[f"break_even_{k}"], share)
        below, above = (four.evaluate({"owned_busy_share": share * f}) for f in (0.99, 1.01))
        assert (
            below[f"cost_owned_{k}"] > below[f"cost_rented_{k}"]
            and above[f"cost_owned_{k}"] < above[f"cost_rented_{k}"]
        )
        assert below[f"cost_rented_{k}"] == above[f"cost_rented_{k}"]  # renting does not depend on it
    # the run's answer flips at break_even_run: owning the cheapest owned generation against the cheapest rental
    edge = float(r["break_even_run"])
    assert 0 < edge < 1
    assert not four.evaluate({"owned_busy_share": edge * 0.99})["owning_wins"]
    assert four.evaluate({"owned_busy_share": edge * 1.01})["owning_wins"]
    half = four.evaluate({"owned_busy_share": 0.5}, intermediates=True)
    capex, opex = half["capex_usd_b300"], half["opex_usd_b300"]
    _close(half["payback_buy_vs_rent_b300"], tco.replacement_payback_months(capex, 0.5, half["rented_usd_b300"], opex))


def test_the_cheapest_generation_counts_only_those_the_run_fits_on():
    system = wiring.system(fits={"a100": "n_gpus_a100 > 100", "b300": "n_gpus_b300 > 100"})
    r = system.evaluate({"n_gpus_a100": 8, "n_gpus_b300": 128})
    assert r["cheapest_rented"] == 1 and r["cheapest_owned"] == 1
    none = system.evaluate({"n_gpus_a100": 8, "n_gpus_b300": 8})
    assert np.isinf(none["best_rented"]) and np.isinf(none["best_owned"]) and np.isinf(none["break_even_run"])
    both = system.evaluate({"n_gpus_a100": 512, "n_gpus_b300": 512}, intermediates=True)
    for basis in ("rented", "owned"):
        costs = [float(both[f"cost_{basis}_{g}"]) for g in ("a100", "b300")]
        assert both[f"best_{basis}"] == min(costs) and both[f"cheapest_{basis}"] == costs.index(min(costs))


def test_no_saving_means_no_payback(pair):
    r = pair.evaluate({"rent_a100_usd_per_gpu_hour": 0.1, "speedup_b300_a100": 0.5, "rent_b300_usd_per_gpu_hour": 0.5})
    assert np.isinf(pair.evaluate({"owned_busy_share": 0.01})["payback_buy_vs_rent_b300"])  # idle: no saving
    assert np.isinf(r["payback_b300_vs_rent_a100"]) and np.isinf(r["payback_buy_vs_rent_b300"])


def test_a_throughput_grid_is_interpolated_in_log_space_and_bounds_the_workload():
    """Achieved FLOP/s from a grid over (parameters, GPUs): a power law on the grid is reproduced off
    the nodes, and the workload's inputs are cut to the grid's span."""
    x, y = np.array([1e9, 1e10, 1e11, 1e12]), np.array([8.0, 64.0, 512.0, 4096.0])

    def law(c):
        return lambda n, g: c * (n / 1e9) ** 0.05 * (g / 8.0) ** -0.04

    laws = {"A100": law(1.5e14), "B300": law(1.6e15)}
    grids = {g: LogGrid.tabulate(f, x, y) for g, f in laws.items()}
    system = wiring.system(grids=grids)
    assert (system.input["n_params"].min, system.input["n_params"].max) == (1e9, 1e12)
    assert (system.input["n_gpus_b300"].min, system.input["n_gpus_b300"].max) == (8, 4096)
    assert "speedup_b300_a100" not in system.input  # the grid replaces the scenario's speed-up
    n, g = np.array([3e9, 7e10, 5.5e11]), np.array([16.0, 100.0, 3000.0])
    r = system.evaluate({"n_params": n, "n_gpus_a100": g, "n_gpus_b300": g}, intermediates=True)
    for gpu, f in laws.items():
        _close(r[f"achieved_flop_per_s_{gpu.lower()}"], f(n, g), rel=1e-12)
    _close(r["speedup_b300_vs_a100"], 1.6e15 / 1.5e14, rel=1e-12)
    with pytest.raises(InputError, match=r"model parameters must be a number from 1,000,000,000 to"):
        system.evaluate({"n_params": 5e8})


# --------------------------------------------------------------------------------------------
# (b) The generated JavaScript gives the Python's numbers
# --------------------------------------------------------------------------------------------


def _random_inputs(system, n, seed):
    """``n`` combinations drawn over each input's whole allowed range (log-uniform across decades)."""
    rng = np.random.default_rng(seed)
    cases = []
    for _ in range(n):
        case = {}
        for i in system.inputs:
            if i.choices:
                case[i.name] = float(rng.choice([c for _, c in i.choices]))
                continue
            lo, hi = i.min, i.max
            if lo > 0 and hi / lo > 20:
                v = float(np.exp(rng.uniform(np.log(lo), np.log(hi))))
            else:
                v = float(rng.uniform(lo, hi))
            case[i.name] = float(min(max(round(v), lo), hi)) if i.integer else v
        cases.append(case)
    return cases


def _max_relative(js_values, py_values):
    worst = 0.0
    for name, a in js_values.items():
        b = float(py_values[name])
        if a == b:
            continue
        worst = max(worst, abs(a - b) / max(abs(a), abs(b)))
    return worst


@pytest.mark.parametrize("gens", ["pair", "four"])
def test_javascript_equals_python_on_50_random_combinations(run_js, request, gens):
    system = request.getfixturevalue(gens)
    cases = _random_inputs(system, 50, seed=25)
    out = run_js(system.to_js(), cases)
    worst = 0.0
    for case, js in zip(cases, out, strict=True):
        assert js["ok"], js
        py = system.evaluate(case)
        assert list(js["values"]) == list(system.results)
        worst = max(worst, _max_relative(js["values"], py))
    print(f"\n{gens}: max relative difference JavaScript vs Python over 50 combinations: {worst:.2e}")
    assert worst <= 1e-12


def test_javascript_equals_python_with_a_throughput_grid(run_js):
    x, y = (1e9, 1e10, 1e11, 1e12, 1e13), (1.0, 8.0, 64.0, 512.0, 4096.0, 131072.0)
    rng = np.random.default_rng(3)
    grids = {g: LogGrid(x, y, rng.uniform(0.5, 2.0, (5, 6)) * c) for g, c in (("A100", 1.5e14), ("B300", 1.5e15))}
    system = wiring.system(grids=grids)
    cases = _random_inputs(system, 50, seed=26)
    out = run_js(system.to_js(), cases)
    worst = max(_max_relative(js["values"], system.evaluate(case)) for case, js in zip(cases, out, strict=True))
    assert worst <= 1e-12, worst


# --------------------------------------------------------------------------------------------
# (c) Each input matters; (e) out-of-range inputs give an error naming the input and range
# --------------------------------------------------------------------------------------------


def _moved(i):
    """Another allowed value of input ``i`` (the other choice; else 10% away from its default)."""
    if i.choices:
        return next(c for _, c in i.choices if c != i.default)
    if i.default == 0:
        return i.min + (i.max - i.min) * 0.01 if i.name != "tokens" else 1e12
    v = i.default * 1.1 if i.default * 1.1 <= i.max else i.default * 0.9
    return float(round(v)) if i.integer else v


def test_each_input_alone_changes_a_result_in_both_runtimes(run_js, four):
    base = four.defaults()
    cases = [base] + [base | {i.name: _moved(i)} for i in four.inputs]
    out = run_js(four.to_js(), cases)
    ref = out[0]["values"]
    assert ref == pytest.approx({k: float(v) for k, v in four.evaluate(base).items()}, rel=1e-12)
    for i, js in zip(four.inputs, out[1:], strict=True):
        changed_js = [k for k in ref if js["values"][k] != ref[k]]
        py = four.evaluate(cases[1 + four.inputs.index(i)])
        changed_py = [k for k in ref if float(py[k]) != ref[k]]
        assert changed_js and changed_js == changed_py, i.name


def test_every_out_of_range_input_gets_an_error_with_its_range_never_nan(run_js, four):
    base = four.defaults()
    cases, expected = [], []
    for i in four.inputs:
        bad = [i.min - 1.0, 0.5] if i.choices else [i.min - abs(i.min) * 0.5 - 1e-3, i.max * 2 + 1]
        for v in bad:
            cases.append(base | {i.name: v})
            expected.append(i)
    out = run_js(four.to_js(), cases)
    for i, case, js in zip(expected, cases, out, strict=True):
        assert js["ok"] is False
        (err,) = js["errors"]
        assert err["input"] == i.name and err["allowed"] == i.allowed
        assert err["message"].startswith(f"{i.label} must be {i.allowed}; got ")
        with pytest.raises(InputError) as py_err:
            four.evaluate(case)
        assert [e["message"] for e in py_err.value.errors] == [err["message"]]
    assert four.input["utilisation"].allowed == "a number from 0.05 to 1"
    assert four.input["server_b300_usd_per_gpu"].allowed == "a number from 5,000 to 200,000 USD per GPU"
    assert four.input["n_gpus_b300"].allowed == "a whole number from 1 to 131,072 GPUs"
    assert four.input["currency"].allowed == "one of USD, CNY"


def test_extreme_allowed_inputs_give_numbers_never_nan(run_js, four):
    """Every input at its lowest, at its highest, and random corners: results are numbers (a payback
    that never comes is infinite), in both runtimes."""
    lows = {i.name: (i.choices[0][1] if i.choices else i.min) for i in four.inputs}
    highs = {i.name: (i.choices[-1][1] if i.choices else i.max) for i in four.inputs}
    rng = np.random.default_rng(9)
    corners = [{k: (lows[k] if rng.uniform() < 0.5 else highs[k]) for k in lows} for _ in range(40)]
    cases = [lows, highs, *corners]
    for case, js in zip(cases, run_js(four.to_js(), cases), strict=True):
        assert js["ok"], js
        py = four.evaluate(case)
        for name, v in js["values"].items():
            assert isinstance(v, float | int) and not np.isnan(v) and not np.isnan(py[name]), (name, v)
        assert _max_relative(js["values"], py) <= 1e-12


def test_the_formulas_read_in_evaluation_order(pair):
    """What a page may print under "how this is computed": each formula once, after those it reads."""
    rows = pair.describe()
    order = [r["name"] for r in rows]
    assert sorted(order) == sorted(f.name for f in pair.formulas)
    assert (
        order.index("crf")
        < order.index("server_usd_a100")
        < order.index("owned_usd_a100")
        < order.index("cost_owned_a100")
    )
    crf = next(r for r in rows if r["name"] == "crf")
    assert crf["expr"] == (
        "1 / depreciation_years if cost_of_capital == 0 "
        "else cost_of_capital / (1 - (1 + cost_of_capital) ** -depreciation_years)"
    )
    assert crf["shown"] == "intermediate"
