"""The step-time model and the planner against every published run in ``data/published_runs.csv``:
predicted, published, error, whether the published value lies in the 90% band, before and after.

Three kinds of validation row (stated once):

- **step time** (a run that prints its layout and its throughput): the calibrated model's tokens per
  second per GPU for the printed layout at the run's stack (:mod:`analyses.scenario.calibration`), by
  grouped cross-validation (the fit without every row that shares a source with it). The error is on
  the step time, ``predicted / published − 1``; MFU follows it on the one FLOP definition. Each row is
  scored a second time at the layout the planner would pick for it (``predicted_pick``,
  :func:`analyses.scenario.whole_run.pick_predictions`);
- **whole run** (a run that prints GPU-hours or wall-clock days for its tokens): the planner's time
  to train (step time at the run's stack, data loading, checkpoints and failures at the scenario's
  goodput, and the campaign overhead fitted on the other groups' whole runs:
  :func:`analyses.scenario.whole_run.whole_runs`) on the printed layout where the source prints one,
  else the planner's pick at the printed GPU count (1,024-2,048 GPUs where no count is printed:
  Llama 2);
- **ratio** (two runs of one recipe on two GPUs, ``ratio_group``): the per-GPU speed-up of the newer
  GPU over the older, predicted against published (:func:`analyses.scenario.calibration.ratio_errors`).

The 90% band of a row is the band a plan of its class and kind gets (:mod:`analyses.scenario.bands`),
leave one group out: the split-conformal band of the cross-validation errors of every *other* group's
rows of its class, so no row's band is widened by its own error; a ratio's, of every other ratio's. ``before`` is the step-time
model the book used before issue 21 (one kernel efficiency per GPU and precision, 6N FLOPs,
data-parallel overlap 0.5), on the same layout: that model is gone (issue 33: one step-time model), and
its errors are the record it left, ``data/measurements/validation_before.csv`` (a run added since has
none).
"""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd

from analyses import data
from analyses.models import flops
from analyses.models.uncertainty import INTERVAL_LEVEL, error_band
from analyses.scenario import bands, calibration, whole_run

KINDS = ("step time", "GPU-hours", "wall-clock days", "ratio")


def _q(errs: np.ndarray, level: float = INTERVAL_LEVEL) -> tuple[float, float]:
    return error_band(errs, level)


def source_bands(frame: pd.DataFrame, column: str = "log_error", by: str = "source") -> pd.DataFrame:
    """Each row's leave-one-source-out band: the split-conformal 90% band
    (:func:`analyses.models.uncertainty.error_band`) of ``column`` over the rows whose ``by`` differs (columns ``band_lo``, ``band_hi``, in the errors' log units)."""
    out = frame.copy()
    lows, highs = [], []
    values = frame[column].to_numpy(float)
    groups = frame[by].to_numpy()
    for g in groups:
        lo, hi = _q(values[groups != g])
        lows.append(lo)
        highs.append(hi)
    out["band_lo"], out["band_hi"] = lows, highs
    return out


# --------------------------------------------------------------------------------------------
# Before: the record of the model the book used until issue 21
# --------------------------------------------------------------------------------------------


@functools.cache
def _before(data_dir: str) -> dict[tuple[str, str], float]:
    frame = data.measurements("validation_before")
    return {(i, k): float(e) for i, k, e in zip(frame["id"], frame["kind"], frame["error_before"], strict=True)}


def error_before(run_id: str, kind: str) -> float:
    """The error the model before issue 21 had on published run ``run_id`` of ``kind`` (step time,
    GPU-hours or wall-clock days), from its record; NaN for a run it never saw."""
    return _before(str(data.DATA_DIR)).get((run_id, kind), float("nan"))


# --------------------------------------------------------------------------------------------
# Step-time rows
# --------------------------------------------------------------------------------------------


@functools.cache
def _step_rows(data_dir: str) -> pd.DataFrame:
    rows = calibration.step_time_rows()
    pred = calibration.predictions().set_index("id").loc[rows["id"]]
    peak = np.array([data.gpu(g).peak_flops(p) for g, p in zip(rows["gpu"], rows["precision"], strict=True)])
    model_flops = flops.model_flops_per_token(rows["params_active"], rows["n_layers"], rows["d_model"], rows["seq_len"])
    published = rows["tokens_per_s_per_gpu"].to_numpy(float)
    predicted = pred["out_of_sample"].to_numpy(float)
    out = pd.DataFrame(
        {
            "id": rows["id"],
            "kind": "step time",
            "role": rows["role"],
            "arch": rows["arch"],
            "gpu": rows["gpu"],
            "precision": rows["precision"],
            "n_gpus": rows["n_gpus"].astype(int),
            "source": rows["source"],
            "unit": "tokens/s per GPU",
            "published": published,
            "predicted": predicted,
            "predicted_in_sample": pred["predicted"].to_numpy(float),
            "published_mfu": published * np.asarray(model_flops) / peak,
            "predicted_mfu": predicted * np.asarray(model_flops) / peak,
            "log_error": np.log(predicted / published),  # ln(published / predicted step time)
            "error": published / predicted - 1.0,  # predicted step time / published − 1
            "error_before": [error_before(i, "step time") for i in rows["id"]],
            "note": rows["validation_note"].fillna(""),
            "stack": rows["stack"],
            "cv_group": rows["cv_group"],
        }
    )
    pick = whole_run.pick_predictions().set_index("id").loc[rows["id"]]
    out["predicted_pick"] = pick["pick_cv"].to_numpy(float)
    out["error_pick"] = published / out["predicted_pick"] - 1.0
    out["pick_layout"] = pick["pick_layout"].to_numpy()
    out["first_score_error"] = rows["first_score_error"].to_numpy(float)
    pinned = bands.steady_bands(True, True).set_index("id").loc[rows["id"]]
    picked = bands.steady_bands(False, True).set_index("id").loc[rows["id"]]
    out["class"] = pinned["class"].to_numpy()
    out["band_lo"], out["band_hi"] = pinned["band_lo"].to_numpy(float), pinned["band_hi"].to_numpy(float)
    out["pick_class"] = picked["class"].to_numpy()
    out["pick_band_lo"], out["pick_band_hi"] = picked["band_lo"].to_numpy(float), picked["band_hi"].to_numpy(float)
    out["pick_inside"] = picked["inside"].to_numpy(bool)
    return out.reset_index(drop=True)


# --------------------------------------------------------------------------------------------
# Whole runs, planned
# --------------------------------------------------------------------------------------------


@functools.cache
def _whole_runs(data_dir: str) -> pd.DataFrame:
    planned = whole_run.whole_runs()
    rows = whole_run.whole_run_rows().set_index("id").loc[planned["id"]].reset_index()
    out = pd.DataFrame(
        {
            "id": planned["id"],
            "kind": planned["kind"],
            "role": rows["role"],
            "arch": rows["arch"],
            "gpu": rows["gpu"],
            "precision": rows["precision"],
            "n_gpus": planned["n_gpus"],
            "source": rows["source"],
            "cv_group": planned["cv_group"],
            "stack": planned["stack"],
            "unit": planned["kind"],
            "published": planned["published"],
            "predicted": planned["predicted"],
            "predicted_in_sample": planned["predicted_in_sample"],
            "predicted_mfu": planned["mfu"],
            "log_error": planned["log_error"],
            "error": planned["predicted"] / planned["published"] - 1.0,
            "error_in_sample": planned["predicted_in_sample"] / planned["published"] - 1.0,
            "error_before": [error_before(i, k) for i, k in zip(planned["id"], planned["kind"], strict=True)],
            "campaign_overhead": planned["campaign_cv"],
            "layout": planned["layout"],
            "how": planned["how"],
            "goodput": planned["goodput"],
            "note": rows["validation_note"].fillna(""),
            "first_score_error": rows["first_score_error"].to_numpy(float),
            "hours_counted": planned["hours_counted"],
        }
    )
    band = bands.whole_bands().set_index("id").loc[planned["id"]]
    out["class"] = band["class"].to_numpy()
    out["band_lo"], out["band_hi"] = band["band_lo"].to_numpy(float), band["band_hi"].to_numpy(float)
    return out


# --------------------------------------------------------------------------------------------
# Ratios
# --------------------------------------------------------------------------------------------


@functools.cache
def _ratios(data_dir: str) -> pd.DataFrame:
    pairs = calibration.ratio_errors()
    before = dict(zip(_step_rows(data_dir)["id"], _step_rows(data_dir)["error_before"], strict=True))
    out = pd.DataFrame(
        {
            "id": pairs["new"] + " / " + pairs["old"],
            "kind": "ratio",
            "role": np.where(pairs["in_sample"], "calibrate", "validate"),
            "arch": pairs["arch"],
            "gpu": pairs["gpus"],
            "source": pairs["ratio_group"],
            "unit": "per-GPU speed-up",
            "published": pairs["published"],
            "predicted": pairs["predicted"],
            "log_error": -pairs["log_error"],  # ln(published / predicted speed-up)
            "error": pairs["predicted"] / pairs["published"] - 1.0,
        }
    )
    # the previous model's ratio: each side's previous throughput
    # previous / published throughput of each side is 1 / (1 + its step-time error before)
    out["error_before"] = [
        (1.0 + before[old]) / (1.0 + before[new]) - 1.0 for new, old in zip(pairs["new"], pairs["old"], strict=True)
    ]
    # a speed-up misses when one of its runs does: its note names that run's reason
    notes = dict(zip(_step_rows(data_dir)["id"], _step_rows(data_dir)["note"], strict=True))
    out["note"] = [
        " ".join(f"{gpu}: {notes[run]}" for run, gpu in ((new, gn), (old, go)) if notes[run])
        for new, old, (gn, go) in zip(pairs["new"], pairs["old"], (g.split(" / ") for g in pairs["gpus"]), strict=True)
    ]
    return source_bands(out, by="source")


# --------------------------------------------------------------------------------------------
# The table and its summary
# --------------------------------------------------------------------------------------------


def step_time() -> pd.DataFrame:
    """Every step-time row (see the module docstring): published and predicted tokens/s per GPU and
    MFU, the error on the step time, the leave-one-source-out band and the error before."""
    return _with_inside(_step_rows(str(data.DATA_DIR)))


def whole_runs() -> pd.DataFrame:
    """Every whole published run planned: GPU-hours (or days), error, band, layout and how it was chosen."""
    return _with_inside(_whole_runs(str(data.DATA_DIR)))


def ratios() -> pd.DataFrame:
    """Every same-recipe pair of published runs on two GPUs: the per-GPU speed-up, error and band."""
    return _with_inside(_ratios(str(data.DATA_DIR)))


def _with_inside(frame: pd.DataFrame) -> pd.DataFrame:
    out = frame.copy()
    out["inside"] = (out["log_error"] >= out["band_lo"]) & (out["log_error"] <= out["band_hi"])
    return out


def table() -> pd.DataFrame:
    """All validation rows of the three kinds, one frame."""
    return pd.concat([step_time(), whole_runs(), ratios()], ignore_index=True)


def summary(frame: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per kind and role: rows, median and worst absolute error after and before, and the share of
    rows whose published value lies inside its 90% band."""
    t = table() if frame is None else frame
    t = t[t["hours_counted"] != "unclear"]
    rows = []
    for (kind, role), g in t.groupby(["kind", "role"], sort=False):
        e, b = g["error"].abs(), g["error_before"].abs()
        rows.append(
            {
                "kind": kind,
                "role": role,
                "rows": len(g),
                "median |error|": float(e.median()),
                "worst |error|": float(e.max()),
                "median |error| before": float(b.median()),
                "worst |error| before": float(b.max()),
                "inside 90% band": float(g["inside"].mean()),
            }
        )
    return pd.DataFrame(rows)


def headline() -> dict[str, float]:
    """The model's figures on every published run, by grouped cross-validation (the headline) and in
    sample, steady state and whole runs apart: rows, median and worst absolute error, the share inside
    the 90% band; the steady state also at the planner's pick; the combined scored rows (``rows``,
    ``median``, ``worst``, ``inside``) and the previous model on them (``_before``)."""
    v = scored()
    step, whole = step_time(), whole_runs()
    whole = whole[whole["hours_counted"] != "unclear"]
    out: dict[str, float] = {
        "rows": len(v),
        "median": float(v["error"].abs().median()),
        "worst": float(v["error"].abs().max()),
        "inside": float(v["inside"].mean()),
        "median_before": float(v["error_before"].abs().median()),
        "worst_before": float(v["error_before"].abs().max()),
        "within_15": float((v["error"].abs() <= 0.15).mean()),
        "within_40": float((v["error"].abs() <= 0.40).mean()),
    }
    in_sample = {"steady": step["predicted_in_sample"] / step["published"] - 1.0, "whole": whole["error_in_sample"]}
    scored_pick = step[step["error_pick"].notna()]
    pick = scored_pick["error_pick"]
    for name, frame in (("steady", step), ("whole", whole)):
        e = frame["error"].abs()
        out |= {
            f"{name}_rows": len(frame),
            f"{name}_median": float(e.median()),
            f"{name}_worst": float(e.max()),
            f"{name}_inside": float(frame["inside"].mean()),
            f"{name}_median_in_sample": float(in_sample[name].abs().median()),
            f"{name}_worst_in_sample": float(in_sample[name].abs().max()),
        }
    out |= {
        "pick_rows": len(pick),
        "pick_median": float(pick.abs().median()),
        "pick_worst": float(pick.abs().max()),
        "pick_inside": float(scored_pick["pick_inside"].mean()),
    }
    return out


def scored(frame: pd.DataFrame | None = None) -> pd.DataFrame:
    """The rows the headline scores: every step-time and whole-run row, each by grouped cross-validation, but a
    whole run whose figure is unclear (``hours_counted``: its source's figures disagree, or ask more of the
    hardware than any published run reaches), which is listed and never scored."""
    t = table() if frame is None else frame
    return t[t["kind"].isin(("step time", "GPU-hours", "wall-clock days")) & (t["hours_counted"] != "unclear")]


def outliers(limit: float, frame: pd.DataFrame | None = None) -> pd.DataFrame:
    """Scored validation rows whose absolute error passes ``limit``, worst first, with their reasons."""
    v = scored(frame)
    out = v[v["error"].abs() > limit]
    return out.reindex(out["error"].abs().sort_values(ascending=False).index)


def clear_cache() -> None:
    for fn in (_before, _step_rows, _whole_runs, _ratios):
        fn.cache_clear()


# --------------------------------------------------------------------------------------------
# The one FLOP definition, applied to every published row
# --------------------------------------------------------------------------------------------


def flop_conversion() -> pd.DataFrame:
    """Every published run with a throughput converted to the book's one FLOP definition
    (:mod:`analyses.models.flops`): the figure as printed on its basis, tokens per second per GPU, 6N
    TFLOP/s, model TFLOP/s (6·N_active + 12·L·d·s), MFU on those model FLOPs, and HFU (with what the
    row's recomputation adds; 'unknown' read as selective), all per GPU."""
    runs = calibration.runs()
    rows = runs[runs["tokens_per_s_per_gpu"].notna()].reset_index(drop=True)
    tps = rows["tokens_per_s_per_gpu"].to_numpy(float)
    args = (rows["params_active"], rows["n_layers"], rows["d_model"], rows["seq_len"])
    model = flops.model_tflops(tps, *args)
    hardware = (
        tps * flops.hardware_flops_per_token(rows["model_recompute"].to_numpy(dtype=object).astype(str), *args) / 1e12
    )
    peak = np.array([data.gpu(g).peak_flops(p) for g, p in zip(rows["gpu"], rows["precision"], strict=True)]) / 1e12
    return pd.DataFrame(
        {
            "id": rows["id"],
            "basis as printed": rows["flop_basis"].fillna("none"),
            "printed TFLOP/s": rows["reported_tflops_per_gpu"],
            "printed MFU": rows["reported_mfu"],
            "tokens/s per GPU": tps,
            "6N TFLOP/s": flops.flops_per_token(rows["params_active"]) * tps / 1e12,
            "model TFLOP/s": np.asarray(model, float),
            "MFU": np.asarray(model, float) / peak,
            "HFU": hardware / peak,
        }
    )
