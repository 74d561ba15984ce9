"""Sentences of the memory chapter (takeaways and captions), each read from a computed Result."""

from __future__ import annotations

from analyses import data
from analyses.chapters.memory import HUNDRED_B, NO_FRAMEWORK, PLAN, SLUG, Result, layout_text, shape
from analyses.chapters.memory.figures import STACK
from analyses.pages import sliders
from analyses.scenario.generations import NEW, OLD, gpu
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


def param_count_sentence(res: Result) -> str:
    """The presets' largest deviation from a printed parameter count."""
    pc = res.param_counts.dropna(subset=["error"])
    worst = pc.loc[pc["error"].abs().idxmax()]
    return (
        f"largest deviation {fmt(abs(float(worst['error'])), pct=True, sig=2)}, for {worst['model']}, printed as "
        f"\u201c{fmt(worst['published (B)'], sig=2)}B\u201d, which its own formula gives as {fmt(worst['recomputed (B)'])}B"
    )


def layout_sentence(res: Result) -> str:
    c, cfg = res.layout, res.cfg
    return (
        f"{c['model']} on {fmt(cfg['n_gpus'])} {cfg['gpu']} GPUs as TP{cfg['tp']} × PP{cfg['pp']} × DP{c['dp']}, "
        f"ZeRO-{cfg['zero_stage']}, needs {fmt(c['total'], 'GB')} per GPU against {fmt(c['usable_gb'], 'GB')} usable"
        + (
            ""
            if cfg["framework"] == NO_FRAMEWORK
            else f" (counting what {cfg['framework']} keeps, the vocabulary, logits and the fitted allocator reserve)"
        )
        + f": it {'fits' if c['fits'] else 'does not fit'}"
    )


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


def plan_sentence(res: Result) -> str:
    """The 4-8-node plan's memory: the largest model its smallest cluster holds, and the 10B model's fit."""
    c, cap = data.claim(PLAN), res.plan_capacity
    return (
        f"The plan's smallest cluster, {stated(c.value('nodes_low'))} nodes of {stated(c.value('gpus_per_node'))} "
        f"({stated(cap['gpus'])} B300s), holds the training states of a model of {fmt(cap['least'])} to "
        f"{fmt(cap['most'])} parameters; with the activations of the {shape(res.cfg['plan_preset'])['label']} shape "
        f"at {fmt(res.cfg['seq_len'])} tokens, the {stated(c.value('params') / 1e9)}B-parameter model fits on "
        f"{layout_text(res.plan_fit)} B300s in the chapter's recipe"
    )


def hbm_sentence(res: Result) -> str:
    h = res.hbm
    return (
        f"B300 carries {fmt(h['capacity_gb'], 'GB')} of HBM3e ({fmt(h['usable_gb'], 'GB')} usable), "
        f"{fmt(h['ratio'], 'x')} the {fmt(h['previous_gb'], 'GB')} of the {OLD} and {fmt(h['ratio_b200'], 'x')} "
        f"a B200's; its bandwidth is {fmt(h['bandwidth_tb_s'])} TB/s on the HGX B300 datasheet and "
        f"{fmt(h['bandwidth_max_tb_s'])} TB/s for the chip in NVIDIA's blog"
    )


def activation_takeaway(res: Result) -> str:
    return (
        "at long sequences the attention matrix dominates unless a fused kernel or selective recomputation removes it; "
        f"with the chapter's settings the first pipeline stage keeps {fmt(res.layout['activations'], 'GB')} of "
        "activations per GPU"
    )


# --------------------------------------------------------------------------------------------
# Captions
# --------------------------------------------------------------------------------------------


def accounting_caption(res: Result) -> str:
    """The accounting chart's caption: the stack's layers in their order from the bottom (the chart's
    :data:`~analyses.chapters.memory.figures.STACK`) and which dominates."""
    totals = res.accounting.groupby("part")["GB"].sum()
    largest = max(STACK, key=lambda p: (totals.get(p, 0.0), p))
    return (
        f"Bytes of one unsharded replica of each model, by part, in the chapter's recipe ({res.cfg['precision']}, "
        f"{res.cfg['optimizer']}), stacked from the bottom: {', '.join(STACK)}. Activations are for one micro-batch "
        f"of {fmt(res.cfg['seq_len'])} tokens at the chapter's recomputation setting ({res.cfg['recompute']}); symlog "
        f"scale. The largest layer is the {largest}."
    )


def zero_caption(res: Result) -> str:
    return (
        f"Memory per GPU of {res.layout['model']} against GPU count (TP{res.cfg['tp']} × PP{res.cfg['pp']} × data "
        "parallel) for each ZeRO stage, with the usable HBM of each GPU type as dashed rules. Without ZeRO the curve "
        "is flat: data parallelism alone never makes a model fit."
    )


def measured_caption(res: Result) -> str:
    return (
        "Model against measurement for each recorded configuration: relative error (model / measured − 1) against "
        "the measured bytes, one shape per accounting, filled for fp32 runs and open for bf16. Model states and the PyTorch-block accounting sit on zero; "
        "the Megatron accounting sits below zero in bf16 (autocast keeps LayerNorm inputs and softmax in fp32) and "
        "above it in fp32 (doubled, it counts dropout masks and a dropped-out attention copy the block does not have)."
    )


def slider_caption(res: Result) -> str:
    """Caption of the framework-memory slider."""
    s = res.sliders[0]
    lead = "Move the memory a framework keeps on each GPU besides model states."
    if s.flips.empty:
        lead += " No value a reader may set flips these verdicts: they rest on datasheet capacities and byte counts."
    return sliders.caption(s, SLUG, lead)


BLOOM_RUN = "bloom-176b-final-tp4-pp12-mbs2"  # the trained BLOOM-176B layout (data/memory_measured.csv)


def runs_takeaway(res: Result) -> str:
    """How the model does on the published runs it was not fitted on, against the accounting before."""
    v = res.runs
    val = v[v["role"] == "validate"]
    err, before = val["error"].abs(), val["before_error"].abs()
    return (
        f"on the {len(val)} runs it was not fitted on the model is off by {fmt(err.median(), pct=True, sig=2)} at the "
        f"median and {fmt(err.max(), pct=True, sig=2)} at worst (before: {fmt(before.median(), pct=True, sig=2)} and "
        f"{fmt(before.max(), pct=True, sig=2)}), and its 90% band holds {int(val['inside'].astype(bool).sum())} of them"
    )


def bloom_sentence(res: Result) -> str:
    """BLOOM-176B's trained layout: measured, predicted now and before, and what the difference is made of."""
    r = res.runs.set_index("id").loc[BLOOM_RUN]
    return (
        f"BLOOM-176B as trained (TP 4, PP 12, DP 8, micro-batch 2 on A100 80GB) peaked at {fmt(r['measured_gib'], 'GiB', 2)} "
        f"per GPU; the accounting before predicted {fmt(r['before_gib'], 'GiB', 2)} "
        f"({fmt(r['before_error'], pct=True, sig=2)}), the model now {fmt(r['predicted_gib'], 'GiB', 3)} "
        f"({'+' if r['error'] >= 0 else ''}{fmt(r['error'], pct=True, sig=2)}). The difference: gradients take "
        f"{fmt(r['gradients_gib'], 'GiB', 2)} (bf16, plus the fp32 buffer DeepSpeed's BF16 optimizer does not shard), "
        "the first stage holds the vocabulary embedding besides its layers, the layer rebuilt by recomputation takes "
        f"{fmt(r['workspace_gib'], 'GiB', 2)}, and the allocator reserves more than the tensors hold"
    )


def reserve_sentence(res: Result) -> str:
    """The fitted allocator overhead."""
    f = res.reserve
    lo, hi = f.band()
    return (
        f"a measured peak is reserved memory, {fmt(f.fraction, pct=True, sig=2)} above what the model's tensors "
        f"hold (fitted on {f.n} calibration runs; a new run lies within {fmt(lo, 'x', 2)} to {fmt(hi, 'x', 2)} of "
        "the prediction, 90% of the time)"
    )


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
    parts = [
        f"{name} {'+' if g['error'].median() >= 0 else ''}{fmt(g['error'].median(), pct=True, sig=2)}"
        for name, g in groups
        if len(g)
    ]
    out = v[~v["inside"].astype(bool)]
    tail = (
        "every validation run lies inside the band"
        if out.empty
        else "outside the band: "
        + "; ".join(
            f"{r['model']} ({r['layout']}, {'+' if r['error'] >= 0 else ''}{fmt(r['error'], pct=True, sig=2)})"
            for r in out.to_dict("records")
        )
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
