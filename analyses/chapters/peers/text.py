"""The peers appendix's glued numbers and phrases: :func:`glued` maps every name its page glues to
text formatted through :mod:`analyses.units.formats`; the sentences live in the notebook's markdown,
and the phrases here branch on a comparison, each ``fn(result) -> str``.

Each conclusion is checked against the figures it rests on, so a new peer version or a change of
our models that breaks it changes the sentence rather than leaving it stale.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from analyses.chapters.peers import Result
from analyses.models import peers
from analyses.units.formats import fmt

AGREE = 1e-6  # differences below this are the table's 10-significant-digit rounding


def _states_agree(res: Result) -> bool:
    f = res.facts
    return f["mlsysim_states_max_diff"] < AGREE and f["grad_fp32_max_gap"] < res.cfg["threshold"]


def _activations_over_p(res: Result) -> bool:
    f = res.facts
    return abs(f["act_ratio_times_p_min"] - 1) < AGREE and abs(f["act_ratio_times_p_max"] - 1) < AGREE


def memory_takeaway(res: Result) -> str:
    states = (
        "on model states the three tools agree once conventions are aligned"
        if _states_agree(res)
        else "on model states the tools still differ after aligning conventions"
    )
    acts = (
        "on activations with pipelining, MLSys·im undercounts by the factor p"
        if _activations_over_p(res)
        else (
            f"on activations with pipelining, MLSys·im lies {fmt(res.facts['act_ml_worst'], pct=True, sig=3)} "
            "from ours at worst"
        )
    )
    return f"{states}; {acts}"


def step_takeaway(res: Result) -> str:
    """Whether MLSys·im's step differs from ours by the compute it is told (its 50% against our calibrated
    kernels), beside our pipeline sends; llm-analysis's lower bound."""
    gap = res.sends["ours − MLSys·im (s)"]
    compute = res.sends["our compute − the peers' (s)"]
    efficiency = res.sends["our compute efficiency"]
    same_sign = bool((np.sign(gap) == np.sign(compute)).all())
    ml = (
        "our step differs from MLSys·im's in the direction of our compute: our calibrated kernels reach "
        f"{fmt(efficiency.min(), pct=True, sig=2)} to {fmt(efficiency.max(), pct=True, sig=2)} of the peak on "
        f"these shapes against the {fmt(peers.MFU, pct=True, sig=2)} the peers are told, and our pipeline sends "
        "add to it"
        if same_sign
        else "the compute difference does not set the sign of the gap between MLSys·im's steps and ours"
    )
    la = (
        "llm-analysis gives a lower bound (compute only)"
        if res.facts["step_la_max"] < 0
        else "llm-analysis's step is not always below ours"
    )
    return f"for step time, {ml}; {la}"


def diff_states(res: Result) -> str:
    """MLSys·im's model states against ours: exactly equal, or within how much."""
    diff = res.facts["mlsysim_states_max_diff"]
    if diff < AGREE:
        return "MLSys·im matches our model states exactly"
    return f"MLSys·im's model states lie within {fmt(diff, pct=True, sig=2)} of ours"


def diff_acts(res: Result) -> str:
    """MLSys·im's activations against ours: a fixed fraction, or not."""
    return "its activations are a fixed fraction of ours" if _activations_over_p(res) else "its activations differ"


def summary_sentence(res: Result) -> str:
    n = len(res.differences)
    missing = len(res.unexplained)
    return (
        f"{n} peer-and-quantity pair{'s' if n != 1 else ''} differ by more than "
        f"{fmt(res.cfg['threshold'], pct=True, sig=2)} somewhere on the grid; "
        + ("each has its cause and evidence below" if missing == 0 else f"{missing} of them have no explanation yet")
    )


def glued(res: Result) -> dict[str, Any]:
    """Every number and phrase the appendix glues, by name, formatted for the page."""
    f = res.facts
    out: dict[str, Any] = {name: fmt(value) for name, value in res.counts.items()}
    out |= {
        "seq_len": fmt(peers.SEQ_LEN),
        "micro_batch": fmt(peers.MICRO_BATCH),
        "global_batch": fmt(peers.GLOBAL_BATCH),
        "mfu": fmt(peers.MFU, pct=True, sig=2),
        "threshold": fmt(res.cfg["threshold"], pct=True, sig=2),
        "diff_states": diff_states(res),
        "diff_acts": diff_acts(res),
        "step_ml_worst": fmt(max(abs(f["step_ml_min"]), abs(f["step_ml_max"])), pct=True, sig=2),
        "grad_median_2": fmt(f["grad_median"], pct=True, sig=2),
        "ml_states_max": fmt(f["mlsysim_states_max_diff"], pct=True, sig=2),
        "grad_median": fmt(f["grad_median"], pct=True, sig=3),
        "grad_fp32_gap": fmt(f["grad_fp32_max_gap"], pct=True, sig=2),
        "act_lo": fmt(f["act_ratio_times_p_min"], sig=4),
        "act_hi": fmt(f["act_ratio_times_p_max"], sig=4),
        "act_worst": fmt(f["act_ml_worst"], pct=True, sig=3),
        "llama_la": fmt(f["llama_llm_analysis"], sig=3),
        "llama_pub": fmt(f["llama_published"], sig=3),
        "llama_la_diff": fmt(f["llama_llm_analysis_diff"], pct=True, sig=3),
        "take_memory": memory_takeaway(res),
        "take_step": step_takeaway(res),
        "summary": summary_sentence(res),
    }
    out["eff_min"] = fmt(float(res.sends["our compute efficiency"].min()), pct=True, sig=2)
    out["eff_max"] = fmt(float(res.sends["our compute efficiency"].max()), pct=True, sig=2)
    for name in ("step_ml_min", "step_ml_max", "step_la_min", "step_la_max", "compute_la_min", "compute_la_max"):
        out[name] = fmt(f[name], pct=True, sig=2 if name.startswith(("step_ml", "compute")) else 3)
    return out
