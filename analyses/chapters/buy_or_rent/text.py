"""Sentences of the buy-or-rent page, each read from a computed :class:`~analyses.chapters.buy_or_rent.Result`
(they branch on which option is cheapest, per workload), and :func:`glued`, every number and phrase the
page glues."""

from __future__ import annotations

from typing import Any

import pandas as pd

from analyses.chapters.buy_or_rent import Result
from analyses.models.uncertainty import INTERVAL_LEVEL
from analyses.pages.currency import rate_words
from analyses.scenario import buying
from analyses.units import SECONDS_PER_DAY
from analyses.units.formats import billions, duration, fmt, millions, percent, span


def money(res: Result, x: float, sig: int = 3) -> str:
    """An amount in the page's currency."""
    return str(fmt(x, res.currency, sig))


def money_span(res: Result, lo: float, hi: float) -> str:
    """A 90% range of an amount in the page's currency."""
    return span(lo, hi, res.currency, 2)


def days(x: float) -> str:
    """A run's length: days from two days up, hours below."""
    return str(duration(x * SECONDS_PER_DAY))


def rate(res: Result) -> str:
    """The exchange rate the page converts at, with its source and date."""
    return rate_words(res.s)


def basis(res: Result) -> str:
    """The convention every answer on the page follows, in words."""
    precision = res.cfg["precision"].upper()
    on = "every generation" if res.cfg["precision"] == "bf16" else "every generation that has it (A100 in BF16)"
    currency = (
        f"in {res.currency}, converted from the USD prices at {rate(res)}"
        if res.currency != "USD"
        else f"in USD (RMB at {rate(res)})"
    )
    return (
        f"A run's time is the planner's: the cheapest parallel layout that meets the deadline (the fastest where "
        f"none does), in {precision} on {on}, failures and checkpoints included. Its cost is the GPU-hours it "
        "occupies times the price of a GPU-hour: rented, the neocloud rent with storage and network; owned, the "
        "calendar-hour cost of an owned GPU (capital over the depreciation period at the cost of capital, energy "
        "at the Chinese tariff of the documents' deployments, hosting, staff), charged for the run's hours only. "
        f"Amounts are {currency}."
    )


def cheapest_sentence(res: Result, workload: str) -> str:
    """The answer for one workload: the cheapest rented and owned options, and when owning pays."""
    answer = res.answer(workload)
    if answer is None:
        return "No generation can run it: the model fits no layout within the GPUs allowed."
    rented, owned, pair = answer
    miss = "" if rented["meets_deadline"] else " (no generation meets the deadline: the fastest is shown)"
    return (
        f"Cheapest rented: {int(rented['n_gpus']):,} × {rented['gpu']}, {days(rented['days'])}, "
        f"{money(res, rented['cost'])} ({money_span(res, rented['cost_lo'], rented['cost_hi'])}){miss}. "
        f"Cheapest owned: {int(owned['n_gpus']):,} × {owned['gpu']}, {money(res, owned['cost'])} "
        f"({money_span(res, owned['cost_lo'], owned['cost_hi'])}) for the run's hours, against "
        f"{money(res, pair['cost'])} to rent the same {owned['gpu']}s: owning them pays only if they are busy more "
        f"than {percent(owned['break_even_utilisation'])} of the time."
    )


def bottom_line_more(res: Result) -> str:
    """What follows the bottom line's sentence (HTML): where the ranges and the reader's own prices are."""
    return (
        f"Every generation with {fmt(INTERVAL_LEVEL, pct=True, sig=2)} ranges below; "
        '<a href="#sec-bor-calculator">the calculator</a> answers at your prices and busy share.'
    )


def sensitive_sentence(res: Result, workload: str) -> str:
    """What moves the cheapest answers most."""
    parts = []
    for basis in ("rented", "owned"):
        row = res.cheapest(workload, basis)
        if row is None or not row["sensitive_to"]:
            continue
        parts.append(
            f"the {basis} {row['gpu']} run is most sensitive to {row['sensitive_to'].replace(' (90% range)', '')}, "
            f"which moves it over {money_span(res, row['sensitive_lo'], row['sensitive_hi'])}"
        )
    return ("Across the inputs' ranges " + "; ".join(parts) + ".") if parts else ""


def not_covered_sentence(res: Result) -> str:
    """Which generations of the documents' span are missing, and why."""
    if not res.not_covered:
        return ""
    names, one = ", ".join(res.not_covered), len(res.not_covered) == 1
    return (
        f"{names} {'is' if one else 'are'} not planned yet: the data hold no InfiniBand cluster configuration, "
        f"system price or rent for {'it' if one else 'them'}. Adding those rows to data/ adds "
        f"{'it' if one else 'them'} here without code."
    )


def token_count(x: float) -> str:
    """A token count as prose writes it: "140B", "277M"."""
    return billions(x) if x >= 1e9 else millions(x)


def workload_title(w: buying.Workload) -> str:
    """A workload in words with its size, tokens and deadline."""
    return (
        f"{w.label}: {billions(w.shape.n_params)} parameters, {token_count(w.tokens)} tokens, "
        f"within {fmt(w.deadline_days, 'days', 2)}"
    )


def span_days(row: pd.Series) -> str:
    """A run's 90% range, in the unit :func:`days` writes its central value in."""
    if row["days"] * SECONDS_PER_DAY >= 2 * SECONDS_PER_DAY:
        return span(row["days_lo"], row["days_hi"], "days", 2)
    return span(row["days_lo"] * 24, row["days_hi"] * 24, "h", 2)


def glued(res: Result) -> dict[str, Any]:
    """Every number and phrase the buy-or-rent page glues, by name, formatted for the page."""
    out: dict[str, Any] = {
        "level": fmt(INTERVAL_LEVEL, pct=True, sig=2),
        "bor-basis": basis(res),
        "bor-not-covered": not_covered_sentence(res),
    }
    for w in res.workloads:
        out |= {
            f"bor-{w.key}-title": workload_title(w),
            f"bor-{w.key}-answer": cheapest_sentence(res, w.key),
            f"bor-{w.key}-sensitive": sensitive_sentence(res, w.key),
        }
    return out
