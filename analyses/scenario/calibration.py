"""The step-time model (:mod:`analyses.models.performance`) fed from ``data/`` and calibrated on the
published runs the data declare for it: its coefficients, and its errors on runs it never saw.

What comes from where (stated once):

- each run's shape, GPUs, precision, layout, batch and recomputation from
  ``data/published_runs.csv``; a cell the source does not print takes the rule of :data:`ASSUMED`;
- the rate of a ZeRO-3 implementation that gathers weights synchronously, slower than NCCL, from its
  measured forward pass in ``data/zero3_gathers.csv`` (a run names it in ``zero3_gathers``);
- each GPU's dense peaks, HBM bandwidth and compute die from ``data/gpus.csv`` (a variant is counted
  as the die it is a variant of: H800/H200 as H100, GB200 as B200, GB300 as B300);
- each GPU's fabric from its InfiniBand cluster in ``data/cluster_configs.csv`` (the fastest NIC
  listed for it; a run's own ``nic_gbit_per_s_per_gpu`` where its network differs), with the
  cluster's measured NVLink and NIC shares and latency: facts of the clusters, not the scenario's
  assumptions, so a reader who moves the scenario's fabric moves plans, not the calibration;
- the fit uses only rows whose ``role`` is ``calibrate``; every other row with a measured throughput
  is a validation row. :func:`errors` pools the model's out-of-sample errors: validation rows at
  the full fit, calibration rows each left out of its own fit.

Errors are ``ln(published step time / predicted step time)`` (= ``ln(predicted / published)`` of
tokens per second): the factor, in log, that turns a planned time into the time the published run
took. Everything is computed once per data folder and argument.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd

from analyses import data
from analyses.models import flops, memory, step_time_fit
from analyses.models import performance as pf
from analyses.models import plan as pl
from analyses.models.uncertainty import error_band
from analyses.scenario import clusters
from analyses.scenario import stacks as training_stacks
from analyses.units import MILLISECOND

ASSUMED = {
    "vp": "1 (no interleaving) where the source prints none",
    "micro_batch_seqs": "1 sequence (Megatron's default) where the source prints none",
    "dp": "GPUs / (TP · PP · CP)",
    "recompute": "'selective' where the source does not say (FlashAttention recomputes the attention core anyway)",
    "cp, ep": "1 where empty",
}
"""The rule for each cell of a published run that its source leaves empty (rows that print no
layout at all are planned instead: :mod:`analyses.scenario.validation`)."""

STEP_TIME_COLUMNS = ("n_gpus", "tp", "pp", "global_batch_seqs", "tokens_per_s_per_gpu")
"""A published run is a step-time row when it prints these (its layout and its throughput)."""


# --------------------------------------------------------------------------------------------
# Model shapes
# --------------------------------------------------------------------------------------------


@functools.cache
def _shapes(data_dir: str) -> dict[str, pl.Shape]:
    """Every shape of ``data/model_shapes.csv`` at its own sequence length, by name (read once)."""
    return {
        r["name"]: pl.Shape(
            name=str(r["label"]),
            n_params=float(memory.shape_parameter_count(r)),
            layers=int(r["layers"]),
            hidden=int(r["hidden"]),
            heads=int(r["heads"]),
            seq_len=int(r["seq_len"]),
            kv_heads=int(r["kv_heads"]) if r["kv_heads"] == r["kv_heads"] else 0,
        )
        for _, r in data.model_shapes().iterrows()
    }


def shape(name: str, seq_len: int | None = None) -> pl.Shape:
    """A row of ``data/model_shapes.csv`` as the planner's shape (parameters counted from the shape,
    :func:`analyses.models.memory.shape_parameter_count`), at ``seq_len`` if given; KeyError names them."""
    shapes = _shapes(str(data.DATA_DIR))
    if name not in shapes:
        raise KeyError(f"unknown shape {name!r}; known: {', '.join(shapes)}")
    own = shapes[name]
    return own if not seq_len else replace(own, seq_len=int(seq_len))


# --------------------------------------------------------------------------------------------
# Cross-validation groups
# --------------------------------------------------------------------------------------------

STACK_ROUNDS = 2  # core fit and stack efficiencies, alternated


def cv_groups(sources: pd.Series) -> list[str]:
    """Each row's cross-validation group: rows that share any source (``;``-separated ids) fall in one group,
    so a publication, and everything that cites it, is left out at once. The group is named by its
    alphabetically first source."""
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        while parent.setdefault(x, x) != x:
            x = parent[x]
        return x

    lists = [sorted(data.SOURCE_SPLIT.split(s)) for s in sources]
    for ids in lists:
        for other in ids[1:]:
            a, b = find(ids[0]), find(other)
            if a != b:
                parent[max(a, b)] = min(a, b)
    return [find(ids[0]) for ids in lists]


# --------------------------------------------------------------------------------------------
# The published runs as the model's inputs
# --------------------------------------------------------------------------------------------


def _own(x: Any) -> float | None:
    """A run's own figure, or None for an empty cell."""
    return None if x is None or x != x or x == "" else float(x)


@functools.cache
def _runs(data_dir: str) -> pd.DataFrame:
    return prepare(data.published_runs())


def prepare(rows: pd.DataFrame) -> pd.DataFrame:
    """Rows in the columns of ``data/published_runs.csv`` with the model's view of each (:func:`runs`):
    the committed table, or rows not yet in it (a new row's first score, :func:`analyses.scenario.whole_run.first_scores`)."""
    frame = rows.copy()
    n = frame["n_gpus"]
    tp, pp = frame["tp"].fillna(1), frame["pp"].fillna(1)
    cp, ep = frame["cp"].fillna(1), frame["ep"].fillna(1)
    frame["step_time_row"] = frame[list(STEP_TIME_COLUMNS)].notna().all(axis=1)
    frame["model_tp"], frame["model_pp"], frame["model_cp"], frame["model_ep"] = tp, pp, cp, ep
    frame["model_vp"] = frame["vp"].fillna(1)
    frame["model_micro_batch"] = frame["micro_batch_seqs"].fillna(1)
    frame["model_dp"] = frame["dp"].where(frame["dp"].notna(), n / (tp * pp * cp))
    frame["model_recompute"] = frame["recompute"].replace({"unknown": "selective"})
    frame["die"] = [clusters.die(g) for g in frame["gpu"]]
    frame["cv_group"] = cv_groups(frame["source"])
    return frame


def runs() -> pd.DataFrame:
    """``data/published_runs.csv`` with the model's view of each row: ``step_time_row`` (it prints a
    layout and a throughput), ``model_*`` columns with :data:`ASSUMED` filled in, and ``die``."""
    return _runs(str(data.DATA_DIR)).copy()


def inputs(frame: pd.DataFrame) -> dict[str, Any]:
    """:func:`analyses.models.performance.step_time`'s keyword arrays for the rows of :func:`runs`."""
    hw = [
        clusters.hardware(r["gpu"], r["precision"], nic_gbit_per_s_per_gpu=_own(r["nic_gbit_per_s_per_gpu"]))
        for r in frame.to_dict("records")
    ]
    out: dict[str, Any] = {k: np.array([h[k] for h in hw]) for k in hw[0]} if hw else {}
    out |= {
        "params_active": frame["params_active"].to_numpy(float),
        "params_total": frame["params_total"].to_numpy(float),
        "n_layers": frame["n_layers"].to_numpy(float),
        "d_model": frame["d_model"].to_numpy(float),
        "seq_len": frame["seq_len"].to_numpy(float),
        "kv_ratio": (frame["n_kv_heads"] / frame["n_heads"]).fillna(1.0).to_numpy(float),
        "attention_width": flops.attention_width(
            frame["d_model"], frame["n_heads"].fillna(0), frame["qk_head_dim"].fillna(0), frame["v_head_dim"].fillna(0)
        ),
        "attention_span": flops.attention_span(frame["seq_len"], frame["window"].fillna(0)),
        "moe_layers": (frame["n_layers"] - frame["dense_layers"].fillna(0)).to_numpy(float),
        "flash": (frame["attention_kernel"] == "flash").to_numpy(),
        "n_experts": frame["n_experts"].fillna(0).to_numpy(float),
        "experts_active": frame["experts_active"].fillna(0).to_numpy(float),
        "n_gpus": frame["n_gpus"].to_numpy(float),
        "tp": frame["model_tp"].to_numpy(float),
        "pp": frame["model_pp"].to_numpy(float),
        "vp": frame["model_vp"].to_numpy(float),
        "cp": frame["model_cp"].to_numpy(float),
        "ep": frame["model_ep"].to_numpy(float),
        "micro_batch": frame["model_micro_batch"].to_numpy(float),
        "global_batch": frame["global_batch_seqs"].to_numpy(float),
        "recompute": frame["model_recompute"].to_numpy(dtype=object).astype(str),
        "zero3": (frame["sharding"] == "zero3-fsdp").to_numpy(),
        "gather_bytes_per_s": np.array([zero3_gather_rate(x) for x in frame["zero3_gathers"]], float),
    }
    return out


def zero3_gather_rate(implementation: Any) -> float:
    """Bytes of 16-bit weights per second per GPU that the ZeRO-3 ``implementation`` of
    ``data/zero3_gathers.csv`` gathers (:func:`analyses.models.performance.gather_rate`); infinite
    (NCCL's collectives) for an empty cell."""
    if not isinstance(implementation, str) or not implementation:
        return float("inf")
    return _gather_rates(str(data.DATA_DIR))[implementation]


@functools.cache
def _gather_rates(data_dir: str) -> dict[str, float]:
    frame = data.table("zero3_gathers")
    rates = pf.gather_rate(
        frame["params"], frame["forward_ms"] * MILLISECOND, frame["forward_without_gathers_ms"] * MILLISECOND
    )
    return dict(zip(frame["id"], np.asarray(rates, float).tolist(), strict=True))


def step_time_rows() -> pd.DataFrame:
    """The rows of :func:`runs` the step-time model predicts directly (layout and throughput printed)."""
    frame = runs()
    return frame[frame["step_time_row"]].reset_index(drop=True)


# --------------------------------------------------------------------------------------------
# The fit and its out-of-sample errors
# --------------------------------------------------------------------------------------------


@functools.cache
def _step_rows(data_dir: str) -> tuple[pd.DataFrame, dict[str, Any]]:
    rows = step_time_rows()
    return rows, inputs(rows)


def _subset(arrays: dict[str, Any], mask: np.ndarray) -> dict[str, Any]:
    return {k: v[mask] if isinstance(v, np.ndarray) and v.shape[:1] == mask.shape else v for k, v in arrays.items()}


def _outside(rows: pd.DataFrame, holdout_sources: tuple[str, ...], leave_out: tuple[str, ...]) -> np.ndarray:
    """Rows citing none of ``holdout_sources`` and whose id is not in ``leave_out``."""
    keep = ~rows["id"].isin(leave_out)
    if holdout_sources:
        keep &= ~rows["source"].apply(lambda s: bool(set(data.SOURCE_SPLIT.split(s)) & set(holdout_sources)))
    return keep.to_numpy()


@functools.cache
def _fit(holdout_sources: tuple[str, ...], leave_out: tuple[str, ...], data_dir: str) -> StackFit:
    rows, arrays = _step_rows(data_dir)
    outside = _outside(rows, holdout_sources, leave_out)
    mask = outside & (rows["role"] == "calibrate").to_numpy()
    if mask.sum() < 8:
        raise data.DataError(
            "data/published_runs.csv", f"only {mask.sum()} calibration rows left to fit", column="role"
        )
    start = None if not (holdout_sources or leave_out) else _fit((), (), data_dir).core.coefficients
    y = rows["tokens_per_s_per_gpu"].to_numpy(float)
    stacks = rows["stack"].to_numpy(dtype=object)
    eff = dict.fromkeys(training_stacks.stack_names(), 1.0)
    for _ in range(STACK_ROUNDS):  # the core on the calibration rows, each at its stack's efficiency; then the stacks
        at = {**arrays, "stack_efficiency": np.array([eff[s] for s in stacks])}
        core = step_time_fit.fit(_subset(at, mask), y[mask], start=start)
        start = core.coefficients
        eff = _efficiencies(core.coefficients, arrays, y, stacks, outside)
    return StackFit(core, eff)


def _efficiencies(
    coef: pf.Coefficients, arrays: dict[str, Any], y: np.ndarray, stacks: np.ndarray, rows: np.ndarray
) -> dict[str, float]:
    """Every stack's efficiency against the reference model ``coef``, from the step-time rows in ``rows``."""
    reference = pf.step_time(coef, **_subset(arrays, rows)).tokens_per_s_per_gpu
    table = training_stacks.stack_table()
    return step_time_fit.stack_efficiencies(
        np.log(y[rows] / reference),
        stacks[rows],
        dict(zip(table["id"], table["family"], strict=True)),
        training_stacks.reference_stack(),
        training_stacks.POOLED_STACK,
    )


@dataclass(frozen=True)
class StackFit:
    """The step-time model's core fit (the reference stack) and every training stack's efficiency."""

    core: step_time_fit.Fit
    efficiencies: dict[str, float]


def fit(holdout_sources: Sequence[str] = (), leave_out: Sequence[str] = ()) -> step_time_fit.Fit:
    """The model fitted on the calibration rows, without rows citing ``holdout_sources`` and without the
    rows whose id is in ``leave_out`` (a leave-one-out refit): the reference stack's coefficients, each
    calibration row counted at its own stack's efficiency (:func:`stack_efficiencies`)."""
    return _fit(tuple(sorted(holdout_sources)), tuple(sorted(leave_out)), str(data.DATA_DIR)).core


def stack_efficiencies(holdout_sources: Sequence[str] = ()) -> dict[str, float]:
    """Every training stack's efficiency (``data/training_stacks.csv``), fitted with the core
    (:func:`analyses.models.step_time_fit.stack_efficiencies` on every step-time row, calibration and
    validation alike, without rows citing ``holdout_sources``); scored by grouped cross-validation in
    :func:`predictions`."""
    return dict(_fit(tuple(sorted(holdout_sources)), (), str(data.DATA_DIR)).efficiencies)


def stack_efficiency(stack: str, holdout_sources: Sequence[str] = ()) -> float:
    """The efficiency of one stack (an id or alias of ``data/training_stacks.csv``)."""
    return stack_efficiencies(holdout_sources)[training_stacks.stack_id(stack)]


def coefficients(holdout_sources: Sequence[str] = ()) -> pf.Coefficients:
    """The fitted coefficients of the reference stack (:func:`fit`)."""
    return fit(holdout_sources).coefficients


def predict(frame: pd.DataFrame, coef: pf.Coefficients | None = None) -> pf.Step:
    """The model's step for rows of :func:`runs` (at the full fit unless ``coef`` is given), each at its
    stack's efficiency."""
    eff = stack_efficiencies()
    return pf.step_time(
        coefficients() if coef is None else coef,
        **inputs(frame),
        stack_efficiency=np.array([eff[s] for s in frame["stack"]], float),
    )


@functools.cache
def _cv_models(data_dir: str) -> dict[str, tuple[pf.Coefficients, dict[str, float]]]:
    rows, arrays = _step_rows(data_dir)
    full = _fit((), (), data_dir)
    y = rows["tokens_per_s_per_gpu"].to_numpy(float)
    stacks = rows["stack"].to_numpy(dtype=object)
    cal = (rows["role"] == "calibrate").to_numpy()
    at = {**arrays, "stack_efficiency": np.array([full.efficiencies[s] for s in stacks])}
    groups = rows["cv_group"].to_numpy()
    core = step_time_fit.leave_groups_out(full.core.coefficients, _subset(at, cal), y[cal], groups[cal])
    out = {}
    for g in dict.fromkeys(groups.tolist()):
        coef = core.get(g, full.core.coefficients)
        out[g] = (coef, _efficiencies(coef, arrays, y, stacks, groups != g))
    return out


def cv_models() -> dict[str, tuple[pf.Coefficients, dict[str, float]]]:
    """Grouped cross-validation: for each group of published runs that share a source
    (:func:`cv_groups`), the core coefficients and stack efficiencies of the fit without that group (the
    core one Newton step from the full fit, :func:`analyses.models.step_time_fit.leave_groups_out`; the
    efficiencies recomputed without the group's rows)."""
    return dict(_cv_models(str(data.DATA_DIR)))


@functools.cache
def _predictions(data_dir: str) -> pd.DataFrame:
    rows, arrays = _step_rows(data_dir)
    full = _fit((), (), data_dir)
    eff = full.efficiencies
    stacks = rows["stack"].to_numpy(dtype=object)
    reference = pf.step_time(full.core.coefficients, **arrays).tokens_per_s_per_gpu
    predicted = reference * np.array([eff[s] for s in stacks])
    groups = rows["cv_group"].to_numpy()
    cv, pooled = np.full(len(rows), np.nan), np.full(len(rows), np.nan)
    for g, (coef, effs) in _cv_models(data_dir).items():
        at = groups == g
        ref = pf.step_time(coef, **_subset(arrays, at)).tokens_per_s_per_gpu
        cv[at] = ref * np.array([effs[s] for s in stacks[at]])
        pooled[at] = ref * effs[training_stacks.POOLED_STACK]
    out = rows[["id", "role", "source", "stack", "cv_group"]].copy()
    out["published"] = rows["tokens_per_s_per_gpu"].to_numpy(float)
    out["predicted"] = predicted
    out["predicted_reference"] = reference
    out["out_of_sample"] = cv
    out["out_of_sample_pooled"] = pooled
    out["log_error"] = np.log(out["out_of_sample"] / out["published"])
    out["log_error_pooled"] = np.log(out["out_of_sample_pooled"] / out["published"])
    out["log_error_in_sample"] = np.log(out["predicted"] / out["published"])
    return out


def predictions() -> pd.DataFrame:
    """Every step-time row: published and predicted tokens/s per GPU at the full fit (``predicted``: at
    the row's stack; ``predicted_reference``: the reference stack's), the grouped cross-validation
    prediction (``out_of_sample``: the fit without the row's group, :func:`cv_models`, at the row's
    stack; ``out_of_sample_pooled``: at the pooled efficiency a plan that names no stack uses) and their
    ``log_error`` and ``log_error_pooled`` (:func:`errors`' sign), and ``log_error_in_sample``."""
    return _predictions(str(data.DATA_DIR)).copy()


def group_refit(group: str) -> np.ndarray:
    """Tokens/s per GPU of the rows of ``group`` predicted by a full refit without the group's rows, core
    and stack efficiencies alike (what :func:`predictions`' one-step grouped cross-validation approximates)."""
    rows, arrays = _step_rows(str(data.DATA_DIR))
    at = (rows["cv_group"] == group).to_numpy()
    refit = _fit((), tuple(sorted(rows.loc[at, "id"])), str(data.DATA_DIR))
    ref = pf.step_time(refit.core.coefficients, **_subset(arrays, at)).tokens_per_s_per_gpu
    return ref * np.array([refit.efficiencies[s] for s in rows.loc[at, "stack"]])


def errors(stack_known: bool = True) -> np.ndarray:
    """The model's grouped cross-validation errors on every step-time row at its printed layout,
    ``ln(published / predicted step time)``: each at its own stack's efficiency, or (``stack_known``
    false) at the pooled one a plan that names no stack uses."""
    return predictions()["log_error" if stack_known else "log_error_pooled"].to_numpy(float)


@functools.cache
def _ratio_errors(data_dir: str) -> pd.DataFrame:
    rows, _ = _step_rows(data_dir)
    pred = predictions().set_index("id")
    order = {g: i for i, g in enumerate(data.gpu_names())}
    out = []
    grouped = rows[rows["ratio_group"].fillna("") != ""]
    for group, members in grouped.groupby("ratio_group", sort=True):
        recs = members.to_dict("records")
        for i, a in enumerate(recs):
            for b in recs[i + 1 :]:
                if a["gpu"] == b["gpu"]:
                    continue
                new, old = (a, b) if order[a["gpu"]] > order[b["gpu"]] else (b, a)
                pn, po = pred.loc[new["id"]], pred.loc[old["id"]]
                out.append(
                    {
                        "ratio_group": group,
                        "arch": new["arch"],
                        "new": new["id"],
                        "old": old["id"],
                        "gpus": f"{new['gpu']} / {old['gpu']}",
                        "published": pn["published"] / po["published"],
                        "predicted": pn["out_of_sample"] / po["out_of_sample"],
                        "in_sample": bool(new["role"] == "calibrate" and old["role"] == "calibrate"),
                    }
                )
    frame = pd.DataFrame(out)
    frame["log_error"] = np.log(frame["predicted"] / frame["published"])
    return frame


def ratio_errors() -> pd.DataFrame:
    """The model against every same-recipe pair of published runs on two GPUs (``ratio_group``): the
    published and predicted per-GPU throughput ratio of the newer GPU over the older, both sides out of
    sample (:func:`predictions`), and ``log_error`` = ``ln(predicted / published ratio)``."""
    return _ratio_errors(str(data.DATA_DIR)).copy()


def band(level: float = 0.9, errs: np.ndarray | None = None) -> tuple[float, float]:
    """The factors (low, high) that turn a predicted step time into a ``level`` band of the true one:
    ``exp`` of the split-conformal band of the out-of-sample errors (:func:`analyses.models.uncertainty.error_band`)."""
    e = errors() if errs is None else np.asarray(errs, float)
    lo, hi = error_band(e, level)
    return float(np.exp(lo)), float(np.exp(hi))


def coefficient_table() -> pd.DataFrame:
    """The fitted coefficients beside their anchors (:data:`analyses.models.performance.PRIOR`)."""
    coef = coefficients().as_dict()
    prior = pf.PRIOR.as_dict()
    return pd.DataFrame({"coefficient": list(coef), "fitted": list(coef.values()), "anchor": [prior[k] for k in coef]})


def clear_cache() -> None:
    """Forget the fits (after editing ``data/``)."""
    for fn in (_runs, _step_rows, _fit, _cv_models, _predictions, _ratio_errors, _shapes):
        fn.cache_clear()
    _gather_rates.cache_clear()
    clusters.clear_cache()
    training_stacks.clear_cache()
