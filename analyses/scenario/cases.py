"""The documents' case studies and anecdotes, built once from the claims ledger.

Several chapters read the same stories (the recommender system of document 000 part 4, the
customer-service fine-tune of document 001 part 4, the GPU-count and training-time anecdotes, the
fintech crash log, the hyper-parameter sweep). Each case is a dataclass whose fields say where
their figure is stated: ``stated(claim id, value name)`` (a percentage converted to a fraction with
``PERCENT``, or a cut to the share left with ``CUT``), so one function (:func:`build`) reads every
case from ``data/claims.csv``; a chapter reads ``cases.recommender().days_after`` rather than a
claim id and a value name, and every figure is read in exactly one place. A case's ``claims`` are
the ids its fields draw on, for citations. Cases only read the stated figures; what the book
assumes is the scenario's.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from analyses import data
from analyses.scenario import speedups

NEW, OLD = "B300", "A100"  # the generations the documents compare (re-exported by analyses.scenario.generations)

T = TypeVar("T")


def PERCENT(x: float) -> float:  # noqa: N802 (a conversion named as the unit it converts)
    """A stated percentage as a fraction."""
    return x / 100


def CUT(x: float) -> float:  # noqa: N802
    """A stated cut in percent as the share left (a 47% cut leaves 0.53)."""
    return 1 - x / 100


def stated(claim: str, value: str, convert: Callable[[float], float] | None = None) -> Any:
    """A field holding the figure ``value`` stated by ``claim`` (``data/claims.csv``), converted."""
    return field(metadata={"claim": claim, "value": value, "convert": convert})


def build(cls: type[T]) -> T:
    """An instance of the case ``cls`` with every :func:`stated` field read from its claim."""
    return _build(cls, _root())


@functools.cache
def _build(cls: type[T], root: Path) -> T:
    values = {}
    for f in dataclasses.fields(cls):
        if "claim" not in f.metadata:
            continue
        x = data.claim(f.metadata["claim"]).value(f.metadata["value"])
        values[f.name] = f.metadata["convert"](x) if f.metadata["convert"] else x
    return cls(**values)


def _root() -> Path:
    return Path(data.DATA_DIR).resolve()


class Case:
    """What every case has: the claims its figures are stated in."""

    @property
    def claims(self) -> tuple[str, ...]:
        """Ids of the claims the case's fields are stated in, in field order."""
        ids = (f.metadata.get("claim") for f in dataclasses.fields(self))  # type: ignore[arg-type]
        return tuple(dict.fromkeys(i for i in ids if i))


# Document 000, part 4 (the recommender) and document 001, part 4 (customer service): claim ids
REC_GPUS, REC_DAYS = "000-4-128-a100-to-96-b300", "000-4-training-days-28-to-11"
REC_UTIL, REC_RUNS = "000-4-utilisation-58-to-87", "000-4-experiments-1-to-3"
REC_COST, REC_UPDATES = "000-4-monthly-cost-47pct-3m-rmb", "000-4-monthly-to-weekly-updates"
REC_SAVING = "000-4-annual-saving-3m-rmb"
CS_OWN, CS_RENT, CS_FT = "001-4-own-42k-vs-rent-80k", "001-4-rental-80k-rmb-month", "001-4-finetune-5-to-2p8-days"
CS_UTIL, CS_RUNS, CS_WORK = "001-4-utilisation-55-to-89", "001-4-runs-per-month-4-plus-6", "001-4-case-workload-7b-13b"
CS_SERVERS = "001-4-two-4-gpu-b300-servers"
FINTECH_000, FINTECH_001 = "000-2.4-fintech-crash-every-5-days", "001-2.4-fintech-crash-every-5-days"
PLAN_TIME = "000-5-node-plan-time"


@dataclass(frozen=True)
class Recommender(Case):
    """Document 000, part 4: a multimodal recommender moved from 128 A100s to 96 B300s."""

    gpus_before: float = stated(REC_GPUS, "gpus_before")
    gpus_after: float = stated(REC_GPUS, "gpus_after")
    days_before: float = stated(REC_DAYS, "days_before")
    days_after: float = stated(REC_DAYS, "days_after")
    utilisation_before: float = stated(REC_UTIL, "utilisation_before_pct", PERCENT)
    utilisation_after: float = stated(REC_UTIL, "utilisation_after_pct", PERCENT)
    runs_before: float = stated(REC_RUNS, "experiments_per_month_before")  # full training runs per month
    runs_after: float = stated(REC_RUNS, "experiments_per_month_after")
    cost_ratio: float = stated(REC_COST, "cost_reduction_pct", CUT)  # monthly compute cost after / before
    annual_saving_min_rmb: float = stated(REC_SAVING, "annual_saving_min_rmb")
    update_interval_before_days: float = stated(REC_UPDATES, "update_interval_before_days")
    update_interval_after_days: float = stated(REC_UPDATES, "update_interval_after_days")
    gmv_increase: float = stated("000-4-gmv-8pct", "gmv_increase_pct", PERCENT)
    data_pb_min: float = stated("000-4-pb-scale-training-data", "data_pb_min")
    gpu_before: str = OLD
    gpu_after: str = NEW


@dataclass(frozen=True)
class CustomerService(Case):
    """Document 001, part 4: a customer-service provider moved a rented A100 fine-tune to owned B300s."""

    servers: float = stated(CS_SERVERS, "servers")
    gpus_per_server: float = stated(CS_SERVERS, "gpus_per_server")
    depreciation_years: float = stated(CS_OWN, "depreciation_years")
    own_rmb_per_month: float = stated(CS_OWN, "cost_after_rmb_per_month")
    rent_rmb_per_month: float = stated(CS_RENT, "cost_per_month_rmb")
    finetune_days_before: float = stated(CS_FT, "days_before")
    finetune_days_after: float = stated(CS_FT, "days_after")
    utilisation_before: float = stated(CS_UTIL, "utilisation_before_pct", PERCENT)
    utilisation_after: float = stated(CS_UTIL, "utilisation_after_pct", PERCENT)
    full_runs_per_month: float = stated(CS_RUNS, "full_runs_per_month")
    comparison_runs_per_month: float = stated(CS_RUNS, "comparison_runs_per_month")
    params_low: float = stated(CS_WORK, "params_low")
    params_high: float = stated(CS_WORK, "params_high")
    new_samples_per_month_low: float = stated(CS_WORK, "new_samples_per_month_low")
    new_samples_per_month_high: float = stated(CS_WORK, "new_samples_per_month_high")

    @property
    def gpus(self) -> float:
        return self.servers * self.gpus_per_server


@dataclass(frozen=True)
class Anecdote:
    """A before/after training anecdote: GPUs and days on the old (A100) and new (B300) cluster.

    ``gpus_*`` are None where the document gives no GPU counts (read as equal counts)."""

    claim: str
    document: str
    section: str
    params: float | None
    gpus_before: float | None
    gpus_after: float | None
    days_before: float
    days_after: float

    @property
    def gpu_days_ratio(self) -> float:
        """GPU-days before / after: the per-GPU speed-up the anecdote implies (equal counts if unstated)."""
        g0 = self.gpus_before if self.gpus_before is not None else 1.0
        g1 = self.gpus_after if self.gpus_after is not None else 1.0
        return g0 * self.days_before / (g1 * self.days_after)


@dataclass(frozen=True)
class Fintech(Case):
    """Both documents, part 2.4: a 10B risk model whose old platform crashed every 5 days."""

    params: float = stated(FINTECH_001, "params")
    crash_interval_days: float = stated(FINTECH_001, "crash_interval_days")
    recovery_hours_per_crash: float = stated(FINTECH_001, "recovery_hours_per_crash")  # document 001's figure
    run_days_no_fault: float = stated(FINTECH_001, "run_days_no_fault")
    hours_saved_000_min: float = stated(FINTECH_000, "hours_saved_min")  # document 000: "more than 30 hours"
    hours_saved_001: float = stated(FINTECH_001, "hours_saved_approx")  # document 001: "about 30 hours"
    rd_efficiency_gain: float = stated("001-2.4-rd-efficiency-18pct", "rd_efficiency_gain_pct", PERCENT)


SWEEP = "001-2.5-hyperparam-sweep-36-to-9-days"


@dataclass(frozen=True)
class Sweep(Case):
    """Document 001, part 2.5: twelve hyper-parameter sets, 36 days serially, 9 days six at a time."""

    configs: float = stated(SWEEP, "configs")
    serial_days: float = stated(SWEEP, "serial_days")
    concurrent_runs: float = stated(SWEEP, "concurrent_runs")
    parallel_days: float = stated(SWEEP, "parallel_days")
    days_earlier: float = stated(SWEEP, "days_earlier")
    labour_saving: float = stated("001-2.5-labour-75pct", "labour_saving_pct", PERCENT)

    @property
    def run_days(self) -> float:
        return self.serial_days / self.configs


def recommender() -> Recommender:
    """Document 000's case study (part 4)."""
    return build(Recommender)


def customer_service() -> CustomerService:
    """Document 001's case study (part 4)."""
    return build(CustomerService)


# The anecdotes that report training time before and after: (claim, GPU-count claim or None,
# names of the GPU counts and days in the claim's values).
_ANECDOTES = (
    ("000-2.1-64x30-to-32x20", None, ("gpus_before", "gpus_after"), ("days_before", "days_after")),
    ("001-2.1-64x30-to-32x20", None, ("gpus_before", "gpus_after"), ("days_before", "days_after")),
    (REC_DAYS, REC_GPUS, ("gpus_before", "gpus_after"), ("days_before", "days_after")),
    ("000-2.1-13b-anecdote-days", None, None, ("days_a100", "days_b300")),
    ("001-2.1-7b-anecdote-days", None, None, ("days_a100", "days_b300")),
    (CS_FT, None, None, ("days_before", "days_after")),
)


def anecdotes() -> tuple[Anecdote, ...]:
    """Every before/after training-time anecdote of both documents, in ledger order of the table above."""
    out = []
    for cid, counts_from, counts, days in _ANECDOTES:
        c = data.claim(cid)
        src = data.claim(counts_from) if counts_from else c
        out.append(
            Anecdote(
                claim=cid,
                document=c.document,
                section=c.section,
                params=c.values.get("params"),
                gpus_before=src.value(counts[0]) if counts else None,
                gpus_after=src.value(counts[1]) if counts else None,
                days_before=c.value(days[0]),
                days_after=c.value(days[1]),
            )
        )
    return tuple(out)


def anecdote(claim_id: str) -> Anecdote:
    """One training-time anecdote by its claim id."""
    for a in anecdotes():
        if a.claim == claim_id:
            return a
    raise KeyError(f"claim {claim_id} is not a training-time anecdote; anecdotes: {[a.claim for a in anecdotes()]}")


def fintech() -> Fintech:
    """The fintech crash log of both documents (part 2.4)."""
    return build(Fintech)


def sweep() -> Sweep:
    """Document 001's hyper-parameter sweep (part 2.5)."""
    return build(Sweep)


def stated_speedup(claim_id: str = "000-3-table-throughput") -> tuple[float, float]:
    """A document's stated per-GPU speed-up range of B300 over A100 (low, high)."""
    c = data.claim(claim_id)
    return c.value("speedup_low_x"), c.value("speedup_high_x")


def stated_payback_months() -> tuple[float, float]:
    """The documents' stated payback band (both say 6-12 months; part 6 of each)."""
    c = data.claim("000-6-payback-6-12-months")
    return c.value("payback_low_months"), c.value("payback_high_months")


@dataclass(frozen=True)
class DeploymentPlan(Case):
    """Document 000's deployment plan (part 5's hardware base, part 6's proof of concept): 8-GPU B300
    nodes, 4-8 of them to start, for 10B-parameter training, on a network of at least 200 Gbps, after
    a proof of concept on 4-8 GPUs."""

    gpus_per_node: float = stated(PLAN_TIME, "gpus_per_node")
    nodes_low: float = stated(PLAN_TIME, "nodes_low")
    nodes_high: float = stated(PLAN_TIME, "nodes_high")
    params: float = stated(PLAN_TIME, "params")
    network_min_gbit_per_s: float = stated("000-5-network-200gbps", "network_min_gbps")
    poc_gpus_low: float = stated("000-6-poc-4-8-gpus", "poc_gpus_low")
    poc_gpus_high: float = stated("000-6-poc-4-8-gpus", "poc_gpus_high")
    gpu: str = NEW

    @property
    def gpus_low(self) -> float:
        return self.nodes_low * self.gpus_per_node

    @property
    def gpus_high(self) -> float:
        return self.nodes_high * self.gpus_per_node


def deployment_plan() -> DeploymentPlan:
    """Document 000's plan (parts 5 and 6), read by the memory and scaling-efficiency chapters."""
    return build(DeploymentPlan)


DAYS_7B = "001-2.1-7b-anecdote-days"


@dataclass(frozen=True)
class Startup7B(Case):
    """Document 001, part 2.1: a start-up's 7B model, 28 days on A100 -> 16 on B300, 12 -> 8 experiment
    rounds, total R&D cost about 55% lower (no GPU counts, no cost split)."""

    params: float = stated(DAYS_7B, "params")
    days_before: float = stated(DAYS_7B, "days_a100")
    days_after: float = stated(DAYS_7B, "days_b300")
    rounds_before: float = stated("001-2.1-7b-experiments-12-to-8", "experiment_rounds_before")
    rounds_after: float = stated("001-2.1-7b-experiments-12-to-8", "experiment_rounds_after")
    rd_cost_cut: float = stated("001-2.1-7b-rd-cost-55pct", "rd_cost_reduction_pct", PERCENT)

    @property
    def experiment_days_ratio(self) -> float:
        """Experiment-days after / before: rounds x days per round."""
        return self.rounds_after * self.days_after / (self.rounds_before * self.days_before)


def startup_7b() -> Startup7B:
    """Document 001's 7B anecdote (part 2.1), read by the cost chapter."""
    return build(Startup7B)


GDS_SHARES, GDS_DAYS = "001-2.2-loading-share-35-to-12", "001-2.2-days-saved-2p5-of-10"
CLOUD_UTIL, CLOUD_BUY = "001-2.3-cloud-utilisation-45-to-80", "001-2.3-procurement-30pct"


@dataclass(frozen=True)
class GdsRun(Case):
    """Document 001, part 2.2: a hundred-billion-parameter training before and after GPUDirect Storage."""

    params: float = stated(GDS_SHARES, "params")
    loading_share_before: float = stated(GDS_SHARES, "loading_share_before_pct", PERCENT)  # of training time
    loading_share_after: float = stated(GDS_SHARES, "loading_share_after_pct", PERCENT)
    utilisation_before: float = stated(GDS_SHARES, "utilisation_before_pct", PERCENT)  # effective GPU utilisation
    utilisation_after: float = stated(GDS_SHARES, "utilisation_after_pct", PERCENT)
    cycle_days: float = stated(GDS_DAYS, "training_days")  # the training cycle the saving is counted over
    days_saved: float = stated(GDS_DAYS, "days_saved")  # "about 2.5 days" of waiting
    cost_saving: float = stated(GDS_DAYS, "cost_reduction_pct", PERCENT)  # electricity and labour


@dataclass(frozen=True)
class CloudProvider(Case):
    """Document 001, part 2.3: a cloud provider's GPU cluster before and after MIG."""

    utilisation_before: float = stated(CLOUD_UTIL, "utilisation_before_pct", PERCENT)
    utilisation_after_min: float = stated(CLOUD_UTIL, "utilisation_after_min_pct", PERCENT)  # "over 80%"
    gpus_after: float = stated(CLOUD_UTIL, "gpus_after")  # "4 cards do the work of 7"
    gpus_before: float = stated(CLOUD_UTIL, "gpus_before")
    procurement_cut: float = stated(CLOUD_BUY, "procurement_reduction_pct", PERCENT)  # annual hardware procurement


def gds_run() -> GdsRun:
    """Document 001's GDS measurement (part 2.2)."""
    return build(GdsRun)


def cloud_provider() -> CloudProvider:
    """Document 001's MIG anecdote (part 2.3)."""
    return build(CloudProvider)


# --------------------------------------------------------------------------------------------
# The workload of each claim that reads the per-GPU speed-up
# --------------------------------------------------------------------------------------------

GENERIC_SPEEDUP = ("000-2.1-64x30-to-32x20", "001-2.1-64x30-to-32x20", REC_DAYS)
"""Anecdotes about an unnamed model: the reference model, at the anecdote's own A100 count."""
CASE_001 = ("001-6-payback-6-12-months", "001-6-effective-compute-cost-formula")
"""Document 001's part 6 speaks of its own case: the customer-service fine-tune on owned B300 servers."""


def workload(claim_id: str, s: Mapping[str, Any]) -> speedups.Workload | None:
    """The workload whose per-GPU speed-up judges ``claim_id``
    (:class:`analyses.scenario.speedups.Workload`), or None for the reference workload of the
    scenario's speed-up (generic claims about "training": per-GPU throughput, cost per task, payback
    of a generic replacement, months to weeks).

    - an anecdote with a parameter count (000 §2.1's 13B, 001 §2.1's 7B): the decoder of
      ``data/model_shapes.csv`` nearest that count, pretrained at the reference's GPU count and batch;
    - an anecdote about an unnamed model with GPU counts (64 × 30 → 32 × 20, 000 §4's 128 A100s): the
      reference model at the anecdote's A100 count;
    - document 001's case and part 6 (its payback and effective-compute-cost advice): a full fine-tune of
      the case's largest model on its servers' GPUs, sequences of ``finetune_tokens_per_sample`` tokens,
      ``finetune_batch_sequences`` per step;
    - document 001's hyper-parameter sweep: one run of the published Megatron-Bridge Llama 3 8B FP8 recipe
      it is read as (8 GPUs, its batch and sequence length).

    ``s`` is the central scenario (:func:`analyses.scenario.values`).
    """
    ref = speedups.reference(s)
    anecdotal = {a.claim: a for a in anecdotes()}
    if claim_id in GENERIC_SPEEDUP:
        a = anecdotal[claim_id]
        return speedups.with_(
            ref, label=f"{claim_id}: the reference model on {a.gpus_before:g} GPUs", gpus=int(a.gpus_before)
        )
    if claim_id in anecdotal and anecdotal[claim_id].params is not None:
        a = anecdotal[claim_id]
        return speedups.with_(
            ref, label=f"{claim_id}: {a.params / 1e9:g}B pretraining", shape=speedups.nearest_shape(a.params)
        )
    if claim_id in CASE_001 or claim_id in (CS_FT, CS_WORK):
        c = customer_service()
        seq = int(round(float(s["finetune_tokens_per_sample"])))
        return speedups.Workload(
            f"{claim_id}: document 001's fine-tune",
            speedups.nearest_shape(c.params_high),
            int(c.gpus),
            float(s["finetune_batch_sequences"]) * seq,
            seq_len=seq,
            kind="fine-tune",
        )
    if claim_id == SWEEP:
        run = data.published_runs().set_index("id").loc[SWEEP_RECIPE]
        return speedups.Workload(
            f"{claim_id}: one run of {run['run']}",
            speedups.nearest_shape(float(run["params_total"])),
            int(run["n_gpus"]),
            float(run["global_batch_seqs"] * run["seq_len"]),
            seq_len=int(run["seq_len"]),
        )
    return None


SWEEP_RECIPE = (
    "mb2511-llama3-8b-b200-fp8-cs-8"  # the published Blackwell FP8 run each sweep run is read as (published_runs)
)
