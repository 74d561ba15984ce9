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
import pandas as pd

from analyses import data
from analyses.models import tco
from analyses.scenario import cases, costs, frame
from analyses.scenario.generations import NEW, OLD
from analyses.units import HOURS_PER_DAY, HOURS_PER_MONTH
from analyses.units.formats import NEVER_MONTHS, amount, scalar, stated
from analyses.verdicts import Reading

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


def at_documents(fn: Any) -> tuple[Reading, Reading]:
    """A claim recomputed at the documents' own per-GPU speed-up (000 §3: about 2.5-3x): ``fn(x)`` is its value."""
    lo, hi = documents_speedup()
    return (Reading(f"{stated(lo)}× per GPU", value=fn(lo)), Reading(f"{stated(hi)}×", value=fn(hi)))


def valuation_of(cfg: Mapping[str, Any]) -> tuple[str, str]:
    """(the frame's valuation of an existing fleet at ``cfg``, the reader's alternative)."""
    value = frame.fleet_value(cfg)
    return value, next(v for v in frame.FLEET_VALUES if v != value)


def fleet_words(valuation: str) -> str:
    """An owned A100 fleet at ``valuation`` in words, as the cost checks' reasons name it."""
    return f"its {OLD}s at book value" if valuation == "book" else f"its {OLD}s at today's second-hand price"


TCO_ROW = "000-3-table-tco"


def tco_row_stated() -> tuple[float, float]:
    """Document 000 §3's TCO of B300 for the same task as a share of A100's (low, high)."""
    c = data.claim(TCO_ROW)
    return c.value("tco_relative_low_pct") / 100, c.value("tco_relative_high_pct") / 100


def recommender_gpu_days() -> tuple[float, float]:
    """GPU-days of one full training before (A100) and after (B300) in document 000's case."""
    r = cases.recommender()
    return r.gpus_before * r.days_before, r.gpus_after * r.days_after


def recommender_monthly_gpu_days() -> tuple[float, float]:
    """GPU-days the case's stated runs take each month before (A100) and after (B300): runs a month x
    GPUs x days per run (000 §4: one 28-day run on 128 A100s; three 11-day runs on 96 B300s)."""
    r = cases.recommender()
    return r.runs_before * r.gpus_before * r.days_before, r.runs_after * r.gpus_after * r.days_after


def recommender_monthly_usd(s: Mapping[str, Any], valuation: str = "book") -> tuple[np.ndarray, np.ndarray]:
    """The firm's monthly compute spend (USD) before and after, 000 §4's 月均算力总成本: the GPU-days of the
    month's stated runs at the book's cost per GPU-hour, its A100s valued at ``valuation`` (the frame's
    rule, :func:`analyses.scenario.costs.fleet_basis`), the B300s bought at today's price."""
    before, after = recommender_monthly_gpu_days()
    old = costs.old_hour_cost(s, costs.fleet_basis(valuation))
    return before * HOURS_PER_DAY * old, after * HOURS_PER_DAY * costs.new_hour_cost(s, "owned")


def recommender_cost_ratio(s: Mapping[str, Any], valuation: str = "book") -> np.ndarray:
    """The firm's monthly compute spend after / before (:func:`recommender_monthly_usd`)."""
    before, after = recommender_monthly_usd(s, valuation)
    return after / before


def recommender_run_cost_ratio(s: Mapping[str, Any], valuation: str = "book") -> np.ndarray:
    """One training run's cost after / before (one 11-day run on 96 B300s against one 28-day run on 128
    A100s, :func:`recommender_gpu_days`) at the GPU-hour prices of :func:`recommender_monthly_usd`: the
    claim priced per run, not per month (:func:`analyses.models.tco.usage_cost_ratio`)."""
    before, after = recommender_gpu_days()
    return tco.usage_cost_ratio(costs.price_ratio(s, "owned", costs.fleet_basis(valuation)), before, after)


def recommender_fleet_ratio(s: Mapping[str, Any], valuation: str = "book") -> np.ndarray:
    """The same spend counted as each fleet's every hour (96 B300s against 128 A100s around the clock)."""
    r = cases.recommender()
    return tco.usage_cost_ratio(costs.price_ratio(s, "owned", costs.fleet_basis(valuation)), r.gpus_before, r.gpus_after)


def recommender_annual_saving_rmb(s: Mapping[str, Any], valuation: str = "book") -> np.ndarray:
    """RMB a year the upgrade saves on the firm's compute spend: twelve months of before less after
    (:func:`recommender_monthly_usd`; negative when the new fleet costs more)."""
    before, after = recommender_monthly_usd(s, valuation)
    return 12 * (before - after) * np.asarray(s["usd_cny"], dtype=float)


def recommender_stated_cut_rmb(s: Mapping[str, Any], valuation: str = "book") -> np.ndarray:
    """RMB a year that the stated cut would save of the firm's spend before (the claim's two figures together)."""
    before, _ = recommender_monthly_usd(s, valuation)
    return 12 * (1 - cases.recommender().cost_ratio) * before * np.asarray(s["usd_cny"], dtype=float)


def reserve_markup(share: Any) -> np.ndarray:
    """Extra cost per production PFLOP-day of keeping ``share`` of compute for exploration: 1/(1 - share) - 1."""
    return 1.0 / (1.0 - np.asarray(share, dtype=float)) - 1.0


def payback_value(
    s: Mapping[str, Any], baseline: str = "rent in China", speedup: Any = None, workload: str = "pretrain"
) -> np.ndarray:
    """Payback months of one bought B300 against ``baseline``, capped at :data:`NEVER_MONTHS`."""
    return np.minimum(costs.payback(s, baseline, speedup, workload), NEVER_MONTHS)


def payback_baseline(document: str, valuation: str = "book") -> str:
    """The basis of :func:`analyses.scenario.costs.old_hour_cost` a document's payback saves: its case's
    status quo (:func:`analyses.scenario.frame.status_quo`), an owned fleet's avoidable cost at ``valuation``."""
    quo = frame.status_quo(document).value
    return costs.avoidable_basis(valuation) if quo == "owned" else quo


def payback_terms(document: str, valuation: str, other: str) -> tuple[str, tuple[tuple[str, str], ...], str]:
    """What a document's payback claim is recomputed on: the workload of its case (000: the reference
    pretraining; 001: its fine-tune), the other status quos it is also shown against (label, basis of
    :func:`payback_value`), and what the bought B300 replaces in words (``{x}``: its speed-up)."""
    if not document.startswith("000"):
        was = f"instead of renting in China the {{x}} {OLD}s whose work it does"
        return "finetune", ((f"against {OLD}s rented at a neocloud", "rent"),), was
    alternatives = (
        (f"{fleet_words(other)} (selling them frees their value)", payback_baseline(document, other)),
        (f"against {OLD}s rented in China", "rent in China"),
    )
    kept = (
        "their remaining depreciation is carried either way, so the upgrade saves their running cost"
        if valuation == "book"
        else "selling them frees their value"
    )
    return "pretrain", alternatives, f"instead of running the {{x}} owned {OLD}s whose work it does ({fleet_words(valuation)}: {kept})"


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


# --------------------------------------------------------------------------------------------
# The China context: export rules and the Chinese market's prices
# --------------------------------------------------------------------------------------------

CHINA_PROVIDERS = ("china", "china-cloud")  # the price rows of data/prices.csv that describe the Chinese market


def export_controls() -> pd.DataFrame:
    """The US export rules on advanced GPUs to China, in date order (``data/export_controls.csv``)."""
    return data.table("export_controls").sort_values("effective", kind="stable").reset_index(drop=True)


def china_prices() -> pd.DataFrame:
    """The rows of ``data/prices.csv`` that price GPUs in China (servers and rents), with their dates and sources."""
    prices = data.table("prices")
    rows = prices[prices["provider_class"].isin(CHINA_PROVIDERS) & prices["gpu"].notna() & (prices["gpu"] != "")]
    return rows[["id", "gpu", "item", "currency", "unit", "low", "central", "high", "date", "source"]].reset_index(drop=True)
