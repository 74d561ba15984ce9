"""The documents' cost cases wiring with :mod:`analyses.models.tco`, and its amounts in RMB.

Thin compositions of the cost models with the figures of a case (``analyses.scenario.cases``) or a claim:
the GPU-days of document 000's recommender run, the owned and rented bills of document 001's
customer-service case, the payback of one B300, the training bill of "a large model". Every function
takes the scenario ``s`` (floats or arrays of draws) so the checks, the page and its Monte Carlo
call the same code.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from analyses import data
from analyses.models import tco
from analyses.scenario import cases, costs
from analyses.scenario.generations import NEW, OLD
from analyses.units import HOURS_PER_DAY, HOURS_PER_MONTH
from analyses.units.formats import NEVER_MONTHS, amount, scalar

# --------------------------------------------------------------------------------------------
# Amounts in RMB
# --------------------------------------------------------------------------------------------


def rmb(usd: Any, s: Mapping[str, Any], sig: int = 3) -> str:
    """A USD amount in RMB at the scenario's exchange rate."""
    return amount(scalar(usd) * scalar(s["usd_cny"]), "RMB", sig)


# --------------------------------------------------------------------------------------------
# The cases
# --------------------------------------------------------------------------------------------


def documents_speedup() -> tuple[float, float]:
    """The documents' own per-GPU speed-up of B300 over A100 (000 §3: about 2.5-3x)."""
    return cases.stated_speedup()


TCO_ROW = "000-3-table-tco"


def tco_row_stated() -> tuple[float, float]:
    """Document 000 §3's TCO of B300 for the same task as a share of A100's (low, high)."""
    c = data.claim(TCO_ROW)
    return c.value("tco_relative_low_pct") / 100, c.value("tco_relative_high_pct") / 100


def recommender_gpu_days() -> tuple[float, float]:
    """GPU-days of one full training before (A100) and after (B300) in document 000's case."""
    r = cases.recommender()
    return r.gpus_before * r.days_before, r.gpus_after * r.days_after


# The firm's own bill (000 §4, 月均算力总成本): its A100s at the price paid new, still on its books
RECOMMENDER_BASIS = "owned at list"


def recommender_cost_ratio(s: Mapping[str, Any], basis: str = RECOMMENDER_BASIS) -> np.ndarray:
    """Cost of one full training after / before at the case's own GPU counts and days: owned B300s
    against the firm's A100s valued on ``basis`` (:func:`analyses.scenario.costs.old_hour_cost`)."""
    before, after = recommender_gpu_days()
    return tco.usage_cost_ratio(costs.price_ratio(s, "owned", basis), before, after)


def recommender_run_cost(s: Mapping[str, Any], basis: str = RECOMMENDER_BASIS) -> np.ndarray:
    """Cost (USD) of one full training on the case's owned A100s: the month's work before the upgrade."""
    before, _ = recommender_gpu_days()
    return before * HOURS_PER_DAY * costs.old_hour_cost(s, basis)


def recommender_annual_saving_rmb(s: Mapping[str, Any], basis: str = RECOMMENDER_BASIS) -> tuple[np.ndarray, np.ndarray]:
    """RMB a year that the case's stated cut saves on the firm's monthly compute bill before the
    upgrade, its A100s valued on ``basis``: (the month's one full run, the whole 128-GPU fleet every hour)."""
    r = cases.recommender()
    hour = costs.old_hour_cost(s, basis) * np.asarray(s["usd_cny"], dtype=float)
    cut = 1 - r.cost_ratio
    run = recommender_gpu_days()[0] * HOURS_PER_DAY * hour * 12 * cut
    fleet = r.gpus_before * HOURS_PER_MONTH * hour * 12 * cut
    return run, fleet


def reserve_markup(share: Any) -> np.ndarray:
    """Extra cost per production PFLOP-day of keeping ``share`` of compute for exploration: 1/(1 - share) - 1."""
    return 1.0 / (1.0 - np.asarray(share, dtype=float)) - 1.0


def payback_value(
    s: Mapping[str, Any], baseline: str = "rent in China", speedup: Any = None, workload: str = "pretrain"
) -> np.ndarray:
    """Payback months of one bought B300 against ``baseline``, capped at :data:`NEVER_MONTHS`."""
    return np.minimum(costs.payback(s, baseline, speedup, workload), NEVER_MONTHS)


SEVERAL_MILLION = "001-0-several-million"


def training_sizes() -> tuple[float, float]:
    """The sizes (parameters) read as "a large model" in document 001 §0 (its claim's reading)."""
    c = data.claim(SEVERAL_MILLION)
    return c.value("params_low"), c.value("params_high")


def several_million_band() -> tuple[float, float]:
    """Document 001 §0's "several million" read as an RMB band (low, high)."""
    c = data.claim(SEVERAL_MILLION)
    return c.value("cost_low_rmb"), c.value("cost_high_rmb")


def training_cost_rmb(s: Mapping[str, Any], params: Any) -> np.ndarray:
    """Compute cost (RMB) of pretraining ``params`` on owned A100s (depreciation, energy, hosting, staff)."""
    return costs.training_cost(s, params, OLD, "owned") * np.asarray(s["usd_cny"], dtype=float)


def band_sizes(s: Mapping[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    """Parameter counts whose pretraining compute costs the low and the high end of the stated band:
    cost grows as params squared at fixed tokens per parameter."""
    n_lo, _ = training_sizes()
    small = training_cost_rmb(s, n_lo)
    low, high = (n_lo * np.sqrt(c / small) for c in several_million_band())
    return low, high


def rd_ratios(s: Mapping[str, Any]) -> dict[str, np.ndarray]:
    """The 7B anecdote's labour ratio (experiment-days) and compute-cost ratios under two readings:
    equal GPU counts at the anecdote's days, and the scenario's speed-up for the same work."""
    a = cases.startup_7b()
    days = a.experiment_days_ratio
    rounds = a.rounds_after / a.rounds_before
    price = costs.price_ratio(s, "owned")
    return {
        "labour": np.asarray(days),
        "compute_equal_counts": days * price,
        "compute_scenario": rounds * costs.same_task_ratio(s, "owned", workload="pretrain-7b"),
    }


def rental_rmb(s: Mapping[str, Any]) -> np.ndarray:
    """Monthly rent (RMB) of the case's GPU count of A100s around the clock in China, storage and network included."""
    hour = costs.old_hour_cost(s, "rent in China") * np.asarray(s["usd_cny"], dtype=float)
    return cases.customer_service().gpus * hour * HOURS_PER_MONTH


def own_rmb(s: Mapping[str, Any], case: cases.CustomerService | None = None) -> np.ndarray:
    """Monthly all-in cost (RMB) of the case's owned B300s, depreciated straight-line over its stated years
    (``case``: document 001's case, built once by a caller that evaluates this many times)."""
    c = case or cases.customer_service()
    hourly = costs.owned(s, NEW, years=c.depreciation_years, rate=0.0).total
    return c.gpus * hourly * HOURS_PER_MONTH * np.asarray(s["usd_cny"], dtype=float)


def own_implied_price(s: Mapping[str, Any]) -> np.ndarray:
    """B300 system price per GPU (USD) at which the case's stated monthly cost would be its full cost."""
    c = cases.customer_service()
    target = c.own_rmb_per_month / np.asarray(s["usd_cny"], dtype=float) / c.gpus
    run = costs.opex(s, NEW).total * HOURS_PER_MONTH
    return tco.implied_server_price_per_gpu(target, run, s["network_storage_fraction"], c.depreciation_years, 0.0)
