"""Sentences of the peers appendix (takeaways and the caption), each read from a computed Result.

Each conclusion is checked against the figures it rests on, so a new peer version or a change of
our models that breaks it changes the sentence rather than leaving it stale.
"""

from __future__ import annotations

from analyses.chapters.peers import Result
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
    """MLSys·im's step against ours and our pipeline sends (which it lacks); llm-analysis's lower bound."""
    gap, sends = res.sends["ours − MLSys·im (s)"], res.sends["our pipeline sends (s)"]
    ratio = sends / gap
    explained = bool(((gap > 0) & (sends >= gap)).all())
    ml = (
        f"MLSys·im and we are the same model up to the pipeline sends, which are {fmt(ratio.min(), 'x', 3)} to "
        f"{fmt(ratio.max(), 'x', 3)} the gap (MLSys·im's per-step framework overhead, which we do not model, offsets the rest)"
        if explained
        else "the pipeline sends do not account for the gap between MLSys·im's steps and ours"
    )
    la = (
        "llm-analysis gives a lower bound (compute only)"
        if res.facts["step_la_max"] < 0
        else "llm-analysis's step is not always below ours"
    )
    return f"for step time, {ml}; {la}"


def diff_caption(res: Result) -> str:
    f = res.facts
    states = (
        "MLSys·im matches our model states exactly"
        if f["mlsysim_states_max_diff"] < AGREE
        else f"MLSys·im's model states lie within {fmt(f['mlsysim_states_max_diff'], pct=True, sig=2)} of ours"
    )
    acts = "its activations are a fixed fraction of ours" if _activations_over_p(res) else "its activations differ"
    return (
        "Every difference between a peer and our models, by quantity (one tick per configuration; memory quantities "
        f"above, step-time quantities below). The grey band is the page's threshold of "
        f"{fmt(res.cfg['threshold'], pct=True, sig=2)}. {states} and our step times within "
        f"{fmt(max(abs(f['step_ml_min']), abs(f['step_ml_max'])), pct=True, sig=2)}; {acts}. llm-analysis's gradients "
        f"are a median {fmt(f['grad_median'], pct=True, sig=2)} above ours (fp32 against 16-bit gradients)."
    )


def summary_sentence(res: Result) -> str:
    n = len(res.differences)
    missing = len(res.unexplained)
    return (
        f"{n} peer-and-quantity pair{'s' if n != 1 else ''} differ by more than "
        f"{fmt(res.cfg['threshold'], pct=True, sig=2)} somewhere on the grid; "
        + ("each has its cause and evidence below" if missing == 0 else f"{missing} of them have no explanation yet")
    )
