"""One currency per page, said the same way on every page: which currency the page's money is in and
the exchange rate it was converted at, with the rate's source and date (the scenario's ``usd_cny``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from analyses import scenario
from analyses.units.formats import fmt

RATE = "usd_cny"


def rate_words(s: Mapping[str, Any]) -> str:
    """The exchange rate at ``s`` with its date and where its source is: "7.10 CNY per USD (the scenario's
    usd_cny, 2026-01; its source on the sources page)". The source's id is not written here: a glued
    sentence is plain text, and the book shows a source id only as a link (the sources page and every
    assumptions table link it)."""
    a = scenario.assumption(RATE)
    return f"{fmt(float(s[RATE]), a.unit, 3)} (the scenario's {RATE}, {a.date}; its source on the sources page)"


def currency_sentence(currency: str, s: Mapping[str, Any]) -> str:
    """The page's money convention in one sentence."""
    if currency == "USD":
        return f"Money on this page is in USD; the documents' RMB figures are converted at {rate_words(s)}."
    return f"Money on this page is in {currency}; the USD prices of the scenario are converted at {rate_words(s)}."
