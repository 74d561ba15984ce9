"""The cost calculator's arithmetic, written once in the formula language (:mod:`analyses.models.formula`):
time and cost of one training run on two or more GPU generations, rented and owned side by side, the
busy share above which owning is cheaper, and the payback of buying over renting, in the reader's
currency.

The formulas are the book's cost model (:mod:`analyses.models.tco`, :func:`analyses.scenario.costs.per_gpu_hour`)
restated, term for term and in the same order of operations, so that they give the same numbers
(tests compare them at many points):

* training FLOP = ``6 x n_params x tokens`` (tokens = ``tokens_per_param x n_params`` when ``tokens``
  is 0, as the planner reads it);
* GPU-hours of compute = ``FLOP / (achieved FLOP/s per GPU x goodput x 3600)``
  (:func:`~analyses.models.tco.training_gpu_hours`); the run *holds* its GPUs for those hours over a
  job's busy share ``utilisation`` (the scenario's: the share of held hours the GPUs compute rather
  than wait). Where the achieved FLOP/s are already per wall-clock second of the run (the planner's
  grid: stalls, failures and restarts included) the held hours are the compute hours. Time per run =
  held GPU-hours / GPUs / 24, so time and cost read the same hours;
* a rented GPU-hour = rent x (1 + rental overhead) (:func:`~analyses.models.tco.rented_cost_per_gpu_hour`),
  paid for the hours the run holds;
* an owned GPU-hour = (server price + network and storage) x annuity factor / hours per year
  + energy (TDP x node overhead x PUE x tariff) + hosting per kW + staff
  (:func:`~analyses.models.tco.owned_cost_per_gpu_hour`), paid for every calendar hour: a run on owned
  GPUs busy ``owned_busy_share`` of their hours carries its held hours / that share. Owning is
  cheaper than renting the same GPUs when the share exceeds owned / rented cost per GPU-hour
  (:func:`analyses.scenario.buying.break_even_utilisation`);
* payback (months) of buying one GPU of a generation against the same work done the baseline's way
  (renting it, renting it in China, or keeping owned ones and paying only their running cost), and
  against renting the same generation (:func:`~analyses.models.tco.replacement_payback_months`), the
  bought GPU doing work ``owned_busy_share`` of its hours and paying its running cost every hour;
* the cheapest generation of each basis for the run (among those it fits on), and the busy share
  above which owning the cheapest owned generation beats the cheapest rental.

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
USD, CNY = 0.0, 1.0  # codes of the currency choice
MONEY = "{currency}"  # a unit a page replaces with the chosen currency
BUSY = "owned_busy_share"  # the input: share of an owned GPU's calendar hours that carry work
SPEEDUP_GIVEN = "speedup_given"  # the input that, when above 0, replaces the new generation's computed speed-up

CONSTANTS = {
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


def currency_input(currency: str = "USD") -> Input:
    """The currency the results are shown in (the formulas convert at ``usd_cny``)."""
    codes = (USD, CNY)
    return Input(
        "currency",
        "currency",
        "-",
        default=codes[CURRENCIES.index(currency)],
        min=USD,
        max=CNY,
        choices=tuple(zip(CURRENCIES, codes, strict=True)),
    )


def _throughput(g: Generation) -> list[Formula]:
    """The generation's achieved FLOP/s per GPU as a formula (none when it is an input)."""
    achieved, unit = f"achieved_flop_per_s_{g.key}", {"scale": 1e12, "display_unit": "TFLOP/s"}
    label = f"achieved FLOP/s per GPU ({g.name})"
    if isinstance(g.throughput, LogGrid):
        return [
            Formula(achieved, f"interp_loglog(throughput_{g.key}, n_params, n_gpus_{g.key})", label, "FLOP/s", **unit)
        ]
    if isinstance(g.throughput, str):
        return [Formula(achieved, g.throughput, label, "FLOP/s", **unit)]
    return []


def _hourly(g: Generation) -> list[Formula]:
    """One owned GPU-hour (tco.owned_cost_per_gpu_hour, its terms in its order) and one rented, USD."""
    k, server = g.key, input_names(g)["server"]
    return [
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
        Formula(f"rented_usd_{k}", f"{input_names(g)['rent']} * (1 + rental_overhead_fraction)", result=False),
        Formula(f"capex_usd_{k}", f"{server} * (1 + network_storage_fraction)", result=False),
    ]


def _generation_formulas(g: Generation) -> list[Formula]:
    k, n = g.key, g.name
    achieved = f"achieved_flop_per_s_{k}"
    compute = (
        f"training_flop / ({achieved} * SECONDS_PER_HOUR)"
        if g.wall_clock
        else (f"training_flop / ({achieved} * goodput * SECONDS_PER_HOUR)")
    )
    held = f"gpu_hours_{k}" if g.wall_clock else f"gpu_hours_{k} / utilisation"
    return [
        *_throughput(g),
        Formula(f"gpu_hours_{k}", compute, f"GPU-hours of compute ({n})", "GPU-hours"),
        Formula(f"held_gpu_hours_{k}", held, f"GPU-hours the run holds ({n})", "GPU-hours"),
        Formula(f"days_{k}", f"held_gpu_hours_{k} / n_gpus_{k} / HOURS_PER_DAY", f"time per run ({n})", "days"),
        *_hourly(g),
        Formula(f"hourly_rented_{k}", f"rented_usd_{k} * fx", f"rented GPU-hour ({n})", f"{MONEY} per GPU-hour"),
        Formula(f"hourly_owned_{k}", f"owned_usd_{k} * fx", f"owned GPU-hour ({n})", f"{MONEY} per GPU-hour"),
        Formula(f"cost_rented_{k}", f"held_gpu_hours_{k} * rented_usd_{k} * fx", f"cost per run, rented ({n})", MONEY),
        Formula(
            f"cost_owned_{k}",
            f"held_gpu_hours_{k} / {BUSY} * owned_usd_{k} * fx",
            f"cost per run, owned ({n}, at the busy share)",
            MONEY,
        ),
        Formula(
            f"break_even_{k}",
            f"owned_usd_{k} / rented_usd_{k}",
            f"busy share above which owning a {n} costs less than renting it",
            "fraction",
        ),
        _payback(
            f"payback_buy_vs_rent_{k}",
            f"capex_usd_{k}",
            f"{BUSY} * rented_usd_{k}",
            f"opex_usd_{k}",
            f"payback of buying a {n} instead of renting one",
        ),
    ]


def _payback(name: str, capex: str, before: str, after: str, label: str) -> Formula:
    """tco.replacement_payback_months: capex / (before x hours per month - after x hours per month),
    infinite when nothing is saved; ``before`` is ``busy share x speed-up x the old way's cost per
    GPU-hour`` (the work the bought GPU does), ``after`` its running cost, paid every hour."""
    saving = f"({before} * HOURS_PER_MONTH - {after} * HOURS_PER_MONTH)"
    return Formula(name, f"{capex} / {saving} if {saving} > 0 else INF", label, "months", infinite="never")


def _comparison(g: Generation, base: Generation, china_rent: str | None, given: bool) -> list[Formula]:
    """Speed-up and paybacks of one ``g`` bought instead of doing its work on ``base``."""
    k, n, b, bn = g.key, g.name, base.key, base.name
    ratio = f"achieved_flop_per_s_{k} / achieved_flop_per_s_{b}"
    speedup = f"speedup_{k}_vs_{b}"
    out = [
        Formula(
            speedup,
            f"{SPEEDUP_GIVEN} if {SPEEDUP_GIVEN} > 0 else {ratio}" if given else ratio,
            f"per-GPU speed-up, {n} over {bn}",
            "x",
        ),
        _payback(
            f"payback_{k}_vs_rent_{b}",
            f"capex_usd_{k}",
            f"{BUSY} * {speedup} * rented_usd_{b}",
            f"opex_usd_{k}",
            f"payback of buying a {n} instead of renting {bn}s",
        ),
        _payback(
            f"payback_{k}_vs_owned_{b}",
            f"capex_usd_{k}",
            f"{BUSY} * {speedup} * opex_usd_{b}",
            f"opex_usd_{k}",
            f"payback of buying a {n} instead of running owned {bn}s",
        ),
    ]
    if china_rent:
        out.append(
            _payback(
                f"payback_{k}_vs_rent_{b}_china",
                f"capex_usd_{k}",
                f"{BUSY} * {speedup} * ({china_rent} * (1 + rental_overhead_fraction) / usd_cny)",
                f"opex_usd_{k}",
                f"payback of buying a {n} instead of renting {bn}s in China",
            )
        )
    return out


def decision(generations: Sequence[Generation], fits: Mapping[str, str] | None = None) -> list[Formula]:
    """Which generation is cheapest rented and owned for the run, and the busy share above which owning
    wins: only generations the run fits on count (``fits`` maps a generation's key to a condition
    expression; a generation without one always fits). ``cheapest_*`` is the index of the generation in
    ``generations`` (the first of equals); with none fitting the best costs are infinite."""
    fits = dict(fits or {})

    def usable(k: str, cost: str) -> str:
        return f"where({fits[k]}, {cost}, INF)" if k in fits else cost

    keys = [g.key for g in generations]
    out = []
    for basis in COST_BASES:
        costs = [usable(k, f"cost_{basis}_{k}") for k in keys]
        out.append(Formula(f"best_{basis}", f"min({', '.join(costs)})", f"cheapest run, {basis}", MONEY))
        index = "0"
        for i in range(len(keys) - 1, 0, -1):  # nested: the first generation whose cost is the best
            index = f"({i} if {costs[i]} == best_{basis} else {index})"
        out.append(Formula(f"cheapest_{basis}", index, f"the cheapest generation, {basis}", ""))
    full = [usable(k, f"held_gpu_hours_{k} * owned_usd_{k} * fx") for k in keys]
    out += [
        Formula("owning_wins", "best_owned < best_rented", "owning is cheaper than renting", ""),
        Formula(
            "break_even_run",
            f"min({', '.join(full)}) / best_rented if best_rented < INF else INF",
            "busy share above which owning beats the cheapest rental",
            "fraction",
            infinite="never",
        ),
    ]
    return out


def formulas(
    generations: Sequence[Generation],
    *,
    china_rent: str | None = None,
    speedup_given: bool = False,
    fits: Mapping[str, str] | None = None,
) -> list[Formula]:
    """Every formula of the calculator for ``generations`` (the first is the baseline the others
    are compared with), the owned GPUs paying the tariff of the input ``electricity_usd_per_kwh``.

    ``china_rent`` (a scenario name in CNY per GPU-hour of the baseline) adds the payback against
    renting the baseline in China; ``speedup_given`` lets the input :data:`SPEEDUP_GIVEN` replace the
    computed speed-up of the last generation over the baseline when above 0 (a document's case);
    ``fits`` is :func:`decision`'s.
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
    for g in generations[1:]:
        out += _comparison(g, generations[0], china_rent, speedup_given and g is generations[-1])
    return out + decision(generations, fits)


def build(
    generations: Sequence[Generation],
    inputs: Mapping[str, Input],
    *,
    china_rent: str | None = None,
    constants: Mapping[str, float] | None = None,
    name: str = "calculator",
    extra: Sequence[Formula] = (),
    grids: Mapping[str, LogGrid] | None = None,
    speedup_given: bool = False,
    fits: Mapping[str, str] | None = None,
) -> System:
    """The calculator as a checked :class:`System`: :func:`formulas` with the declarations of the
    inputs they read taken from ``inputs`` (others ignored; one missing is an error naming it).

    ``constants`` adds names the throughput expressions read (a GPU's peak FLOP/s); ``extra`` adds
    formulas after the calculator's (they may read its formulas, ``constants`` and ``grids``). A generation
    interpolated from a grid has ``n_params`` and its GPU count bounded to the grid's span.
    ``speedup_given`` and ``fits`` are :func:`formulas`'.
    """
    fs = formulas(generations, china_rent=china_rent, speedup_given=speedup_given, fits=fits) + list(extra)
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
