"""The book's one scenario: every assumption, defined once with its 90% range.

Each row of ``data/scenario.csv`` names one assumption (a per-GPU speed-up, an MFU, a price, a
share of time, ...) with a central value and a 90% range (``low`` = 5th, ``high`` = 95th
percentile of a split lognormal, logit-normal or normal law; :mod:`analyses.models.uncertainty`).
Rows derived from other tables are computed here, never typed twice:

``price``
    a row of ``data/prices.csv`` (its low, central and high);
``mfu``
    the model FLOP utilisation of published training runs (``data/published_runs.csv``, tokens per
    second per GPU × the book's one FLOP definition, :func:`analyses.models.flops.model_flops_per_token`,
    over the GPU's dense peak) of the named GPUs at the precision (16-bit: BF16 and FP16 alike, one
    peak): the median and 5th-95th percentiles with every publication weighing the same (one paper's
    twenty rows count as one paper) when three or more publications report the group; else the
    median, with a range from the spread of published MFUs pooled over every (GPU, precision) group
    with two or more runs, widened to the group's own extremes;
``model_speedup``
    the per-GPU speed-up of one (GPU, precision) over another on the reference workload, from the
    calibrated step-time model (:mod:`analyses.scenario.speedups`), with the 90% band of the model's
    out-of-sample errors on published same-recipe ratios; derived after every other row, from their
    central values;
``calibration``
    a coefficient of the calibrated step-time model (:mod:`analyses.scenario.calibration`) as the
    central value, the row's own low and high as its range;
``failure_rate``
    all-cause job interruptions per GPU-year of an operations mode (the argument: ``automated`` or
    ``manual``), fitted on the calibration logs of ``data/failure_logs.csv`` and
    ``data/failure_rates.csv``, with the 90% prediction band of a new cluster
    (:mod:`analyses.scenario.failures`);
``prevention``
    the share of a logged run's interruptions (``data/failure_causes.csv``) in the first one, two
    and three tiers of :data:`analyses.models.reliability.PREVENTION_TIERS` (low, central, high);
``interruption_share``
    the share of all interruptions that are hardware (:func:`analyses.scenario.failures.hardware_share_range`);
``memory_fit``
    measured peak memory over the bytes the memory model holds, fitted on the calibration runs
    (:func:`analyses.scenario.memory_fit.reserve_range`);
``goodput``
    the reliability model's goodput of the scenario's job, computed from the scenario's own rate,
    restart, checkpoint write time and job size (:func:`analyses.scenario.failures.goodput_range`);
    a chapter that overrides one of those gets the goodput that follows (:func:`ranges`).

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
from analyses.models import flops, reliability
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
    """MFU of every published run with a measured throughput, on the book's one FLOP definition:
    tokens per second per GPU × model FLOPs per token (``6·N_active + 12·L·d·s``,
    :func:`analyses.models.flops.model_flops_per_token`) over the GPU's dense peak at its precision.

    Columns ``id, gpu, precision, n_gpus, mfu, source`` (one row per published run with a throughput).
    """
    runs = data.published_runs()
    rows = runs[runs["tokens_per_s_per_gpu"].notna()]
    achieved = flops.model_flops_per_token(rows["params_active"], rows["n_layers"], rows["d_model"], rows["seq_len"])
    achieved = achieved * rows["tokens_per_s_per_gpu"].to_numpy(float)
    peaks = np.array([data.gpu(g).peak_flops(p) for g, p in zip(rows["gpu"], rows["precision"], strict=True)])
    return pd.DataFrame(
        {
            "id": rows["id"].to_numpy(),
            "gpu": rows["gpu"].to_numpy(),
            "precision": rows["precision"].replace({"fp16": "bf16"}).to_numpy(),  # one 16-bit peak
            "n_gpus": rows["n_gpus"].to_numpy(),
            "mfu": np.asarray(achieved, float) / peaks,
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
        raise data.DataError("data/published_runs.csv", "no (GPU, precision) group has two runs to pool")
    return math.sqrt(ss / dof)


MIN_SOURCES = 3  # publications a group needs for its own quantiles (else the pooled spread)


def publication_quantiles(group: pd.DataFrame, qs: tuple[float, ...]) -> tuple[float, ...]:
    """Quantiles of ``group['mfu']`` with every publication weighing the same (each row 1/rows of its
    ``source``), so one paper's twenty rows count as one paper. Linear between the rows' midpoints."""
    mfu = group["mfu"].to_numpy(float)
    w = 1.0 / group.groupby("source")["mfu"].transform("size").to_numpy(float)
    w = w / w.sum()
    order = np.argsort(mfu, kind="stable")
    mid = np.cumsum(w[order]) - w[order] / 2.0
    return tuple(float(x) for x in np.interp(qs, mid, mfu[order]))


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
        raise _argument_fault(argument, f"no published run of {members} at {precision} in data/published_runs.csv")
    if group["source"].nunique() >= MIN_SOURCES:
        low, median, high = publication_quantiles(group, (0.05, 0.5, 0.95))
    else:
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


def _model_speedup(argument: str, known: Mapping[str, float]) -> tuple[Range, str]:
    """``'new:precision/old:precision'``: the step-time model's per-GPU speed-up on the reference
    workload (:func:`analyses.scenario.speedups.reference` at the scenario's ``known`` central values),
    with the band of its out-of-sample errors on published same-recipe ratios."""
    from analyses.scenario import calibration, speedups  # the model reads the scenario's other rows

    new_arg, sep, old_arg = argument.partition("/")
    if not sep or new_arg.count(":") != 1 or old_arg.count(":") != 1:
        raise _argument_fault(argument, f"model_speedup argument '{argument}' is not new:precision/old:precision")
    (new, new_p), (old, old_p) = new_arg.split(":"), old_arg.split(":")
    work = speedups.with_(speedups.reference(known), new_precision=new_p, old_precision=old_p)
    central = speedups.model_speedup(work, new, old, known)
    lo, hi, _ = speedups.band("dense")
    rng = Range(round_sig(central * lo), round_sig(central), round_sig(central * hi))
    sources = ";".join(sorted({s for v in calibration.runs()["source"] for s in data.SOURCE_SPLIT.split(v)}))
    return rng, sources


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


LATE = ("model_speedup",)  # derivations that read the scenario's other rows: derived last


def _derive(row: Mapping[str, Any], known: Mapping[str, float] | None = None) -> tuple[Range, str, str]:
    """(range, sources, date) of one scenario row; ``known`` holds the central values of the rows
    derived before it (what a :data:`LATE` derivation reads)."""
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
    if kind == "model_speedup":
        rng, sources = _model_speedup(arg, known or {})
        return Range(rng.low, rng.central, rng.high, dist), sources, ""
    if kind == "calibration":
        from analyses.models.performance import NAMES
        from analyses.scenario import calibration

        if arg not in NAMES:
            raise _fault(row["name"], f"no step-time coefficient '{arg}' in analyses/models/performance.py", "argument")
        central = round_sig(getattr(calibration.coefficients(), arg))
        sources = ";".join(sorted({s for v in calibration.runs()["source"] for s in data.SOURCE_SPLIT.split(v)}))
        own = _text(row["source"])
        return Range(float(row["low"]), central, float(row["high"]), dist), ";".join(x for x in (own, sources) if x), ""
    if kind == "failure_rate":
        from analyses.scenario import failures as wired  # the fit reads the logs (lazy: no import cycle)

        if arg not in wired.OPERATIONS:
            raise _fault(row["name"], f"failure_rate argument '{arg}' is not one of {wired.OPERATIONS}", "argument")
        rng = wired.rate_range(arg)
        logs = wired.logs()
        used = logs[(logs["role"] == "calibrate") & (logs["mode"] == arg)]
        sources = ";".join(sorted({s for v in used["source"] for s in data.SOURCE_SPLIT.split(v)}))
        return Range(round_sig(rng.low), round_sig(rng.central), round_sig(rng.high), dist), sources, ""
    if kind == "interruption_share":
        from analyses.scenario import failures as wired

        if arg != "hardware":
            raise _fault(row["name"], f"interruption_share argument '{arg}' is not 'hardware'", "argument")
        low, central, high = (round_sig(v) for v in wired.hardware_share_range())
        sources = ";".join(
            sorted({s for v in data.failure_causes(wired.CAUSES_RUN)["source"] for s in data.SOURCE_SPLIT.split(v)})
        )
        return Range(low, central, high, dist), sources, ""
    if kind == "prevention":
        causes = data.failure_causes(arg)
        if causes.empty:
            raise _fault(row["name"], f"no causes of run '{arg}' in data/failure_causes.csv", "argument")
        low, central, high = (round_sig(float(x)) for x in reliability.preventable_shares(causes))
        sources = ";".join(sorted({s for v in causes["source"] for s in data.SOURCE_SPLIT.split(v)}))
        return Range(low, central, high, dist), sources, ""
    if kind == "memory_fit":
        from analyses.scenario import memory_fit

        if arg != "calibrate":
            raise _fault(row["name"], f"memory_fit argument '{arg}' is not 'calibrate'", "argument")
        rng = memory_fit.reserve_range()
        used = data.memory_measured()
        sources = ";".join(
            sorted({s for v in used[used["role"] == "calibrate"]["source"] for s in data.SOURCE_SPLIT.split(v)})
        )
        return Range(round_sig(rng.low), round_sig(rng.central), round_sig(rng.high), dist), sources, ""
    raise _fault(row["name"], f"unknown derivation '{kind}'", "derivation")


def _goodput(row: Mapping[str, Any], table: Mapping[str, Range]) -> Range:
    """A ``goodput`` row's range from the ranges of the assumptions it reads (rounded like every derived value)."""
    from analyses.scenario import failures as wired

    if row["argument"] != "automated":
        raise data.DataError(
            "data/scenario.csv", "a goodput row derives the automated mode's goodput", column="argument"
        )
    g = wired.goodput_range(*(table[name] for name in wired.GOODPUT_INPUTS))
    return Range(round_sig(g.low), round_sig(g.central), round_sig(g.high), row["distribution"])


@functools.cache
def _assumptions(data_dir: str) -> dict[str, Assumption]:
    rows = data.table("scenario").to_dict("records")
    derived: dict[str, tuple[Range, str, str]] = {}
    for row in rows:  # every row but goodput and the LATE ones, which read the others
        if row["derivation"] not in LATE and row["derivation"] != "goodput":
            derived[row["name"]] = _derive(row)
    for row in rows:
        if row["derivation"] == "goodput":
            from analyses.scenario import failures as wired

            ranges_now = {name: value[0] for name, value in derived.items()}
            sources = ";".join(
                sorted({s for n in wired.GOODPUT_INPUTS for s in data.SOURCE_SPLIT.split(derived[n][1]) if s})
            )
            derived[row["name"]] = (_goodput(row, ranges_now), sources, "")
    known = {name: d[0].central for name, d in derived.items()}
    for row in rows:
        if row["derivation"] in LATE:
            derived[row["name"]] = _derive(row, known)
    out: dict[str, Assumption] = {}
    for row in rows:
        rng, sources, date = derived[row["name"]]
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
    _assumptions.cache_clear()


# --------------------------------------------------------------------------------------------
# Values: central, overridden, sampled
# --------------------------------------------------------------------------------------------


def ranges(overrides: Mapping[str, Any] | None = None) -> dict[str, Range]:
    """Every assumption's range; an override (a chapter config, say) moves the central value of
    the assumptions it names and keeps each range's relative spread."""
    out = {}
    table = assumptions()
    for name, a in table.items():
        if overrides is not None and name in overrides and overrides[name] != a.central:
            out[name] = a.range.scaled(float(overrides[name]))
        else:
            out[name] = a.range
    for name, a in table.items():  # a derived goodput follows the inputs a reader moved (unless set itself)
        if (
            a.derivation == "goodput"
            and out[name] == a.range
            and any(out[n] != table[n].range for n in _goodput_inputs())
        ):
            out[name] = _goodput({"argument": a.argument, "distribution": a.range.distribution}, out)
    return out


def _goodput_inputs() -> tuple[str, ...]:
    from analyses.scenario import failures as wired

    return wired.GOODPUT_INPUTS


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
    if a.derivation != "model_speedup":
        raise KeyError(f"assumption '{name}' is not a speed-up")
    new, _, old = a.argument.partition("/")
    return new.split(":")[0], old.split(":")[0]
