"""The book's one scenario: every assumption, defined once with its 90% range.

Each row of ``data/scenario.csv`` names one assumption (a per-GPU speed-up, an MFU, a price, a
share of time, ...) with a central value and a 90% range (``low`` = 5th, ``high`` = 95th
percentile of a split lognormal, logit-normal or normal law; :mod:`analyses.models.uncertainty`).
A row either types its range with its sources or names a derivation and its argument: each
derivation is a function registered under its name (:mod:`analyses.scenario.derivations`) that
declares the assumptions it reads, and :mod:`analyses.scenario.registry` derives every row after the
rows it reads, so nothing is typed twice and a cycle between rows is an error that names it.

Every chapter and check reads assumptions as ``s[name]`` from :func:`values` (floats) or
:func:`sample` (arrays), so no two claims are judged under different values of one quantity. A
chapter parameter with the name of an assumption (declared with :func:`param`) overrides its
central value for that chapter run, the range keeping its relative spread; a derivation that
follows its inputs (the goodput) is derived again from the moved ones (:func:`ranges`).
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from analyses import data
from analyses.models.uncertainty import Range, sample_range
from analyses.scenario import derivations, registry  # noqa: F401 (derivations: registers every derivation)
from analyses.scenario.params import Param
from analyses.scenario.registry import fault, text

COUNT_UNITS = ("GPUs",)  # units of assumptions that count whole things: their chapter parameters are integers


@dataclass(frozen=True)
class Assumption:
    """One assumption of the scenario: its range, unit, allowed override bounds and sources."""

    name: str
    label: str
    unit: str
    range: Range
    min: float
    max: float
    derivation: str
    argument: str
    description: str
    source: str
    date: str

    @property
    def central(self) -> float:
        return self.range.central


def _check_bounds(row: Mapping[str, Any], rng: Range) -> None:
    """The assumption's min and max hold its central value and 90% range, wherever they come from:
    a price row of data/prices.csv is named as the faulty row; a value derived from several rows
    (an MFU, a speed-up, a failure rate) names the assumption's argument."""
    name, lo, hi = row["name"], float(row["min"]), float(row["max"])
    for column, value in (("low", rng.low), ("central", rng.central), ("high", rng.high)):
        if lo <= value <= hi:
            continue
        side = f"below the minimum {lo:g}" if value < lo else f"above the maximum {hi:g}"
        own_file, own_row = data.where("scenario", "name", name)
        limit = f"that {own_file} row {own_row} ('{name}') allows"
        if row["derivation"] == "price":
            file, price_row = data.where("prices", "id", text(row["argument"]))
            raise data.DataError(file, f"{value:g} is {side} {limit}", price_row, column)
        if row["derivation"] == "typed":
            raise fault(name, f"{column} {value:g} is {side}", column)
        raise fault(
            name,
            f"the {row['derivation']} derived from '{text(row['argument'])}' has {column} {value:g}, {side}",
            "argument",
        )


@dataclass(frozen=True)
class _Table:
    """The scenario of one data folder: its rows, assumptions, and the order they derive in."""

    rows: dict[str, Mapping[str, Any]]
    assumptions: dict[str, Assumption]
    order: list[str]


@functools.cache
def _table(data_dir: str) -> _Table:
    rows = {row["name"]: row for row in data.table("scenario").to_dict("records")}
    derived = registry.derive(rows)
    out: dict[str, Assumption] = {}
    for name, row in rows.items():
        rng = derived[name].range
        _check_bounds(row, rng)
        try:
            rng.check()
        except ValueError as err:
            raise fault(name, str(err), "distribution") from None
        out[name] = Assumption(
            name=name,
            label=row["label"],
            unit=row["unit"],
            range=rng,
            min=float(row["min"]),
            max=float(row["max"]),
            derivation=row["derivation"],
            argument=text(row["argument"]),
            description=row["description"],
            source=derived[name].sources or "",
            date=derived[name].date,
        )
    return _Table(rows, out, registry.order(rows))


def assumptions() -> dict[str, Assumption]:
    """Every assumption of the scenario by name, in table order."""
    return dict(_table(str(data.DATA_DIR)).assumptions)


def assumption(name: str) -> Assumption:
    """One assumption; a missing row is a :class:`data.DataKeyError` (a ``KeyError``) naming data/scenario.csv."""
    table = assumptions()
    if name not in table:
        raise data.DataKeyError(
            data.where("scenario", "name", name)[0],
            f"no row for assumption '{name}', which the book reads; the scenario has: {data.allowed_text(table)}",
            column="name",
        )
    return table[name]


def clear_cache() -> None:
    """Forget derived assumptions (after editing files in ``data/``)."""
    _table.cache_clear()


# --------------------------------------------------------------------------------------------
# Values: central, overridden, sampled
# --------------------------------------------------------------------------------------------


def ranges(overrides: Mapping[str, Any] | None = None) -> dict[str, Range]:
    """Every assumption's range; an override (a chapter config, say) moves the central value of
    the assumptions it names and keeps each range's relative spread, and a derivation that follows
    its inputs (the goodput) is derived again from the moved ones unless it was set itself."""
    table = assumptions()
    out = {}
    for name, a in table.items():
        if overrides is not None and name in overrides and overrides[name] != a.central:
            out[name] = a.range.scaled(float(overrides[name]))
        else:
            out[name] = a.range
    moved = {name for name, r in out.items() if r != table[name].range}
    if not moved:
        return out
    scenario = _table(str(data.DATA_DIR))
    return registry.follow(scenario.rows, scenario.order, out, moved)


def values(overrides: Mapping[str, Any] | None = None) -> dict[str, float]:
    """The central value of every assumption, with ``overrides`` applied."""
    return {name: r.central for name, r in ranges(overrides).items()}


def sample(
    names: Iterable[str], n: int, seed: int, overrides: Mapping[str, Any] | None = None
) -> dict[str, np.ndarray]:
    """``n`` joint draws of the named assumptions (independent), the rest at their central values
    as length-``n`` arrays too. Each assumption has its own PCG64 stream, seeded by ``seed`` and its
    name, so an assumption's draws are the same whichever others are drawn with it (every claim
    that reads it sees the same values)."""
    table = ranges(overrides)
    out = {name: np.full(n, r.central) for name, r in table.items()}
    for name in dict.fromkeys(names):
        stream = int.from_bytes(hashlib.sha256(f"{seed}:{name}".encode()).digest()[:8], "little")
        with np.errstate(over="ignore", invalid="ignore"):
            out[name] = sample_range(table[name], n, np.random.default_rng(stream))
        if not np.isfinite(out[name]).all():
            r = table[name]
            raise fault(
                name,
                f"its Monte Carlo draws are not all finite (range {r.low:g} / {r.central:g} / {r.high:g}, "
                f"{r.distribution}); the Monte Carlo stops here",
                "central",
            )
    return out


def table(overrides: Mapping[str, Any] | None = None) -> pd.DataFrame:
    """The scenario as a table for the book: name, label, unit, low, central, high, derivation, source."""
    rows = []
    for name, r in ranges(overrides).items():
        a = assumption(name)
        rows.append(
            {
                "name": name,
                "assumption": a.label,
                "unit": a.unit,
                "low (5%)": r.low,
                "central": r.central,
                "high (95%)": r.high,
                "derived from": a.derivation if a.derivation != "typed" else "",
                "source": a.source,
            }
        )
    return pd.DataFrame(rows)


def param(name: str, help: str | None = None, **bounds: float) -> Param:
    """A chapter parameter that overrides assumption ``name`` (default = its central value, unit
    and allowed range from the scenario)."""
    a = assumption(name)
    whole = a.unit in COUNT_UNITS  # a count (GPUs in a job) takes whole numbers only: 2.5 GPUs is an error
    return Param(
        name,
        "int" if whole else "float",
        round(a.central) if whole else a.central,  # the nearest count (a central of 512.0000000000001 is 512)
        a.unit,
        help or a.label,
        bounds.get("min", a.min),
        bounds.get("max", a.max),
    )


def speedup_gpus(name: str) -> tuple[str, str]:
    """(new GPU, old GPU) of a ``speedup`` assumption (``speedup_b300_a100`` -> ("B300", "A100"))."""
    a = assumption(name)
    if a.derivation != "model_speedup":
        raise KeyError(f"assumption '{name}' is not a speed-up")
    new, _, old = a.argument.partition("/")
    return new.split(":")[0], old.split(":")[0]
