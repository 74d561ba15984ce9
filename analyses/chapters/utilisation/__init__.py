"""Chapter ``utilisation``: GPUs waiting for data, and GPUs shared with MIG.

Checks document 001 parts 2.2 (data loading, GPUDirect Storage, 35% -> 12%, 62% -> 88%, 2.5 of
10 days, -25% electricity and labour) and 2.3 (MIG: 7 instances, 20% memory for debugging,
45% -> 80%, "4 cards for 7", procurement -30%), part 4's 55% -> 89%; document 000's table (part
3: GDS latency, MIG 50% -> 85%), case study (part 4: 58% -> 87%, PB-scale data) and summary (part
6: half idle to nearly full). :func:`compute` runs every model once (the prefetch simulation, the
input a text model needs, the GDS run's timing and energy, the MIG bound and the job-mix
simulation) with the scenario's assumptions and the chapter's parameters; figures
(:mod:`.figures`) and sentences (:mod:`.text`) read the :class:`Result`.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import pandas as pd

from analyses import data, scenario
from analyses.chapters import ledger
from analyses.chapters.utilisation import checks, wiring
from analyses.models import mig, pipeline
from analyses.models.uncertainty import Range
from analyses.scenario import cases, operations
from analyses.scenario.params import ChapterSpec, Config, Param
from analyses.verdicts.sweeps import Slider

SLUG = "utilisation"


def mig_gpus() -> list[str]:
    """GPUs with MIG profiles in ``data/mig_profiles.csv``, in launch order (read once per data folder)."""
    return list(_mig_gpus(str(data.DATA_DIR)))


@functools.cache
def _mig_gpus(data_dir: str) -> tuple[str, ...]:
    return tuple(sorted(set(data.mig_profiles()["gpu"]), key=data.gpu_names().index))


SPEC = ChapterSpec(
    slug=SLUG,
    title="Idle GPUs: data loading and MIG",
    params=(
        scenario.param("utilisation"),
        scenario.param("idle_power_fraction"),
        scenario.param("mig_small_job_compute"),
        scenario.param("mig_small_job_memory"),
        Param("gpu", "str", "B300", "-", "GPU whose MIG profiles pack the simulated job mix", choices=mig_gpus),
        Param("mean_jobs", "float", 100.0, "jobs", "mean number of concurrent jobs in a simulated snapshot", 5, 2000),
        Param("snapshots", "int", 200, "-", "random job snapshots simulated", 10, 5000),
        Param("seed", "int", 0, "-", "random seed of the simulations", 0, 2**31 - 1),
        Param("prefetch_cv", "float", 0.5, "-", "coefficient of variation of batch load times (prefetch table)", 0, 3),
    ),
)

# The slider figures: an assumption and the claims whose verdicts it moves.
SLIDERS = (
    ("idle_power_fraction", ("001-2.2-days-saved-2p5-of-10",)),
    ("utilisation", ("001-2.2-utilisation-below-50pct",)),
    ("mig_small_job_memory", ("001-2.3-cloud-utilisation-45-to-80", "000-3-table-mig")),
)
PREFETCH_DEPTHS = (0, 1, 2, 4, 8)  # batches a loader may queue ahead, in the prefetch table
EXTRA_LOAD_RATIOS = (0.8, 1.2)  # loader time per batch over compute time, beside document 001's own
GENERATION_FORMATS = {c: "{:.1f}" for c in ("GPUs whole", "GPUs MIG", "GPUs MIG (bound)")} | {
    c: "{:.1%}" for c in ("util whole", "util MIG")
}  # number formats of the generations table
MIG_CLAIMS = ("001-2.3-cloud-utilisation-45-to-80", "000-3-table-mig")  # stated before -> after with MIG


@dataclass(frozen=True)
class InputNeed:
    """What one B300 consumes training document 001's dense text model."""

    params: float
    model_flops: float  # model FLOP/s per GPU (scenario speed-up x A100 BF16 peak x MFU)
    tokens_per_s: float
    bytes_per_s: float


@dataclass(frozen=True)
class Loading:
    """Document 001's GDS run (part 2.2) rebuilt: time, days and energy."""

    run: cases.GdsRun
    busy_before: float  # 1 - loading share: utilisation if loading were the only stall
    busy_after: float
    time_ratio_shares: float  # wall time after / before from the loading shares
    time_ratio_util: float  # ... from the stated utilisations
    time_cut: float  # 1 - time_ratio_shares: what labour paid by the day saves
    days_saved_shares: float
    days_saved_util: float
    electricity_saving: float  # at the scenario's idle_power_fraction
    labour_share_needed: float  # share of labour in electricity + labour for the stated cut


@dataclass(frozen=True)
class Gds:
    """The documents' GPUDirect Storage figure (both say 60-80% lower latency) and GDS's release."""

    latency_cut_low: float  # fraction
    latency_cut_high: float
    released: str  # month of the first general release


@dataclass(frozen=True)
class Result:
    """Everything the utilisation page shows, computed once."""

    cfg: Config
    s: dict[str, float]
    ranges: dict[str, Range]  # every assumption's 90% range at this run
    prefetch: pd.DataFrame
    input_need: InputNeed
    loading: Loading
    gds: Gds
    bars: pd.DataFrame
    provider: cases.CloudProvider
    mig_cases: pd.DataFrame
    small_share: float  # share of partial-GPU jobs that explains the provider's 45% on whole GPUs
    sim: pd.DataFrame
    generations: pd.DataFrame
    same_slicing: bool  # A100 and B300 offer the same MIG profiles
    procurement_allowed: float  # the cut 4-for-7 allows (fraction)
    busy_share: float  # a training job's busy share (the scenario's named quantity)
    goodput: float  # the most a job whose GPUs never wait for data keeps them busy (named quantity)
    ledger: pd.DataFrame
    sliders: tuple[Slider, ...]

    def verdict(self, claim_id: str) -> str:
        """The ledger's verdict of one claim of this chapter."""
        return str(self.ledger.set_index("id").loc[claim_id, "verdict"])


# --------------------------------------------------------------------------------------------
# Data loading
# --------------------------------------------------------------------------------------------


def prefetch_table(cv: float, seed: int) -> pd.DataFrame:
    """Simulated utilisation by prefetch depth and loader time per batch (relative to compute time):
    document 001's loading share before GDS as a load/compute ratio, then :data:`EXTRA_LOAD_RATIOS`."""
    t = wiring.gds_timing()
    ratios = (1 / t["busy_before"] - 1, *EXTRA_LOAD_RATIOS)
    rows = []
    for ratio in ratios:
        row: dict[str, float] = {"load time / compute time": ratio}
        for depth in PREFETCH_DEPTHS:
            row[f"depth {depth}"] = pipeline.simulate_prefetch(1.0, ratio, depth, cv=cv, seed=seed)
        rows.append(row)
    return pd.DataFrame(rows)


def loading(s: dict[str, float]) -> Loading:
    """Document 001's GDS run at the scenario's power while waiting."""
    g, t = cases.gds_run(), wiring.gds_timing()
    saving = float(wiring.electricity_saving(s))
    return Loading(
        run=g,
        **t,
        electricity_saving=saving,
        labour_share_needed=float(pipeline.mix_share_for_saving(g.cost_saving, saving, t["time_cut"])),
    )


def gds() -> Gds:
    """The GDS latency figure as both documents state it (document 001, section 2.2)."""
    c = data.claim("001-2.2-gds-latency-60-80pct")
    return Gds(
        c.value("latency_reduction_low_pct") / wiring.PERCENT,
        c.value("latency_reduction_high_pct") / wiring.PERCENT,
        wiring.gds_release(),
    )


def utilisation_bars(load: Loading) -> pd.DataFrame:
    """Utilisation before and after as each document states it, and as rebuilt from the loading shares."""
    rows = [
        ("001 §2.2: stated", "before", load.run.utilisation_before),
        ("001 §2.2: stated", "after", load.run.utilisation_after),
        ("001 §2.2: 1 − loading share", "before", load.busy_before),
        ("001 §2.2: 1 − loading share", "after", load.busy_after),
    ]
    for label, case in (("000 §4 case study", cases.recommender()), ("001 §4 case study", cases.customer_service())):
        rows += [(label, "before", case.utilisation_before), (label, "after", case.utilisation_after)]
    return pd.DataFrame(rows, columns=["source", "when", "utilisation"])


# --------------------------------------------------------------------------------------------
# MIG
# --------------------------------------------------------------------------------------------


def mig_cases(s: dict[str, float]) -> pd.DataFrame:
    """The documents' stated utilisation before and after MIG beside the most MIG reaches from the same start."""
    rows = []
    for cid in MIG_CLAIMS:
        c = data.claim(cid)
        before = c.value("utilisation_before_pct") / wiring.PERCENT
        after = c.values.get("utilisation_after_pct", c.values.get("utilisation_after_min_pct")) / wiring.PERCENT
        bound = wiring.mig_bound(before, s)
        rows.append(
            {
                "claim": cid,
                "before (whole GPUs)": before,
                "stated after": after,
                "partial-GPU jobs": float(bound.small_share),
                "MIG at most": float(bound.utilisation_mig),
            }
        )
    return pd.DataFrame(rows)


def _slicing(gpu: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    p = wiring.profiles(gpu)
    return tuple(p.compute_slices), tuple(p.memory_eighths)


def simulations(cfg: Config, small_share: float, s: dict[str, float]) -> dict[tuple, pd.DataFrame]:
    """The job-mix simulation once per distinct MIG slicing (GPUs with the same profiles share it)."""
    out: dict[tuple, pd.DataFrame] = {}
    for gpu in mig_gpus():
        key = _slicing(gpu)
        if key not in out:
            out[key] = mig.simulate(
                wiring.profile_table(gpu),
                mean_jobs=cfg["mean_jobs"],
                small_share=small_share,
                small_compute=s["mig_small_job_compute"],
                small_memory=s["mig_small_job_memory"],
                snapshots=cfg["snapshots"],
                seed=cfg["seed"],
            )
    return out


def generations(sims: dict[tuple, pd.DataFrame]) -> pd.DataFrame:
    """Mean GPUs and utilisation per MIG-capable generation for the same job mix."""
    rows = []
    for gpu in mig_gpus():
        sim = sims[_slicing(gpu)]
        rows.append(
            {
                "GPU": gpu,
                "smallest profile": wiring.profiles(gpu).names[0],
                "GPUs whole": sim["gpus_whole"].mean(),
                "GPUs MIG": sim["gpus_mig"].mean(),
                "GPUs MIG (bound)": sim["gpus_mig_bound"].mean(),
                "util whole": sim["util_whole"].mean(),
                "util MIG": sim["util_mig"].mean(),
            }
        )
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------------------------
# compute
# --------------------------------------------------------------------------------------------


def compute(cfg: Config) -> Result:
    """Everything the page shows, each model run once."""
    s = scenario.values(cfg)
    run = cases.gds_run()
    tokens, rate = wiring.llm_input(run.params, s)
    load = loading(s)
    provider = cases.cloud_provider()
    small = float(mig.small_share_for(provider.utilisation_before, s["mig_small_job_compute"]))
    sims = simulations(cfg, small, s)
    return Result(
        cfg=cfg,
        s=s,
        ranges=scenario.ranges(cfg),
        prefetch=prefetch_table(cfg["prefetch_cv"], cfg["seed"]),
        input_need=InputNeed(run.params, float(wiring.b300_model_flops(s)), float(tokens), float(rate)),
        loading=load,
        gds=gds(),
        bars=utilisation_bars(load),
        provider=provider,
        mig_cases=mig_cases(s),
        small_share=small,
        sim=sims[_slicing(cfg["gpu"])],
        generations=generations(sims),
        same_slicing=wiring.same_slicing(),
        procurement_allowed=1 - provider.gpus_after / provider.gpus_before,
        busy_share=float(operations.busy_share(s)),
        goodput=float(operations.goodput(s)),
        ledger=ledger.ledger(SLUG, cfg),
        sliders=tuple(ledger.slider(name, ids, {SLUG: cfg}) for name, ids in SLIDERS),
    )


__all__ = ["SLUG", "SPEC", "Result", "checks", "compute", "wiring"]
