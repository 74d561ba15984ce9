"""The derivations of the scenario's rows, one registered function each (:mod:`analyses.scenario.registry`).

A row of ``data/scenario.csv`` names its derivation and argument; the function registered under
that name gives its range and sources:

``typed``
    the row's own low, central and high, with its sources;
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
    out-of-sample errors on published same-recipe ratios; it reads the central values of the
    assumptions the step-time model reads (:data:`analyses.scenario.speedups.READS`);
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
    the reliability model's goodput of the scenario's job, from the ranges of the scenario's own rate,
    restart, checkpoint write time and job size (:func:`analyses.scenario.failures.goodput_range`);
    it follows them: a chapter that overrides one of those gets the goodput that follows.

Derived values are rounded to three significant figures (:func:`analyses.units.formats.round_sig`),
so what a reader sees is what every check uses.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np
import pandas as pd

from analyses import data
from analyses.models import flops, reliability
from analyses.models.performance import NAMES as STEP_TIME_COEFFICIENTS
from analyses.models.uncertainty import Z90, Range
from analyses.scenario import calibration, failures, memory_fit, speedups
from analyses.scenario.registry import Derived, Row, derivation, fault, text
from analyses.units.formats import round_sig


def _sources(frame: pd.DataFrame) -> str:
    """The source ids a table's rows cite, sorted and ``;``-separated."""
    return ";".join(sorted({s for v in frame["source"] for s in data.SOURCE_SPLIT.split(v)}))


def _rounded(low: float, central: float, high: float, row: Row) -> Range:
    return Range(round_sig(low), round_sig(central), round_sig(high), row["distribution"])


@derivation("typed")
def typed(row: Row, inputs: Mapping[str, Range]) -> Derived:
    """The row's own range and sources."""
    values = [row["low"], row["central"], row["high"]]
    if any(v is None or (isinstance(v, float) and math.isnan(v)) for v in values):
        raise fault(row["name"], "a typed assumption needs low, central and high", "low")
    if not text(row["source"]):
        raise fault(row["name"], "a typed assumption needs a source", "source")
    return Derived(Range(*(float(v) for v in values), row["distribution"]), row["source"], text(row["date"]))


@derivation("price")
def price(row: Row, inputs: Mapping[str, Range]) -> Derived:
    """A row of ``data/prices.csv``."""
    p = data.price(text(row["argument"]))
    return Derived(Range(p.low, p.central, p.high, row["distribution"]), p.source, p.date)


# --------------------------------------------------------------------------------------------
# MFU of published runs
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


def _argument_fault(argument: str, message: str) -> data.DataError:
    """A DataError naming the scenario row whose ``argument`` holds (or contains) ``argument``."""
    frame = data.table("scenario")
    hit = frame[frame["argument"].fillna("").str.contains(argument, regex=False)]
    name = str(hit["name"].iloc[0]) if len(hit) else ""
    file, row = data.where("scenario", "name", name)
    return data.DataError(file, message, row, "argument")


def _mfu_group(argument: str) -> pd.DataFrame:
    """The published runs of ``'A100:bf16:A100'`` or ``'B300:fp8:B200 B300'`` (target GPU, precision,
    benchmark GPUs), after checking the argument names known GPUs and a precision the target has."""
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
    return group


@derivation("mfu")
def mfu(row: Row, inputs: Mapping[str, Range]) -> Derived:
    """Published MFU of a group of runs: median and 5th-95th percentiles (see the module docstring)."""
    group = _mfu_group(text(row["argument"]))
    if group["source"].nunique() >= MIN_SOURCES:
        low, median, high = publication_quantiles(group, (0.05, 0.5, 0.95))
    else:
        median = float(np.median(group["mfu"]))
        spread = math.exp(Z90 * pooled_log_sd(published_mfu()))
        low = min(median / spread, float(group["mfu"].min()))
        high = min(max(median * spread, float(group["mfu"].max())), 0.99)
    return Derived(_rounded(low, median, high, row), _sources(group))


# --------------------------------------------------------------------------------------------
# The step-time model: a per-GPU speed-up, a coefficient
# --------------------------------------------------------------------------------------------


@derivation("model_speedup", reads=speedups.READS)
def model_speedup(row: Row, inputs: Mapping[str, Range]) -> Derived:
    """``'new:precision/old:precision'``: the step-time model's per-GPU speed-up on the reference
    workload (:func:`analyses.scenario.speedups.reference` at the central values of the assumptions
    it reads), with the band of its out-of-sample errors on published same-recipe ratios."""
    argument = text(row["argument"])
    new_arg, sep, old_arg = argument.partition("/")
    if not sep or new_arg.count(":") != 1 or old_arg.count(":") != 1:
        raise _argument_fault(argument, f"model_speedup argument '{argument}' is not new:precision/old:precision")
    (new, new_p), (old, old_p) = new_arg.split(":"), old_arg.split(":")
    central = {name: r.central for name, r in inputs.items()}
    work = speedups.with_(speedups.reference(central), new_precision=new_p, old_precision=old_p)
    x = speedups.model_speedup(work, new, old, central)
    lo, hi, _ = speedups.band("dense")
    rng = Range(round_sig(x * lo), round_sig(x), round_sig(x * hi), row["distribution"])
    return Derived(rng, _sources(calibration.runs()))


@derivation("calibration")
def coefficient(row: Row, inputs: Mapping[str, Range]) -> Derived:
    """A coefficient of the calibrated step-time model, the row's own low and high around it."""
    arg = text(row["argument"])
    if arg not in STEP_TIME_COEFFICIENTS:
        raise fault(row["name"], f"no step-time coefficient '{arg}' in analyses/models/performance.py", "argument")
    central = round_sig(getattr(calibration.coefficients(), arg))
    own = text(row["source"])
    sources = ";".join(x for x in (own, _sources(calibration.runs())) if x)
    return Derived(Range(float(row["low"]), central, float(row["high"]), row["distribution"]), sources)


# --------------------------------------------------------------------------------------------
# Reliability: interruption rates, causes, goodput; memory
# --------------------------------------------------------------------------------------------


@derivation("failure_rate")
def failure_rate(row: Row, inputs: Mapping[str, Range]) -> Derived:
    """Interruptions per GPU-year of an operations mode, fitted on the calibration logs."""
    arg = text(row["argument"])
    if arg not in failures.OPERATIONS:
        raise fault(row["name"], f"failure_rate argument '{arg}' is not one of {failures.OPERATIONS}", "argument")
    rng = failures.rate_range(arg)
    logs = failures.logs()
    used = logs[(logs["role"] == "calibrate") & (logs["mode"] == arg)]
    return Derived(_rounded(rng.low, rng.central, rng.high, row), _sources(used))


@derivation("interruption_share")
def interruption_share(row: Row, inputs: Mapping[str, Range]) -> Derived:
    """The hardware share of all interruptions."""
    if text(row["argument"]) != "hardware":
        raise fault(row["name"], f"interruption_share argument '{text(row['argument'])}' is not 'hardware'", "argument")
    return Derived(_rounded(*failures.hardware_share_range(), row), _sources(data.failure_causes(failures.CAUSES_RUN)))


@derivation("prevention")
def prevention(row: Row, inputs: Mapping[str, Range]) -> Derived:
    """The preventable shares of a logged run's interruptions, by tier."""
    arg = text(row["argument"])
    causes = data.failure_causes(arg)
    if causes.empty:
        raise fault(row["name"], f"no causes of run '{arg}' in data/failure_causes.csv", "argument")
    low, central, high = (float(x) for x in reliability.preventable_shares(causes))
    return Derived(_rounded(low, central, high, row), _sources(causes))


@derivation("memory_fit")
def memory_reserve(row: Row, inputs: Mapping[str, Range]) -> Derived:
    """Measured peak memory over the modelled bytes, fitted on the calibration runs."""
    if text(row["argument"]) != "calibrate":
        raise fault(row["name"], f"memory_fit argument '{text(row['argument'])}' is not 'calibrate'", "argument")
    rng = memory_fit.reserve_range()
    used = data.memory_measured()
    return Derived(_rounded(rng.low, rng.central, rng.high, row), _sources(used[used["role"] == "calibrate"]))


@derivation("goodput", reads=failures.GOODPUT_INPUTS, follows=True)
def goodput(row: Row, inputs: Mapping[str, Range]) -> Derived:
    """The automated mode's goodput of the scenario's job, from the ranges of the assumptions it reads;
    its sources are theirs."""
    if row["argument"] != "automated":
        raise data.DataError(
            "data/scenario.csv", "a goodput row derives the automated mode's goodput", column="argument"
        )
    g = failures.goodput_range(*(inputs[name] for name in failures.GOODPUT_INPUTS))
    return Derived(_rounded(g.low, g.central, g.high, row), None)
