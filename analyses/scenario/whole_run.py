"""What real runs do beyond the step-time model at a printed layout, fitted on published runs and
scored by grouped cross-validation: the planner's pick on every published run, the campaign overhead
of a whole run, and the 90% bands a plan's figures carry.

Stated once:

- **the planner's pick.** A reader who gives no layout gets the layout the planner finds fastest
  on their GPU count (:func:`picks`) among those their stack runs (its ZeRO stages and model
  parallelism) with the recomputation their attention kernel allows (a run of 2021-22 without
  FlashAttention had no selective recomputation). Every published step-time run is scored at that
  pick too (:func:`pick_predictions`); no factor is fitted on the gap.
- **the campaign overhead.** A published whole run (GPU-hours or days for its tokens) takes longer
  than its steady-state throughput, the data-loading stall and the modelled failures and checkpoints
  give: warm-up and batch ramps, evaluations, restarts and reruns beyond the failure model, idle and
  queue time, data stalls, sometimes a share of post-training. What a published figure counts is a
  column of the data (``hours_counted``, from its source's wording): a figure that is its tokens over
  its measured throughput (DeepSeek's GPU-hours per trillion tokens) holds none of that and is
  compared with the plan's steady state; the time of the training jobs (``job``) or of the calendar
  (``calendar``) holds all of it. ``campaign_overhead`` is the median excess of those over the plan,
  shrunk toward none (:data:`CAMPAIGN_PRIOR_ROWS`), fitted on the whole-run rows alone, apart from
  the steady-state rows.
- **the errors.** Every error is grouped cross-validation: a row is predicted by a fit without every row
  that shares a source with it (:func:`analyses.scenario.calibration.cv_groups`), the core and the
  stack efficiencies (:func:`analyses.scenario.calibration.cv_models`) and the campaign overhead
  alike. The bands a plan's figures carry, by class of plan, are :mod:`analyses.scenario.bands`'.

Errors are ``ln(published time / predicted time)`` (= ``ln(predicted / published)`` of a rate),
:mod:`analyses.scenario.calibration`'s sign. Everything is computed once per data folder.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import pandas as pd

from analyses import data, scenario
from analyses.models import flops, layouts
from analyses.models import performance as pf
from analyses.models import plan as pl
from analyses.models.training_run import HEAD_SIZE
from analyses.scenario import calibration, clusters, stacks

CAMPAIGN_PRIOR_ROWS = 2  # rows of no campaign overhead among the excesses whose median is the overhead
UNPRINTED_GPUS = (1024, 2048)  # GPU counts searched where a whole run prints none (Llama 2's model card)
DEADLINE_DAYS = 3650.0  # published runs are planned without a deadline
HOURS_COUNTED = ("throughput", "job", "calendar", "unclear")  # what a whole run's figure counts (data/published_runs.csv)
CAMPAIGNS = ("job", "calendar")  # figures that count a campaign, which the campaign overhead is fitted on


# --------------------------------------------------------------------------------------------
# A published run as a plan request
# --------------------------------------------------------------------------------------------


def _int(x: Any, default: int = 0) -> int:
    """A cell as an integer, ``default`` where it is empty."""
    return default if x is None or x != x or x == "" else int(x)


def run_shape(r: dict[str, Any]) -> pl.Shape:
    """The planner's shape of one published run (dense or mixture of experts), with its architecture."""
    moe = r["arch"] == "moe"
    heads = _int(r["n_heads"], int(r["d_model"]) // HEAD_SIZE)
    width = flops.attention_width(r["d_model"], _int(r["n_heads"]), _int(r["qk_head_dim"]), _int(r["v_head_dim"]))
    return pl.Shape(
        name=r["run"],
        n_params=float(r["params_total"]),
        layers=int(r["n_layers"]),
        hidden=int(r["d_model"]),
        heads=heads,
        seq_len=int(r["seq_len"]),
        params_active=float(r["params_active"]),
        n_experts=_int(r["n_experts"]) if moe else 0,
        experts_active=_int(r["experts_active"]) if moe else 0,
        kv_heads=_int(r["n_kv_heads"]),
        vocab=int(r["vocab"]),
        ffn_hidden=_int(r["ffn_hidden"]),
        moe_layers=int(r["n_layers"]) - _int(r["dense_layers"]),
        attention_width=int(round(float(width))),
        window=_int(r["window"]),
    )


def printed_layout(r: dict[str, Any]) -> tuple[tuple[str, Any], ...]:
    """The run's own layout as pins (:data:`analyses.models.plan.PIN_FIELDS`), with the rules of
    :data:`analyses.scenario.calibration.ASSUMED` for cells it leaves empty; empty where it prints no TP/PP."""
    if not (r["tp"] == r["tp"] and r["pp"] == r["pp"] and r["n_gpus"] == r["n_gpus"]):
        return ()
    zero = {"zero3-fsdp": 3, "zero1": 1, "none": 0}.get(r["sharding"])
    pins = {
        "tp": int(r["model_tp"]),
        "pp": int(r["model_pp"]),
        "cp": int(r["model_cp"]),
        "ep": int(r["model_ep"]) if r["arch"] == "moe" else 1,
        "dp": int(round(r["model_dp"])),
        "micro_batch": int(r["model_micro_batch"]),
        "virtual_stages": int(r["model_vp"]),
        "recompute": str(r["model_recompute"]),
    }
    if zero is not None:
        pins["zero_stage"] = zero
    return tuple(pins.items())


def published_request(r: dict[str, Any], *, pinned: bool, **fields: Any) -> pl.Request:
    """The plan request of a published run: its shape, GPU, precision, GPU count (or
    :data:`UNPRINTED_GPUS`), batch and sequence length and tokens, at the scenario's central values and
    its stack's rules (:func:`analyses.scenario.stacks.stack_rules`); its printed layout pinned if
    ``pinned`` (and it prints one)."""
    fields = stacks.stack_rules(r["stack"]) | fields
    batch = float(r["global_batch_seqs"] * r["seq_len"]) if r["global_batch_seqs"] == r["global_batch_seqs"] else None
    counts = (int(r["n_gpus"]),) * 2 if r["n_gpus"] == r["n_gpus"] else UNPRINTED_GPUS
    tokens = float(r["training_tokens"]) if r["training_tokens"] == r["training_tokens"] else 1e12
    return pl.Request(
        shape=run_shape(r),
        tokens=tokens,
        deadline_days=DEADLINE_DAYS,
        s=scenario.values(),
        hardware={r["gpu"]: clusters.plan_hardware(r["gpu"])},
        gpus=(r["gpu"],),
        precision=str(r["precision"]),
        min_gpus=counts[0],
        max_gpus=counts[1],
        global_batch_tokens=batch,
        pinned=printed_layout(r) if pinned else (),
        attention_kernel=str(r["attention_kernel"]),
        gather_bytes_per_s=calibration.zero3_gather_rate(r["zero3_gathers"]),
        **fields,
    ).validate()


def _fastest(frame: pd.DataFrame) -> pd.DataFrame:
    """The fitting layout of fewest GPU-hours (ties: fewer GPUs), as a one-row frame; empty if none fits."""
    ok = frame[frame["fits"]]
    return ok.sort_values(["gpu_hours", "n_gpus"], kind="stable").iloc[:1]


# --------------------------------------------------------------------------------------------
# The planner's pick on every step-time row
# --------------------------------------------------------------------------------------------


@functools.cache
def _picks(data_dir: str) -> pd.DataFrame:
    rows = calibration.step_time_rows()
    coef = calibration.coefficients()
    out = []
    for r in rows.to_dict("records"):
        req = published_request(r, pinned=False)
        best = _fastest(pl.evaluate(req, r["gpu"], coef))
        out.append(best.iloc[0] if len(best) else pd.Series({"gpu": r["gpu"]}))
    frame = pd.DataFrame(out).reset_index(drop=True)
    frame.insert(0, "id", rows["id"].to_numpy())
    return frame


def picks() -> pd.DataFrame:
    """The planner's pick (the fitting layout of fewest GPU-hours, at the full fit and the reference
    stack) for every step-time row at its GPU count, batch and sequence length: one row each, NaN
    where no layout fits."""
    return _picks(str(data.DATA_DIR)).copy()


@functools.cache
def _pick_predictions(data_dir: str) -> pd.DataFrame:
    rows = calibration.step_time_rows()
    chosen = _picks(data_dir)
    models = calibration.cv_models()
    full_eff = calibration.stack_efficiencies()
    out = []
    for r, (_, pick) in zip(rows.to_dict("records"), chosen.iterrows(), strict=True):
        if pick.get("tp") != pick.get("tp") or "tp" not in pick:
            out.append((np.nan, np.nan, np.nan))
            continue
        layout = pd.DataFrame([pick[list(layouts.COLUMNS)]])
        req = published_request(r, pinned=False)
        coef, eff = models[r["cv_group"]]
        ref = float(pl.evaluate(req, r["gpu"], coef, layout)["tokens_per_s_per_gpu"].iloc[0])
        full = float(pl.evaluate(req, r["gpu"], calibration.coefficients(), layout)["tokens_per_s_per_gpu"].iloc[0])
        out.append((full * full_eff[r["stack"]], ref * eff[r["stack"]], ref * eff[stacks.POOLED_STACK]))
    frame = rows[["id", "stack", "cv_group", "source"]].copy()
    frame["published"] = rows["tokens_per_s_per_gpu"].to_numpy(float)
    frame["pick_in_sample"], frame["pick_cv"], frame["pick_cv_pooled"] = np.array(out, float).T
    frame["pick_layout"] = [layouts.label(p) if p.get("tp") == p.get("tp") else "" for _, p in chosen.iterrows()]
    frame["log_error"] = np.log(frame["pick_cv"] / frame["published"])
    frame["log_error_pooled"] = np.log(frame["pick_cv_pooled"] / frame["published"])
    frame["log_error_in_sample"] = np.log(frame["pick_in_sample"] / frame["published"])
    return frame


def pick_predictions() -> pd.DataFrame:
    """Every step-time row predicted at the planner's pick: in sample (the full fit) and by grouped
    cross-validation (the fit without the row's group; ``_pooled``: at the efficiency of a stack not
    named), and the errors (``log_error``, ``log_error_pooled``, ``log_error_in_sample``: ``ln(predicted /
    published)`` tokens per second, the step time's ``ln(published / predicted)``)."""
    return _pick_predictions(str(data.DATA_DIR)).copy()


# --------------------------------------------------------------------------------------------
# Whole runs and the campaign overhead
# --------------------------------------------------------------------------------------------


def whole_run_rows() -> pd.DataFrame:
    """The published runs that print GPU-hours, or wall-clock days and a GPU count, for their tokens."""
    runs = calibration.runs()
    return runs[_is_whole(runs)].reset_index(drop=True)


def _is_whole(runs: pd.DataFrame) -> pd.Series:
    """Which rows are whole runs (GPU-hours, or days and a GPU count, for their tokens); each must say what its
    figure counts (``hours_counted``): a clear error names the first that does not."""
    has_total = runs["gpu_hours"].notna() | (runs["wall_clock_days"].notna() & runs["n_gpus"].notna())
    whole = has_total & runs["training_tokens"].notna()
    missing = whole & ~runs["hours_counted"].isin(HOURS_COUNTED)
    if missing.any():
        raise data.DataError(
            "data/published_runs.csv",
            f"whole run {runs.loc[missing, 'id'].iloc[0]!r} needs what its figure counts, one of {', '.join(HOURS_COUNTED)}",
            column="hours_counted",
        )
    return whole


def _plan_whole(r: dict[str, Any], coef: pf.Coefficients, eff: dict[str, float]) -> tuple[pd.Series, str]:
    """One whole run planned with ``coef`` and the stack efficiencies ``eff``, no campaign overhead: at its
    printed layout if it prints one, else at the planner's pick."""
    pinned = bool(printed_layout(r))
    req = published_request(r, pinned=pinned, stack_efficiency=eff[r["stack"]])
    best = _fastest(pl.evaluate(req, r["gpu"], coef))
    how = "its own layout" if pinned else "the planner's pick"
    return best.iloc[0], how


@functools.cache
def _whole_runs(data_dir: str) -> pd.DataFrame:
    rows = whole_run_rows()
    models = calibration.cv_models()
    full = (calibration.coefficients(), calibration.stack_efficiencies())
    groups = rows["cv_group"].to_numpy()
    out = []
    for r in rows.to_dict("records"):
        g = r["cv_group"]
        coef, eff = models.get(g, full)
        planned, how = _plan_whole(r, coef, eff)
        in_sample, _ = _plan_whole(r, *full)
        kind, published, column = _published(r)
        steady = r["hours_counted"] == "throughput"  # the figure is tokens over throughput: the steady state's
        value, value_in = (_planned(p, column, steady) for p in (planned, in_sample))
        out.append(
            {
                "id": r["id"],
                "kind": kind,
                "cv_group": g,
                "stack": r["stack"],
                "hours_counted": r["hours_counted"],
                "published": published,
                "planned": value,  # grouped cross-validation, no campaign overhead
                "planned_in_sample": value_in,
                "n_gpus": int(planned["n_gpus"]),
                "layout": layouts.label(planned),
                "how": how,
                "goodput": float(planned["goodput"]),
                "mfu": float(planned["mfu"]),
                "tokens_per_s_per_gpu": float(planned["tokens_per_s_per_gpu"]),
                "steady_ratio": float(planned["gpu_hours"] / planned["steady_gpu_hours"]),
                **{f"plan_{c}": planned[c] for c in layouts.COLUMNS if c != "gpu"},
            }
        )
    frame = pd.DataFrame(out)
    campaign = frame["hours_counted"].isin(CAMPAIGNS).to_numpy()  # the rows the overhead is fitted on
    counted = (frame["hours_counted"] != "throughput").to_numpy()  # the rows it applies to
    excess = np.log(frame["published"] / frame["planned"]).to_numpy()
    frame["campaign_cv"] = np.where(counted, [_campaign(excess[campaign & (groups != g)]) for g in groups], 0.0)
    frame["predicted"] = frame["planned"] * (1.0 + frame["campaign_cv"])
    frame["log_error"] = np.log(frame["published"] / frame["predicted"])  # ln(published / predicted time)
    excess_in = np.log(frame["published"] / frame["planned_in_sample"]).to_numpy()
    frame["predicted_in_sample"] = frame["planned_in_sample"] * (1.0 + np.where(counted, _campaign(excess_in[campaign]), 0.0))
    frame["log_error_in_sample"] = np.log(frame["published"] / frame["predicted_in_sample"])
    return frame


def _published(r: dict[str, Any]) -> tuple[str, float, str]:
    """A whole run's kind (GPU-hours or wall-clock days), its published figure and the plan's column to compare."""
    if r["gpu_hours"] == r["gpu_hours"]:
        return "GPU-hours", float(r["gpu_hours"]), "gpu_hours"
    return "wall-clock days", float(r["wall_clock_days"]), "days"


def _planned(planned: pd.Series, column: str, steady: bool) -> float:
    """A plan's GPU-hours or days: the whole run's, or the steady state's alone (``steady``: no data stall,
    failures or checkpoints, the time the plan's throughput gives its tokens)."""
    value = float(planned[column])
    return value * float(planned["steady_gpu_hours"] / planned["gpu_hours"]) if steady else value


def _campaign(excess: np.ndarray) -> float:
    """The campaign overhead from the ``ln`` excesses of published whole runs over their plans: their median
    with :data:`CAMPAIGN_PRIOR_ROWS` excesses of none among them (shrunk toward none), never below none. A median,
    not a mean: a few published figures count more than one campaign (Llama 3.1 8B's 1.46M GPU-hours are
    some 2.7 times its plan) and would pull a mean toward them."""
    return float(np.expm1(max(np.median(np.r_[excess, np.zeros(int(CAMPAIGN_PRIOR_ROWS))]), 0.0)))


def whole_runs() -> pd.DataFrame:
    """Every published whole run: planned GPU-hours (or days) by grouped cross-validation, with the
    campaign overhead fitted without the run's group (``campaign_cv``), and in sample; the layout (its
    own, or the planner's pick) and the errors."""
    return _whole_runs(str(data.DATA_DIR)).copy()


def campaign_overhead() -> float:
    """A whole run's time beyond its steady state, data stall, failures and checkpoints, as a share:
    the median excess of every published whole run whose figure counts its jobs or its calendar
    (:func:`_campaign`)."""
    frame = whole_runs_planned()
    frame = frame[frame["hours_counted"].isin(CAMPAIGNS)]
    return _campaign(np.log(frame["published"] / frame["planned_in_sample"]).to_numpy())


def whole_runs_planned() -> pd.DataFrame:
    """:func:`whole_runs` (the name the campaign overhead's fit reads)."""
    return _whole_runs(str(data.DATA_DIR))


# --------------------------------------------------------------------------------------------
# What a plan carries
# --------------------------------------------------------------------------------------------


def terms(stack: str, holdout_sources: tuple[str, ...] = ()) -> dict[str, Any]:
    """The request fields of a plan on ``stack`` (an id or alias; the pooled one for ``unspecified``):
    ``stack_efficiency``, ``campaign_overhead``, and
    what the stack runs (``zero_stages``, ``model_parallel``); the efficiency fitted without rows citing
    ``holdout_sources``."""
    sid = stacks.stack_id(stack)
    return {
        "stack": sid,
        "stack_efficiency": calibration.stack_efficiency(sid, holdout_sources),
        "campaign_overhead": campaign_overhead(),
        **stacks.stack_rules(sid),
    }


def clear_cache() -> None:
    for fn in (_picks, _pick_predictions, _whole_runs):
        fn.cache_clear()


# --------------------------------------------------------------------------------------------
# A new row's first score
# --------------------------------------------------------------------------------------------


def first_scores(rows: pd.DataFrame) -> pd.DataFrame:
    """The model as it stands (fitted on the committed ``data/``, which must not hold ``rows``) against
    rows of ``data/published_runs.csv``'s columns: a whole run (GPU-hours, or days on a printed GPU
    count, for its tokens) planned as :func:`whole_runs` plans one, a steady-state row (layout and
    throughput printed) by the step-time model at its stack; columns ``id``, ``kind``, ``published``,
    ``predicted`` and ``first_score_error`` (``predicted / published − 1`` of tokens per second, GPU-hours
    or days: the schema's sign). The record a new row keeps whatever later fits do."""
    known = set(calibration.runs()["id"])
    clash = sorted(set(rows["id"]) & known)
    if clash:
        raise ValueError(f"rows already in data/published_runs.csv (scored before they were added): {', '.join(clash)}")
    frame = calibration.prepare(rows)
    whole_rows = _is_whole(frame).to_numpy()
    coef, eff = calibration.coefficients(), calibration.stack_efficiencies()
    terms = (coef, eff)
    overhead = campaign_overhead()
    out = []
    for r, whole in zip(frame.to_dict("records"), whole_rows, strict=True):
        if whole:
            planned, _ = _plan_whole(r, *terms)
            kind, published, column = _published(r)
            steady = r["hours_counted"] == "throughput"
            predicted = _planned(planned, column, steady) * (1.0 if steady else 1.0 + overhead)
        elif r["step_time_row"]:
            step = pf.step_time(coef, **calibration.inputs(pd.DataFrame([r])), stack_efficiency=eff[r["stack"]])
            kind, published = "step time", float(r["tokens_per_s_per_gpu"])
            predicted = float(step.tokens_per_s_per_gpu[0])
        else:
            raise ValueError(f"row {r['id']!r} is neither a whole run nor a steady-state row (layout and throughput)")
        out.append({"id": r["id"], "kind": kind, "published": published, "predicted": predicted})
    result = pd.DataFrame(out)
    result["first_score_error"] = result["predicted"] / result["published"] - 1.0
    return result
