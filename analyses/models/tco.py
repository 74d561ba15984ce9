"""Total cost of ownership: owned vs rented GPU-hours, cost per useful PFLOP-day, payback, implied prices.

Every function takes plain numbers or numpy arrays (broadcast together) and returns the same, so a
model evaluated at the central inputs, on 100,000 Monte Carlo draws or at one input's low and high
is the same code. Money is in one currency per call (USD unless a name says otherwise); time is in
hours unless a name says otherwise.

Conventions (stated once):

* A GPU-hour of an **owned** GPU is a calendar hour of ownership, busy or not: the capital charge,
  staff and hosting accrue regardless, and energy is charged at the node's full power (TDP x node
  overhead x PUE), an upper bound on draw.
* A GPU-hour of a **rented** GPU is a billed hour; storage, network and egress are a fraction on
  top of the GPU rate.
* Useful compute is ``achieved FLOP/s x utilisation x goodput``, with achieved FLOP/s = dense peak
  x MFU of a busy, healthy job; utilisation is the share of (owned or billed) hours a job runs and
  goodput the share of run time not lost to failures and reruns. A PFLOP-day is 1e15 FLOP/s for a day.
* Time conventions (hours per year and month) are those of :mod:`analyses.units`.
* The capital charge uses the annuity (capital recovery) factor ``r / (1 - (1 + r)^-n)``, which
  reduces to straight-line depreciation ``1/n`` at ``r = 0``.

:mod:`analyses.scenario.costs` feeds these models from the book's one scenario.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from analyses.units import (
    DAYS_PER_MONTH,
    HOURS_PER_DAY,
    HOURS_PER_MONTH,
    HOURS_PER_YEAR,
    MONTHS_PER_YEAR,
    PETA,
    SECONDS_PER_HOUR,
)

ArrayLike = float | np.ndarray
COST_BASES = ("rented", "owned")  # how a GPU-hour is paid for
RENT_CLASSES = ("neocloud", "hyperscaler")  # who rents it out
ELECTRICITY_REGIONS = ("us", "china")  # whose electricity tariff an owned GPU pays

# --------------------------------------------------------------------------------------------
# Cost per GPU-hour
# --------------------------------------------------------------------------------------------


def capital_recovery_factor(rate: ArrayLike, years: ArrayLike) -> np.ndarray:
    """Annual payment per unit of capital repaid over ``years`` at annual ``rate`` (1/year).

    ``r / (1 - (1 + r)^-n)``; ``1/n`` when ``r = 0`` (straight-line depreciation, no interest).
    Standard annuity formula (e.g. Brealey, Myers & Allen, *Principles of Corporate Finance*, ch. 2).
    """
    rate, years = np.asarray(rate, dtype=float), np.asarray(years, dtype=float)
    safe = np.where(rate == 0, 1.0, rate)
    # 1 - (1 + r)^-n as -expm1(-n log1p(r)): the plain form is 1 - 1 = 0 for a rate below about 1e-16
    # (a division by zero, then NaN costs everywhere), and loses digits for any small rate
    return np.where(rate == 0, 1.0 / years, safe / -np.expm1(-years * np.log1p(safe)))


class OwnedCost(NamedTuple):
    """Cost of one owned GPU per calendar hour, by component (currency per GPU-hour)."""

    server: np.ndarray
    network_storage: np.ndarray
    energy: np.ndarray
    hosting: np.ndarray
    staff: np.ndarray

    @property
    def total(self) -> np.ndarray:
        return self.server + self.network_storage + self.energy + self.hosting + self.staff

    @property
    def capital(self) -> np.ndarray:
        """The capital charge (server, network and storage)."""
        return self.server + self.network_storage

    @property
    def opex(self) -> np.ndarray:
        """Running cost without the capital charge (energy, hosting, staff)."""
        return self.energy + self.hosting + self.staff


COMPONENTS = OwnedCost._fields


class Opex(NamedTuple):
    """Running cost of one owned GPU per calendar hour (currency per GPU-hour)."""

    energy: np.ndarray
    hosting: np.ndarray
    staff: np.ndarray

    @property
    def total(self) -> np.ndarray:
        return self.energy + self.hosting + self.staff


def opex_per_gpu_hour(
    tdp_w: ArrayLike,
    server_power_overhead: ArrayLike,
    pue: ArrayLike,
    electricity_per_kwh: ArrayLike,
    hosting_per_kw_month: ArrayLike,
    staff_per_gpu_year: ArrayLike,
) -> Opex:
    """Running cost of owning one GPU for one calendar hour.

    * energy: ``TDP/1000 x overhead x PUE x electricity`` (kW x $/kWh)
    * hosting: ``TDP/1000 x overhead x hosting_per_kw_month x 12 / hours per year`` (rent per provisioned kW)
    * staff: ``staff_per_gpu_year / hours per year``
    """
    node_kw = np.asarray(tdp_w, dtype=float) / 1000.0 * np.asarray(server_power_overhead, dtype=float)
    return Opex(
        energy=node_kw * np.asarray(pue, dtype=float) * np.asarray(electricity_per_kwh, dtype=float),
        hosting=node_kw * np.asarray(hosting_per_kw_month, dtype=float) * MONTHS_PER_YEAR / HOURS_PER_YEAR,
        staff=np.asarray(staff_per_gpu_year, dtype=float) / HOURS_PER_YEAR,
    )


def owned_cost_per_gpu_hour(
    server_price_per_gpu: ArrayLike,
    network_storage_fraction: ArrayLike,
    depreciation_years: ArrayLike,
    cost_of_capital: ArrayLike,
    tdp_w: ArrayLike,
    server_power_overhead: ArrayLike,
    pue: ArrayLike,
    electricity_per_kwh: ArrayLike,
    hosting_per_kw_month: ArrayLike,
    staff_per_gpu_year: ArrayLike,
) -> OwnedCost:
    """Cost of owning one GPU for one calendar hour, split into its components.

    * server: ``price x CRF(rate, years) / hours per year``
    * network and storage: the same with ``price x network_storage_fraction``
    * energy, hosting, staff: :func:`opex_per_gpu_hour`
    """
    crf = capital_recovery_factor(cost_of_capital, depreciation_years)
    price = np.asarray(server_price_per_gpu, dtype=float)
    run = opex_per_gpu_hour(
        tdp_w, server_power_overhead, pue, electricity_per_kwh, hosting_per_kw_month, staff_per_gpu_year
    )
    return OwnedCost(
        server=price * crf / HOURS_PER_YEAR,
        network_storage=price * np.asarray(network_storage_fraction, dtype=float) * crf / HOURS_PER_YEAR,
        energy=run.energy,
        hosting=run.hosting,
        staff=run.staff,
    )


def rented_cost_per_gpu_hour(rent_per_gpu_hour: ArrayLike, rental_overhead_fraction: ArrayLike) -> np.ndarray:
    """Cost of one billed rented GPU-hour: the GPU rate plus storage, network and egress on top."""
    return np.asarray(rent_per_gpu_hour, dtype=float) * (1.0 + np.asarray(rental_overhead_fraction, dtype=float))


# --------------------------------------------------------------------------------------------
# Cost per useful unit
# --------------------------------------------------------------------------------------------


def effective_flop_per_s(
    peak_flops: ArrayLike, mfu: ArrayLike, utilisation: ArrayLike = 1.0, goodput: ArrayLike = 1.0
) -> np.ndarray:
    """Useful FLOP/s per GPU averaged over paid hours: peak x MFU x utilisation x goodput."""
    return np.asarray(peak_flops, dtype=float) * np.asarray(mfu) * np.asarray(utilisation) * np.asarray(goodput)


def cost_per_effective_pflop_day(
    cost_per_gpu_hour: ArrayLike,
    peak_flops: ArrayLike,
    mfu: ArrayLike,
    utilisation: ArrayLike,
    goodput: ArrayLike,
) -> np.ndarray:
    """Cost of one useful PFLOP-day (8.64e19 FLOP): the documents' 'investment / effective TFLOPS-days'.

    ``cost_per_gpu_hour x 24 x 1e15 / (peak x MFU x utilisation x goodput)``: the cost of the
    GPU-days needed to deliver 1e15 useful FLOP/s for a day. Document 001, section 6, states the
    metric without a time base; here cost and delivered compute cover the same hours.
    """
    flops = effective_flop_per_s(peak_flops, mfu, utilisation, goodput)
    return np.asarray(cost_per_gpu_hour, dtype=float) * HOURS_PER_DAY * PETA / flops


def gpus_for_workload(
    pflop_days_per_month: ArrayLike, peak_flops: ArrayLike, mfu: ArrayLike, utilisation: ArrayLike, goodput: ArrayLike
) -> np.ndarray:
    """GPUs (fractional) needed to deliver ``pflop_days_per_month`` useful PFLOP-days each month."""
    per_gpu = effective_flop_per_s(peak_flops, mfu, utilisation, goodput) / PETA * DAYS_PER_MONTH
    return np.asarray(pflop_days_per_month, dtype=float) / per_gpu


def training_gpu_hours(
    training_flop: ArrayLike, peak_flops: ArrayLike, mfu: ArrayLike, goodput: ArrayLike = 1.0
) -> np.ndarray:
    """GPU-hours for a training run of ``training_flop`` FLOP (6ND for a dense transformer).

    ``FLOP / (peak x MFU x goodput x 3600)``; a dedicated run, so utilisation does not enter.
    """
    return np.asarray(training_flop, dtype=float) / (
        effective_flop_per_s(peak_flops, mfu, 1.0, goodput) * SECONDS_PER_HOUR
    )


def same_task_cost_ratio(
    new_cost_per_gpu_hour: ArrayLike, old_cost_per_gpu_hour: ArrayLike, speedup: ArrayLike
) -> np.ndarray:
    """Cost of one task on the new GPU over its cost on the old one (the same output on both sides).

    The task needs ``1 / speedup`` as many new GPU-hours as old ones (at equal utilisation and
    goodput), so the ratio is the price ratio per GPU-hour divided by the per-GPU speed-up.
    """
    return np.asarray(new_cost_per_gpu_hour, dtype=float) / np.asarray(old_cost_per_gpu_hour, dtype=float) / speedup


def payback_months(capex: ArrayLike, monthly_cost_before: ArrayLike, monthly_opex_after: ArrayLike) -> np.ndarray:
    """Months until an up-front ``capex`` is repaid by the monthly saving (inf when nothing is saved).

    Simple (undiscounted) payback: ``capex / (cost_before - opex_after)``.
    """
    saving = np.asarray(monthly_cost_before, dtype=float) - np.asarray(monthly_opex_after, dtype=float)
    capex = np.asarray(capex, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(saving > 0, capex / np.where(saving > 0, saving, 1.0), np.inf)


def replacement_payback_months(
    capex_per_gpu: ArrayLike, speedup: ArrayLike, old_cost_per_gpu_hour: ArrayLike, new_opex_per_gpu_hour: ArrayLike
) -> np.ndarray:
    """Payback of buying one new GPU to do the work of ``speedup`` old GPUs (the same output).

    Before, the work costs ``speedup x old_cost_per_gpu_hour`` an hour (a rent, or an old GPU's
    opex); after, the new GPU's opex. The hours cancel at equal utilisation and goodput, so the
    payback does not depend on the size of the workload: :func:`payback_months` per new GPU.
    """
    before = np.asarray(speedup, dtype=float) * np.asarray(old_cost_per_gpu_hour, dtype=float) * HOURS_PER_MONTH
    return payback_months(capex_per_gpu, before, np.asarray(new_opex_per_gpu_hour, dtype=float) * HOURS_PER_MONTH)


# --------------------------------------------------------------------------------------------
# Implied inputs (solving the documents' stated results for the input that would make them true)
# --------------------------------------------------------------------------------------------


def usage_cost_ratio(price_ratio: ArrayLike, gpu_hours_before: ArrayLike, gpu_hours_after: ArrayLike) -> np.ndarray:
    """Cost after / before of a job that took ``gpu_hours_before`` and now takes ``gpu_hours_after``,
    with a GPU-hour now ``price_ratio`` times as dear: ``price_ratio x hours_after / hours_before``."""
    return np.asarray(price_ratio, dtype=float) * np.asarray(gpu_hours_after, dtype=float) / gpu_hours_before


def implied_price_ratio(cost_ratio: ArrayLike, gpu_hours_before: ArrayLike, gpu_hours_after: ArrayLike) -> np.ndarray:
    """Price per GPU-hour after / before that makes ``cost_after / cost_before = cost_ratio``.

    Cost = GPU-hours x price per GPU-hour, so ``ratio = cost_ratio x hours_before / hours_after``.
    """
    return np.asarray(cost_ratio, dtype=float) * np.asarray(gpu_hours_before, dtype=float) / gpu_hours_after


def implied_server_price_per_gpu(
    monthly_cost_per_gpu: ArrayLike,
    monthly_opex_per_gpu: ArrayLike,
    network_storage_fraction: ArrayLike,
    depreciation_years: ArrayLike,
    cost_of_capital: ArrayLike,
) -> np.ndarray:
    """Server price per GPU at which an owned GPU costs ``monthly_cost_per_gpu`` a month in all.

    Inverts :func:`owned_cost_per_gpu_hour`: the capital charge left after opex is
    ``price x (1 + f) x CRF / 12`` per month, so ``price = (cost - opex) x 12 / ((1 + f) x CRF)``.
    Negative when opex alone exceeds the target.
    """
    crf = capital_recovery_factor(cost_of_capital, depreciation_years)
    left = np.asarray(monthly_cost_per_gpu, dtype=float) - np.asarray(monthly_opex_per_gpu, dtype=float)
    return left * 12.0 / ((1.0 + np.asarray(network_storage_fraction, dtype=float)) * crf)


def rd_cost_ratio(labour_share: ArrayLike, labour_ratio: ArrayLike, compute_ratio: ArrayLike) -> np.ndarray:
    """Total R&D cost after / before when labour (share ``w`` of the cost before) changes by
    ``labour_ratio`` and compute by ``compute_ratio``: ``w x labour_ratio + (1 - w) x compute_ratio``."""
    w = np.asarray(labour_share, dtype=float)
    return w * np.asarray(labour_ratio, dtype=float) + (1.0 - w) * np.asarray(compute_ratio, dtype=float)


def labour_share_for_ratio(target_ratio: ArrayLike, labour_ratio: ArrayLike, compute_ratio: ArrayLike) -> np.ndarray:
    """Labour share of R&D cost at which :func:`rd_cost_ratio` equals ``target_ratio`` (solved for ``w``):
    ``(target - compute) / (labour - compute)``; outside [0, 1] no labour share gives the target."""
    target, labour, compute = (np.asarray(x, dtype=float) for x in (target_ratio, labour_ratio, compute_ratio))
    with np.errstate(divide="ignore", invalid="ignore"):
        return (target - compute) / (labour - compute)
