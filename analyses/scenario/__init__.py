"""The book's one scenario: every assumption, defined once with its 90% range.

Each row of ``data/scenario.csv`` names one assumption (a per-GPU speed-up, an MFU, a price, a
share of time, ...) with a central value and a 90% range (``low`` = 5th, ``high`` = 95th
percentile of a split lognormal, logit-normal or normal law; :mod:`analyses.models.uncertainty`).
Rows derived from other tables are computed here, never typed twice:

``price``
    a row of ``data/prices.csv`` (its low, central and high);
``mfu``
    the model FLOP utilisation of published large training runs (``data/scaling_benchmarks.csv``,
    ``model_tflops_per_gpu`` over the GPU's dense peak): the median of the named GPUs' rows at the
    precision, with a range from the spread of published MFUs pooled over every (GPU, precision)
    group with two or more runs, widened to the group's own extremes;
``speedup``
    achieved FLOP/s per GPU of one (GPU, precision) over another: dense peak ratio times the MFU
    ratio of the two groups; the range combines both groups' spreads in log space;
``failure_rate``
    job interruptions per GPU-year of the published logs (``data/failure_logs.csv``): the named
    log as central value, the lowest and highest logs as the range;
``prevention``
    the share of a logged run's interruptions (``data/failure_causes.csv``) in the first one, two
    and three tiers of :data:`analyses.models.reliability.PREVENTION_TIERS` (low, central, high).

Derived values are rounded to three significant figures (:func:`analyses.units.formats.round_sig`), so what a reader sees is what every
check uses. Every chapter and check reads assumptions as ``s[name]`` from :func:`values` (floats)
or :func:`sample` (arrays), so no two claims are judged under different values of one quantity. A
chapter parameter with the name of an assumption (declared with :func:`param`) overrides its
central value for that chapter run, the range keeping its relative spread.
"""

from __future__ import annotations

import functools
import hashlib
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from analyses import data
from analyses.models import reliability
from analyses.models.uncertainty import Z90, Range, sample_range
from analyses.scenario.params import Param
from analyses.units.formats import round_sig

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


# --------------------------------------------------------------------------------------------
# Derivations
# --------------------------------------------------------------------------------------------


def published_mfu() -> pd.DataFrame:
    """MFU of every published run: ``model_tflops_per_gpu`` over the GPU's dense peak at its precision.

    Columns ``id, gpu, precision, n_gpus, mfu, source`` (one row per benchmark row).
    """
    bench = data.table("scaling_benchmarks")
    rows = bench[bench["metric"] == "model_tflops_per_gpu"]
    mfu = [float(r["value"]) * 1e12 / data.gpu(r["gpu"]).peak_flops(r["precision"]) for _, r in rows.iterrows()]
    return pd.DataFrame(
        {
            "id": rows["id"].to_numpy(),
            "gpu": rows["gpu"].to_numpy(),
            "precision": rows["precision"].to_numpy(),
            "n_gpus": rows["n_gpus"].to_numpy(),
            "mfu": mfu,
            "source": rows["source"].to_numpy(),
        }
    )


def pooled_log_sd(frame: pd.DataFrame) -> float:
    """Pooled within-group standard deviation of ln(MFU) over (GPU, precision) groups of 2+ runs.

    ``sqrt(sum_g sum_i (ln m_gi - mean_g)^2 / sum_g (n_g - 1))``: the run-to-run spread of MFU
    that one group's median leaves, estimated from every group at once.
    """
    ss, dof = 0.0, 0
    for _, group in frame.groupby(["gpu", "precision"]):
        logs = np.log(group["mfu"].to_numpy(dtype=float))
        if len(logs) >= 2:
            ss += float(np.sum((logs - logs.mean()) ** 2))
            dof += len(logs) - 1
    if dof == 0:
        raise data.DataError("data/scaling_benchmarks.csv", "no (GPU, precision) group has two runs to pool")
    return math.sqrt(ss / dof)


@dataclass(frozen=True)
class MfuGroup:
    """Published MFU of one group of runs: median, log-space spread (5th-95th), extremes, sources."""

    gpu: str
    precision: str
    median: float
    low: float
    high: float
    sources: str


def _mfu_group(argument: str) -> MfuGroup:
    """``'A100:bf16:A100'`` or ``'B300:fp8:B200 B300'``: target GPU, precision, benchmark GPUs."""
    try:
        gpu, precision, members = argument.split(":")
    except ValueError:
        raise _argument_fault(argument, f"mfu argument '{argument}' is not GPU:precision:GPUs") from None
    known = data.gpu_names()
    unlisted = next(c.unlisted or {} for c in data.schema("scenario").columns if c.name == "argument")
    unknown = [g for g in [gpu, *members.split()] if g not in known and (g == gpu or g not in unlisted)]
    if unknown or precision not in data.PRECISIONS:
        what = (
            f"GPU '{unknown[0]}' is not in data/gpus.csv"
            if unknown
            else f"precision '{precision}' is not one of {data.PRECISIONS}"
        )
        raise _argument_fault(argument, f"mfu argument '{argument}': {what}")
    if precision not in data.gpu(gpu).peak_flops_dense:
        raise _argument_fault(
            argument, f"mfu argument '{argument}': {gpu} has no dense {precision} peak in data/gpus.csv"
        )
    runs = published_mfu()
    group = runs[runs["gpu"].isin(members.split()) & (runs["precision"] == precision)]
    if group.empty:
        raise _argument_fault(argument, f"no published run of {members} at {precision} in data/scaling_benchmarks.csv")
    median = float(np.median(group["mfu"]))
    spread = math.exp(Z90 * pooled_log_sd(runs))
    low = min(median / spread, float(group["mfu"].min()))
    high = min(max(median * spread, float(group["mfu"].max())), 0.99)
    sources = ";".join(sorted({s for v in group["source"] for s in data.SOURCE_SPLIT.split(v)}))
    return MfuGroup(gpu, precision, median, low, high, sources)


def _argument_fault(argument: str, message: str) -> data.DataError:
    """A DataError naming the scenario row whose ``argument`` holds (or contains) ``argument``."""
    frame = data.table("scenario")
    hit = frame[frame["argument"].fillna("").str.contains(argument, regex=False)]
    name = str(hit["name"].iloc[0]) if len(hit) else ""
    file, row = data.where("scenario", "name", name)
    return data.DataError(file, message, row, "argument")


def _speedup(argument: str) -> tuple[Range, str]:
    """``'new/old'`` MFU groups: peak(new) MFU(new) / (peak(old) MFU(old)) with combined log spread."""
    new_arg, sep, old_arg = argument.partition("/")
    if not sep:
        raise _argument_fault(argument, f"speedup argument '{argument}' is not new/old")
    new, old = _mfu_group(new_arg), _mfu_group(old_arg)
    peak = data.gpu(new.gpu).peak_flops(new.precision) / data.gpu(old.gpu).peak_flops(old.precision)
    central = peak * new.median / old.median
    up = math.hypot(math.log(new.high / new.median), math.log(old.median / old.low))
    down = math.hypot(math.log(new.median / new.low), math.log(old.high / old.median))
    rng = Range(round_sig(central * math.exp(-down)), round_sig(central), round_sig(central * math.exp(up)))
    return rng, ";".join(sorted(set(new.sources.split(";")) | set(old.sources.split(";"))))


def _text(x: Any) -> str:
    """A table cell as text ('' for an empty cell)."""
    return "" if x is None or (isinstance(x, float) and math.isnan(x)) else str(x)


def _fault(name: str, message: str, column: str) -> data.DataError:
    """A DataError naming the row of assumption ``name`` in data/scenario.csv."""
    file, row = data.where("scenario", "name", name)
    return data.DataError(file, f"assumption '{name}': {message}", row, column)


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
            file, price_row = data.where("prices", "id", _text(row["argument"]))
            raise data.DataError(file, f"{value:g} is {side} {limit}", price_row, column)
        if row["derivation"] == "typed":
            raise _fault(name, f"{column} {value:g} is {side}", column)
        raise _fault(
            name,
            f"the {row['derivation']} derived from '{_text(row['argument'])}' has {column} {value:g}, {side}",
            "argument",
        )


def _derive(row: Mapping[str, Any]) -> tuple[Range, str, str]:
    """(range, sources, date) of one scenario row."""
    kind, arg, dist = row["derivation"], _text(row["argument"]), row["distribution"]
    if kind == "typed":
        values = [row["low"], row["central"], row["high"]]
        if any(v is None or (isinstance(v, float) and math.isnan(v)) for v in values):
            raise _fault(row["name"], "a typed assumption needs low, central and high", "low")
        if not _text(row["source"]):
            raise _fault(row["name"], "a typed assumption needs a source", "source")
        return Range(*(float(v) for v in values), dist), row["source"], _text(row["date"])
    if kind == "price":
        p = data.price(arg)
        return Range(p.low, p.central, p.high, dist), p.source, p.date
    if kind == "mfu":
        g = _mfu_group(arg)
        return Range(round_sig(g.low), round_sig(g.median), round_sig(g.high), dist), g.sources, ""
    if kind == "speedup":
        rng, sources = _speedup(arg)
        return Range(rng.low, rng.central, rng.high, dist), sources, ""
    if kind == "failure_rate":
        logs = data.failure_logs()
        if arg not in set(logs["id"]):
            raise _fault(row["name"], f"no failure log '{arg}' in data/failure_logs.csv", "argument")
        rates = reliability.interruptions_per_gpu_year(logs["interruptions"], logs["days"], logs["gpus"])
        central = float(rates[(logs["id"] == arg).to_numpy()][0])
        sources = ";".join(sorted({s for v in logs["source"] for s in data.SOURCE_SPLIT.split(v)}))
        return (
            Range(round_sig(float(rates.min())), round_sig(central), round_sig(float(rates.max())), dist),
            sources,
            "",
        )
    if kind == "prevention":
        causes = data.failure_causes(arg)
        if causes.empty:
            raise _fault(row["name"], f"no causes of run '{arg}' in data/failure_causes.csv", "argument")
        low, central, high = (round_sig(float(x)) for x in reliability.preventable_shares(causes))
        sources = ";".join(sorted({s for v in causes["source"] for s in data.SOURCE_SPLIT.split(v)}))
        return Range(low, central, high, dist), sources, ""
    raise _fault(row["name"], f"unknown derivation '{kind}'", "derivation")


@functools.cache
def _assumptions(data_dir: str) -> dict[str, Assumption]:
    out: dict[str, Assumption] = {}
    for row in data.table("scenario").to_dict("records"):
        rng, sources, date = _derive(row)
        _check_bounds(row, rng)
        try:
            rng.check()
        except ValueError as err:
            raise _fault(row["name"], str(err), "distribution") from None
        out[row["name"]] = Assumption(
            name=row["name"],
            label=row["label"],
            unit=row["unit"],
            range=rng,
            min=float(row["min"]),
            max=float(row["max"]),
            derivation=row["derivation"],
            argument=_text(row["argument"]),
            description=row["description"],
            source=sources,
            date=date,
        )
    return out


def assumptions() -> dict[str, Assumption]:
    """Every assumption of the scenario by name, in table order."""
    return dict(_assumptions(str(data.DATA_DIR)))


def assumption(name: str) -> Assumption:
    """One assumption; ``KeyError`` lists the names."""
    table = assumptions()
    if name not in table:
        raise KeyError(f"unknown assumption '{name}'; the scenario has: {', '.join(table)}")
    return table[name]


def clear_cache() -> None:
    """Forget derived assumptions (after editing files in ``data/``)."""
    _assumptions.cache_clear()


# --------------------------------------------------------------------------------------------
# Values: central, overridden, sampled
# --------------------------------------------------------------------------------------------


def ranges(overrides: Mapping[str, Any] | None = None) -> dict[str, Range]:
    """Every assumption's range; an override (a chapter config, say) moves the central value of
    the assumptions it names and keeps each range's relative spread."""
    out = {}
    for name, a in assumptions().items():
        if overrides is not None and name in overrides and overrides[name] != a.central:
            out[name] = a.range.scaled(float(overrides[name]))
        else:
            out[name] = a.range
    return out


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
            raise _fault(
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
    if a.derivation != "speedup":
        raise KeyError(f"assumption '{name}' is not a speed-up")
    new, _, old = a.argument.partition("/")
    return new.split(":")[0], old.split(":")[0]
