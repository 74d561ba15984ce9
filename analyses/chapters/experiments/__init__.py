"""Chapter ``experiments``: how many experiments a cluster can run, serially or side by side.

Checks document 001 part 2.5 (12 hyper-parameter sets, 36 days serially vs 9 days six at a time,
27 days early, 75% less labour; dozens of parallel experiments), part 2.1 (12 -> 8 rounds) and
part 4 (4 full runs + 6 comparisons a month); document 000 part 2.1 (1 -> 4 experiments a month)
and part 4 (1 -> 3 a month, monthly -> weekly updates).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import altair as alt
import numpy as np
import pandas as pd

from analyses import data
from analyses.chapters import scaling_efficiency as se
from analyses.chapters.params import ChapterSpec, Param
from analyses.models import experiments as ex
from analyses.models import scaling, units
from analyses.site.notebook import fmt, in_words, stated
from analyses.verdicts import Verdict, check

SWEEP = "001-2.5-hyperparam-sweep-36-to-9-days"
ROUNDS = "001-2.1-7b-experiments-12-to-8"


def _cluster_names() -> list[str]:
    return list(data.table("cluster_configs")["name"])


SPEC = ChapterSpec(
    slug="experiments",
    title="Experiments per month",
    params=(
        Param("e_full", "float", 0.8, "fraction", "parallel efficiency of one run on the whole cluster", 0.05, 1),
        Param("e_slice", "float", 0.95, "fraction", "parallel efficiency of one run on a 1/k slice", 0.05, 1),
        Param(
            "speedup",
            "float",
            1.0,
            "ratio",
            "new cluster's throughput relative to the old platform for the sweep",
            0.1,
            20,
        ),
        Param(
            "rate_tolerance",
            "float",
            0.5,
            "runs/month",
            "gap between recomputed and stated runs per month still called consistent",
            0,
            5,
        ),
        Param(
            "efficiency_source",
            "str",
            "parameters",
            "-",
            "where e_full and e_slice come from: the two parameters, or the scaling model for the cluster below",
            choices=("parameters", "model"),
        ),
        Param(
            "sweep_cluster",
            "str",
            "B300 + 800G IB",
            "-",
            "reference cluster (data/cluster_configs.csv) for the scaling model",
            choices=_cluster_names,
        ),
        Param("sweep_gpus", "int", 48, "GPUs", "GPUs of the cluster the sweep runs on (not stated)", 2, 131_072),
        Param("sweep_model_params", "float", 7e9, "parameters", "model size of each sweep run (not stated)", 1e8, 2e12),
        Param(
            "sweep_batch_tokens",
            "float",
            4e6,
            "tokens",
            "global batch of each run, the same on a slice as on the whole cluster",
            1e4,
            1e9,
        ),
        Param("sh_eta", "int", 3, "ratio", "successive halving: the best 1/eta of each rung go on", 2, 10),
        Param(
            "sh_min_budget",
            "float",
            0.1,
            "fraction",
            "successive halving: first rung's training as a share of a full run",
            0.001,
            1,
        ),
        Param("sh_resume", "bool", True, "-", "promoted runs continue from their checkpoint instead of restarting"),
        Param(
            "sh_rank_correlation",
            "float",
            0.7,
            "Spearman",
            "rank correlation between first-rung and final loss across configurations (assumed)",
            0.05,
            1,
        ),
    ),
)


# --------------------------------------------------------------------------------------------
# Parallel efficiencies: parameters or the scaling model
# --------------------------------------------------------------------------------------------


def _scaling_kwargs(cfg: Mapping[str, Any]) -> dict:
    """Step-time arguments for the sweep's cluster: the scaling chapter's defaults, this model size."""
    return se.config_kwargs(se.SPEC.defaults(), cfg["sweep_cluster"]) | {"params": cfg["sweep_model_params"]}


def model_efficiency(cfg: Mapping[str, Any], gpus: Any) -> np.ndarray:
    """Parallel efficiency (compute / step time) of one run on ``gpus`` GPUs from :mod:`analyses.models.scaling`.

    Strong scaling: the run keeps its global batch (its hyper-parameters) on any slice.
    """
    st = scaling.step_time(
        n_gpus=np.asarray(gpus, float), tokens_per_step=cfg["sweep_batch_tokens"], **_scaling_kwargs(cfg)
    )
    return np.asarray(st.efficiency, float)


def efficiencies(cfg: Mapping[str, Any]) -> dict[str, Any]:
    """The ``e_full``/``e_slice`` pair in use, the parameters' pair and the model's pair."""
    k = int(data.claim(SWEEP).value("concurrent_runs"))
    n = cfg["sweep_gpus"]
    model_full, model_slice = (float(v) for v in model_efficiency(cfg, [n, n / k]))
    use_model = cfg["efficiency_source"] == "model"
    return {
        "e_full": model_full if use_model else cfg["e_full"],
        "e_slice": model_slice if use_model else cfg["e_slice"],
        "source": cfg["efficiency_source"],
        "model_full": model_full,
        "model_slice": model_slice,
        "param_full": cfg["e_full"],
        "param_slice": cfg["e_slice"],
        "slice_gpus": n / k,
    }


def concurrency_efficiencies(cfg: Mapping[str, Any]) -> np.ndarray | None:
    """Efficiency with ``c = 1..k`` runs side by side (slices of ``n/c`` GPUs): the model's, or None.

    With ``efficiency_source = parameters`` the successive-halving schedule interpolates between
    the two parameters instead (see :func:`analyses.models.experiments.successive_halving_wall_days`).
    """
    if cfg["efficiency_source"] != "model":
        return None
    k = int(data.claim(SWEEP).value("concurrent_runs"))
    return model_efficiency(cfg, cfg["sweep_gpus"] / np.arange(1, k + 1))


def efficiency_table(cfg: Mapping[str, Any]) -> pd.DataFrame:
    """What efficiency pair 36 -> 9 days needs, beside the parameters' pair and the scaling model's."""
    c = data.claim(SWEEP)
    runs, serial = int(c.value("configs")), c.value("serial_days")
    k, target = int(c.value("concurrent_runs")), c.value("parallel_days")
    e = efficiencies(cfg)
    need = ex.required_efficiency_ratio(runs, serial, k, target, cfg["speedup"])
    rows = [
        (
            f"needed for {fmt(serial, 'days', sig=2)} -> {fmt(target, 'days', sig=2)} (model's e_slice)",
            e["model_slice"] / need,
            e["model_slice"],
        ),
        ("parameters e_full, e_slice", e["param_full"], e["param_slice"]),
        (
            f"scaling model: {cfg['sweep_cluster']}, {cfg['sweep_gpus']:,} vs {e['slice_gpus']:g} GPUs, "
            f"{fmt(cfg['sweep_model_params'] / 1e9, sig=3)}B parameters",
            e["model_full"],
            e["model_slice"],
        ),
    ]
    frame = pd.DataFrame(rows, columns=["efficiencies", "e_full", "e_slice"])
    frame["e_slice / e_full"] = frame["e_slice"] / frame["e_full"]
    frame["sweep days"] = [
        ex.concurrent_days(runs, serial / runs, k, f, sl, cfg["speedup"])
        for f, sl in zip(frame["e_full"], frame["e_slice"], strict=True)
    ]
    return frame


def sweep(cfg: Mapping[str, Any]) -> dict[str, float]:
    """Serial and concurrent duration of the stated sweep and the speedup 9 days needs."""
    c = data.claim(SWEEP)
    runs, serial = int(c.value("configs")), c.value("serial_days")
    k, target = int(c.value("concurrent_runs")), c.value("parallel_days")
    per_run = serial / runs
    e = efficiencies(cfg)
    return {
        "runs": runs,
        "per_run_days": per_run,
        "concurrent": k,
        "e_full": e["e_full"],
        "e_slice": e["e_slice"],
        "concurrent_days": ex.concurrent_days(runs, per_run, k, e["e_full"], e["e_slice"], cfg["speedup"]),
        "required_speedup": ex.required_speedup(runs, serial, k, target, e["e_full"], e["e_slice"]),
        "required_ratio": ex.required_efficiency_ratio(runs, serial, k, target, cfg["speedup"]),
        "target_days": target,
        "serial_days": serial,
    }


# --------------------------------------------------------------------------------------------
# Early stopping (successive halving)
# --------------------------------------------------------------------------------------------


def _noise(cfg: Mapping[str, Any]) -> float:
    return float(ex.noise_for_rank_correlation(cfg["sh_rank_correlation"]))


def early_stopping(cfg: Mapping[str, Any], configs: int | None = None, trials: int = 20_000) -> dict[str, Any]:
    """The stated sweep run as successive halving: compute, GPU-days, wall-clock and risk."""
    s = sweep(cfg)
    n = s["runs"] if configs is None else configs
    eta, r0, resume = cfg["sh_eta"], cfg["sh_min_budget"], cfg["sh_resume"]
    rungs = ex.successive_halving_rungs(n, eta, r0)
    full_runs = float(ex.successive_halving_full_runs(n, eta, r0, resume))
    wall = ex.successive_halving_wall_days(
        n,
        eta,
        r0,
        s["per_run_days"],
        s["concurrent"],
        s["e_full"],
        s["e_slice"],
        cfg["speedup"],
        resume=resume,
        e_by_concurrency=concurrency_efficiencies(cfg),
    )
    risk = ex.successive_halving_selection(n, eta, r0, noise=_noise(cfg), trials=trials, seed=0)
    gpu_days_per_run = s["per_run_days"] * cfg["sweep_gpus"]
    return {
        "configs": n,
        "rung_configs": [int(v) for v in rungs["configs"][rungs["active"]]],
        "rung_budgets": [float(v) for v in rungs["budget"][rungs["active"]]],
        "full_runs": full_runs,
        "fraction": full_runs / n,
        "gpu_days": float(ex.successive_halving_gpu_days(n, eta, r0, s["per_run_days"], cfg["sweep_gpus"], resume)),
        "gpu_days_all": n * gpu_days_per_run,
        "wall_days": wall,
        "p_best_kept": risk["p_best_kept"],
        "mean_regret": risk["mean_regret"],
        "noise": _noise(cfg),
    }


def rungs_table(cfg: Mapping[str, Any]) -> pd.DataFrame:
    """One row per rung of the sweep's successive-halving schedule."""
    es = early_stopping(cfg)
    budgets = np.array(es["rung_budgets"])
    previous = np.concatenate([[0.0], budgets[:-1]])
    added = budgets - previous if cfg["sh_resume"] else budgets
    return pd.DataFrame(
        {
            "rung": np.arange(1, budgets.size + 1),
            "configurations": es["rung_configs"],
            "share of a full run": budgets,
            "full runs of compute": np.array(es["rung_configs"]) * added,
        }
    )


def early_stopping_frames(cfg: Mapping[str, Any], trials: int = 20_000) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Compute share and P(best kept) against eta; P(best kept) against rank correlation per eta."""
    n = int(data.claim(SWEEP).value("configs"))
    r0, noise = cfg["sh_min_budget"], _noise(cfg)
    etas = np.arange(2, 7)
    by_eta = []
    for eta in etas:
        share = float(ex.successive_halving_cost(n, int(eta), r0, resume=cfg["sh_resume"]))
        p = ex.successive_halving_selection(n, int(eta), r0, noise=noise, trials=trials, seed=0)["p_best_kept"]
        by_eta += [
            {"eta": int(eta), "quantity": "share of the full sweep's compute", "value": share},
            {"eta": int(eta), "quantity": "P(best configuration kept)", "value": p},
        ]
    rows = []
    for eta in (2, 3, 4):
        for rc in np.round(np.linspace(0.3, 0.99, 12), 3):
            noise_rc = float(ex.noise_for_rank_correlation(rc))
            p = ex.successive_halving_selection(n, eta, r0, noise=noise_rc, trials=trials, seed=0)["p_best_kept"]
            rows.append({"rank correlation": float(rc), "eta": f"eta = {eta}", "P(best kept)": p})
    return pd.DataFrame(by_eta), pd.DataFrame(rows)


def early_stopping_chart(cfg: Mapping[str, Any]) -> alt.HConcatChart:
    """Left: what successive halving saves and risks against eta. Right: the risk against rank correlation."""
    by_eta, by_rc = early_stopping_frames(cfg)
    left = (
        alt.Chart(by_eta)
        .mark_line(point=True)
        .encode(
            x=alt.X("eta:O", title="eta (1 in eta configurations promoted)"),
            y=alt.Y("value:Q", scale=alt.Scale(domain=[0, 1]), axis=alt.Axis(format="%"), title=None),
            color=alt.Color("quantity:N", title=None, legend=alt.Legend(orient="bottom", direction="vertical")),
            tooltip=["eta", "quantity", alt.Tooltip("value:Q", format=".1%")],
        )
        .properties(width=260, height=240)
    )
    rule = (
        alt.Chart(pd.DataFrame({"rc": [cfg["sh_rank_correlation"]]}))
        .mark_rule(strokeDash=[4, 3], color="grey")
        .encode(x="rc:Q")
    )
    right = (
        alt.Chart(by_rc)
        .mark_line(point=True)
        .encode(
            x=alt.X(
                "rank correlation:Q", scale=alt.Scale(domain=[0.3, 1]), title="rank correlation, first rung vs final"
            ),
            y=alt.Y(
                "P(best kept):Q",
                scale=alt.Scale(domain=[0, 1]),
                axis=alt.Axis(format="%"),
                title="P(best configuration kept)",
            ),
            color=alt.Color("eta:N", title=None, legend=alt.Legend(orient="bottom", direction="vertical")),
            tooltip=["eta", "rank correlation", alt.Tooltip("P(best kept):Q", format=".1%")],
        )
        .properties(width=260, height=240)
    )
    return alt.hconcat(left, right + rule).resolve_scale(color="independent")


def single_cut_full_runs(configs: int) -> dict[str, float]:
    """Full-run equivalents of one early cut: eta 2 at half a run, eta 3 at a third (resuming)."""
    return {
        "half": float(ex.successive_halving_full_runs(configs, 2, 0.5, resume=True)),
        "third": float(ex.successive_halving_full_runs(configs, 3, 1 / 3, resume=True)),
    }


def timeline(cfg: Mapping[str, Any]) -> pd.DataFrame:
    """Gantt rows (lane, start, end) for the serial sweep and the concurrent one."""
    s = sweep(cfg)
    rows = [
        {
            "schedule": "serial, whole cluster",
            "run": i + 1,
            "start": i * s["per_run_days"],
            "end": (i + 1) * s["per_run_days"],
        }
        for i in range(s["runs"])
    ]
    per = s["concurrent_days"] / -(-s["runs"] // s["concurrent"])
    for i in range(s["runs"]):
        wave = i // s["concurrent"]
        rows.append(
            {
                "schedule": f"{s['concurrent']} at a time, 1/{s['concurrent']} cluster each",
                "run": i + 1,
                "start": wave * per,
                "end": (wave + 1) * per,
            }
        )
    return pd.DataFrame(rows)


def timeline_chart(cfg: Mapping[str, Any]) -> alt.LayerChart:
    """Serial vs concurrent timelines, the stated 9 days as a rule."""
    frame = timeline(cfg)
    bars = (
        alt.Chart(frame)
        .mark_bar(stroke="white")
        .encode(
            x=alt.X("start:Q", title="days"),
            x2="end:Q",
            y=alt.Y("run:O", title="run"),
            color=alt.Color("schedule:N", title=None),
            row=alt.Row("schedule:N", title=None),
        )
        .properties(width=480, height=160)
    )
    return bars


def runs_table() -> pd.DataFrame:
    """Runs per month implied by each anecdote's run length, beside the stated figure."""
    rows = []
    for cid, days_id, before, after in [
        ("000-2.1-13b-experiments-1-to-4", "000-2.1-13b-anecdote-days", "days_a100", "days_b300"),
        ("000-4-experiments-1-to-3", "000-4-training-days-28-to-11", "days_before", "days_after"),
    ]:
        c, d = data.claim(cid), data.claim(days_id)
        rows.append(
            {
                "claim": cid,
                "run days before": d.value(before),
                "run days after": d.value(after),
                "runs/month before": float(ex.runs_per_month(d.value(before))),
                "runs/month after": float(ex.runs_per_month(d.value(after))),
                "stated before": c.value("experiments_per_month_before"),
                "stated after": c.value("experiments_per_month_after"),
            }
        )
    return pd.DataFrame(rows)


def _rate_verdict(claim: data.Claim, cfg: Mapping[str, Any]) -> Verdict:
    row = runs_table().set_index("claim").loc[claim.id]
    recomputed = f"{fmt(units.DAYS_PER_MONTH, sig=3)} days / run length: {fmt(row['runs/month before'])} -> {fmt(row['runs/month after'])} runs per month"
    ok = (
        abs(row["runs/month after"] - row["stated after"]) <= cfg["rate_tolerance"]
        and abs(row["runs/month before"] - row["stated before"]) <= cfg["rate_tolerance"]
    )
    extra = ""
    if "increase_pct" in claim.values:
        ok = (
            ok
            and abs(
                (claim.value("experiments_per_month_after") / claim.value("experiments_per_month_before") - 1) * 100
                - claim.value("increase_pct")
            )
            < 1
        )
        extra = (
            f" and {stated(claim.value('experiments_per_month_after'))} is +{stated(claim.value('increase_pct'))}% "
            f"of {stated(claim.value('experiments_per_month_before'))}"
        )
    return Verdict(
        recomputed,
        "consistent" if ok else "inconsistent",
        f"Back-to-back runs of the stated length give the stated monthly count after rounding{extra}; the anecdote itself cannot be checked.",
    )


check("000-2.1-13b-experiments-1-to-4", "000-4-experiments-1-to-3")(_rate_verdict)


@check("000-4-monthly-to-weekly-updates")
def _check_weekly(claim: data.Claim, cfg: Mapping[str, Any]) -> Verdict:
    run = data.claim("000-4-training-days-28-to-11").value("days_after")
    after = claim.value("update_interval_after_days")
    return Verdict(
        f"a full training run takes {fmt(run, 'days')}, longer than the {fmt(after, 'day')} update interval",
        "inconsistent" if run > after else "consistent",
        f"Weekly updates cannot come from the case study's own {stated(run)}-day full training runs; they would need "
        "incremental training.",
    )


@check(ROUNDS)
def _check_rounds(claim: data.Claim, cfg: Mapping[str, Any]) -> Verdict:
    before, after = int(claim.value("experiment_rounds_before")), claim.value("experiment_rounds_after")
    cut = single_cut_full_runs(before)
    es = early_stopping(cfg, configs=before)
    recomputed = (
        f"{before} -> {after:g} rounds = {fmt(after / before, pct=True, sig=2)} of the runs; successive halving over "
        f"{before} configurations costs {fmt(cut['third'], sig=2)}-{fmt(cut['half'], sig=2)} full runs with one cut "
        f"(eta 3 at a third, eta 2 at half a run) and {fmt(es['full_runs'], sig=2)} with eta {cfg['sh_eta']} from "
        f"{fmt(cfg['sh_min_budget'], pct=True, sig=2)} of a run"
    )
    return Verdict(
        recomputed,
        "unverifiable",
        f"Early stopping alone can bring a {before}-configuration search down to the compute of {after:g} full runs or fewer, "
        "so the figure is possible, but the document credits faster convergence on B300, which shortens runs without reducing how many a "
        "search needs, and nothing public records this team's search.",
    )


@check("001-2.5-dozens-parallel-experiments")
def _check_dozens(claim: data.Claim, cfg: Mapping[str, Any]) -> Verdict:
    per_server = 8 * data.gpu("B300").mig_max_instances
    return Verdict(
        f"one 8-GPU B300 server offers {per_server} MIG instances; tracking tools handle hundreds of runs",
        "consistent",
        "Dozens of concurrent small experiments fit on a few servers, and experiment trackers manage that many routinely.",
    )


@check(SWEEP)
def _check_sweep(claim: data.Claim, cfg: Mapping[str, Any]) -> Verdict:
    s = sweep(cfg)
    es = early_stopping(cfg)
    recomputed = (
        f"{s['runs']} runs × {fmt(s['per_run_days'], 'days')} serially = {fmt(s['serial_days'], 'days')}; "
        f"{s['concurrent']} at a time on 1/{s['concurrent']} slices: {fmt(s['concurrent_days'], 'days')} "
        f"(efficiency {fmt(s['e_full'], pct=True, sig=2)} whole, {fmt(s['e_slice'], pct=True, sig=2)} slice, from the "
        f"{cfg['efficiency_source']}; speedup {fmt(cfg['speedup'])}); {fmt(s['target_days'], 'days')} needs a "
        f"{fmt(s['required_speedup'])}× faster cluster or e_slice/e_full = {fmt(s['required_ratio'], sig=2)}; "
        f"successive halving (eta {cfg['sh_eta']}) would take {fmt(es['wall_days'], 'days')}"
    )
    if s["concurrent_days"] <= s["target_days"] * 1.1:
        return Verdict(
            recomputed,
            "consistent",
            f"With this cluster speedup the concurrent sweep finishes in about {stated(s['target_days'])} days.",
        )
    return Verdict(
        recomputed,
        "inconsistent",
        f"Running {in_words(s['concurrent'])} at a time on the same cluster only trades whole-cluster efficiency for slice efficiency, so {stated(s['serial_days'])} -> {stated(s['target_days'])} days "
        f"needs a cluster about {fmt(s['required_speedup'], sig=2)} times faster; early stopping, which the document offers "
        f"only as a further tip, could reach {fmt(es['wall_days'], 'days')} but keeps the best configuration with probability "
        f"{fmt(es['p_best_kept'], pct=True, sig=2)} at the assumed rank correlation.",
    )


@check("001-2.5-labour-75pct")
def _check_labour(claim: data.Claim, cfg: Mapping[str, Any]) -> Verdict:
    c = data.claim(SWEEP)
    share = c.value("days_earlier") / c.value("serial_days")
    return Verdict(
        f"{fmt(c.value('days_earlier'), 'days')} / {fmt(c.value('serial_days'), 'days')} = {fmt(share, pct=True, sig=2)}",
        "consistent" if abs(share * 100 - claim.value("labour_saving_pct")) < 1 else "inconsistent",
        f"The arithmetic holds if labour scales with calendar days, but it inherits the {stated(c.value('parallel_days'))}-day "
        "figure, which the sweep check disputes.",
    )


@check("001-4-runs-per-month-4-plus-6")
def _check_4_plus_6(claim: data.Claim, cfg: Mapping[str, Any]) -> Verdict:
    run = data.claim("001-4-finetune-5-to-2p8-days").value("days_after")
    n = claim.value("full_runs_per_month") + claim.value("comparison_runs_per_month")
    busy = n * run
    return Verdict(
        f"{fmt(n)} runs × {fmt(run, 'days')} = {fmt(busy, 'days')} of {fmt(units.DAYS_PER_MONTH, 'days')} a month, even if comparisons are full-length",
        "consistent" if busy <= units.DAYS_PER_MONTH else "inconsistent",
        f"{in_words(n).capitalize()} runs of {stated(run)} days fit in a month on the two servers; the case itself cannot be checked.",
    )


# --------------------------------------------------------------------------------------------
# Prose: sentences whose conclusion depends on the data and parameters
# --------------------------------------------------------------------------------------------


def timeline_sentence(cfg: Mapping[str, Any]) -> str:
    """Caption sentence: when each schedule of :func:`timeline` ends."""
    s = sweep(cfg)
    serial, concurrent = s["per_run_days"] * s["runs"], s["concurrent_days"]
    text = f"The concurrent schedule ends after {fmt(concurrent, 'days', sig=3)}, the serial one after {fmt(serial, 'days', sig=3)}"
    if cfg["speedup"] == 1:
        return text + ": concurrency reorders the work without shrinking it."
    return text + f" (the concurrent lane runs on a cluster {fmt(cfg['speedup'], 'x', sig=2)} as fast)."


def sweep_takeaway(cfg: Mapping[str, Any]) -> str:
    """Takeaway of the serial-or-concurrent section."""
    s = sweep(cfg)
    if s["concurrent_days"] <= s["target_days"]:
        return f"at these parameters the concurrent sweep meets the stated {fmt(s['target_days'], 'days', sig=2)}."
    return (
        f"concurrency helps people see results together, and saves only what smaller runs gain in efficiency "
        f"(e_slice/e_full = {fmt(s['e_slice'] / s['e_full'], sig=3)}); the stated saving needs a "
        f"{fmt(s['required_speedup'], 'x', sig=2)} faster cluster, a smaller search, or stopping most runs early."
    )


def model_takeaway(cfg: Mapping[str, Any]) -> str:
    """Takeaway of the efficiency section: can the scaling model's efficiency pair give the stated saving?"""
    s, e = sweep(cfg), efficiencies(cfg)
    ratio = e["model_slice"] / e["model_full"]
    if ratio >= s["required_ratio"]:
        return (
            f"the scaling model's pair ({fmt(e['model_full'], pct=True, sig=3)} on the whole cluster, "
            f"{fmt(e['model_slice'], pct=True, sig=3)} on a slice) would give the speed-up the document states."
        )
    return (
        f"a cluster of this size already runs one job at {fmt(e['model_full'], pct=True, sig=3)} efficiency, so splitting "
        f"it into slices cannot give the speed-up the document states."
    )


def rounds_sentence() -> str:
    """Does a single early cut reach the 7B anecdote's reduced number of tuning rounds?"""
    c = data.claim(ROUNDS)
    cut = single_cut_full_runs(int(c.value("experiment_rounds_before")))
    if min(cut.values()) <= c.value("experiment_rounds_after"):
        return "A single early cut already lands there"
    return "A single early cut does not reach it"
