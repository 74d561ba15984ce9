"""The cost models fed from the scenario: a GPU-hour owned or rented, a useful PFLOP-day, the cost of
the same task on two generations, payback, a training bill.

The one place a GPU-hour's cost is fed: :mod:`analyses.models.tco` takes plain numbers; here every
input is read from ``s``, a mapping of the scenario's assumption names to floats or arrays of draws
(:func:`analyses.scenario.values`, :func:`analyses.scenario.sample`): the system price per GPU
``server_<gpu>_usd_per_gpu``, the rent ``rent_<gpu>_usd_per_gpu_hour`` (neocloud) or
``rent_<gpu>_hyperscaler_usd_per_gpu_hour``, the electricity tariff of a region (:data:`ELECTRICITY`),
PUE, hosting, node power overhead, network and storage, rental overhead, staff, depreciation period
and cost of capital; each GPU's power comes from its datasheet. The cost chapter, its checks, the
planner (:func:`per_gpu_hour`, whose numbers :func:`analyses.models.plan.evaluate` receives) and
their Monte Carlo call the same functions. Achieved FLOP/s and MFU come from the generation ladder
(:mod:`analyses.scenario.generations`). USD unless a name says otherwise; owned GPUs pay the Chinese
electricity tariff of the documents' deployments unless a planner's request names another region.

Conventions are :mod:`analyses.models.tco`'s: an owned GPU-hour is a calendar hour of ownership at
full power; a rented GPU-hour is a billed hour with storage and network on top.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from analyses import scenario
from analyses.models import flops, tco
from analyses.scenario import generations, operations
from analyses.scenario.generations import NEW, OLD, OLD_MFU, achieved_flop_per_s, speedup
from analyses.scenario.quantities import named

Scenario = Mapping[str, Any]
ArrayLike = float | np.ndarray
REGION = "china"  # the electricity tariff of owned GPUs in the documents' deployments
# What an hour of the old generation's work costs (:func:`old_hour_cost`): rented in China (the
# documents' market), rented at a neocloud, owned at today's market (second-hand) price, owned at
# its book value (the price paid new written off over the depreciation life from its purchase
# date), or only its running cost (what replacing a fleet on the books saves: its remaining
# depreciation is carried either way).
BASELINES = ("rent in China", "rent", "owned", "owned at book", "keep owned")
LIST_PRICE = "server_a100_list_usd_per_gpu"  # the old generation's system price bought new
FLEET_AGE = "a100_fleet_age_years"  # age of an existing A100 fleet at the scenario's date

# --------------------------------------------------------------------------------------------
# A GPU-hour, owned or rented: the scenario's names of its prices and the one place they are read
# --------------------------------------------------------------------------------------------

ELECTRICITY = {"china": "electricity_usd_per_kwh", "us": "electricity_us_usd_per_kwh"}  # tariff by region
OWNED_SHARED = (
    "network_storage_fraction",
    "depreciation_years",
    "cost_of_capital",
    "server_power_overhead",
    "pue",
    "hosting_usd_per_kw_month",
    "staff_usd_per_gpu_year",
)
RENTED_SHARED = ("rental_overhead_fraction",)


def server_name(gpu: str) -> str:
    """The scenario's system price per GPU of ``gpu`` (``server_b300_usd_per_gpu``)."""
    return f"server_{gpu.lower()}_usd_per_gpu"


def rent_name(gpu: str, rent_class: str = "neocloud") -> str:
    """The scenario's rent of ``gpu`` in ``rent_class`` (``rent_h100_hyperscaler_usd_per_gpu_hour``)."""
    if rent_class not in tco.RENT_CLASSES:
        raise ValueError(f"rent_class must be one of {tco.RENT_CLASSES}, got {rent_class!r}")
    middle = "" if rent_class == "neocloud" else f"_{rent_class}"
    return f"rent_{gpu.lower()}{middle}_usd_per_gpu_hour"


def _electricity(region: str) -> str:
    if region not in ELECTRICITY:
        raise ValueError(f"region must be one of {tuple(ELECTRICITY)}, got {region!r}")
    return ELECTRICITY[region]


def inputs(gpu: str, rent_class: str, region: str, names: Mapping[str, Any]) -> tuple[str, ...]:
    """The assumptions one GPU-hour of ``gpu`` reads, of those ``names`` (the scenario) holds.

    A generation without a rent in ``rent_class`` has none among them: its rented cost is NaN.
    """
    wanted = (server_name(gpu), rent_name(gpu, rent_class), _electricity(region), *OWNED_SHARED, *RENTED_SHARED)
    return tuple(n for n in wanted if n in names)


def has_prices(gpu: str, names: Mapping[str, Any]) -> bool:
    """Whether the scenario ``names`` prices ``gpu``: a system price and a neocloud rent."""
    return server_name(gpu) in names and rent_name(gpu) in names


def priced() -> list[str]:
    """The GPUs the scenario prices (a system price and a neocloud rent), in launch order: the
    generations the cost chapter compares and the planner may place."""
    names = scenario.assumptions()
    return [g for g in generations.names() if has_prices(g, names)]


def _tdp(gpu: str) -> float:
    return generations.gpu(gpu).tdp_w


def capex_per_gpu(s: Scenario, gpu: str) -> np.ndarray:
    """Up-front cost of one owned GPU (USD): its system price plus network and storage."""
    price = np.asarray(s[server_name(gpu)], dtype=float)
    return price * (1.0 + np.asarray(s["network_storage_fraction"], dtype=float))


def opex(s: Scenario, gpu: str, tdp_w: float | None = None, region: str = REGION) -> tco.Opex:
    """Running cost of one owned ``gpu`` (of ``tdp_w``, its datasheet's by default) per calendar hour
    (USD) at the ``region``'s tariff."""
    return tco.opex_per_gpu_hour(
        _tdp(gpu) if tdp_w is None else tdp_w,
        s["server_power_overhead"],
        s["pue"],
        s[_electricity(region)],
        s["hosting_usd_per_kw_month"],
        s["staff_usd_per_gpu_year"],
    )


def owned(
    s: Scenario,
    gpu: str,
    years: ArrayLike | None = None,
    rate: ArrayLike | None = None,
    price: ArrayLike | None = None,
    tdp_w: float | None = None,
    region: str = REGION,
) -> tco.OwnedCost:
    """Cost of one owned ``gpu`` per calendar hour (USD) by component: capital (server plus network and
    storage, annuity over the depreciation period at the cost of capital), energy at ``tdp_w`` (the
    datasheet's by default) times the node overhead and PUE at the ``region``'s tariff, hosting per kW
    and staff. ``years`` and ``rate`` replace the scenario's depreciation period and cost of capital
    (a case's own terms), ``price`` its system price per GPU."""
    return tco.owned_cost_per_gpu_hour(
        server_price_per_gpu=s[server_name(gpu)] if price is None else price,
        network_storage_fraction=s["network_storage_fraction"],
        depreciation_years=s["depreciation_years"] if years is None else years,
        cost_of_capital=s["cost_of_capital"] if rate is None else rate,
        tdp_w=_tdp(gpu) if tdp_w is None else tdp_w,
        server_power_overhead=s["server_power_overhead"],
        pue=s["pue"],
        electricity_per_kwh=s[_electricity(region)],
        hosting_per_kw_month=s["hosting_usd_per_kw_month"],
        staff_per_gpu_year=s["staff_usd_per_gpu_year"],
    )


def rented(s: Scenario, gpu: str, rent_class: str = "neocloud") -> np.ndarray:
    """Cost of one billed ``gpu``-hour of ``rent_class`` (USD), storage and network included (NaN when
    the scenario has no such rent)."""
    rent = rent_name(gpu, rent_class)
    overhead = np.asarray(s["rental_overhead_fraction"], dtype=float)
    if rent not in s:
        return np.full(np.shape(overhead), np.nan)
    return np.asarray(tco.rented_cost_per_gpu_hour(s[rent], overhead), dtype=float)


def per_gpu_hour(
    s: Scenario, gpu: str, tdp_w: float | None = None, rent_class: str = "neocloud", region: str = REGION
) -> dict[str, np.ndarray]:
    """Cost of one GPU-hour of ``gpu`` (USD), ``{"rented": ..., "owned": ...}``: :func:`rented` at
    ``rent_class`` and the total of :func:`owned` at the ``region``'s tariff; NaN where the scenario
    has no such rent or no system price for ``gpu``. What the planner's model receives as numbers."""
    _electricity(region)
    rent = rented(s, gpu, rent_class)
    if server_name(gpu) not in s:  # no system price in the scenario: say so, never invent one
        return {"rented": rent, "owned": np.full(np.shape(rent), np.nan)}
    return {"rented": rent, "owned": np.asarray(owned(s, gpu, tdp_w=tdp_w, region=region).total, dtype=float)}


def rented_a100_china_cny(s: Scenario) -> np.ndarray:
    """Cost of one rented A100-hour in China (CNY), storage and network included."""
    return tco.rented_cost_per_gpu_hour(s["rent_a100_china_cny_per_gpu_hour"], s["rental_overhead_fraction"])


@named(
    "old_hour_cost",
    "cost of an A100-hour",
    "USD per GPU-hour",
    "What one hour of the old generation's work costs, by how it is paid for: rent in China (the documents' "
    "market; 001 §4's case), rent at a neocloud, owned at today's market price, owned at its book value (the price "
    "paid new written off straight-line over the depreciation life from the fleet's purchase date: a firm's own "
    "bill), or its running cost alone (what replacing a fleet on the books saves); storage and network included. "
    "The buyer's frame (analyses/scenario/frame.py) chooses the basis of an existing fleet",
    owns=("rent_a100_china_cny_per_gpu_hour", LIST_PRICE, FLEET_AGE),
    wraps=("rented_cost_per_gpu_hour", "owned_cost_per_gpu_hour"),
    audit="R10",
)
def old_hour_cost(s: Scenario, basis: str = "owned") -> np.ndarray:
    """Cost (USD) of one hour of an old-generation GPU on ``basis`` (one of :data:`BASELINES`)."""
    if basis == "rent":
        return rented(s, OLD)
    if basis == "rent in China":
        return rented_a100_china_cny(s) / np.asarray(s["usd_cny"], dtype=float)
    if basis == "owned":
        return owned(s, OLD).total
    if basis == "owned at book":
        return book_owned(s).total
    if basis == "keep owned":
        return opex(s, OLD).total
    raise ValueError(f"basis must be one of {BASELINES}, got {basis!r}")


def book_owned(s: Scenario) -> tco.OwnedCost:
    """Cost of one old-generation GPU of an existing fleet per calendar hour (USD) by component, at its
    book value: the list price paid new (``server_a100_list_usd_per_gpu``) less straight-line
    depreciation over ``depreciation_years`` since its purchase ``a100_fleet_age_years`` ago, charged
    over the life it has left at the cost of capital (the straight-line charge, price / life a year,
    when the rate is 0); nothing once written off, so its hours then cost their running cost alone."""
    life = np.asarray(s["depreciation_years"], dtype=float)
    left = np.maximum(life - np.asarray(s[FLEET_AGE], dtype=float), 0.0)
    book = np.asarray(s[LIST_PRICE], dtype=float) * left / life
    cost = owned(s, OLD, years=np.maximum(left, 1e-9), price=book)
    on_books = left > 0
    return cost._replace(
        server=np.where(on_books, cost.server, 0.0), network_storage=np.where(on_books, cost.network_storage, 0.0)
    )


def fleet_basis(valuation: str) -> str:
    """The basis of :func:`old_hour_cost` that prices an existing fleet's hours at ``valuation``
    ("book" or "market": :data:`analyses.scenario.frame.FLEET_VALUES`)."""
    return {"book": "owned at book", "market": "owned"}[valuation]


def avoidable_basis(valuation: str) -> str:
    """The basis of :func:`old_hour_cost` that a replacement saves of an existing fleet's hours at
    ``valuation``: its running cost alone at book value (the remaining depreciation is carried either
    way), its market capital charge and running cost at market value (selling it frees the capital)."""
    return {"book": "keep owned", "market": "owned"}[valuation]


@named(
    "new_hour_cost",
    "cost of a B300-hour",
    "USD per GPU-hour",
    "One owned new-generation GPU per calendar hour: its market system price with network and storage, "
    "depreciated with the cost of capital, plus energy, hosting and staff; or its neocloud rent",
    audit="R11",
)
def new_hour_cost(s: Scenario, mode: str = "owned") -> np.ndarray:
    """Cost (USD) of one new-generation GPU-hour, ``mode`` "owned" (all in) or "rented"."""
    if mode == "owned":
        return owned(s, NEW).total
    if mode == "rented":
        return rented(s, NEW)
    raise ValueError(f"mode must be 'owned' or 'rented', got {mode!r}")


def hourly(s: Scenario, gpu: str, mode: str) -> np.ndarray:
    """Cost of one ``gpu``-hour (USD), ``mode`` = "owned" (all in) or "rented" (a neocloud)."""
    if gpu == NEW:
        return new_hour_cost(s, mode)
    if gpu == OLD:
        return old_hour_cost(s, "owned" if mode == "owned" else "rent" if mode == "rented" else mode)
    if mode == "owned":
        return owned(s, gpu).total
    if mode == "rented":
        return rented(s, gpu)
    raise ValueError(f"mode must be 'owned' or 'rented', got {mode!r}")


def useful_share(s: Scenario) -> np.ndarray:
    """Share of a paid GPU-hour that yields kept work: a job's busy share x goodput (owned and rented alike)."""
    return operations.busy_share(s) * operations.goodput(s)


def pflop_day_cost(s: Scenario, gpu: str, mode: str, workload: Any = "pretrain") -> np.ndarray:
    """Cost (USD) of one useful PFLOP-day on ``gpu`` owned or rented, at the scenario's MFU of that
    generation (the new one's at the speed-up of ``workload``, or at a speed-up given as a number), a
    job's busy share and goodput (:func:`analyses.models.tco.cost_per_effective_pflop_day`)."""
    return tco.cost_per_effective_pflop_day(
        hourly(s, gpu, mode), achieved_flop_per_s(s, gpu, workload), 1.0, operations.busy_share(s), operations.goodput(s)
    )


def same_task_ratio(
    s: Scenario,
    mode: str = "owned",
    x: ArrayLike | None = None,
    workload: str = "pretrain",
    old_basis: str | None = None,
) -> np.ndarray:
    """Cost of one task on the new generation over the old, owned or rented, at the speed-up of
    ``workload`` or at ``x`` (e.g. a document's own figure); ``old_basis`` prices the old
    generation's hours on another basis of :func:`old_hour_cost`."""
    per_gpu = speedup(s, workload) if x is None else x
    old = hourly(s, OLD, mode) if old_basis is None else old_hour_cost(s, old_basis)
    return tco.same_task_cost_ratio(hourly(s, NEW, mode), old, per_gpu)


def price_ratio(s: Scenario, mode: str = "owned", old_basis: str | None = None) -> np.ndarray:
    """Cost per GPU-hour of the new generation over the old, owned or rented (or the old on ``old_basis``)."""
    old = hourly(s, OLD, mode) if old_basis is None else old_hour_cost(s, old_basis)
    return hourly(s, NEW, mode) / old


def payback(
    s: Scenario, baseline: str = "rent in China", x: ArrayLike | None = None, workload: str = "pretrain"
) -> np.ndarray:
    """Months for one bought new-generation GPU to repay itself against doing the same work the old
    way (:func:`analyses.models.tco.replacement_payback_months`): the old generation's hours on
    ``baseline`` (:func:`old_hour_cost`; "keep owned" saves only their opex). A job's busy share and
    goodput apply to both sides and cancel; the bought GPU is taken to be scheduled every hour of
    the month. The speed-up is that of ``workload`` unless ``x`` is given."""
    per_gpu = speedup(s, workload) if x is None else x
    return tco.replacement_payback_months(capex_per_gpu(s, NEW), per_gpu, old_hour_cost(s, baseline), opex(s, NEW).total)


def workload_gpus(s: Scenario, gpu: str, pflop_days_per_month: ArrayLike) -> np.ndarray:
    """GPUs of ``gpu`` (fractional) that deliver ``pflop_days_per_month`` useful PFLOP-days a month."""
    return tco.gpus_for_workload(
        pflop_days_per_month, achieved_flop_per_s(s, gpu), 1.0, operations.busy_share(s), operations.goodput(s)
    )


def training_hours(s: Scenario, params: ArrayLike, gpu: str) -> np.ndarray:
    """GPU-hours of pretraining a dense model of ``params`` parameters on the scenario's tokens per
    parameter (:func:`analyses.models.flops.training_flops`, at the scenario's MFU and goodput)."""
    n = np.asarray(params, dtype=float)
    flop = flops.training_flops(n, n * np.asarray(s["tokens_per_param"], dtype=float))
    return tco.training_gpu_hours(flop, achieved_flop_per_s(s, gpu), 1.0, operations.goodput(s))


def training_cost(s: Scenario, params: ArrayLike, gpu: str, mode: str = "owned") -> np.ndarray:
    """Cost (USD) of :func:`training_hours` on ``gpu``, owned or rented."""
    return training_hours(s, params, gpu) * hourly(s, gpu, mode)


def wasted_share(s: Scenario) -> np.ndarray:
    """Share of paid old-generation GPU time that yields no model FLOPs: ``1 - busy share x goodput x MFU``."""
    return 1.0 - useful_share(s) * np.asarray(s[OLD_MFU])


def idle_share(s: Scenario) -> np.ndarray:
    """Share of paid GPU time lost to waits and reruns only: ``1 - busy share x goodput``."""
    return 1.0 - useful_share(s)
