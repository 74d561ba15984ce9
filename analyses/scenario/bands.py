"""The 90% bands a plan's figures carry, conditional on what the plan is: class-conditional (Mondrian)
split-conformal prediction (Vovk, Gammerman and Shafer 2005, ch. 4), each class's errors by grouped
cross-validation over the published runs of that class.

Stated once:

- **a plan's class** is what its reader knows before planning: dense or mixture of experts, its size
  (under :data:`LARGE_PARAMS` parameters or not) and its GPU's architecture (``architecture`` in
  ``data/gpus.csv``: Ampere, Hopper, Blackwell). Classes nest: architecture within size within dense or
  MoE within every run. A published run has the class of its own fields.
- **its kind**: the layout pinned (the step-time model's error at printed layouts,
  :func:`analyses.scenario.calibration.predictions`) or the planner's pick
  (:func:`analyses.scenario.whole_run.pick_predictions`), the stack named or not (each run's stack
  efficiency, or the pooled one).
- **a class's band** is the split-conformal band (:func:`analyses.models.uncertainty.error_band`) of the
  grouped cross-validation errors of its runs of the plan's kind. A class whose runs come from fewer
  than :data:`MIN_GROUPS` cross-validation groups (publications and whatever cites them) takes its
  parent's runs, up to every run: no band rests on fewer independent sources; and the parent's band is
  stretched (:func:`stretch`) to hold 90% of the runs the class does have, so a kind the data hardly know
  (a mixture of experts on Blackwell) is never given a band its own few runs already fall outside.
  A class reaches a band of its own only where the data hold enough of it; a wide band elsewhere is
  honest.
- **a whole run's band** combines the steady-state errors of its class and kind with the campaign
  overhead's spread (:func:`analyses.models.uncertainty.combined_errors`), that spread measured on the
  published whole runs of the same class (pooled as above) whose figures count a campaign (jobs or
  calendar; a figure that is tokens over throughput is a steady state's and takes the steady band).
- **validation**, leave one group out: a published run's band is that of its class resolved without its
  own group, over the other groups' runs; the coverage of each class is the share of its runs inside.

Errors are ``ln(published time / predicted time)`` (:mod:`analyses.scenario.calibration`'s sign).
"""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd

from analyses import data
from analyses.models.uncertainty import INTERVAL_LEVEL, combined_errors, error_band
from analyses.scenario import calibration, whole_run

MIN_GROUPS = 6  # cross-validation groups (independent publications) a class needs for a band of its own
LARGE_PARAMS = 100e9
"""A model this large carries 1.6 TB or more of training state (16 bytes a parameter: weights, gradients
and Adam's moments in mixed precision), more than two 8-GPU nodes of 80 GB hold: its layout must split
it across nodes with tensor and pipeline parallelism, the choices in which the planner's pick and a
practitioner's layout part most."""
KINDS = {  # (layout pinned, stack named) -> the error column of a run
    (True, True): "pinned",
    (True, False): "pinned_pooled",
    (False, True): "picked",
    (False, False): "picked_pooled",
}
ALL = "all runs"

Path = tuple[str, ...]


def architecture(gpu: str) -> str:
    """NVIDIA's architecture of ``gpu`` (``architecture`` in ``data/gpus.csv``: Ampere, Hopper, Blackwell, ...);
    empty where the table does not state it."""
    value = data.gpus().set_index("name")["architecture"].get(gpu, "")
    return value if isinstance(value, str) else ""


def path(moe: bool, params_total: float, gpu: str) -> Path:
    """The class of a plan or a published run, from the root down: dense or MoE, size, GPU architecture
    (an architecture the data do not state ends the path a level up)."""
    size = "under 100B" if params_total < LARGE_PARAMS else "100B and over"
    family = architecture(gpu)
    return ("moe" if moe else "dense", size) + ((family,) if family else ())


def label(p: Path) -> str:
    """A class in words: ``dense, under 100B, Hopper``; every run for the root."""
    return ", ".join(p) if p else ALL


def _members(paths: list[Path], prefix: Path) -> np.ndarray:
    return np.array([q[: len(prefix)] == prefix for q in paths], bool)


def resolve(p: Path, paths: list[Path], groups: np.ndarray, usable: np.ndarray | None = None) -> Path:
    """The deepest class on ``p``'s path whose rows (``paths``, where ``usable``) span at least
    :data:`MIN_GROUPS` of ``groups``; the root if none does."""
    ok = np.ones(len(paths), bool) if usable is None else usable
    for depth in range(len(p), 0, -1):
        at = _members(paths, p[:depth]) & ok
        if len(set(groups[at].tolist())) >= MIN_GROUPS:
            return p[:depth]
    return ()


# --------------------------------------------------------------------------------------------
# The published runs by class
# --------------------------------------------------------------------------------------------


@functools.cache
def _steady(data_dir: str) -> pd.DataFrame:
    rows = calibration.step_time_rows()
    pinned = calibration.predictions().set_index("id").loc[rows["id"]]
    picked = whole_run.pick_predictions().set_index("id").loc[rows["id"]]
    out = rows[["id", "cv_group", "arch", "gpu"]].copy()
    out["path"] = [
        path(a == "moe", p, g) for a, p, g in zip(rows["arch"], rows["params_total"], rows["gpu"], strict=True)
    ]
    out["pinned"] = pinned["log_error"].to_numpy(float)
    out["pinned_pooled"] = pinned["log_error_pooled"].to_numpy(float)
    out["picked"] = picked["log_error"].to_numpy(float)
    out["picked_pooled"] = picked["log_error_pooled"].to_numpy(float)
    return out.reset_index(drop=True)


def steady_runs() -> pd.DataFrame:
    """Every step-time run with its class (``path``) and its grouped cross-validation error of each kind
    (columns named in :data:`KINDS`; NaN where the planner finds no layout)."""
    return _steady(str(data.DATA_DIR)).copy()


@functools.cache
def _campaigns(data_dir: str) -> pd.DataFrame:
    frame = whole_run.whole_runs()
    rows = whole_run.whole_run_rows().set_index("id").loc[frame["id"]]
    out = frame[["id", "cv_group", "hours_counted", "how", "log_error"]].copy()
    out["path"] = [
        path(a == "moe", p, g) for a, p, g in zip(rows["arch"], rows["params_total"], rows["gpu"], strict=True)
    ]
    return out.reset_index(drop=True)


def whole_runs() -> pd.DataFrame:
    """Every published whole run with its class (``path``), what its figure counts and its error."""
    return _campaigns(str(data.DATA_DIR)).copy()


# --------------------------------------------------------------------------------------------
# A class's errors
# --------------------------------------------------------------------------------------------


def _class_errors(frame: pd.DataFrame, column: str, p: Path, leave_out: str | None) -> tuple[np.ndarray, Path]:
    values = frame[column].to_numpy(float)
    groups = frame["cv_group"].to_numpy()
    usable = np.isfinite(values) & (groups != leave_out)
    paths = list(frame["path"])
    cls = resolve(p, paths, groups, usable)
    errors = values[_members(paths, cls) & usable]
    for depth in range(len(p), len(cls), -1):  # pooled: the nearest class below with runs of its own
        own = values[_members(paths, p[:depth]) & usable]
        if own.size:
            return stretch(errors, own), cls
    return errors, cls


def stretch(errors: np.ndarray, own: np.ndarray, level: float = INTERVAL_LEVEL) -> np.ndarray:
    """``errors`` (a parent class's) with their negative and positive sides each scaled, never shrunk, until
    their band (:func:`analyses.models.uncertainty.error_band`) holds ``level`` of ``own``, the runs of a class
    too thin for a band of its own (all but the ``⌊n·(1 − level)⌋`` of its ``n`` whose omission narrows the band
    most: every one of fewer than ten runs): a class pooled into its parent is never given a band its own
    runs already fall outside. Scaling keeps the errors' order, so the band's ends move to those runs."""
    lo, hi = error_band(errors, level)
    x = np.sort(own)
    drop = int(np.floor(x.size * (1.0 - level) + 1e-9))
    best = None
    for low_drops in range(drop + 1):  # leave out the most extreme runs where that narrows the band most
        down = max(1.0, float(x[low_drops]) / lo) if lo < 0 else 1.0
        up = max(1.0, float(x[x.size - 1 - (drop - low_drops)]) / hi) if hi > 0 else 1.0
        if best is None or hi * up - lo * down < best[0]:
            best = (hi * up - lo * down, down, up)
    _, down, up = best
    return np.where(errors < 0, errors * down, errors * up)


def steady_errors(
    p: Path, layout_pinned: bool, stack_known: bool, leave_out: str | None = None
) -> tuple[np.ndarray, Path]:
    """The steady-state errors a plan of class ``p`` and this kind is banded by, and the class they come from
    (``p`` or the ancestor it pools into); without the runs of group ``leave_out``."""
    return _class_errors(_steady(str(data.DATA_DIR)), KINDS[layout_pinned, stack_known], p, leave_out)


def campaign_errors(p: Path, leave_out: str | None = None) -> tuple[np.ndarray, Path]:
    """The whole-run errors of the published campaigns (figures that count jobs or calendar) of class ``p``, pooled
    up as :func:`resolve` does, and the class they come from."""
    frame = _campaigns(str(data.DATA_DIR))
    return _class_errors(frame[frame["hours_counted"].isin(whole_run.CAMPAIGNS)], "log_error", p, leave_out)


def whole_errors(p: Path, layout_pinned: bool, stack_known: bool, leave_out: str | None = None) -> np.ndarray:
    """The errors a plan's whole-run figures are banded by: the steady-state errors of its class and kind
    combined with the campaign overhead's spread among the campaigns of its class
    (:func:`analyses.models.uncertainty.combined_errors`): a whole run carries both."""
    return _whole(str(data.DATA_DIR), p, layout_pinned, stack_known, leave_out)


@functools.lru_cache(maxsize=256)
def _whole(data_dir: str, p: Path, layout_pinned: bool, stack_known: bool, leave_out: str | None) -> np.ndarray:
    steady, _ = steady_errors(p, layout_pinned, stack_known, leave_out)
    campaigns, _ = campaign_errors(p, leave_out)
    return combined_errors(steady, campaigns)[0]


def factors(errors: np.ndarray, level: float = INTERVAL_LEVEL) -> tuple[float, float]:
    """The band of ``errors`` as factors on a time (low, high)."""
    lo, hi = error_band(errors, level)
    return float(np.exp(lo)), float(np.exp(hi))


# --------------------------------------------------------------------------------------------
# Validation: each run's band without its group, each class's coverage
# --------------------------------------------------------------------------------------------


def steady_bands(layout_pinned: bool, stack_known: bool) -> pd.DataFrame:
    """Every step-time run's band of this kind, leave one group out: its class resolved without its group and
    the band of the other groups' errors there (columns ``error``, ``class``, ``band_lo``, ``band_hi``,
    ``inside``; NaN errors where the planner finds no layout)."""
    return _steady_bands(str(data.DATA_DIR), layout_pinned, stack_known).copy()


@functools.lru_cache(maxsize=8)
def _steady_bands(data_dir: str, layout_pinned: bool, stack_known: bool) -> pd.DataFrame:
    frame = _steady(data_dir)
    column = KINDS[layout_pinned, stack_known]
    out = frame[["id", "cv_group", "path"]].copy()
    out["error"] = frame[column].to_numpy(float)
    rows = []
    for p, g in zip(frame["path"], frame["cv_group"], strict=True):
        errs, cls = _class_errors(frame, column, p, g)
        rows.append((label(cls), *error_band(errs)))
    out["class"], out["band_lo"], out["band_hi"] = (list(c) for c in zip(*rows, strict=True))
    out["inside"] = (out["error"] >= out["band_lo"]) & (out["error"] <= out["band_hi"])
    return out


def whole_bands() -> pd.DataFrame:
    """Every published whole run's band as a plan of its class and kind gets it (its printed layout pinned or the
    planner's pick, its stack named), leave one group out: a campaign's from :func:`whole_errors`, a figure
    that is tokens over throughput the steady state's (columns ``class``, ``band_lo``, ``band_hi``, ``inside``)."""
    return _whole_bands(str(data.DATA_DIR)).copy()


@functools.cache
def _whole_bands(data_dir: str) -> pd.DataFrame:
    frame = _campaigns(data_dir)
    out = frame[["id", "cv_group", "path", "hours_counted", "log_error"]].copy()
    rows = []
    for r in frame.to_dict("records"):
        pinned = r["how"] == "its own layout"
        if r["hours_counted"] == "throughput":
            errs, cls = steady_errors(r["path"], pinned, True, r["cv_group"])
        else:
            errs = whole_errors(r["path"], pinned, True, r["cv_group"])
            cls = steady_errors(r["path"], pinned, True, r["cv_group"])[1]
        rows.append((label(cls), *error_band(errs)))
    out["class"], out["band_lo"], out["band_hi"] = (list(c) for c in zip(*rows, strict=True))
    out["inside"] = (out["log_error"] >= out["band_lo"]) & (out["log_error"] <= out["band_hi"])
    return out


def class_table() -> pd.DataFrame:
    """Every class a plan can fall in (the leaves of the published runs' classes), per kind: its own runs and
    sources, the share of them inside their leave-one-group-out band (``coverage``), the class its band comes
    from (``band from``: its own, or the parent it pools into) with that class's runs, and the band on the time
    (factors, all data), steady state and whole run."""
    return _class_table(str(data.DATA_DIR)).copy()


@functools.cache
def _class_table(data_dir: str) -> pd.DataFrame:
    leaves = sorted(set(_steady(data_dir)["path"]) | set(_campaigns(data_dir)["path"]), key=lambda q: (len(q), q))
    out = []
    for pinned, known in KINDS:
        scored = _steady_bands(data_dir, pinned, known)
        scored = scored[np.isfinite(scored["error"].to_numpy(float))]
        for leaf in leaves:
            errs, cls = steady_errors(leaf, pinned, known)
            own = scored[_members(list(scored["path"]), leaf)]
            lo, hi = factors(errs)
            wlo, whi = factors(whole_errors(leaf, pinned, known))
            out.append(
                {
                    "plan": label(leaf),
                    "layout": "pinned" if pinned else "picked",
                    "stack": "named" if known else "not named",
                    "runs": int(len(own)),
                    "sources": int(own["cv_group"].nunique()),
                    "coverage": float(own["inside"].mean()) if len(own) else float("nan"),
                    "band from": label(cls),
                    "band runs": int(len(errs)),
                    "steady lo": lo,
                    "steady hi": hi,
                    "whole lo": wlo,
                    "whole hi": whi,
                }
            )
    return pd.DataFrame(out)


def clear_cache() -> None:
    for fn in (_steady, _campaigns, _whole, _steady_bands, _whole_bands, _class_table):
        fn.cache_clear()
