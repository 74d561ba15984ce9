"""Sentences of the ledger page, each read from a computed :class:`~analyses.chapters.claims.Result`."""

from __future__ import annotations

from analyses.chapters.claims import Result
from analyses.units.formats import fmt


def flip_caption(res: Result) -> str:
    """The caption of the flip map: what its marks mean and where the sliders are."""
    level = fmt(res.level, pct=True, sig=2)
    if res.flips.empty:
        return f"No verdict among the claims shown flips anywhere within its assumptions' {level} ranges."
    n = len(res.flips)
    inputs = ", ".join(sorted(set(res.flips["assumption"])))
    return (
        f"The {n} claims whose verdict flips within the {level} range of one assumption ({inputs}). The grey bar is that "
        "range from its 5th to its 95th percentile, the black tick its central value, and the diamond the point where "
        "the verdict flips, coloured by the verdict it would flip to and labelled with that verdict's mark (✓ ✗ ! ?) and "
        "the threshold. A diamond near "
        "the tick is a fragile verdict; one near an end of the bar needs an unusual value to flip. Each chapter's "
        "slider figures show the same flips over a precomputed grid."
    )
