"""Chapter ``validation``: the book's step-time model against every published training run.

No claims of its own: the chapter shows that the model every time, speed-up and cost in the book
rests on (:mod:`analyses.models.performance`, calibrated by :mod:`analyses.scenario.calibration`)
reproduces published runs it never saw, and how wide its honest 90% band is. It converts every
published figure to the book's one FLOP definition (:mod:`analyses.models.flops`), lists the
calibration rows and the fitted terms, and validates step times, whole runs (GPU-hours) and
same-recipe speed-ups (:mod:`analyses.scenario.validation`), before and after issue 21; then the
speed-up each claim of the documents reads, for its own workload (:func:`analyses.scenario.generations.speedup`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from analyses import data, scenario
from analyses.models.uncertainty import INTERVAL_LEVEL
from analyses.scenario import bands, calibration, generations, speedups
from analyses.scenario import validation as val
from analyses.scenario.params import ChapterSpec, Config, Param

SLUG = "validation"
TARGET_MEDIAN, TARGET_WORST, TARGET_INSIDE = 0.15, 0.40, 0.80  # issue 21's "Done when"
SCORED = ("step time", "GPU-hours", "wall-clock days")

SPEC = ChapterSpec(
    slug=SLUG,
    title="How far to trust the book's times: the step-time model against published runs",
    params=(
        Param(
            "rows",
            "str",
            "all",
            "-",
            "rows of the step-time table: every published run, or only the validation or calibration rows",
            choices=("all", "validate", "calibrate"),
        ),
    ),
)


@dataclass(frozen=True)
class Result:
    """Everything the validation page shows, computed once."""

    cfg: Config
    s: dict[str, float]
    conversion: pd.DataFrame  # every published figure on the one FLOP definition
    coefficients: pd.DataFrame  # fitted terms beside their anchors
    calibration_rows: pd.DataFrame  # the declared calibration rows
    step: pd.DataFrame  # step-time validation (all rows)
    whole: pd.DataFrame  # whole runs planned (GPU-hours, days)
    ratios: pd.DataFrame  # same-recipe speed-ups
    summary: pd.DataFrame  # per kind and role
    headline: dict[str, float]  # issue 21's targets on the validation rows
    outliers: pd.DataFrame  # scored validation rows past the worst-error target, worst first
    band: tuple[float, float]  # the planner's time band (factors on a planned time)
    classes: pd.DataFrame  # the band of each class of plan and its coverage (analyses.scenario.bands)
    speedup_band: tuple[float, float, int]  # dense same-recipe speed-ups: factors and pairs
    workloads: pd.DataFrame  # the speed-up each claim reads, for its own workload
    reference: str  # the reference workload in words

    @property
    def level(self) -> float:
        """The level of every band on the page."""
        return INTERVAL_LEVEL

    @property
    def step_shown(self) -> pd.DataFrame:
        """The step-time rows the reader chose (``rows``)."""
        which = self.cfg["rows"]
        return self.step if which == "all" else self.step[self.step["role"] == which]

    @property
    def misses(self) -> pd.DataFrame:
        """Validation rows (every kind) whose published value lies outside their 90% band."""
        t = pd.concat([self.step, self.whole, self.ratios], ignore_index=True)
        return t[(t["role"] == "validate") & ~t["inside"]]

    @property
    def met(self) -> dict[str, bool]:
        """Issue 21's three targets on the scored rows (grouped cross-validation)."""
        h = self.headline
        return {
            "median": h["median"] <= TARGET_MEDIAN,
            "worst": h["worst"] <= TARGET_WORST,
            "inside": h["inside"] >= TARGET_INSIDE,
        }


def calibration_rows() -> pd.DataFrame:
    """The rows the model is fitted on, with what each pins down."""
    runs = calibration.step_time_rows()
    cal = runs[runs["role"] == "calibrate"]
    return pd.DataFrame(
        {
            "id": cal["id"],
            "GPU": cal["gpu"],
            "precision": cal["precision"],
            "GPUs": cal["n_gpus"].astype(int),
            "model": (cal["params_total"] / 1e9).round(0).astype(int).astype(str) + "B " + cal["arch"],
            "layout": [
                f"TP{int(r['model_tp'])} PP{int(r['model_pp'])} CP{int(r['model_cp'])} EP{int(r['model_ep'])}"
                for r in cal.to_dict("records")
            ],
            "source": cal["source"],
        }
    ).reset_index(drop=True)


def workloads(s: dict[str, float]) -> pd.DataFrame:
    """The per-GPU speed-up of :data:`~analyses.scenario.generations.NEW` over
    :data:`~analyses.scenario.generations.OLD` each claim reads, one row per distinct workload of the
    ledger's registry (:data:`analyses.scenario.generations.WORKLOADS`), with its band; the reference first."""
    lo, hi, _ = speedups.band("dense")
    groups: dict[Any, list[str]] = {}
    models: dict[Any, Any] = {}
    for wid in generations.WORKLOADS:
        w = generations.model_workload(wid)
        key = None if w is None else speedups.with_(w, label="")  # one row per model workload, whatever its name
        groups.setdefault(key, []).append(wid)
        models.setdefault(key, w)
    rows = []
    for key, ids in groups.items():
        w = models[key]
        x = float(generations.speedup(s, ids[0]))
        rows.append(
            {
                "used for": "; ".join(generations.WORKLOADS[i].label for i in ids),
                "workload": speedups.reference(s).describe() if w is None else w.describe(),
                "speed-up": x,
                "low (5%)": x * lo,
                "high (95%)": x * hi,
            }
        )
    return pd.DataFrame(rows)


def compute(cfg: Config) -> Result:
    """Every table and number of the page (the fit and its validation are cached per data folder)."""
    s = scenario.values(cfg)
    central = scenario.values()
    table = val.table()
    coef = calibration.coefficient_table()
    coef["meaning"] = [COEFFICIENT_MEANING[c] for c in coef["coefficient"]]
    return Result(
        cfg=cfg,
        s=s,
        conversion=val.flop_conversion(),
        coefficients=coef,
        calibration_rows=calibration_rows(),
        step=val.step_time(),
        whole=val.whole_runs(),
        ratios=val.ratios(),
        summary=val.summary(table),
        headline=val.headline(),
        outliers=val.outliers(TARGET_WORST, table),
        band=calibration.band(),
        classes=bands.class_table(),
        speedup_band=speedups.band("dense"),
        workloads=workloads(central),
        reference=speedups.reference(central).describe(),
    )


COEFFICIENT_MEANING = {
    "e_max_a100": "GEMM efficiency ceiling of the A100 die",
    "e_max_h100": "ceiling of the H100 die (H800, H200)",
    "e_max_b200": "ceiling of the B200 die (GB200)",
    "e_max_b300": "ceiling of the B300 die (GB300)",
    "gemm_width": "width d/tp (elements) at which a GEMM loses half its efficiency",
    "gemm_tokens": "micro-batch tokens per CP rank at which a GEMM loses half",
    "e_attn": "FlashAttention-class kernels' share of the BF16 peak",
    "e_attn_materialized": "share of the BF16 peak of attention that writes its scores to HBM (2021-22 stacks)",
    "mem_dense": "bytes per token, layer and unit of width through HBM",
    "moe_gemm": "expert GEMMs' efficiency relative to dense ones",
    "bubble": "multiplier of the pipeline bubble (p−1)/(v·m)",
    "dp_overlap": "share of the gradient exchange hidden behind compute",
    "tp_exposed": "share of tensor-parallel collectives exposed",
    "ep_exposed": "share of expert all-to-alls exposed",
}


def row_count() -> int:
    """Published runs in the data (for the overview)."""
    return len(data.published_runs())


def share(values: np.ndarray, limit: float) -> float:
    """Share of ``values`` whose absolute value is at most ``limit``."""
    return float((np.abs(np.asarray(values, float)) <= limit).mean())
