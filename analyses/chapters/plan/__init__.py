"""Chapter ``plan``: from a model, its tokens and a deadline to GPUs, layout, time, goodput and cost.

No claims of its own: the chapter chains the book's models (:mod:`analyses.models.plan`) and replays
the documents' scenarios (the 13B run of 000 part 2.1, the 4-8-node plan of 000 part 5, the two
case studies) and one published run (Llama 3.1 405B on 16,384 H100) inside the planner.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import altair as alt
import numpy as np
import pandas as pd

from analyses import data, ledger
from analyses.chapters.params import ChapterSpec, Param
from analyses.models import plan as pl
from analyses.site.notebook import Table, table

GENERIC = "generic"


def _shape_choices() -> list[str]:
    return [*data.model_shape_names(), GENERIC]


def _preset_choices() -> list[str]:
    return ["none", *pl.preset_ids()]


SPEC = ChapterSpec(
    slug="plan",
    title="Plan your run",
    params=(
        Param(
            "preset",
            "str",
            "none",
            "-",
            "a scenario from data/plan_presets.csv; it replaces the model, tokens, GPUs, deadline, precision, "
            "batch and MTBF source wherever those are left at their defaults",
            choices=_preset_choices,
        ),
        Param(
            "model_shape",
            "str",
            "illustrative-100b",
            "-",
            "model shape (data/model_shapes.csv) or 'generic'",
            choices=_shape_choices,
        ),
        Param(
            "n_params", "float", 1e11, "parameters", "parameters of a generic shape (with model_shape generic)", 1e8, 1e13
        ),
        Param(
            "seq_len",
            "int",
            0,
            "tokens",
            "sequence length (0 for the shape's own; 4096 for a generic shape)",
            0,
            1_048_576,
        ),
        Param("tokens", "float", 2e12, "tokens", "training tokens", 1e6, 1e15),
        Param("deadline_days", "float", 30.0, "days", "wall-clock days the run must finish in", 0.01, 3650),
        Param(
            "precision", "str", "bf16", "-", "training precision (peak FLOP/s and memory recipe)", choices=pl.PRECISIONS
        ),
        Param(
            "gpus",
            "str_list",
            ["A100", "H100", "B200", "B300"],
            "-",
            "GPU generations to consider",
            choices=pl.supported_gpus,
        ),
        Param("min_gpus", "int", 8, "GPUs", "smallest cluster to consider", 1, 131_072),
        Param("max_gpus", "int", 4096, "GPUs", "largest cluster to consider", 1, 131_072),
        Param("global_batch_tokens", "float", 4 * 2**20, "tokens", "global batch per optimizer step", 1024, 1e9),
        Param(
            "mtbf_source",
            "str",
            "llama3-405b-unexpected",
            "-",
            "published interruption log that sets the per-GPU failure rate",
            choices=pl.failure_log_ids,
        ),
        Param(
            "checkpoint_gb_per_s_per_node",
            "float",
            1.0,
            "GB/s",
            "checkpoint write bandwidth per node (assumption)",
            0.01,
            1000,
        ),
        Param(
            "checkpoint_method",
            "str",
            "daly",
            "-",
            "optimal checkpoint interval: Young or Daly",
            choices=pl.CHECKPOINT_METHODS,
        ),
        Param(
            "restart_min", "float", 10.0, "minutes", "time to restart a job after an interruption (assumption)", 0, 1440
        ),
        Param(
            "loader_gb_per_s_per_node",
            "float",
            1.0,
            "GB/s",
            "input-pipeline read bandwidth per node (assumption)",
            0.001,
            1000,
        ),
        Param(
            "bytes_per_token",
            "float",
            4.0,
            "bytes",
            "input bytes read per training token (4 for int32 token ids)",
            0.1,
            1e6,
        ),
        Param(
            "overlap",
            "float",
            0.5,
            "fraction",
            "share of the gradient all-reduce hidden behind compute (the validated default)",
            0,
            1,
        ),
        Param(
            "overhead_gib",
            "float",
            5.0,
            "GiB",
            "framework memory per GPU (CUDA context, buffers, fragmentation)",
            0,
            64,
        ),
        Param(
            "compute_efficiency",
            "float",
            0.0,
            "fraction",
            "kernel efficiency (0 to calibrate on published throughput)",
            0,
            1,
        ),
        Param("rent_class", "str", "neocloud", "-", "rental price class", choices=pl.RENT_CLASSES),
        Param(
            "electricity_region", "str", "us", "-", "electricity tariff of owned GPUs", choices=pl.ELECTRICITY_REGIONS
        ),
        Param("depreciation_years", "float", 4.0, "years", "depreciation period of owned servers", 1, 10),
        Param("cost_of_capital", "float", 0.08, "1/year", "annual cost of capital (0 for straight-line depreciation)", 0, 0.5),
        Param("cost_basis", "str", "rented", "-", "cost the recommendation minimises", choices=pl.COST_BASES),
        Param("mc_samples", "int", 20_000, "draws", "Monte Carlo draws for the 90% intervals", 100, 1_000_000),
        Param("seed", "int", 2026, "-", "Monte Carlo seed (numpy PCG64)", 0, 2**31 - 1),
    ),
)

PRESET_FIELDS = (
    "model_shape",
    "n_params",
    "tokens",
    "gpus",
    "min_gpus",
    "max_gpus",
    "deadline_days",
    "precision",
    "global_batch_tokens",
    "mtbf_source",
)


def merged(cfg: Mapping[str, Any]) -> dict[str, Any]:
    """``cfg`` with its preset's values filled in wherever a field is left at its default."""
    out = dict(cfg)
    out["holdout_sources"] = []
    if cfg["preset"] != "none":
        p = pl.preset(cfg["preset"])
        defaults = SPEC.defaults()
        for name in PRESET_FIELDS:
            if name in p and cfg[name] == defaults[name]:
                out[name] = p[name]
        out["holdout_sources"] = p["holdout_sources"]
    return out


def request(cfg: Mapping[str, Any]) -> pl.Request:
    """The planner request of a (validated) chapter configuration."""
    m = merged(cfg)
    if m["model_shape"] == GENERIC:
        shape = pl.Shape.from_params(m["n_params"], m["seq_len"] or 4096)
    else:
        shape = pl.Shape.from_table(m["model_shape"], m["seq_len"] or None)
    names = set(pl.REQUEST_FIELDS) - {"shape"}
    kwargs = {k: m[k] for k in names if k in m}
    kwargs["gpus"] = tuple(m["gpus"])
    kwargs["holdout_sources"] = tuple(m["holdout_sources"])
    return pl.Request(shape=shape, **kwargs).validate()


def run(cfg: Mapping[str, Any]) -> tuple[pl.Request, pl.Plan]:
    req = request(cfg)
    return req, pl.plan(req)


# --------------------------------------------------------------------------------------------
# Tables and charts
# --------------------------------------------------------------------------------------------

LAYOUT_LABEL = "TP{tp} PP{pp} DP{dp} ZeRO-{zero_stage} mb{micro_batch} v{virtual_stages} {recompute}"


def layout_label(row: Mapping[str, Any]) -> str:
    """The whole layout in words: ``TP8 PP16 DP128 ZeRO-1 mb1 v2 selective``."""
    return LAYOUT_LABEL.format(**{k: row[k] for k in pl.candidates_columns() if k not in ("gpu", "n_gpus")})


def short_layout(row: Mapping[str, Any]) -> str:
    """Tensor × pipeline × data parallel sizes and ZeRO stage: ``8·16·128 Z1``."""
    return f"{row['tp']}·{row['pp']}·{row['dp']} Z{row['zero_stage']}"


def _range_m(lo: float, hi: float) -> str:
    return f"{lo / 1e6:.2f}-{hi / 1e6:.2f}" if np.isfinite(lo) else "n/a"


def recommended_table(p: pl.Plan) -> pd.DataFrame:
    """The recommended layout per generation with 90% intervals of days and cost."""
    rec = pl.intervals(p.request, p.recommended)
    rows = []
    for _, r in rec.iterrows():
        rows.append(
            {
                "GPU": r["gpu"],
                "GPUs": int(r["n_gpus"]),
                "TP·PP·DP ZeRO": short_layout(r),
                "micro-batch": int(r["micro_batch"]),
                "interleave": int(r["virtual_stages"]),
                "recompute": r["recompute"],
                "memory (GiB)": r["mem_bytes"] / 2**30,
                "MFU": r["mfu"],
                "goodput": r["goodput"],
                "days": r["days"],
                "days 5-95%": f"{r['days_lo']:.1f}-{r['days_hi']:.1f}",
                "rented (M USD)": r["cost_rented"] / 1e6,
                "rented 5-95%": _range_m(r["cost_rented_lo"], r["cost_rented_hi"]),
                "owned (M USD)": r["cost_owned"] / 1e6,
                "owned 5-95%": _range_m(r["cost_owned_lo"], r["cost_owned_hi"]),
                "meets": bool(r["meets_deadline"]),
                "kernel eff.": r["kernel_efficiency"],
                "eff. from": "calibrated" if p.efficiency_basis[r["gpu"]].startswith("calibrated") else "borrowed",
            }
        )
    return pd.DataFrame(rows)


def recommended_view(p: pl.Plan) -> Table:
    """:func:`recommended_table` formatted for the page."""
    return table(
        recommended_table(p),
        **{
            "memory (GiB)": "{:.0f}",
            "MFU": "{:.0%}",
            "goodput": "{:.1%}",
            "days": "{:.1f}",
            "rented (M USD)": "{:.2f}",
            "owned (M USD)": "{:.2f}",
            "kernel eff.": "{:.2f}",
        },
    )


def efficiency_table(p: pl.Plan) -> pd.DataFrame:
    """Where each generation's kernel efficiency comes from."""
    return pd.DataFrame({"GPU": list(p.efficiency_basis), "kernel efficiency": list(p.efficiency_basis.values())})


def pareto_chart(p: pl.Plan) -> alt.LayerChart:
    """Time vs cost: the cheapest layout of each GPU count (dots) and the Pareto front per generation with 90% intervals."""
    req = p.request
    front = pl.intervals(req, p.front)
    front = front.assign(layout=[layout_label(r) for _, r in front.iterrows()])
    # one dot per generation and GPU count (its cheapest layout) keeps the page small
    sample = p.layouts.sort_values("cost", kind="stable").drop_duplicates(["gpu", "n_gpus"])
    sample = sample[sample["days"] <= 4 * max(req.deadline_days, front["days"].min())]
    cloud = (
        alt.Chart(sample[["gpu", "days", "cost"]])
        .mark_circle(size=18, opacity=0.35)
        .encode(
            x=alt.X("days:Q", scale=alt.Scale(type="log"), title="wall-clock days"),
            y=alt.Y("cost:Q", scale=alt.Scale(type="log"), title=f"cost ({req.cost_basis}, USD)"),
            color=alt.Color("gpu:N", title="GPU"),
        )
    )
    cols = ["gpu", "days", "cost", "days_lo", "days_hi", "cost_lo", "cost_hi", "n_gpus", "layout"]
    pts = alt.Chart(front[cols]).encode(
        x="days:Q",
        y="cost:Q",
        color="gpu:N",
        tooltip=["gpu", "n_gpus", "layout", alt.Tooltip("days:Q", format=".1f"), alt.Tooltip("cost:Q", format=",.0f")],
    )
    line = pts.mark_line(point=True)
    xerr = (
        alt.Chart(front[cols]).mark_rule(opacity=0.5).encode(x="days_lo:Q", x2="days_hi:Q", y="cost:Q", color="gpu:N")
    )
    yerr = (
        alt.Chart(front[cols]).mark_rule(opacity=0.5).encode(y="cost_lo:Q", y2="cost_hi:Q", x="days:Q", color="gpu:N")
    )
    deadline = (
        alt.Chart(pd.DataFrame({"days": [req.deadline_days]}))
        .mark_rule(strokeDash=[4, 3], color="black")
        .encode(x="days:Q")
    )
    return (cloud + xerr + yerr + line + deadline).properties(width=520, height=340)


def breakdown_table(p: pl.Plan) -> pd.DataFrame:
    """Days per part of the recommended layout of each generation (long form)."""
    frames = [pl.breakdown(r, p.request).assign(gpu=r["gpu"]) for _, r in p.recommended.iterrows()]
    return pd.concat(frames, ignore_index=True)


def breakdown_chart(p: pl.Plan) -> alt.Chart:
    frame = breakdown_table(p)
    return (
        alt.Chart(frame)
        .mark_bar()
        .encode(
            y=alt.Y("gpu:N", title=None),
            x=alt.X("days:Q", title="wall-clock days of the recommended layout"),
            color=alt.Color("part:N", sort=list(pl.TIME_PARTS), title="where the time goes"),
            order=alt.Order("order:Q"),
            tooltip=["gpu", "part", alt.Tooltip("days:Q", format=".2f"), alt.Tooltip("share:Q", format=".1%")],
        )
        .transform_calculate(order=f"indexof({list(pl.TIME_PARTS)}, datum.part)")
        .properties(width=520, height=30 * frame["gpu"].nunique())
    )


def sensitivity_table(p: pl.Plan) -> pd.DataFrame:
    best = p.best
    return pl.sensitivity(p.request, best)


def sensitivity_chart(p: pl.Plan) -> alt.LayerChart:
    """Cost of the recommended layout with each input at its two extremes (a tornado)."""
    frame = sensitivity_table(p)
    base = float(p.best["cost"])
    bars = (
        alt.Chart(frame)
        .mark_bar()
        .encode(
            y=alt.Y("input:N", sort=list(frame["input"]), title=None),
            x=alt.X(
                "cost_a:Q", title=f"cost of the recommended {p.best['gpu']} layout (USD)", scale=alt.Scale(zero=False)
            ),
            x2="cost_b:Q",
            tooltip=["input", alt.Tooltip("cost_a:Q", format=",.0f"), alt.Tooltip("cost_b:Q", format=",.0f")],
        )
    )
    rule = alt.Chart(pd.DataFrame({"x": [base]})).mark_rule(color="black", strokeDash=[4, 3]).encode(x="x:Q")
    return (bars + rule).properties(width=420, height=26 * len(frame))


# --------------------------------------------------------------------------------------------
# Validation and presets
# --------------------------------------------------------------------------------------------

PUBLISHED_WITH_THROUGHPUT = "llama3-405b"  # the published run whose throughput rows are in the data


def preset_plan(preset_id: str, cfg: Mapping[str, Any]) -> tuple[pl.Request, pl.Plan, dict[str, Any]]:
    """Plan a preset with the chapter's other assumptions (checkpoint, restart, prices...)."""
    kept = {k: v for k, v in cfg.items() if k not in PRESET_FIELDS and k != "preset"}
    req, p = run(SPEC.validate(kept | {"preset": preset_id}))
    return req, p, pl.preset(preset_id)


def published_runs() -> list[str]:
    """Ids of the published-run presets, in table order."""
    return [pid for pid in pl.preset_ids() if pl.preset(pid)["kind"] == "published-run"]


def published_comparison(cfg: Mapping[str, Any]) -> pd.DataFrame:
    """Every published-run preset planned and compared with its published GPU-hours.

    Each run is planned as its preset says (its own throughput rows, if any, held out of the
    calibration); a run with held-out rows is planned a second time with them back in, to show how
    much the calibration on the run itself would flatter the planner.
    """
    rows = []
    for pid in published_runs():
        req, p, meta = preset_plan(pid, cfg)
        variants = [("held out" if req.holdout_sources else "not in the data", req, p)]
        if req.holdout_sources:
            inside = req.with_(holdout_sources=())
            variants.append(("in the calibration", inside, pl.plan(inside)))
        for label, _, plan_ in variants:
            r = plan_.recommended.iloc[0]
            rows.append(
                {
                    "preset": pid,
                    "run": meta["label"],
                    "run's own throughput": label,
                    "kernel efficiency": r["kernel_efficiency"],
                    "basis": plan_.efficiency_basis[r["gpu"]],
                    "layout": layout_label(r),
                    "MFU": r["mfu"],
                    "goodput": r["goodput"],
                    "days": r["days"],
                    "planned GPU-hours": r["gpu_hours"],
                    "published GPU-hours": meta["compare_gpu_hours"],
                    "error": r["gpu_hours"] / meta["compare_gpu_hours"] - 1.0,
                }
            )
    return pd.DataFrame(rows)


def out_of_sample(frame: pd.DataFrame) -> pd.DataFrame:
    """The rows of :func:`published_comparison` that exclude the run's own throughput."""
    return frame[frame["run's own throughput"] != "in the calibration"].reset_index(drop=True)


def comparison_view(frame: pd.DataFrame) -> Table:
    """:func:`published_comparison` formatted for the page (the layout and basis are in the prose)."""
    shown = frame.drop(columns=["preset", "basis", "layout"])
    return table(
        shown,
        **{
            "kernel efficiency": "{:.3f}",
            "MFU": "{:.1%}",
            "goodput": "{:.1%}",
            "days": "{:.1f}",
            "planned GPU-hours": "{:,.0f}",
            "published GPU-hours": "{:,.0f}",
            "error": "{:+.1%}",
        },
    )


def published_layout() -> str:
    """Tensor and pipeline sizes of the published run's largest throughput row (Llama 3 Table 4)."""
    bench = data.table("scaling_benchmarks")
    row = (
        bench[bench["source"].isin(pl.preset(PUBLISHED_WITH_THROUGHPUT)["holdout_sources"])]
        .sort_values("n_gpus")
        .iloc[-1]
    )
    return f"TP{row['tp']} PP{row['pp']}"


def presets_table(cfg: Mapping[str, Any]) -> pd.DataFrame:
    """Each document scenario planned: GPUs and layout that meet its stated days, time and cost."""
    rows = []
    for pid in pl.preset_ids():
        meta = pl.preset(pid)
        if meta["kind"] != "document-scenario":
            continue
        req, p, _ = preset_plan(pid, cfg)
        row = {
            "preset": pid,
            "scenario": meta["label"],
            "model": req.shape.name,
            "parameters": req.shape.n_params,
            "tokens": req.tokens,
        }
        row["stated days"] = req.deadline_days
        if p.recommended.empty:
            rows.append(row | {"TP·PP·DP ZeRO": "does not fit in memory"})
            continue
        r = p.recommended.iloc[0]
        rows.append(
            row
            | {
                "GPUs": int(r["n_gpus"]),
                "TP·PP·DP ZeRO": short_layout(r),
                "planned days": r["days"],
                "meets": bool(r["meets_deadline"]),
                "cost (USD)": r["cost"],
            }
        )
    return pd.DataFrame(rows)


def presets_view(cfg: Mapping[str, Any]) -> Table:
    """:func:`presets_table` formatted for the page."""
    frame = presets_table(cfg).drop(columns=["model"])
    return table(
        frame,
        **{
            "parameters": "{:.3g}",
            "tokens": "{:.2g}",
            "stated days": "{:g}",
            "planned days": "{:.2f}",
            "cost (USD)": "{:,.0f}",
        },
    )


def related_claims() -> list[str]:
    """Claim ids the presets replay, in table order."""
    out: list[str] = []
    for pid in pl.preset_ids():
        out += [c for c in pl.preset(pid)["claims"] if c not in out]
    return out


def related_ledger() -> pd.DataFrame:
    """The ledger rows (verdicts at each chapter's defaults) of the claims the presets replay."""
    return ledger.ledger(ids=related_claims())


def summary_text(req: pl.Request, p: pl.Plan) -> str:
    """The recommendation as plain text for the terminal."""
    s = req.shape
    lines = [
        f"Plan: {s.name}, {s.n_params / 1e9:.1f}B parameters, {req.tokens:.3g} tokens, "
        f"deadline {req.deadline_days:g} days, {req.precision}, cost basis {req.cost_basis}",
    ]
    if p.no_fit:
        lines.append(f"No layout fits in memory on: {', '.join(p.no_fit)}")
    if p.recommended.empty:
        return "\n".join(lines)
    frame = recommended_table(p)
    shown = frame.drop(columns=["memory (GiB)", "MFU", "goodput", "kernel eff.", "eff. from"])
    lines.append(shown.to_string(index=False, float_format=lambda x: f"{x:,.2f}"))
    best = p.best
    verdict = "meets the deadline" if best["meets_deadline"] else "is the fastest, but misses the deadline"
    lines.append(
        f"Recommended: {int(best['n_gpus'])} x {best['gpu']} ({layout_label(best)}), "
        f"{best['days']:.1f} days, {best['cost'] / 1e6:.2f} M USD ({req.cost_basis}); it {verdict}."
    )
    return "\n".join(lines)


PUBLISHED_TOLERANCE = 0.25
"""Relative error of the planned GPU-hours of the published run accepted as a pass (see the chapter)."""
