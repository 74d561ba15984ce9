"""The cost models fed from the scenario: a GPU-hour owned or rented, a useful PFLOP-day, the cost of
the same task on two generations, payback, a training bill.

:mod:`analyses.models.tco` and :mod:`analyses.models.gpu_hour_cost` take plain numbers; here every
input is read from ``s``, a mapping of the scenario's assumption names to floats or arrays of draws
(:func:`analyses.scenario.values`, :func:`analyses.scenario.sample`), and each GPU's power from its
datasheet, so the cost chapter, its checks and its Monte Carlo call the same functions. Achieved
FLOP/s and MFU come from the generation ladder (:mod:`analyses.scenario.generations`). USD unless a
name says otherwise; owned GPUs pay the Chinese electricity tariff of the documents' deployments.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from analyses import scenario
from analyses.models import flops, gpu_hour_cost, tco
from analyses.scenario import generations
from analyses.scenario.generations import NEW, OLD, OLD_MFU, SPEEDUP, achieved_flop_per_s

Scenario = Mapping[str, Any]
ArrayLike = float | np.ndarray
REGION = "china"  # the electricity tariff of owned GPUs in the documents' deployments
BASELINES = ("rent", "rent in China", "keep owned")


def priced() -> list[str]:
    """The GPUs the scenario prices (a system price and a neocloud rent), in launch order: the
    generations the cost chapter compares and the planner may place."""
    names = scenario.assumptions()
    return [g for g in generations.names() if gpu_hour_cost.has_prices(g, names)]


def _tdp(gpu: str) -> float:
    return generations.gpu(gpu).tdp_w


def capex_per_gpu(s: Scenario, gpu: str) -> np.ndarray:
    """Up-front cost of one owned GPU (USD): its system price plus network and storage."""
    return gpu_hour_cost.server_price(s, gpu) * (1.0 + np.asarray(s["network_storage_fraction"], dtype=float))


def opex(s: Scenario, gpu: str) -> tco.Opex:
    """Running cost of one owned ``gpu`` per calendar hour (USD), from the scenario."""
    return gpu_hour_cost.opex(s, _tdp(gpu), REGION)


def owned(s: Scenario, gpu: str, years: ArrayLike | None = None, rate: ArrayLike | None = None) -> tco.OwnedCost:
    """Cost of one owned ``gpu`` per calendar hour (USD) by component, from the scenario; ``years`` and
    ``rate`` replace the scenario's depreciation period and cost of capital (a case's own terms)."""
    return gpu_hour_cost.owned(s, gpu, _tdp(gpu), REGION, years, rate)


def rented(s: Scenario, gpu: str) -> np.ndarray:
    """Cost of one rented ``gpu``-hour at a neocloud (USD), storage and network included."""
    return gpu_hour_cost.rented(s, gpu)


def rented_a100_china_cny(s: Scenario) -> np.ndarray:
    """Cost of one rented A100-hour in China (CNY), storage and network included."""
    return tco.rented_cost_per_gpu_hour(s["rent_a100_china_cny_per_gpu_hour"], s["rental_overhead_fraction"])


def hourly(s: Scenario, gpu: str, mode: str) -> np.ndarray:
    """Cost of one ``gpu``-hour (USD), ``mode`` = "owned" (all in) or "rented"."""
    if mode == "owned":
        return owned(s, gpu).total
    if mode == "rented":
        return rented(s, gpu)
    raise ValueError(f"mode must be 'owned' or 'rented', got {mode!r}")


def pflop_day_cost(s: Scenario, gpu: str, mode: str, speedup: ArrayLike | None = None) -> np.ndarray:
    """Cost (USD) of one useful PFLOP-day on ``gpu`` owned or rented, at the scenario's MFU of that
    generation (the new one's from ``speedup``, a workload's, when given), utilisation and goodput
    (:func:`analyses.models.tco.cost_per_effective_pflop_day`)."""
    return tco.cost_per_effective_pflop_day(
        hourly(s, gpu, mode), achieved_flop_per_s(s, gpu, speedup), 1.0, s["utilisation"], s["goodput"]
    )


def same_task_ratio(s: Scenario, mode: str = "owned", speedup: ArrayLike | None = None) -> np.ndarray:
    """Cost of one task on the new generation over the old, owned or rented, at the scenario's
    speed-up or at ``speedup`` (e.g. a document's own figure)."""
    x = s[SPEEDUP] if speedup is None else speedup
    return tco.same_task_cost_ratio(hourly(s, NEW, mode), hourly(s, OLD, mode), x)


def price_ratio(s: Scenario, mode: str = "owned") -> np.ndarray:
    """Cost per GPU-hour of the new generation over the old, owned or rented."""
    return hourly(s, NEW, mode) / hourly(s, OLD, mode)


def payback(s: Scenario, baseline: str = "rent", speedup: ArrayLike | None = None) -> np.ndarray:
    """Months for one bought new-generation GPU to repay itself against doing the same work the old
    way (:func:`analyses.models.tco.replacement_payback_months`): ``rent`` old GPUs at a neocloud,
    ``rent in China``, or ``keep owned`` old GPUs whose capital is spent (only their opex is saved).
    The speed-up is the scenario's unless ``speedup`` is given."""
    if baseline == "rent":
        before = rented(s, OLD)
    elif baseline == "rent in China":
        before = rented_a100_china_cny(s) / np.asarray(s["usd_cny"], dtype=float)
    elif baseline == "keep owned":
        before = opex(s, OLD).total
    else:
        raise ValueError(f"baseline must be one of {BASELINES}, got {baseline!r}")
    x = s[SPEEDUP] if speedup is None else speedup
    return tco.replacement_payback_months(capex_per_gpu(s, NEW), x, before, opex(s, NEW).total)


def workload_gpus(s: Scenario, gpu: str, pflop_days_per_month: ArrayLike) -> np.ndarray:
    """GPUs of ``gpu`` (fractional) that deliver ``pflop_days_per_month`` useful PFLOP-days a month."""
    return tco.gpus_for_workload(pflop_days_per_month, achieved_flop_per_s(s, gpu), 1.0, s["utilisation"], s["goodput"])


def training_hours(s: Scenario, params: ArrayLike, gpu: str) -> np.ndarray:
    """GPU-hours of pretraining a dense model of ``params`` parameters on the scenario's tokens per
    parameter (:func:`analyses.models.flops.training_flops`, at the scenario's MFU and goodput)."""
    n = np.asarray(params, dtype=float)
    flop = flops.training_flops(n, n * np.asarray(s["tokens_per_param"], dtype=float))
    return tco.training_gpu_hours(flop, achieved_flop_per_s(s, gpu), 1.0, s["goodput"])


def training_cost(s: Scenario, params: ArrayLike, gpu: str, mode: str = "owned") -> np.ndarray:
    """Cost (USD) of :func:`training_hours` on ``gpu``, owned or rented."""
    return training_hours(s, params, gpu) * hourly(s, gpu, mode)


def wasted_share(s: Scenario) -> np.ndarray:
    """Share of paid old-generation GPU time that yields no model FLOPs: ``1 - utilisation x goodput x MFU``."""
    return 1.0 - np.asarray(s["utilisation"]) * np.asarray(s["goodput"]) * np.asarray(s[OLD_MFU])


def idle_share(s: Scenario) -> np.ndarray:
    """Share of paid GPU time lost to idle hours and reruns only: ``1 - utilisation x goodput``."""
    return 1.0 - np.asarray(s["utilisation"]) * np.asarray(s["goodput"])
