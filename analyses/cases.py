"""The documents' case studies and anecdotes, built once from the claims ledger.

Several chapters read the same stories (the recommender system of document 000 part 4, the
customer-service fine-tune of document 001 part 4, the GPU-count and training-time anecdotes, the
fintech crash log, the hyper-parameter sweep). Each is built here from the stated figures of its
claims in ``data/claims.csv``, so a chapter reads ``cases.recommender().days_after`` rather than a
claim id and a value name, and every figure is read in exactly one place. ``claims`` lists the ids
a case draws on, for citations.
"""

from __future__ import annotations

from dataclasses import dataclass

from analyses import data


@dataclass(frozen=True)
class Recommender:
    """Document 000, part 4: a multimodal recommender moved from 128 A100s to 96 B300s."""

    gpu_before: str
    gpu_after: str
    gpus_before: float
    gpus_after: float
    days_before: float
    days_after: float
    utilisation_before: float  # fraction
    utilisation_after: float  # fraction
    runs_before: float  # full training runs per month
    runs_after: float
    cost_ratio: float  # monthly compute cost after / before (1 - the stated 47% cut)
    annual_saving_min_rmb: float
    update_interval_before_days: float
    update_interval_after_days: float
    gmv_increase: float  # fraction
    data_pb_min: float
    claims: tuple[str, ...]


@dataclass(frozen=True)
class CustomerService:
    """Document 001, part 4: a customer-service provider moved a rented A100 fine-tune to owned B300s."""

    servers: float
    gpus_per_server: float
    depreciation_years: float
    own_rmb_per_month: float
    rent_rmb_per_month: float
    finetune_days_before: float
    finetune_days_after: float
    utilisation_before: float
    utilisation_after: float
    full_runs_per_month: float
    comparison_runs_per_month: float
    params_low: float
    params_high: float
    new_samples_per_month_low: float
    new_samples_per_month_high: float
    claims: tuple[str, ...]

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
class Fintech:
    """Both documents, part 2.4: a 10B risk model whose old platform crashed every 5 days."""

    params: float
    crash_interval_days: float
    recovery_hours_per_crash: float  # document 001's figure
    run_days_no_fault: float
    hours_saved_000_min: float  # document 000: "more than 30 hours"
    hours_saved_001: float  # document 001: "about 30 hours"
    rd_efficiency_gain: float  # document 001: +18%, a fraction
    claims: tuple[str, ...]


@dataclass(frozen=True)
class Sweep:
    """Document 001, part 2.5: twelve hyper-parameter sets, 36 days serially, 9 days six at a time."""

    configs: float
    serial_days: float
    concurrent_runs: float
    parallel_days: float
    days_earlier: float
    labour_saving: float  # fraction
    claims: tuple[str, ...]

    @property
    def run_days(self) -> float:
        return self.serial_days / self.configs


def _v(claim_id: str, name: str) -> float:
    return data.claim(claim_id).value(name)


def recommender() -> Recommender:
    """Document 000's case study (part 4)."""
    gpus, days = "000-4-128-a100-to-96-b300", "000-4-training-days-28-to-11"
    util, runs = "000-4-utilisation-58-to-87", "000-4-experiments-1-to-3"
    cost, updates = "000-4-monthly-cost-47pct-3m-rmb", "000-4-monthly-to-weekly-updates"
    gmv, pb = "000-4-gmv-8pct", "000-4-pb-scale-training-data"
    return Recommender(
        gpu_before="A100",
        gpu_after="B300",
        gpus_before=_v(gpus, "gpus_before"),
        gpus_after=_v(gpus, "gpus_after"),
        days_before=_v(days, "days_before"),
        days_after=_v(days, "days_after"),
        utilisation_before=_v(util, "utilisation_before_pct") / 100,
        utilisation_after=_v(util, "utilisation_after_pct") / 100,
        runs_before=_v(runs, "experiments_per_month_before"),
        runs_after=_v(runs, "experiments_per_month_after"),
        cost_ratio=1 - _v(cost, "cost_reduction_pct") / 100,
        annual_saving_min_rmb=_v(cost, "annual_saving_min_rmb"),
        update_interval_before_days=_v(updates, "update_interval_before_days"),
        update_interval_after_days=_v(updates, "update_interval_after_days"),
        gmv_increase=_v(gmv, "gmv_increase_pct") / 100,
        data_pb_min=_v(pb, "data_pb_min"),
        claims=(gpus, days, util, runs, cost, updates, gmv, pb),
    )


def customer_service() -> CustomerService:
    """Document 001's case study (part 4)."""
    own, rent, ft = "001-4-own-42k-vs-rent-80k", "001-4-rental-80k-rmb-month", "001-4-finetune-5-to-2p8-days"
    util, runs, work = "001-4-utilisation-55-to-89", "001-4-runs-per-month-4-plus-6", "001-4-case-workload-7b-13b"
    return CustomerService(
        servers=_v(own, "servers"),
        gpus_per_server=_v(own, "gpus_per_server"),
        depreciation_years=_v(own, "depreciation_years"),
        own_rmb_per_month=_v(own, "cost_after_rmb_per_month"),
        rent_rmb_per_month=_v(rent, "cost_per_month_rmb"),
        finetune_days_before=_v(ft, "days_before"),
        finetune_days_after=_v(ft, "days_after"),
        utilisation_before=_v(util, "utilisation_before_pct") / 100,
        utilisation_after=_v(util, "utilisation_after_pct") / 100,
        full_runs_per_month=_v(runs, "full_runs_per_month"),
        comparison_runs_per_month=_v(runs, "comparison_runs_per_month"),
        params_low=_v(work, "params_low"),
        params_high=_v(work, "params_high"),
        new_samples_per_month_low=_v(work, "new_samples_per_month_low"),
        new_samples_per_month_high=_v(work, "new_samples_per_month_high"),
        claims=(own, rent, ft, util, runs, work),
    )


# The anecdotes that report training time before and after: (claim, GPU-count claim or None,
# names of the GPU counts and days in the claim's values).
_ANECDOTES = (
    ("000-2.1-64x30-to-32x20", None, ("gpus_before", "gpus_after"), ("days_before", "days_after")),
    ("001-2.1-64x30-to-32x20", None, ("gpus_before", "gpus_after"), ("days_before", "days_after")),
    (
        "000-4-training-days-28-to-11",
        "000-4-128-a100-to-96-b300",
        ("gpus_before", "gpus_after"),
        ("days_before", "days_after"),
    ),
    ("000-2.1-13b-anecdote-days", None, None, ("days_a100", "days_b300")),
    ("001-2.1-7b-anecdote-days", None, None, ("days_a100", "days_b300")),
    ("001-4-finetune-5-to-2p8-days", None, None, ("days_before", "days_after")),
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
    a, b, rd = "000-2.4-fintech-crash-every-5-days", "001-2.4-fintech-crash-every-5-days", "001-2.4-rd-efficiency-18pct"
    return Fintech(
        params=_v(b, "params"),
        crash_interval_days=_v(b, "crash_interval_days"),
        recovery_hours_per_crash=_v(b, "recovery_hours_per_crash"),
        run_days_no_fault=_v(b, "run_days_no_fault"),
        hours_saved_000_min=_v(a, "hours_saved_min"),
        hours_saved_001=_v(b, "hours_saved_approx"),
        rd_efficiency_gain=_v(rd, "rd_efficiency_gain_pct") / 100,
        claims=(a, b, rd),
    )


def sweep() -> Sweep:
    """Document 001's hyper-parameter sweep (part 2.5)."""
    s, lab = "001-2.5-hyperparam-sweep-36-to-9-days", "001-2.5-labour-75pct"
    return Sweep(
        configs=_v(s, "configs"),
        serial_days=_v(s, "serial_days"),
        concurrent_runs=_v(s, "concurrent_runs"),
        parallel_days=_v(s, "parallel_days"),
        days_earlier=_v(s, "days_earlier"),
        labour_saving=_v(lab, "labour_saving_pct") / 100,
        claims=(s, lab),
    )


def stated_speedup(claim_id: str = "000-3-table-throughput") -> tuple[float, float]:
    """A document's stated per-GPU speed-up range of B300 over A100 (low, high)."""
    c = data.claim(claim_id)
    return c.value("speedup_low_x"), c.value("speedup_high_x")


def stated_payback_months() -> tuple[float, float]:
    """The documents' stated payback band (both say 6-12 months; part 6 of each)."""
    c = data.claim("000-6-payback-6-12-months")
    return c.value("payback_low_months"), c.value("payback_high_months")


@dataclass(frozen=True)
class DeploymentPlan:
    """Document 000's deployment plan (part 5's hardware base, part 6's proof of concept): 8-GPU B300
    nodes, 4-8 of them to start, for 10B-parameter training, on a network of at least 200 Gbps, after
    a proof of concept on 4-8 GPUs."""

    gpu: str
    gpus_per_node: float
    nodes_low: float
    nodes_high: float
    params: float
    network_min_gbit_per_s: float
    poc_gpus_low: float
    poc_gpus_high: float
    claims: tuple[str, ...]

    @property
    def gpus_low(self) -> float:
        return self.nodes_low * self.gpus_per_node

    @property
    def gpus_high(self) -> float:
        return self.nodes_high * self.gpus_per_node


def deployment_plan() -> DeploymentPlan:
    """Document 000's plan (parts 5 and 6), read by the memory and scaling-efficiency chapters."""
    time, memory = "000-5-node-plan-time", "000-5-node-plan-memory"
    network, poc = "000-5-network-200gbps", "000-6-poc-4-8-gpus"
    return DeploymentPlan(
        gpu="B300",
        gpus_per_node=_v(time, "gpus_per_node"),
        nodes_low=_v(time, "nodes_low"),
        nodes_high=_v(time, "nodes_high"),
        params=_v(time, "params"),
        network_min_gbit_per_s=_v(network, "network_min_gbps"),
        poc_gpus_low=_v(poc, "poc_gpus_low"),
        poc_gpus_high=_v(poc, "poc_gpus_high"),
        claims=(time, memory, network, poc),
    )


@dataclass(frozen=True)
class Startup7B:
    """Document 001, part 2.1: a start-up's 7B model, 28 days on A100 -> 16 on B300, 12 -> 8 experiment
    rounds, total R&D cost about 55% lower (no GPU counts, no cost split)."""

    params: float
    days_before: float
    days_after: float
    rounds_before: float
    rounds_after: float
    rd_cost_cut: float  # fraction
    claims: tuple[str, ...]

    @property
    def experiment_days_ratio(self) -> float:
        """Experiment-days after / before: rounds x days per round."""
        return self.rounds_after * self.days_after / (self.rounds_before * self.days_before)


def startup_7b() -> Startup7B:
    """Document 001's 7B anecdote (part 2.1), read by the cost chapter."""
    days, rounds, cost = "001-2.1-7b-anecdote-days", "001-2.1-7b-experiments-12-to-8", "001-2.1-7b-rd-cost-55pct"
    return Startup7B(
        params=_v(days, "params"),
        days_before=_v(days, "days_a100"),
        days_after=_v(days, "days_b300"),
        rounds_before=_v(rounds, "experiment_rounds_before"),
        rounds_after=_v(rounds, "experiment_rounds_after"),
        rd_cost_cut=_v(cost, "rd_cost_reduction_pct") / 100,
        claims=(days, rounds, cost),
    )


@dataclass(frozen=True)
class GdsRun:
    """Document 001, part 2.2: a hundred-billion-parameter training before and after GPUDirect Storage."""

    params: float
    loading_share_before: float  # share of training time spent loading data (fraction)
    loading_share_after: float
    utilisation_before: float  # effective GPU utilisation (fraction)
    utilisation_after: float
    cycle_days: float  # the training cycle the saving is counted over
    days_saved: float  # "about 2.5 days" of waiting
    cost_saving: float  # electricity and labour, a fraction
    claims: tuple[str, ...]


@dataclass(frozen=True)
class CloudProvider:
    """Document 001, part 2.3: a cloud provider's GPU cluster before and after MIG."""

    utilisation_before: float  # fraction
    utilisation_after_min: float  # "over 80%"
    gpus_after: float  # "4 cards do the work of 7"
    gpus_before: float
    procurement_cut: float  # annual hardware procurement, a fraction
    claims: tuple[str, ...]


def gds_run() -> GdsRun:
    """Document 001's GDS measurement (part 2.2)."""
    shares, days = "001-2.2-loading-share-35-to-12", "001-2.2-days-saved-2p5-of-10"
    return GdsRun(
        params=_v(shares, "params"),
        loading_share_before=_v(shares, "loading_share_before_pct") / 100,
        loading_share_after=_v(shares, "loading_share_after_pct") / 100,
        utilisation_before=_v(shares, "utilisation_before_pct") / 100,
        utilisation_after=_v(shares, "utilisation_after_pct") / 100,
        cycle_days=_v(days, "training_days"),
        days_saved=_v(days, "days_saved"),
        cost_saving=_v(days, "cost_reduction_pct") / 100,
        claims=(shares, days),
    )


def cloud_provider() -> CloudProvider:
    """Document 001's MIG anecdote (part 2.3)."""
    util, buy = "001-2.3-cloud-utilisation-45-to-80", "001-2.3-procurement-30pct"
    return CloudProvider(
        utilisation_before=_v(util, "utilisation_before_pct") / 100,
        utilisation_after_min=_v(util, "utilisation_after_min_pct") / 100,
        gpus_after=_v(util, "gpus_after"),
        gpus_before=_v(util, "gpus_before"),
        procurement_cut=_v(buy, "procurement_reduction_pct") / 100,
        claims=(util, buy),
    )
