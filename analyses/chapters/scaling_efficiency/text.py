"""Sentences of the scaling-efficiency chapter (takeaways, captions), each ``fn(res) -> str`` from the :class:`Result`."""

from __future__ import annotations

import math

from analyses import data
from analyses.chapters.scaling_efficiency import SLUG, TABLE, Result
from analyses.pages import sliders
from analyses.units.formats import fmt, stated


def ethernet_takeaway(res: Result) -> str:
    """Takeaway of the Ethernet anecdote: the network per server that reproduces the stated speed-up."""
    e = res.ethernet
    x = fmt(e.stated_x, "x", sig=2)
    if not math.isfinite(e.gbit_per_gpu):
        return f"no network bandwidth reproduces the {x} story in the model."
    return (
        f"the {x} story is what {fmt(e.gbit_per_server, 'Gbit/s', 2)} of TCP Ethernet per server produces: a network "
        "problem, not a GPU one."
    )


def bandwidth_sentence(res: Result) -> str:
    """What network per GPU keeps the stated efficiency at a thousand GPUs on the reader's cluster."""
    n, how = fmt(res.thousand_gpus), "with the batch growing" if res.cfg["weak_scaling"] else "at a fixed batch"
    target = fmt(res.thousand_min, pct=True, sig=2)
    if not math.isfinite(res.bandwidth_90):
        return (
            f"No network keeps your cluster above {target} at {n} GPUs {how}: compute per GPU is then too short for any "
            "bandwidth to hide the latency and the rest of the step."
        )
    return f"Your cluster needs {fmt(res.bandwidth_90, 'Gbit/s')} per GPU to stay above {target} at {n} GPUs {how}."


def worst_validation(res: Result) -> str:
    """The validation row with the largest error and the calibration row it was predicted from."""
    val = res.validation
    rows = res.validated
    worst = rows.loc[rows["error"].abs().idxmax()]
    cal = val[(val["role"] == "calibrate") & (val["gpu"] == worst["gpu"]) & (val["precision"] == worst["precision"])]
    text = f"{worst['benchmark']} on {int(worst['n_gpus']):,} {worst['gpu']}s"
    if len(cal):
        c = cal.iloc[0]
        text += f", calibrated on {c['benchmark']} on {int(c['n_gpus']):,} GPUs"
    return text


def thousand_takeaway(res: Result) -> str:
    """Takeaway of the thousand-GPU section: weak against strong scaling."""
    return (
        f"a batch that grows with the cluster keeps {fmt(res.thousand_weak, pct=True)} at {fmt(res.thousand_gpus)} "
        f"GPUs; a fixed {fmt(res.s['batch_million_tokens'], sig=2)}M-token batch keeps {fmt(res.thousand_strong, pct=True)}, "
        "because each GPU's share of the compute shrinks while the gradient exchange does not."
    )


def slider_caption(res: Result, index: int = 0) -> str:
    """Caption of slider figure ``index``."""
    return sliders.caption(res.sliders[index], SLUG)


def stated_plus(res: Result) -> str:
    """The table's "+50%" as the document prints it."""
    return f"+{stated(data.claim(TABLE).value('increase_pct'))}%"
