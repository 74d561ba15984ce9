"""Cost of one GPU-hour of each generation, rented or owned, with every price read from the scenario.

The book's TCO model (:func:`analyses.models.tco.rented_cost_per_gpu_hour`,
:func:`analyses.models.tco.owned_cost_per_gpu_hour`) fed with the scenario's assumptions
(:mod:`analyses.scenario`): the system price per GPU ``server_<gpu>_usd_per_gpu``, the rent
``rent_<gpu>_usd_per_gpu_hour`` (neocloud) or ``rent_<gpu>_hyperscaler_usd_per_gpu_hour``, the
electricity tariff of a region, PUE, hosting, node power overhead, network and storage, rental
overhead, staff, depreciation period and cost of capital. ``s`` maps assumption names to floats
(central values) or equal-length arrays (Monte Carlo draws from :func:`analyses.scenario.sample`),
so the central cost and its draws are the same code, and the TCO chapter, drawing the same
assumptions with the same seed, sees the same values.

Conventions are :mod:`analyses.models.tco`'s: an owned GPU-hour is a calendar hour of ownership at
full power; a rented GPU-hour is a billed hour with storage and network on top. USD.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from analyses.models import tco

RENT_CLASSES = ("neocloud", "hyperscaler")
ELECTRICITY_REGIONS = ("us", "china")
COST_BASES = ("rented", "owned")

ELECTRICITY = {"china": "electricity_usd_per_kwh", "us": "electricity_us_usd_per_kwh"}
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
    if rent_class not in RENT_CLASSES:
        raise ValueError(f"rent_class must be one of {RENT_CLASSES}, got {rent_class!r}")
    middle = "" if rent_class == "neocloud" else f"_{rent_class}"
    return f"rent_{gpu.lower()}{middle}_usd_per_gpu_hour"


def inputs(gpu: str, rent_class: str, region: str, names: Mapping[str, Any]) -> tuple[str, ...]:
    """The assumptions one GPU-hour of ``gpu`` reads, of those ``names`` (the scenario) holds.

    A generation without a rent in ``rent_class`` has none among them: its rented cost is NaN.
    """
    wanted = (
        server_name(gpu),
        rent_name(gpu, rent_class),
        ELECTRICITY[region],
        *OWNED_SHARED,
        *RENTED_SHARED,
    )
    return tuple(n for n in wanted if n in names)


def server_price(s: Mapping[str, Any], gpu: str) -> np.ndarray:
    """System price per GPU (USD): ``server_<gpu>_usd_per_gpu``."""
    return np.asarray(s[server_name(gpu)], dtype=float)


def opex(s: Mapping[str, Any], tdp_w: float, region: str = "china") -> tco.Opex:
    """Running cost of one owned GPU of ``tdp_w`` per calendar hour (USD) at the ``region``'s tariff."""
    return tco.opex_per_gpu_hour(
        tdp_w,
        s["server_power_overhead"],
        s["pue"],
        s[_electricity(region)],
        s["hosting_usd_per_kw_month"],
        s["staff_usd_per_gpu_year"],
    )


def owned(
    s: Mapping[str, Any],
    gpu: str,
    tdp_w: float,
    region: str = "china",
    years: Any = None,
    rate: Any = None,
    price: Any = None,
) -> tco.OwnedCost:
    """Cost of one owned ``gpu`` per calendar hour (USD) by component: capital (server plus network and
    storage, annuity over the depreciation period at the cost of capital), energy at ``tdp_w`` times
    the node overhead and PUE at the ``region``'s tariff, hosting per kW and staff. ``years`` and
    ``rate`` replace the scenario's depreciation period and cost of capital (a case's own terms),
    ``price`` its system price per GPU."""
    return tco.owned_cost_per_gpu_hour(
        server_price_per_gpu=s[server_name(gpu)] if price is None else price,
        network_storage_fraction=s["network_storage_fraction"],
        depreciation_years=s["depreciation_years"] if years is None else years,
        cost_of_capital=s["cost_of_capital"] if rate is None else rate,
        tdp_w=tdp_w,
        server_power_overhead=s["server_power_overhead"],
        pue=s["pue"],
        electricity_per_kwh=s[_electricity(region)],
        hosting_per_kw_month=s["hosting_usd_per_kw_month"],
        staff_per_gpu_year=s["staff_usd_per_gpu_year"],
    )


def rented(s: Mapping[str, Any], gpu: str, rent_class: str = "neocloud") -> np.ndarray:
    """Cost of one billed ``gpu``-hour of ``rent_class`` (USD), storage and network included (NaN when
    the scenario has no such rent)."""
    rent = rent_name(gpu, rent_class)
    overhead = np.asarray(s["rental_overhead_fraction"], dtype=float)
    if rent not in s:
        return np.full(np.shape(overhead), np.nan)
    return np.asarray(tco.rented_cost_per_gpu_hour(s[rent], overhead), dtype=float)


def _electricity(region: str) -> str:
    if region not in ELECTRICITY:
        raise ValueError(f"region must be one of {tuple(ELECTRICITY)}, got {region!r}")
    return ELECTRICITY[region]


def per_gpu_hour(s: Mapping[str, Any], gpu: str, tdp_w: float, rent_class: str, region: str) -> dict[str, np.ndarray]:
    """Cost of one GPU-hour of ``gpu`` (USD), ``{"rented": ..., "owned": ...}``, from the scenario ``s``:
    :func:`rented` at ``rent_class`` and the total of :func:`owned` at the ``region``'s tariff; NaN
    where the scenario has no such rent or no system price for ``gpu``."""
    _electricity(region)
    rent = rented(s, gpu, rent_class)
    if server_name(gpu) not in s:  # no system price in the scenario: say so, never invent one
        return {"rented": rent, "owned": np.full(np.shape(rent), np.nan)}
    return {"rented": rent, "owned": np.asarray(owned(s, gpu, tdp_w, region).total, dtype=float)}


def has_prices(gpu: str, names: Mapping[str, Any]) -> bool:
    """Whether the scenario ``names`` prices ``gpu``: a system price and a neocloud rent."""
    return server_name(gpu) in names and rent_name(gpu) in names
