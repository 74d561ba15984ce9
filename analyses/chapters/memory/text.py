"""The memory chapter's glued numbers and phrases: :func:`glued` maps every name its page glues to
text formatted through :mod:`analyses.units.formats`; the sentences live in the notebook's markdown,
and the phrases here branch on a verdict or a comparison, each ``fn(result) -> str``."""

from __future__ import annotations

from typing import Any

from analyses import data
from analyses.chapters.memory import HUNDRED_B, NO_FRAMEWORK, PLAN, SLUG, Result, layout_text, shape
from analyses.chapters.memory.figures import STACK
from analyses.models.uncertainty import INTERVAL_LEVEL
from analyses.pages import sliders
from analyses.scenario.generations import NEW, gpu
from analyses.units.formats import fmt, stated


def weights_takeaway(res: Result) -> str:
    """The 100B claim as judged: the total against the weights figure."""
    h = res.hundred_b
    total = "holds" if h.states_tb >= h.stated_total_tb else "does not hold at 16 bytes per parameter"
    if res.verdict(HUNDRED_B) == "inconsistent":
        return (
            f"the over-{stated(h.stated_total_tb)} TB total {total}, but {stated(h.stated_weights_gb)} GB is what the "
            f"weights take in FP32, not FP16: at {stated(h.weights_fp16_gb / h.params * 1e9)} bytes a parameter they "
            f"take {fmt(h.weights_fp16_gb)} GB"
        )
    return f"both the {stated(h.stated_weights_gb)} GB of FP16 weights and the over-{stated(h.stated_total_tb)} TB total {total}"


def layout_fit(res: Result) -> str:
    """Whether the page's layout fits, with what the check counts when a framework is set (starts with
    its punctuation: " (counting ...): it fits" or ": it does not fit")."""
    c, cfg = res.layout, res.cfg
    counting = (
        ""
        if cfg["framework"] == NO_FRAMEWORK
        else f" (counting what {cfg['framework']} keeps, the vocabulary, logits and the fitted allocator reserve)"
    )
    return f"{counting}: it {'fits' if c['fits'] else 'does not fit'}"


def hundred_b_takeaway(res: Result) -> str:
    """Does one GPU, or one B300 node, hold the 100B model's states; and the previous GPU against B300."""
    cfg, h = res.cfg, res.hundred_b
    gpus = res.hundred_b_gpus.set_index("GPU")["states only: GPUs (ZeRO-3)"]
    single = bool((gpus <= 1).any())
    node = gpu(NEW).nvlink_domain_gpus
    b300 = res.hundred_b_states_b300
    first = "a single GPU can hold" if single else "no single GPU holds"
    second = (
        "but a B300 node does" if b300 <= node else f"and not even a B300 node of {node} GPUs does"
    ) + f" (states alone need {stated(b300)} B300s)"
    text = f"{first} the states of a {fmt(h.params / 1e9, sig=2)}B-parameter model for training, {second}"
    prev, new = res.min_gpus(cfg["preset"], cfg["previous_gpu"]), res.min_gpus(cfg["preset"], NEW)
    label = shape(cfg["preset"])["label"]
    if prev is None or new is None:
        where = [f"the {g}" for g, n in ((cfg["previous_gpu"], prev), (NEW, new)) if n is None]
        return f"{text}; {label} fits no searched layout on {' or '.join(where)}"
    return f"{text}; for {label} the {cfg['previous_gpu']} needs {fmt(prev / new, 'x', sig=2)} as many GPUs as the B300"


def slider_caption(res: Result) -> str:
    """Caption of the framework-memory slider."""
    s = res.sliders[0]
    lead = "Move the memory a framework keeps on each GPU besides model states."
    if s.flips.empty:
        lead += " No value a reader may set flips these verdicts: they rest on datasheet capacities and byte counts."
    return sliders.caption(s, SLUG, lead)


BLOOM_RUN = "bloom-176b-final-tp4-pp12-mbs2"  # the trained BLOOM-176B layout (data/memory_measured.csv)


def _signed(x: float) -> str:
    """A relative error with its sign (+15%, -20%)."""
    return ("+" if x >= 0 else "") + fmt(x, pct=True, sig=2)


def misfit_sentence(res: Result) -> str:
    """Where the model misses: its median error by framework and pipelining, and the runs outside the band."""
    v = res.runs[res.runs["role"] == "validate"]
    tt = v[v["framework"] == "torchtitan-fsdp2"]
    piped = tt["layout"].str.extract(r"PP(\d+)", expand=False).astype(int) > 1
    groups = [
        ("torchtitan's runs without pipelining", tt[~piped]),
        ("its pipelined runs", tt[piped]),
        ("BLOOM's trials", v[v["framework"] == "megatron-deepspeed-bf16"]),
    ]
    parts = [f"{name} {_signed(g['error'].median())}" for name, g in groups if len(g)]
    out = v[~v["inside"].astype(bool)]
    tail = (
        "every validation run lies inside the band"
        if out.empty
        else "outside the band: "
        + "; ".join(f"{r['model']} ({r['layout']}, {_signed(r['error'])})" for r in out.to_dict("records"))
    )
    return f"Median error by group: {', '.join(parts)}; {tail}"


def layout_basis(res: Result) -> str:
    """What the layout check counts besides model states and activations."""
    cfg = res.cfg
    if cfg["framework"] == NO_FRAMEWORK:
        return (
            f"with the scenario's {fmt(res.s['framework_memory_gb'], 'GB', 2)} of framework memory (set the parameter framework "
            "to a row of data/memory_frameworks.csv to count what that framework keeps instead, as validated below)"
        )
    return (
        f"counting what {cfg['framework']} keeps (data/memory_frameworks.csv), the vocabulary and the loss's logits "
        f"on their stages, the layer rebuilt by recomputation, and the allocator reserve fitted on published runs "
        f"(×{fmt(res.s['memory_reserve_factor'], sig=3)} the bytes held, plus the CUDA context)"
    )


# long: one line per name the page glues (a table of formatted values, not logic to split)
def glued(res: Result) -> dict[str, Any]:
    """Every number and phrase the chapter's page glues, by name, formatted for the page."""
    b, h, cfg, c = res.bytes_per_param, res.hundred_b, res.cfg, res.layout
    pc = res.param_counts.dropna(subset=["error"])
    worst = pc.loc[pc["error"].abs().idxmax()]
    totals = res.accounting.groupby("part")["GB"].sum()
    plan, cap, hbm = data.claim(PLAN), res.plan_capacity, res.hbm
    err = res.measured_errors
    korth = err[(err["precision"] == "bf16") & (err["accounting"].str.startswith("activations: K"))].iloc[0]
    runs = res.runs
    val = runs[runs["role"] == "validate"]
    run_err, run_before = val["error"].abs(), val["before_error"].abs()
    bloom = runs.set_index("id").loc[BLOOM_RUN]
    reserve_lo, reserve_hi = res.reserve.band()
    return {
        "level": fmt(INTERVAL_LEVEL, pct=True, sig=2),
        # bytes per parameter and the 100B model
        "k_adam": fmt(b["k_adam"], "bytes", 2),
        "bpp_zero": fmt(b["zero"], "bytes", 2),
        "bpp_18": fmt(b["fp32_grads"], "bytes", 2),
        "bpp_fp32": fmt(b["fp32"], "bytes", 2),
        "bpp_fp8": fmt(b["fp8"], "bytes", 2),
        "n_100b": fmt(h.params, sig=2),
        "w16_100b": fmt(h.weights_fp16_gb, "GB"),
        "w32_100b": fmt(h.weights_fp32_gb, "GB"),
        "states_100b": fmt(h.states_tb, "TB"),
        "states18_100b": fmt(h.states_fp32_grads_tb, "TB"),
        "take_weights": weights_takeaway(res),
        "pc_worst": fmt(abs(float(worst["error"])), pct=True, sig=2),
        "pc_worst_model": worst["model"],
        "pc_worst_printed": f"{fmt(worst['published (B)'], sig=2)}B",
        "pc_worst_recomputed": f"{fmt(worst['recomputed (B)'])}B",
        "acc_precision": cfg["precision"],
        "acc_optimizer": cfg["optimizer"],
        "acc_stack": ", ".join(STACK),
        "seq_len": fmt(cfg["seq_len"]),
        "acc_recompute": cfg["recompute"],
        "acc_largest": max(STACK, key=lambda part: (totals.get(part, 0.0), part)),
        # activations and the layout
        "act_model": c["model"],
        "act_s": fmt(cfg["seq_len"], sig=7),
        "act_b": fmt(cfg["micro_batch"], sig=4),
        "act_t": fmt(cfg["tp"], sig=2),
        "act_layer": fmt(res.activation_layer_gb, "GB"),
        "act_none": fmt(res.activation_plain_gb, "GB"),
        "act_stage": fmt(c["activations"], "GB"),
        "layout_basis": layout_basis(res),
        "lay_n_gpus": fmt(cfg["n_gpus"]),
        "lay_gpu": cfg["gpu"],
        "lay_tp": str(cfg["tp"]),
        "lay_pp": str(cfg["pp"]),
        "lay_dp": str(c["dp"]),
        "lay_zero": str(cfg["zero_stage"]),
        "lay_total": fmt(c["total"], "GB"),
        "lay_usable": fmt(c["usable_gb"], "GB"),
        "layout_fit": layout_fit(res),
        "tp_max": fmt(res.search_limits["tp"]),
        "pp_max": fmt(res.search_limits["pp"]),
        "dp_max": fmt(res.search_limits["dp"]),
        # the 100B model's GPUs, the plan and HBM
        "hb_takeaway": hundred_b_takeaway(res),
        "plan_nodes": stated(plan.value("nodes_low")),
        "plan_gpus_per_node": stated(plan.value("gpus_per_node")),
        "plan_gpus": stated(cap["gpus"]),
        "plan_least": fmt(cap["least"]),
        "plan_most": fmt(cap["most"]),
        "plan_shape": shape(cfg["plan_preset"])["label"],
        "plan_params": f"{stated(plan.value('params') / 1e9)}B",
        "plan_fit": layout_text(res.plan_fit),
        "hbm_capacity": fmt(hbm["capacity_gb"], "GB"),
        "hbm_usable": fmt(hbm["usable_gb"], "GB"),
        "hbm_ratio": fmt(hbm["ratio"], "x"),
        "hbm_previous": fmt(hbm["previous_gb"], "GB"),
        "hbm_ratio_b200": fmt(hbm["ratio_b200"], "x"),
        "hbm_bandwidth": fmt(hbm["bandwidth_tb_s"]),
        "hbm_bandwidth_max": fmt(hbm["bandwidth_max_tb_s"]),
        "cap_allowance_slider": slider_caption(res),
        # validated against published measurements
        "zero_ex_n": f"{stated(res.zero_example['n_params'] / 1e9)}B",
        "zero_ex_dp": fmt(int(res.zero_example["dp"])),
        "meas_n": fmt(len(res.measured), sig=3),
        "meas_korth_lo": fmt(float(korth["min error"]), pct=True, sig=2),
        "meas_korth_hi": fmt(float(korth["max error"]), pct=True, sig=2),
        "runs_n": fmt(len(runs)),
        "reserve_fraction": fmt(res.reserve.fraction, pct=True, sig=2),
        "reserve_n": fmt(res.reserve.n),
        "reserve_lo": fmt(reserve_lo, "x", 2),
        "reserve_hi": fmt(reserve_hi, "x", 2),
        "alloc_before": fmt(res.s["framework_memory_gb"], "GB", 2),
        "runs_val": fmt(len(val)),
        "runs_median": fmt(run_err.median(), pct=True, sig=2),
        "runs_worst": fmt(run_err.max(), pct=True, sig=2),
        "runs_before_median": fmt(run_before.median(), pct=True, sig=2),
        "runs_before_worst": fmt(run_before.max(), pct=True, sig=2),
        "runs_inside": fmt(int(val["inside"].astype(bool).sum())),
        "bloom_measured": fmt(bloom["measured_gib"], "GiB", 2),
        "bloom_before": fmt(bloom["before_gib"], "GiB", 2),
        "bloom_before_error": fmt(bloom["before_error"], pct=True, sig=2),
        "bloom_predicted": fmt(bloom["predicted_gib"], "GiB", 3),
        "bloom_error": _signed(bloom["error"]),
        "bloom_gradients": fmt(bloom["gradients_gib"], "GiB", 2),
        "bloom_workspace": fmt(bloom["workspace_gib"], "GiB", 2),
        "misfit": misfit_sentence(res),
    }
