"""The cost calculator's arithmetic, written once in the formula language (:mod:`analyses.models.formula`):
time and cost of one training run on two or more GPU generations, rented or owned, the cost ratio
between generations and the payback of buying over renting, in the reader's currency.

The formulas are the book's cost model (:mod:`analyses.models.tco`, :func:`analyses.scenario.costs.per_gpu_hour`)
restated, term for term and in the same order of operations, so that they give the same numbers
(tests compare them at many points):

* training FLOP = ``6 x n_params x tokens`` (tokens = ``tokens_per_param x n_params`` when ``tokens``
  is 0, as the planner reads it);
* GPU-hours of the run = ``FLOP / (achieved FLOP/s per GPU x goodput x 3600)``
  (:func:`~analyses.models.tco.training_gpu_hours`; without ``goodput`` where the achieved FLOP/s
  are already per wall-clock second, as the planner's grid), days = GPU-hours / GPUs / 24;
* paid GPU-hours = GPU-hours / utilisation: owned or billed hours of which the job uses
  ``utilisation`` (:func:`~analyses.models.tco.cost_per_effective_pflop_day` charges the same hours;
  at utilisation 1 the cost is the planner's GPU-hours x price);
* a rented GPU-hour = rent x (1 + rental overhead) (:func:`~analyses.models.tco.rented_cost_per_gpu_hour`);
* an owned GPU-hour = (server price + network and storage) x annuity factor / hours per year
  + energy (TDP x node overhead x PUE x tariff) + hosting per kW + staff
  (:func:`~analyses.models.tco.owned_cost_per_gpu_hour`);
* cost per run = paid GPU-hours x cost per GPU-hour, in USD or CNY (``usd_cny`` CNY per USD);
* cost ratio of a generation over the first (the baseline) = the two costs per run;
* payback (months) of buying one GPU of a generation against the same work done the baseline's way
  (renting it, renting it in China, or keeping owned ones and paying only their running cost), and
  against renting the same generation (:func:`~analyses.models.tco.replacement_payback_months`).

Achieved FLOP/s per GPU of each generation is, per :class:`Generation`, an input
(``achieved_flop_per_s_<gpu>``), an expression in the formula language (the scenario's
``peak x mfu_a100_bf16`` and ``x speedup_b300_a100``), or a :class:`~analyses.models.formula.LogGrid`
over (model parameters, GPUs) interpolated in log space (the throughput model's grid).

Pure: the inputs' ranges and defaults, each GPU's TDP and the grids are passed in by the caller
(the scenario wiring, :mod:`analyses.scenario.calculator`); nothing here reads data or the scenario.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

from analyses.models.formula import Formula, Input, LogGrid, System, names_read
from analyses.units import (
    HOURS_PER_DAY,
    HOURS_PER_MONTH,
    HOURS_PER_YEAR,
    MONTHS_PER_YEAR,
    SECONDS_PER_HOUR,
)

COST_BASES = ("rented", "owned")  # as analyses.models.tco.COST_BASES (a test keeps them equal)
CURRENCIES = ("USD", "CNY")
RENTED, OWNED = 0.0, 1.0  # codes of the cost_basis choice
USD, CNY = 0.0, 1.0  # codes of the currency choice
MONEY = "{currency}"  # a unit a page replaces with the chosen currency

CONSTANTS = {
    "RENTED": RENTED,
    "OWNED": OWNED,
    "USD": USD,
    "CNY": CNY,
    "HOURS_PER_DAY": HOURS_PER_DAY,
    "HOURS_PER_MONTH": HOURS_PER_MONTH,
    "HOURS_PER_YEAR": HOURS_PER_YEAR,
    "MONTHS_PER_YEAR": MONTHS_PER_YEAR,
    "SECONDS_PER_HOUR": SECONDS_PER_HOUR,
    "INF": float("inf"),
}


@dataclasses.dataclass(frozen=True)
class Generation:
    """A GPU generation in the calculator: its name, datasheet TDP (W), and where its achieved FLOP/s
    per GPU comes from: ``None`` (the input ``achieved_flop_per_s_<key>``), an expression in the
    formula language, or a :class:`LogGrid` over (model parameters, GPUs of this generation)."""

    name: str
    tdp_w: float
    throughput: str | LogGrid | None = None
    # True when the throughput is already per wall-clock second of the run (failures, restarts and
    # checkpoints included, as the planner's grid): the run's GPU-hours then do not divide by goodput.
    wall_clock: bool = False

    @property
    def key(self) -> str:
        return self.name.lower()


def input_names(gen: Generation) -> dict[str, str]:
    """The inputs one generation reads, by role: its GPU count, system price and rent (scenario names)."""
    k = gen.key
    names = {
        "gpus": f"n_gpus_{k}",
        "server": f"server_{k}_usd_per_gpu",
        "rent": f"rent_{k}_usd_per_gpu_hour",
    }
    if gen.throughput is None:
        names["achieved"] = f"achieved_flop_per_s_{k}"
    return names


def choice_inputs(cost_basis: str = "rented", currency: str = "USD") -> dict[str, Input]:
    """The two choices the formulas branch on: the cost basis shown as "the" cost, and the currency."""
    return {
        "cost_basis": Input(
            "cost_basis",
            "cost basis",
            "-",
            default=(RENTED, OWNED)[COST_BASES.index(cost_basis)],
            min=RENTED,
            max=OWNED,
            choices=tuple(zip(COST_BASES, (RENTED, OWNED), strict=True)),
        ),
        "currency": Input(
            "currency",
            "currency",
            "-",
            default=(USD, CNY)[CURRENCIES.index(currency)],
            min=USD,
            max=CNY,
            choices=tuple(zip(CURRENCIES, (USD, CNY), strict=True)),
        ),
    }


def _generation_formulas(g: Generation) -> list[Formula]:
    k, n = g.key, g.name
    names = input_names(g)
    out: list[Formula] = []
    achieved = f"achieved_flop_per_s_{k}"
    if isinstance(g.throughput, LogGrid):
        out.append(
            Formula(
                achieved,
                f"interp_loglog(throughput_{k}, n_params, {names['gpus']})",
                f"achieved FLOP/s per GPU ({n})",
                "FLOP/s",
                scale=1e12,
                display_unit="TFLOP/s",
            )
        )
    elif isinstance(g.throughput, str):
        out.append(
            Formula(
                achieved, g.throughput, f"achieved FLOP/s per GPU ({n})", "FLOP/s", scale=1e12, display_unit="TFLOP/s"
            )
        )
    server, rent = names["server"], names["rent"]
    out += [
        Formula(
            f"gpu_hours_{k}",
            f"training_flop / ({achieved} * SECONDS_PER_HOUR)"
            if g.wall_clock
            else f"training_flop / ({achieved} * goodput * SECONDS_PER_HOUR)",
            f"GPU-hours of the run ({n})",
            "GPU-hours",
        ),
        Formula(f"days_{k}", f"gpu_hours_{k} / {names['gpus']} / HOURS_PER_DAY", f"time per run ({n})", "days"),
        Formula(
            f"paid_gpu_hours_{k}",
            f"gpu_hours_{k} / utilisation",
            f"paid GPU-hours ({n}, at the utilisation)",
            "GPU-hours",
        ),
        # One owned GPU-hour (tco.owned_cost_per_gpu_hour, its terms in its order), USD.
        Formula(f"node_kw_{k}", f"TDP_W_{k.upper()} / 1000 * server_power_overhead", result=False),
        Formula(f"server_usd_{k}", f"{server} * crf / HOURS_PER_YEAR", result=False),
        Formula(
            f"network_storage_usd_{k}", f"{server} * network_storage_fraction * crf / HOURS_PER_YEAR", result=False
        ),
        Formula(f"energy_usd_{k}", f"node_kw_{k} * pue * electricity_usd_per_kwh", result=False),
        Formula(
            f"hosting_usd_{k}",
            f"node_kw_{k} * hosting_usd_per_kw_month * MONTHS_PER_YEAR / HOURS_PER_YEAR",
            result=False,
        ),
        Formula(f"opex_usd_{k}", f"energy_usd_{k} + hosting_usd_{k} + staff_usd", result=False),
        Formula(
            f"owned_usd_{k}",
            f"server_usd_{k} + network_storage_usd_{k} + energy_usd_{k} + hosting_usd_{k} + staff_usd",
            result=False,
        ),
        Formula(f"rented_usd_{k}", f"{rent} * (1 + rental_overhead_fraction)", result=False),
        Formula(f"capex_usd_{k}", f"{server} * (1 + network_storage_fraction)", result=False),
        Formula(f"hourly_rented_{k}", f"rented_usd_{k} * fx", f"rented GPU-hour ({n})", f"{MONEY} per GPU-hour"),
        Formula(f"hourly_owned_{k}", f"owned_usd_{k} * fx", f"owned GPU-hour ({n})", f"{MONEY} per GPU-hour"),
        Formula(f"cost_rented_{k}", f"paid_gpu_hours_{k} * rented_usd_{k} * fx", f"cost per run, rented ({n})", MONEY),
        Formula(f"cost_owned_{k}", f"paid_gpu_hours_{k} * owned_usd_{k} * fx", f"cost per run, owned ({n})", MONEY),
        Formula(
            f"cost_{k}",
            f"cost_owned_{k} if cost_basis == OWNED else cost_rented_{k}",
            f"cost per run ({n}, chosen basis)",
            MONEY,
        ),
        _payback(
            f"payback_buy_vs_rent_{k}",
            f"capex_usd_{k}",
            f"1 * rented_usd_{k}",
            f"opex_usd_{k}",
            f"payback of buying a {n} instead of renting one",
        ),
    ]
    return out


def _payback(name: str, capex: str, before: str, after: str, label: str) -> Formula:
    """tco.replacement_payback_months: capex / (before x hours per month - after x hours per month),
    infinite when nothing is saved; ``before`` is ``speed-up x the old way's cost per GPU-hour``."""
    saving = f"({before} * HOURS_PER_MONTH - {after} * HOURS_PER_MONTH)"
    return Formula(name, f"{capex} / {saving} if {saving} > 0 else INF", label, "months", infinite="never")


def formulas(
    generations: Sequence[Generation],
    *,
    china_rent: str | None = None,
) -> list[Formula]:
    """Every formula of the calculator for ``generations`` (the first is the baseline the others
    are compared with), the owned GPUs paying the tariff of the input ``electricity_usd_per_kwh``.

    ``china_rent`` (a scenario name in CNY per GPU-hour of the baseline) adds the payback against
    renting the baseline in China.
    """
    if len(generations) < 2:
        raise ValueError(f"the calculator compares two or more generations, got {[g.name for g in generations]}")
    keys = [g.key for g in generations]
    if len(set(keys)) != len(keys):
        raise ValueError(f"generations must differ, got {[g.name for g in generations]}")
    out = [
        Formula("run_tokens", "tokens if tokens > 0 else tokens_per_param * n_params", "training tokens", "tokens"),
        Formula("training_flop", "6 * n_params * run_tokens", "training compute", "FLOP"),
        Formula("fx", "usd_cny if currency == CNY else 1", result=False),
        # tco.capital_recovery_factor: r / (1 - (1 + r)^-n), 1/n at r = 0.
        Formula(
            "crf",
            "1 / depreciation_years if cost_of_capital == 0 "
            "else cost_of_capital / (1 - (1 + cost_of_capital) ** -depreciation_years)",
            result=False,
        ),
        Formula("staff_usd", "staff_usd_per_gpu_year / HOURS_PER_YEAR", result=False),
    ]
    for g in generations:
        out += _generation_formulas(g)
    base = generations[0]
    b, bn = base.key, base.name
    for g in generations[1:]:
        k, n = g.key, g.name
        out += [
            Formula(
                f"speedup_{k}_vs_{b}",
                f"achieved_flop_per_s_{k} / achieved_flop_per_s_{b}",
                f"per-GPU speed-up, {n} over {bn}",
                "x",
            ),
            Formula(
                f"cost_ratio_{k}_vs_{b}", f"cost_{k} / cost_{b}", f"cost per run, {n} over {bn} (chosen basis)", "x"
            ),
            Formula(f"days_ratio_{k}_vs_{b}", f"days_{k} / days_{b}", f"time per run, {n} over {bn}", "x"),
            _payback(
                f"payback_{k}_vs_rent_{b}",
                f"capex_usd_{k}",
                f"speedup_{k}_vs_{b} * rented_usd_{b}",
                f"opex_usd_{k}",
                f"payback of buying a {n} instead of renting {bn}s",
            ),
            _payback(
                f"payback_{k}_vs_owned_{b}",
                f"capex_usd_{k}",
                f"speedup_{k}_vs_{b} * opex_usd_{b}",
                f"opex_usd_{k}",
                f"payback of buying a {n} instead of running owned {bn}s",
            ),
        ]
        if china_rent:
            out.append(
                _payback(
                    f"payback_{k}_vs_rent_{b}_china",
                    f"capex_usd_{k}",
                    f"speedup_{k}_vs_{b} * ({china_rent} * (1 + rental_overhead_fraction) / usd_cny)",
                    f"opex_usd_{k}",
                    f"payback of buying a {n} instead of renting {bn}s in China",
                )
            )
    return out


def build(
    generations: Sequence[Generation],
    inputs: Mapping[str, Input],
    *,
    china_rent: str | None = None,
    constants: Mapping[str, float] | None = None,
    name: str = "calculator",
    extra: Sequence[Formula] = (),
    grids: Mapping[str, LogGrid] | None = None,
) -> System:
    """The calculator as a checked :class:`System`: :func:`formulas` with the declarations of the
    inputs they read taken from ``inputs`` (others ignored; one missing is an error naming it).

    ``constants`` adds names the throughput expressions read (a GPU's peak FLOP/s); ``extra`` adds
    formulas after the calculator's (they may read its formulas, ``constants`` and ``grids``). A generation
    interpolated from a grid has ``n_params`` and its GPU count bounded to the grid's span.
    """
    fs = formulas(generations, china_rent=china_rent) + list(extra)
    consts = dict(CONSTANTS) | {f"TDP_W_{g.key.upper()}": float(g.tdp_w) for g in generations} | dict(constants or {})
    grids = {f"throughput_{g.key}": g.throughput for g in generations if isinstance(g.throughput, LogGrid)} | dict(
        grids or {}
    )
    declared = dict(inputs)
    for g in generations:
        if isinstance(g.throughput, LogGrid):
            (x0, x1), (y0, y1) = g.throughput.span()
            for key, lo, hi in (("n_params", x0, x1), (f"n_gpus_{g.key}", y0, y1)):
                if key in declared:
                    declared[key] = _narrowed(declared[key], lo, hi)
    # The inputs: every name the formulas read that is not a formula, constant or grid.
    known = {f.name for f in fs} | set(consts) | set(grids)
    wanted = sorted(set().union(*(names_read(f.name, f.expr) for f in fs)) - known)
    missing = [n for n in wanted if n not in declared]
    if missing:
        raise KeyError(f"the calculator reads inputs that are not declared: {missing}")
    order = [n for n in declared if n in wanted]
    return System(name, [declared[n] for n in order], fs, consts, grids)


def _narrowed(i: Input, lo: float, hi: float) -> Input:
    """``i`` with its range cut to ``[lo, hi]`` (and its default moved inside)."""
    new_lo, new_hi = max(i.min, lo), min(i.max, hi)
    if new_lo > new_hi:
        raise ValueError(f"input {i.name}: its range [{i.min:g}, {i.max:g}] misses the grid's [{lo:g}, {hi:g}]")
    return dataclasses.replace(i, default=min(max(i.default, new_lo), new_hi), min=new_lo, max=new_hi)
