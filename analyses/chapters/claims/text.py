"""Sentences and glued numbers of the ledger page, each read from a computed :class:`~analyses.chapters.claims.Result`."""

from __future__ import annotations

from typing import Any

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


def glued(res: Result) -> dict[str, Any]:
    """Every number and phrase the ledger's overview glues, by name: the claims per verdict and per
    direction, the flips, the draws behind ``holds``, the range's level and the flip map's caption."""
    counts = {f"n_{name}": fmt(n, sig=3) for name, n in {**res.counts, **res.directions}.items()}
    return {
        **counts,
        "level": fmt(res.level, pct=True, sig=2),
        "n_flipping": fmt(len(res.flips), sig=3),
        "n_draws": fmt(res.draws, sig=4),
        "cap_flips": flip_caption(res),
    }
