"""Chapter ``experiments``: how many experiments a cluster can run, serially or side by side.

Checks document 001 part 2.5 (12 hyper-parameter sets, 36 days serially vs 9 days six at a time,
27 days early, 75% less labour; dozens of parallel experiments), part 2.1 (12 -> 8 rounds) and
part 4 (4 full runs + 6 comparisons a month); document 000 part 2.1 (1 -> 4 experiments a month)
and part 4 (1 -> 3 a month, monthly -> weekly updates).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import altair as alt
import pandas as pd

from analyses import data
from analyses import experiments as ex
from analyses.chapters import ChapterSpec, Param
from analyses.notebook import fmt
from analyses.verdicts import Verdict, check

SWEEP = "001-2.5-hyperparam-sweep-36-to-9-days"

SPEC = ChapterSpec(
    slug="experiments",
    title="Experiments per month",
    params=(
        Param("e_full", "float", 0.8, "fraction", "parallel efficiency of one run on the whole cluster", 0.05, 1),
        Param("e_slice", "float", 0.95, "fraction", "parallel efficiency of one run on a 1/k slice", 0.05, 1),
        Param(
            "speedup",
            "float",
            1.0,
            "ratio",
            "new cluster's throughput relative to the old platform for the sweep",
            0.1,
            20,
        ),
        Param(
            "rate_tolerance",
            "float",
            0.5,
            "runs/month",
            "gap between recomputed and stated runs per month still called consistent",
            0,
            5,
        ),
    ),
)


def sweep(cfg: Mapping[str, Any]) -> dict[str, float]:
    """Serial and concurrent duration of the stated sweep and the speedup 9 days needs."""
    c = data.claim(SWEEP)
    runs, serial = int(c.value("configs")), c.value("serial_days")
    k, target = int(c.value("concurrent_runs")), c.value("parallel_days")
    per_run = serial / runs
    return {
        "runs": runs,
        "per_run_days": per_run,
        "concurrent": k,
        "concurrent_days": ex.concurrent_days(runs, per_run, k, cfg["e_full"], cfg["e_slice"], cfg["speedup"]),
        "required_speedup": ex.required_speedup(runs, serial, k, target, cfg["e_full"], cfg["e_slice"]),
        "target_days": target,
        "serial_days": serial,
    }


def timeline(cfg: Mapping[str, Any]) -> pd.DataFrame:
    """Gantt rows (lane, start, end) for the serial sweep and the concurrent one."""
    s = sweep(cfg)
    rows = [
        {
            "schedule": "serial, whole cluster",
            "run": i + 1,
            "start": i * s["per_run_days"],
            "end": (i + 1) * s["per_run_days"],
        }
        for i in range(s["runs"])
    ]
    per = s["concurrent_days"] / -(-s["runs"] // s["concurrent"])
    for i in range(s["runs"]):
        wave = i // s["concurrent"]
        rows.append(
            {
                "schedule": f"{s['concurrent']} at a time, 1/{s['concurrent']} cluster each",
                "run": i + 1,
                "start": wave * per,
                "end": (wave + 1) * per,
            }
        )
    return pd.DataFrame(rows)


def timeline_chart(cfg: Mapping[str, Any]) -> alt.LayerChart:
    """Serial vs concurrent timelines, the stated 9 days as a rule."""
    frame = timeline(cfg)
    bars = (
        alt.Chart(frame)
        .mark_bar(stroke="white")
        .encode(
            x=alt.X("start:Q", title="days"),
            x2="end:Q",
            y=alt.Y("run:O", title="run"),
            color=alt.Color("schedule:N", title=None),
            row=alt.Row("schedule:N", title=None),
        )
        .properties(width=480, height=160)
    )
    return bars


def runs_table() -> pd.DataFrame:
    """Runs per month implied by each anecdote's run length, beside the stated figure."""
    rows = []
    for cid, days_id, before, after in [
        ("000-2.1-13b-experiments-1-to-4", "000-2.1-13b-anecdote-days", "days_a100", "days_b300"),
        ("000-4-experiments-1-to-3", "000-4-training-days-28-to-11", "days_before", "days_after"),
    ]:
        c, d = data.claim(cid), data.claim(days_id)
        rows.append(
            {
                "claim": cid,
                "run days before": d.value(before),
                "run days after": d.value(after),
                "runs/month before": float(ex.runs_per_month(d.value(before))),
                "runs/month after": float(ex.runs_per_month(d.value(after))),
                "stated before": c.value("experiments_per_month_before"),
                "stated after": c.value("experiments_per_month_after"),
            }
        )
    return pd.DataFrame(rows)


def _rate_verdict(claim: data.Claim, cfg: Mapping[str, Any]) -> Verdict:
    row = runs_table().set_index("claim").loc[claim.id]
    recomputed = (
        f"30.4 days / run length: {fmt(row['runs/month before'])} -> {fmt(row['runs/month after'])} runs per month"
    )
    ok = (
        abs(row["runs/month after"] - row["stated after"]) <= cfg["rate_tolerance"]
        and abs(row["runs/month before"] - row["stated before"]) <= cfg["rate_tolerance"]
    )
    extra = ""
    if "increase_pct" in claim.values:
        ok = (
            ok
            and abs(
                (claim.value("experiments_per_month_after") / claim.value("experiments_per_month_before") - 1) * 100
                - claim.value("increase_pct")
            )
            < 1
        )
        extra = " and 3 is +200% of 1"
    return Verdict(
        recomputed,
        "consistent" if ok else "inconsistent",
        f"Back-to-back runs of the stated length give the stated monthly count after rounding{extra}; the anecdote itself cannot be checked.",
    )


check("000-2.1-13b-experiments-1-to-4", "000-4-experiments-1-to-3")(_rate_verdict)


@check("000-4-monthly-to-weekly-updates")
def _check_weekly(claim: data.Claim, cfg: Mapping[str, Any]) -> Verdict:
    run = data.claim("000-4-training-days-28-to-11").value("days_after")
    after = claim.value("update_interval_after_days")
    return Verdict(
        f"a full training run takes {fmt(run, 'days')}, longer than the {fmt(after, 'day')} update interval",
        "inconsistent" if run > after else "consistent",
        "Weekly updates cannot come from the case study's own 11-day full training runs; they would need incremental training.",
    )


@check("001-2.1-7b-experiments-12-to-8")
def _check_rounds(claim: data.Claim, cfg: Mapping[str, Any]) -> Verdict:
    return Verdict(
        f"{fmt(claim.value('experiment_rounds_before'))} -> {fmt(claim.value('experiment_rounds_after'))} rounds; no run data given",
        "unverifiable",
        "How many tuning rounds a team needs depends on its search, not on the hardware, and nothing public records this team's.",
    )


@check("001-2.5-dozens-parallel-experiments")
def _check_dozens(claim: data.Claim, cfg: Mapping[str, Any]) -> Verdict:
    per_server = 8 * data.gpu("B300").mig_max_instances
    return Verdict(
        f"one 8-GPU B300 server offers {per_server} MIG instances; tracking tools handle hundreds of runs",
        "consistent",
        "Dozens of concurrent small experiments fit on a few servers, and experiment trackers manage that many routinely.",
    )


@check(SWEEP)
def _check_sweep(claim: data.Claim, cfg: Mapping[str, Any]) -> Verdict:
    s = sweep(cfg)
    recomputed = (
        f"{s['runs']} runs × {fmt(s['per_run_days'], 'days')} serially = {fmt(s['serial_days'], 'days')}; "
        f"{s['concurrent']} at a time on 1/{s['concurrent']} slices: {fmt(s['concurrent_days'], 'days')} "
        f"(efficiency {fmt(cfg['e_full'], pct=True, sig=2)} whole, {fmt(cfg['e_slice'], pct=True, sig=2)} slice, speedup {fmt(cfg['speedup'])}); "
        f"9 days needs a {fmt(s['required_speedup'])}× faster cluster"
    )
    if s["concurrent_days"] <= s["target_days"] * 1.1:
        return Verdict(
            recomputed, "consistent", "With this cluster speedup the concurrent sweep finishes in about 9 days."
        )
    return Verdict(
        recomputed,
        "inconsistent",
        "Running six at a time on the same cluster only trades whole-cluster efficiency for slice efficiency; 36 -> 9 days needs a cluster about "
        "3.4 times faster, beyond even the 2.5-3x the document claims per GPU.",
    )


@check("001-2.5-labour-75pct")
def _check_labour(claim: data.Claim, cfg: Mapping[str, Any]) -> Verdict:
    c = data.claim(SWEEP)
    share = c.value("days_earlier") / c.value("serial_days")
    return Verdict(
        f"{fmt(c.value('days_earlier'), 'days')} / {fmt(c.value('serial_days'), 'days')} = {fmt(share, pct=True, sig=2)}",
        "consistent" if abs(share * 100 - claim.value("labour_saving_pct")) < 1 else "inconsistent",
        "The arithmetic holds if labour scales with calendar days, but it inherits the 9-day figure, which the sweep check disputes.",
    )


@check("001-4-runs-per-month-4-plus-6")
def _check_4_plus_6(claim: data.Claim, cfg: Mapping[str, Any]) -> Verdict:
    run = data.claim("001-4-finetune-5-to-2p8-days").value("days_after")
    n = claim.value("full_runs_per_month") + claim.value("comparison_runs_per_month")
    busy = n * run
    return Verdict(
        f"{fmt(n)} runs × {fmt(run, 'days')} = {fmt(busy, 'days')} of {fmt(ex.DAYS_PER_MONTH, 'days')} a month, even if comparisons are full-length",
        "consistent" if busy <= ex.DAYS_PER_MONTH else "inconsistent",
        "Ten runs of 2.8 days fit in a month on the two servers; the case itself cannot be checked.",
    )
