"""The reliability model fed from the data and the scenario: interruption rates by operations mode,
fitted on the published logs and validated on the others, and the goodput and time to recover they give.

The book's definitions, stated once (the quantities issue 22 registers):

- **interruption rate** (``interruptions_per_gpu_year`` for automated operations,
  ``interruptions_per_gpu_year_manual`` for manual): job interruptions of all causes per GPU-year,
  derived here from the calibration logs (:func:`fit`); the share of them that is hardware is
  ``hardware_interruption_share`` (Llama 3's Table 5).
- **restart** (``restart_s`` automated, ``restart_s_manual`` manual): detection, replacing or
  excluding the faulty node and reloading the last checkpoint; redone work excluded.
- **time to recover** = restart + the work since the last checkpoint, done again
  (:func:`analyses.models.reliability.time_to_recover_s`).
- **goodput** (the scenario's ``goodput``): the share of a running job's wall time not lost to
  checkpoints, interruptions, restarts and redone work, for the scenario's job (``job_gpus``) under
  automated operations at the best checkpoint interval
  (:func:`analyses.models.interruptions.job_goodput`); derived, never typed.

:func:`for_operations` gives the scenario a cluster of a declared mode runs under (the planner's and
the reliability chapter's ``operations``). :func:`rate_validation`, :func:`goodput_validation` and
:func:`recovery_validation` are the tables of the reliability chapter's section "Validated against
published logs".
"""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from analyses import data
from analyses.models import interruptions as intr
from analyses.models import reliability as rel
from analyses.models.uncertainty import INTERVAL_LEVEL, Range, interval, sample_range
from analyses.units import SECONDS_PER_MINUTE

OPERATIONS = intr.OPERATIONS
RATE = intr.RATE_ASSUMPTION
RESTART = intr.RESTART_ASSUMPTION
HARDWARE_SHARE = "hardware_interruption_share"
GOODPUT = "goodput"
GOODPUT_INPUTS = (RATE["automated"], RESTART["automated"], "checkpoint_write_s", "job_gpus")
CAUSES_RUN = "llama3-405b-unexpected"  # the one published breakdown of interruptions by cause
ALL_RUN = "llama3-405b-all"  # the same run counted with its planned interruptions
MC_DRAWS = 4000  # joint draws behind a derived goodput range and the validation bands
MC_SEED = 21


def check_operations(mode: str) -> str:
    """``mode`` if it is an operations mode, else ``ValueError`` naming the parameter and the choices."""
    if mode not in OPERATIONS:
        raise ValueError(f"parameter 'operations': expected one of {', '.join(OPERATIONS)}, got {mode!r}")
    return mode


class _Operated(Mapping[str, Any]):
    """A read-only view of a scenario whose automated rate and restart keys read the mode's (every
    other key reads through, and only the keys read are touched: a check's recorded reads stay true)."""

    def __init__(self, s: Mapping[str, Any], mode: str):
        self._s = s
        self._alias = {RATE["automated"]: RATE[mode], RESTART["automated"]: RESTART[mode]}

    def __getitem__(self, key: str) -> Any:
        return self._s[self._alias.get(key, key)]

    def __iter__(self):
        return iter(self._s)

    def __len__(self) -> int:
        return len(self._s)


def for_operations(s: Mapping[str, Any], mode: str) -> Mapping[str, Any]:
    """The scenario ``s`` as a cluster of operations ``mode`` runs it: the automated keys
    (``interruptions_per_gpu_year``, ``restart_s``), which the planner and the checks read, carry
    the mode's rate and restart (a view: nothing else is read). Automated returns ``s`` itself."""
    if check_operations(mode) == "automated":
        return s
    return _Operated(s, mode)


# --------------------------------------------------------------------------------------------
# The logs, on one footing
# --------------------------------------------------------------------------------------------


def shares() -> dict[str, float]:
    """The share of all interruptions each kind of count covers, from Llama 3's log (Table 5).

    ``unexpected``: 419 of 466; ``hardware`` (and the kinds read as hardware: hardware restarts,
    BLOOM's GPU failures, which its source calls hardware crashes, and a fleet's node failures): the
    causes of every tier of :data:`analyses.models.reliability.PREVENTION_TIERS` (GPU, host,
    network, unplanned host maintenance) over all 466.
    """
    logs = data.failure_logs().set_index("id")
    everything = float(logs.loc[ALL_RUN, "interruptions"])
    causes = data.failure_causes(CAUSES_RUN)
    hardware = float(rel.preventable_shares(causes)[-1]) * float(causes["count"].sum()) / everything
    unexpected = float(logs.loc[CAUSES_RUN, "interruptions"]) / everything
    return {"unexpected": unexpected, "hardware": hardware, "hardware-restarts": hardware, "gpu-failures": hardware}


def hardware_share_range() -> tuple[float, float, float]:
    """Low, central and high share of all interruptions that are hardware: GPU and host only; every
    hardware tier; every hardware tier of the unexpected ones (planned interruptions left out)."""
    logs = data.failure_logs().set_index("id")
    causes = data.failure_causes(CAUSES_RUN)
    tiers = rel.preventable_shares(causes)
    unexpected = float(logs.loc[CAUSES_RUN, "interruptions"]) / float(logs.loc[ALL_RUN, "interruptions"])
    return float(tiers[1] * unexpected), float(tiers[2] * unexpected), float(tiers[2])


@functools.cache
def _logs(data_dir: str) -> pd.DataFrame:
    share = shares()
    runs = data.failure_logs()
    a = pd.DataFrame(
        {
            "id": runs["id"],
            "log": runs["run"],
            "table": "failure_logs",
            "gpus": runs["gpus"].astype(float),
            "days": runs["days"].astype(float),
            "count": runs["interruptions"].astype(float),
            "kind": runs["kind"],
            "bound": runs["bound"],
            "operations": runs["operations"],
            "role": runs["role"],
            "published": rel.interruptions_per_gpu_year(runs["interruptions"], runs["days"], runs["gpus"]),
            "source": runs["source"],
        }
    )
    fleet = data.failure_rates()
    node = fleet["metric"] == "failures_per_1000_node_days"
    published = np.where(
        node,
        intr.per_gpu_year_from_node_days(fleet["value"], fleet["gpus_per_node"]),
        intr.per_gpu_year_from_job_mttf(fleet["value"], fleet["job_gpus"].fillna(1.0)),
    )
    b = pd.DataFrame(
        {
            "id": fleet["id"],
            "log": [
                f"{r['study']}, {r['cluster']}: "
                + (
                    "node failures"
                    if r["metric"] == "failures_per_1000_node_days"
                    else f"MTTF of {r['job_gpus']:,.0f}-GPU jobs"
                )
                for r in fleet.to_dict("records")
            ],
            "table": "failure_rates",
            "gpus": np.where(node, np.nan, fleet["job_gpus"]),
            "days": fleet["period_days"].astype(float),
            "count": np.inf,  # thousands of failures over a fleet-year: counting noise negligible
            "kind": np.where(node, "hardware", "all"),
            "bound": np.where(fleet["kind"] == "projected", "projected", "exact"),
            "operations": fleet["operations"],
            "role": fleet["role"],
            "published": published,
            "source": fleet["source"],
        }
    )
    out = pd.concat([a, b], ignore_index=True)
    out["mode"] = out["operations"].map(intr.RATE_MODE)
    out["share"] = [share.get(k, np.nan) if k != "all" else 1.0 for k in out["kind"]]
    out["all_cause"] = out["published"] / out["share"]
    # the two ends of one published range ("1-2 a week") are one log: the group is the run
    out["group"] = np.where(out["bound"] == "approximate", out["log"], out["id"])
    return out


def logs() -> pd.DataFrame:
    """Every interruption log and fleet rate on one footing: the published rate per GPU-year of its
    own kind, the share of all interruptions that kind covers, the all-cause rate it implies, the
    rate mode, the role and the group (one published range is one group)."""
    return _logs(str(data.DATA_DIR)).copy()


def _calibration(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per calibration group: its mode and geometric-mean all-cause rate."""
    cal = frame[frame["role"] == "calibrate"]
    grouped = cal.groupby("group", sort=False).agg(
        mode=("mode", "first"), log_rate=("all_cause", lambda v: float(np.mean(np.log(v))))
    )
    return grouped.assign(all_cause=np.exp(grouped["log_rate"]))


@functools.cache
def _fit(data_dir: str) -> intr.RateFit:
    cal = _calibration(_logs(data_dir))
    return intr.fit(cal["all_cause"], cal["mode"])


def fit() -> intr.RateFit:
    """The all-cause interruption rate of each operations mode, fitted on the calibration logs."""
    return _fit(str(data.DATA_DIR))


def rate_range(mode: str) -> Range:
    """A new cluster's all-cause rate under ``mode``: the fit and its 90% prediction band."""
    f = fit()
    lo, hi = f.band(check_operations(mode))
    rate = f.rate(mode)
    return Range(rate * float(lo), rate, rate * float(hi))


# --------------------------------------------------------------------------------------------
# Validation tables
# --------------------------------------------------------------------------------------------


def _inside(bound: str, published: Any, low: Any, high: Any, pub_low: Any, pub_high: Any) -> bool:
    """Whether a published figure agrees with a band: a range overlaps it, a lower bound lies below its
    top, an upper bound above its bottom, any other figure inside it."""
    if bound == "approximate":
        return bool(pub_high >= low and pub_low <= high)
    if bound == "lower":
        return bool(published <= high)
    if bound == "upper":
        return bool(published >= low)
    return bool(low <= published <= high)


def rate_validation() -> pd.DataFrame:
    """Every log beside the model: published rate (its own kind), the model's fitted value, and the
    out-of-sample prediction (the fit without the log for calibration logs, the fit for the others)
    with its error and 90% band, and whether the published figure lies inside.

    ``error`` = published / predicted − 1 (out of sample); ``fit_error`` the same against the fit on
    every calibration log (in sample for calibration logs). A range's figure is its geometric middle
    and it is inside when it overlaps the band; a lower bound is inside when it lies below the top.
    """
    frame = logs()
    full = fit()
    cal = _calibration(frame)
    loo = dict(zip(cal.index, intr.leave_one_out(cal["all_cause"], cal["mode"]), strict=True))
    rows = []
    for group, g in frame.groupby("group", sort=False):
        r = g.iloc[0]
        mode, role, share = r["mode"], r["role"], r["share"]
        published = float(np.exp(np.mean(np.log(g["published"]))))
        count = float(np.exp(np.mean(np.log(g["count"]))))
        fitted = full.rate(mode) * share if share == share else np.nan
        out_fit = loo.get(group) if role == "calibrate" else full
        if out_fit is None or share != share:
            predicted = low = high = np.nan
        else:
            f_lo, f_hi = out_fit.band(mode, count)
            predicted = out_fit.rate(mode) * share
            low, high = predicted * float(f_lo), predicted * float(f_hi)
        bound = r["bound"] if len(g) == 1 else "approximate"
        ids = list(g["id"])
        rows.append(
            {
                "log": r["log"],
                "ids": ", ".join(ids),
                "label": ids[0] if len(ids) == 1 else os.path.commonprefix(ids).rstrip("-"),
                "operations": r["operations"],
                "mode": mode,
                "role": role,
                "kind": r["kind"],
                "bound": bound,
                "GPUs": r["gpus"],
                "count": count,
                "published": published,
                "published_low": float(g["published"].min()),
                "published_high": float(g["published"].max()),
                "fitted": fitted,
                "fit_error": published / fitted - 1,
                "predicted": predicted,
                "error": published / predicted - 1,
                "band_low": low,
                "band_high": high,
                "inside": (
                    _inside(bound, published, low, high, g["published"].min(), g["published"].max())
                    if predicted == predicted
                    else np.nan
                ),
                "source": r["source"],
            }
        )
    return pd.DataFrame(rows)


def _mode_draws(s_ranges: Mapping[str, Range], mode: str, n: int, seed: int) -> dict[str, np.ndarray]:
    """Joint draws of the mode's rate and restart and the checkpoint write time (independent)."""
    rng = np.random.default_rng(seed)
    return {
        "rate": sample_range(s_ranges[RATE[mode]], n, rng),
        "restart": sample_range(s_ranges[RESTART[mode]], n, rng),
        "checkpoint": sample_range(s_ranges["checkpoint_write_s"], n, rng),
    }


def goodput_validation(s_ranges: Mapping[str, Range]) -> pd.DataFrame:
    """Goodput published (effective training time) beside the model's for the run's GPUs and mode.

    The model: :func:`analyses.models.interruptions.job_goodput` at the mode's rate, restart and the
    scenario's checkpoint write time (central), at the best interval; its 90% band from joint draws
    of those three over their ranges (``s_ranges``: :func:`analyses.scenario.ranges`). Runs: the
    logs with an effective-time figure (one row per run) and ``data/goodput_published.csv``.
    """
    runs = data.failure_logs()
    runs = runs[runs["effective_time_min"].notna()].drop_duplicates("run")
    rows = [
        {
            "run": r["run"],
            "GPUs": r["gpus"],
            "operations": r["operations"],
            "published": r["effective_time_min"],
            "bound": "lower",
            "source": r["source"],
        }
        for r in runs.to_dict("records")
    ]
    rows += [
        {
            "run": r["run"],
            "GPUs": r["gpus"],
            "operations": r["operations"],
            "published": r["goodput"],
            "bound": r["bound"],
            "source": r["source"],
        }
        for r in data.goodput_published().to_dict("records")
    ]
    out = []
    for r in rows:
        mode = intr.RATE_MODE[r["operations"]]
        c = {k: v.central for k, v in s_ranges.items()}
        central = float(intr.job_goodput(r["GPUs"], c[RATE[mode]], c["checkpoint_write_s"], c[RESTART[mode]]))
        d = _mode_draws(s_ranges, mode, MC_DRAWS, MC_SEED)
        lo, _, hi = interval(intr.job_goodput(r["GPUs"], d["rate"], d["checkpoint"], d["restart"]), INTERVAL_LEVEL)
        pub = float(r["published"])
        out.append(
            r
            | {
                "mode": mode,
                "predicted": central,
                "error": pub - central,
                "band_low": float(lo),
                "band_high": float(hi),
                "inside": _inside(r["bound"], pub, lo, hi, pub, pub),
            }
        )
    return pd.DataFrame(out)


def recovery_validation(s_ranges: Mapping[str, Range]) -> pd.DataFrame:
    """Time to recover (restart + redone work) published as a bound, beside the model's for the run.

    MegaScale states detection, restart and catch-up in at most 25 minutes; Llama 3's more than 90%
    effective time over 466 interruptions bounds the time each cost
    (:func:`analyses.models.reliability.downtime_bound_s`). The model: the mode's restart plus the
    redone work at the best interval for the run's GPUs, at the mode's rate and the scenario's
    checkpoint write time; its band from joint draws as in :func:`goodput_validation`.
    """
    runs = data.failure_logs()
    rows = []
    for r in runs.to_dict("records"):
        if r["recovery_minutes"] == r["recovery_minutes"]:
            rows.append(r | {"published_min": float(r["recovery_minutes"]), "what": "stated by the source"})
        elif r["id"] == ALL_RUN:
            bound = rel.downtime_bound_s(r["effective_time_min"], r["days"], r["interruptions"]) / SECONDS_PER_MINUTE
            rows.append(
                r | {"published_min": float(bound), "recovery_bound": "upper", "what": "from its effective time"}
            )
    out = []
    c = {k: v.central for k, v in s_ranges.items()}
    for r in rows:
        mode = intr.RATE_MODE[r["operations"]]

        def minutes(rate: Any, checkpoint: Any, restart: Any, gpus: float = float(r["gpus"])) -> np.ndarray:
            mtbf = rel.cluster_mtbf_s(gpus, rel.per_gpu_mtbf_from_rate_s(rate))
            tau = rel.optimal_interval_s(checkpoint, mtbf)
            return rel.time_to_recover_s(tau, checkpoint, mtbf, restart) / SECONDS_PER_MINUTE

        central = float(minutes(c[RATE[mode]], c["checkpoint_write_s"], c[RESTART[mode]]))
        d = _mode_draws(s_ranges, mode, MC_DRAWS, MC_SEED)
        lo, _, hi = interval(minutes(d["rate"], d["checkpoint"], d["restart"]), INTERVAL_LEVEL)
        pub = r["published_min"]
        out.append(
            {
                "run": r["run"],
                "GPUs": r["gpus"],
                "operations": r["operations"],
                "published_min": pub,
                "bound": r["recovery_bound"],
                "what": r["what"],
                "predicted_min": central,
                "error": pub / central - 1,
                "band_low": float(lo),
                "band_high": float(hi),
                "inside": _inside(r["recovery_bound"], pub, lo, hi, pub, pub),
                "source": r["source"],
            }
        )
    return pd.DataFrame(out)


# --------------------------------------------------------------------------------------------
# The scenario's goodput, derived
# --------------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=64)
def goodput_range(rate: Range, restart: Range, checkpoint: Range, gpus: Range) -> Range:
    """The goodput of the scenario's job (``job_gpus``) under automated operations: the model at the
    central inputs, and the 5th and 95th percentiles of joint draws of the four (independent)."""
    c = float(intr.job_goodput(gpus.central, rate.central, checkpoint.central, restart.central))
    rng = np.random.default_rng(MC_SEED)
    draws = intr.job_goodput(
        sample_range(gpus, MC_DRAWS, rng),
        sample_range(rate, MC_DRAWS, rng),
        sample_range(checkpoint, MC_DRAWS, rng),
        sample_range(restart, MC_DRAWS, rng),
    )
    lo, _, hi = interval(draws, INTERVAL_LEVEL)
    return Range(float(lo), c, float(hi), "logitnormal")
