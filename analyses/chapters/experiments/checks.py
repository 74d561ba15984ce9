"""Checks of the experiments chapter: runs a month, update cadence, tuning rounds, the sweep and its labour.

Each check recomputes its claim from the documents' own run lengths (:mod:`analyses.scenario.cases`), the
scenario (``s``: the B300/A100 per-GPU speed-up) and the book's one step-time model (the efficiency one
run keeps on the whole cluster and on a slice), and returns a :class:`~analyses.verdicts.Finding`;
the rule of the claim's kind decides. Every check is numpy-vectorised in ``s``.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from analyses import data
from analyses.models import experiments as ex
from analyses.models import performance
from analyses.scenario import calibration, cases, clusters, operations
from analyses.scenario.generations import NEW, NEW_PRECISION, speedup
from analyses.units import DAYS_PER_MONTH, DAYS_PER_WEEK
from analyses.units.formats import fmt, in_words, stated
from analyses.verdicts import Arithmetic, Credit, Finding, Reading, at_least, between, check, exactly, rounded

SWEEP_RECIPE = cases.SWEEP_RECIPE  # the published Blackwell FP8 run each sweep run follows (published_runs)
ROUNDS = "001-2.1-7b-experiments-12-to-8"
THIRTEEN_B = "000-2.1-13b-anecdote-days"  # the 13B anecdote whose run lengths give "1 -> 4 a month"

READING_COUNTS = (
    "月均实验次数 read as complete training runs of the anecdote's length, back to back; counts as rounded figures"
)


# --------------------------------------------------------------------------------------------
# The sweep's cluster (cfg-independent, computed once)
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SweepSetup:
    """The sweep's cluster and one run on it: the step-time model's inputs (``run``, without ``n_gpus``),
    its coefficients, the cluster's GPUs and node size, the efficiency of one run on the whole cluster and
    on a slice, and the model's MFU of one run on a slice."""

    coef: performance.Coefficients
    run: dict[str, Any]
    gpus: float
    gpus_per_node: float
    e_full: float
    e_slice: float
    mfu_slice: float


@functools.cache
def sweep_setup() -> SweepSetup:
    """The sweep's cluster and its runs.

    The case gives neither cluster nor model: each of the ``concurrent`` runs is read as one 8-GPU server
    of the B300 reference cluster (its InfiniBand cluster in ``data/cluster_configs.csv``), the whole
    cluster as that many servers, and each run as the published Megatron-Bridge Llama 3 8B FP8 recipe
    (:data:`SWEEP_RECIPE`: its shape, batch and layout) on B300, timed by the book's one step-time model
    at its one calibration (:mod:`analyses.scenario.calibration`).
    """
    recipe = calibration.runs().set_index("id").loc[[SWEEP_RECIPE]].reset_index()
    recipe["gpu"], recipe["precision"], recipe["nic_gbit_per_s_per_gpu"] = NEW, NEW_PRECISION, np.nan
    run = {k: v[0] if isinstance(v, np.ndarray) else v for k, v in calibration.inputs(recipe).items()}
    run.pop("n_gpus")
    coef = calibration.coefficients()
    node = float(clusters.cluster(NEW)["gpus_per_node"])
    gpus = float(cases.sweep().concurrent_runs * node)
    e_full, e_slice = (float(e) for e in ex.run_efficiency(coef, [gpus, node], **run))
    mfu = float(performance.step_time(coef, n_gpus=node, **run).mfu(run["peak_flops"]))
    return SweepSetup(coef, run, gpus, node, e_full, e_slice, mfu)


def sweep_numbers(s: Mapping[str, Any]) -> dict[str, Any]:
    """The sweep recomputed: serial and concurrent days on the old cluster and on B300, speed-ups."""
    sw = cases.sweep()
    runs, k = int(sw.configs), int(sw.concurrent_runs)
    e_full, e_slice = sweep_setup().e_full, sweep_setup().e_slice
    x = speedup(s, "sweep-8b")
    return {
        "old_concurrent_days": float(ex.concurrent_days(runs, sw.run_days, k, e_full, e_slice, 1.0)),
        "b300_serial_days": sw.serial_days / np.asarray(x),
        "b300_concurrent_days": ex.concurrent_days(runs, sw.run_days, k, e_full, e_slice, x),
        "stated_speedup": sw.serial_days / sw.parallel_days,
        "speedup": ex.sweep_speedup(runs, k, e_full, e_slice, x),
        "per_gpu_speedup": x,
        "required_ratio": ex.required_efficiency_ratio(runs, sw.serial_days, k, sw.parallel_days, 1.0),
        "required_speedup": ex.required_speedup(runs, sw.serial_days, k, sw.parallel_days, e_full, e_slice),
    }


# --------------------------------------------------------------------------------------------
# Runs a month and the update cadence
# --------------------------------------------------------------------------------------------


def _rate_finding(
    claim: data.Claim, days_before: float, days_after: float, extra: tuple[Arithmetic, ...] = ()
) -> Finding:
    before, after = operations.runs_per_month(None, days_before), operations.runs_per_month(None, days_after)
    said_before = claim.value("experiments_per_month_before")
    return Finding(
        stated=rounded(claim.value("experiments_per_month_after")),
        value=after,
        unit="runs/month",
        recomputed=lambda: (
            f"{fmt(DAYS_PER_MONTH, sig=3)} days a month / run length: {stated(days_before)} days -> "
            f"{fmt(before, sig=3)} runs, {stated(days_after)} days -> {fmt(after, sig=3)} runs a month"
        ),
        context="back-to-back runs of the stated length give the stated monthly counts; the anecdote itself cannot be checked",
        arithmetic=(Arithmetic("the runs a month before", rounded(said_before), before), *extra),
        reading=READING_COUNTS,
        taken="月均 as a monthly average, rounded",
        readings=(Reading("whole runs completed within one month", value=np.floor(after)),),
    )


@check("000-2.1-13b-experiments-1-to-4")
def check_13b_experiments_1_to_4(claim: data.Claim, s: Mapping[str, Any], cfg: Mapping[str, Any]) -> Finding:
    """Document 000 §2.1: the 13B team's experiments a month rose from 1 to 4 (runs of 22 -> 8 days)."""
    a = cases.anecdote(THIRTEEN_B)
    return _rate_finding(claim, a.days_before, a.days_after)


@check("000-4-experiments-1-to-3")
def check_experiments_1_to_3(claim: data.Claim, s: Mapping[str, Any], cfg: Mapping[str, Any]) -> Finding:
    """Document 000 §4: complete experiments a month from at most 1 to 3 (+200%), runs of 28 -> 11 days."""
    r = cases.recommender()
    increase = 100 * (r.runs_after / r.runs_before - 1)
    return _rate_finding(
        claim,
        r.days_before,
        r.days_after,
        (Arithmetic("the increase (%)", rounded(claim.value("increase_pct")), increase),),
    )


@check("000-4-monthly-to-weekly-updates")
def check_monthly_to_weekly_updates(claim: data.Claim, s: Mapping[str, Any], cfg: Mapping[str, Any]) -> Finding:
    """Document 000 §4: model updates from monthly to weekly (月级 -> 周级)."""
    r = cases.recommender()
    rate = operations.runs_per_month(None, r.days_after)
    weekly = DAYS_PER_MONTH / r.update_interval_after_days
    return Finding(
        stated=between(1.0, DAYS_PER_MONTH / DAYS_PER_WEEK),  # an update a month to one a week
        value=rate,
        unit="updates/month",
        recomputed=lambda: (
            f"one full training run of {stated(r.days_after)} days per update allows {fmt(rate, sig=3)} updates a month "
            f"(an update every {stated(r.days_after)} days); exactly weekly is {fmt(weekly, sig=3)} a month"
        ),
        context=lambda v: (
            f"an update every {stated(r.days_after)} days is on the order of a week, though not every week without "
            "incremental training"
            if v == "consistent"
            else "full retraining cannot keep this cadence; it would need incremental training"
        ),
        reading=(
            "周级 and 月级 read as on the order of a week and of a month (the 级 suffix): an update interval between "
            "a week and a month; strictly, exactly weekly (every 7 days)"
        ),
        taken="周级 as on the order of a week (between weekly and monthly)",
        strict=exactly(weekly),
    )


@check("001-4-runs-per-month-4-plus-6")
def check_runs_per_month_4_plus_6(claim: data.Claim, s: Mapping[str, Any], cfg: Mapping[str, Any]) -> Finding:
    """Document 001 §4: after the upgrade, 4 full training runs plus 6 comparison runs a month."""
    c = cases.customer_service()
    capacity = operations.runs_per_month(None, c.finetune_days_after)
    total = c.full_runs_per_month + c.comparison_runs_per_month
    return Finding(
        stated=at_least(c.full_runs_per_month),
        value=capacity,
        unit="runs/month",
        recomputed=lambda: (
            f"{fmt(DAYS_PER_MONTH, sig=3)} days / {stated(c.finetune_days_after)}-day fine-tunes = {fmt(capacity, sig=3)} "
            f"full runs a month on the {in_words(c.servers)} servers; {stated(total)} full-length runs take "
            f"{fmt(total * c.finetune_days_after, 'days', 3)}"
        ),
        context="the runs fit in a month even if every comparison run is a full fine-tune; the case itself cannot be checked",
        reading=(
            f"{stated(c.comparison_runs_per_month)} comparison runs read as up to full-length fine-tunes: the month must "
            f"hold at least {stated(c.full_runs_per_month)} full runs; strictly, all {stated(total)} full-length"
        ),
        taken=f"at least {stated(c.full_runs_per_month)} full-length runs, the comparison runs shorter",
        strict=at_least(total),
    )


# --------------------------------------------------------------------------------------------
# Tuning rounds, parallel experiments, the sweep and its labour
# --------------------------------------------------------------------------------------------


def single_cut_full_runs(configs: int) -> dict[str, float]:
    """Full-run equivalents of one early cut: eta 2 at half a run, eta 3 at a third (resuming)."""
    return {
        "half": float(ex.successive_halving_full_runs(configs, eta=2, min_budget=1 / 2, resume=True)),
        "third": float(ex.successive_halving_full_runs(configs, eta=3, min_budget=1 / 3, resume=True)),
    }


@check(ROUNDS)
def check_7b_experiments_12_to_8(claim: data.Claim, s: Mapping[str, Any], cfg: Mapping[str, Any]) -> Finding:
    """Document 001 §2.1: faster convergence cut the 7B team's experiment rounds from 12 to 8."""
    before, after = int(claim.value("experiment_rounds_before")), claim.value("experiment_rounds_after")
    cut = single_cut_full_runs(before)
    return Finding(
        stated=exactly(after),
        value=None,
        unit="runs",
        recomputed=lambda: (
            f"{before} -> {stated(after)} rounds = {fmt(after / before, pct=True, sig=2)} of the runs; early stopping "
            f"over {before} configurations costs {fmt(cut['third'], sig=2)}-{fmt(cut['half'], sig=2)} full runs with one "
            "cut (eta 3 at a third, eta 2 at half a run)"
        ),
        context=(
            f"plausible as a count, since early stopping alone can bring a {before}-configuration search down to "
            f"{stated(after)} full runs or fewer, but not for the cause the document gives: faster convergence on B300 "
            "shortens runs without reducing how many a search needs; nothing public records this team's search"
        ),
        reading="实验轮数 read as full training runs of the search",
    )


@check("001-2.5-dozens-parallel-experiments")
def check_dozens_parallel_experiments(claim: data.Claim, s: Mapping[str, Any], cfg: Mapping[str, Any]) -> Finding:
    """Document 001 §2.5: dozens of parallel experiments are easy to manage on B300."""
    g = data.gpu(NEW)
    per_server = sweep_setup().gpus_per_node * g.mig_max_instances
    return Finding(
        stated=between(claim.value("parallel_experiments_low"), claim.value("parallel_experiments_high")),
        value=float(per_server),
        unit="experiments",
        recomputed=lambda: (
            f"one {fmt(sweep_setup().gpus_per_node, sig=1)}-GPU {NEW} server splits into {fmt(per_server, sig=2)} "
            f"MIG instances ({g.mig_max_instances} per GPU); experiment trackers follow many more runs than that"
        ),
        context="dozens of small experiments fit on one or two servers, as on earlier MIG-capable GPUs",
        reading="数十 (several tens) read as 20-90 concurrent experiments",
        credits=(Credit("mig"),),
    )


@check("001-2.5-hyperparam-sweep-36-to-9-days")
def check_hyperparam_sweep_36_to_9_days(claim: data.Claim, s: Mapping[str, Any], cfg: Mapping[str, Any]) -> Finding:
    """Document 001 §2.5: 12 hyper-parameter sets, 36 days serially, 9 days on B300 six at a time, 27 days early."""
    sw, n = cases.sweep(), sweep_numbers(s)
    setup = sweep_setup()
    gpus, e_full, e_slice = setup.gpus, setup.e_full, setup.e_slice
    return Finding(
        stated=exactly(n["stated_speedup"]),
        value=n["speedup"],
        unit="x",
        recomputed=lambda: (
            f"{stated(sw.configs)} runs × {fmt(sw.run_days, 'days', 2)} = {stated(sw.serial_days)} days serially; "
            f"{stated(sw.concurrent_runs)} at a time on the same cluster: {fmt(n['old_concurrent_days'], 'days')} "
            f"(efficiency {fmt(e_full, pct=True, sig=3)} on {fmt(gpus, sig=2)} GPUs, {fmt(e_slice, pct=True, sig=3)} on a "
            f"slice); on {NEW} at {fmt(n['per_gpu_speedup'], 'x')} per GPU for one run of the recipe: {fmt(n['b300_concurrent_days'], 'days')}, "
            f"{fmt(n['speedup'], 'x')} faster, where {stated(sw.parallel_days)} days is {fmt(n['stated_speedup'], 'x', 2)}"
        ),
        context=lambda v: (
            f"running {in_words(sw.concurrent_runs)} at a time on one cluster only trades whole-cluster for slice "
            f"efficiency (it would need e_slice/e_full = {fmt(n['required_ratio'], sig=2)}); the gain comes from "
            f"{NEW}'s per-GPU speed, which allows even more; nothing public records this team's sweep"
            if v != "implausible"
            else f"the stated saving needs more than {NEW}'s per-GPU speed-up gives in this scenario"
        ),
        arithmetic=(Arithmetic("the days saved", rounded(sw.days_earlier), sw.serial_days - sw.parallel_days),),
        reading=(
            "the old platform read as A100 (the documents' comparison throughout) and both clusters as having the "
            "same GPU count; the sweep speed-up is the serial days over the concurrent days"
        ),
        documents=tuple(
            Reading(label, value=ex.sweep_speedup(int(sw.configs), int(sw.concurrent_runs), e_full, e_slice, x))
            for label, x in zip(("{}× per GPU", "{}×"), cases.stated_speedup("001-2.1-throughput-2p5-3x"), strict=True)
            for label in [label.format(stated(x))]
        ),
    )


@check("001-2.5-labour-75pct")
def check_labour_75pct(claim: data.Claim, s: Mapping[str, Any], cfg: Mapping[str, Any]) -> Finding:
    """Document 001 §2.5: delivering 27 days early saves 75% of R&D labour cost."""
    sw, n = cases.sweep(), sweep_numbers(s)
    share = 100 * sw.days_earlier / sw.serial_days
    at_speed = 100 * (1 - n["b300_concurrent_days"] / sw.serial_days)
    return Finding(
        stated=rounded(100 * sw.labour_saving),
        value=share,
        unit="%",
        recomputed=lambda: (
            f"{stated(sw.days_earlier)} / {stated(sw.serial_days)} days = {fmt(share / 100, pct=True, sig=2)} (the "
            f"document's own days); at the scenario's {NEW} speed the sweep would take "
            f"{fmt(n['b300_concurrent_days'], 'days')}, a {fmt(at_speed / 100, pct=True, sig=2)} saving"
        ),
        context=(
            "the saving follows from the document's own days if labour scales with calendar time; the faster "
            f"{NEW} sweep the scenario gives would save more"
        ),
        reading="人力成本 read as proportional to the project's calendar days",
    )
