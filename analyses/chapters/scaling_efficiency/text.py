"""The scaling-efficiency chapter's glued numbers and phrases: :func:`glued` maps every name its page
glues to text formatted through :mod:`analyses.units.formats`; the sentences live in the notebook's
markdown, and the phrases here branch on a comparison, each ``fn(res) -> str``."""

from __future__ import annotations

import math
from typing import Any

from analyses import data
from analyses.chapters.scaling_efficiency import SLUG, TABLE, Result
from analyses.pages import sliders
from analyses.units.formats import fmt, stated

CLOSE = 0.10  # an error on a published scaling efficiency within this counts as close (the page says so)


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
    """The published scaling efficiency the model misses most, and its GPU counts."""
    rows = res.validated
    worst = rows.loc[rows["error"].abs().idxmax()]
    return f"{worst['job']}, {worst['GPUs']} {worst['gpu']}s"


def worst_direction(res: Result) -> str:
    """Whether the model's worst miss on published scaling over- or understates the efficiency."""
    rows = res.validated
    worst = rows.loc[rows["error"].abs().idxmax()]
    return "above" if worst["error"] > 0 else "below"


def slider_caption(res: Result, index: int = 0) -> str:
    """Caption of slider figure ``index``."""
    return sliders.caption(res.sliders[index], SLUG)


def stated_plus(res: Result) -> str:
    """The table's "+50%" as the document prints it."""
    return f"+{stated(data.claim(TABLE).value('increase_pct'))}%"


def glued(res: Result) -> dict[str, Any]:
    """Every number and phrase the chapter's page glues, by name, formatted for the page."""
    nvl, e = res.nvlink_gb, res.ethernet
    return {
        "a100_nvl": fmt(nvl["A100"], "GB/s"),
        "b300_nvl": fmt(nvl["B300"], "GB/s"),
        "nvl_ratio": fmt(nvl["B300"] / nvl["A100"], "x", 2),
        "a100_nvl_bi": fmt(2 * nvl["A100"], "GB/s"),
        "b300_nvl_bi": fmt(2 * nvl["B300"], "GB/s"),
        "stated_plus": stated_plus(res),
        "eff_max": fmt(float(res.your_curve["efficiency"].iloc[-1]), pct=True, sig=3),
        "n_max": fmt(res.cfg["gpus_max"]),
        "eth_x": fmt(e.stated_x, "x", 2),
        "eth_n1": fmt(int(e.gpus_after)),
        "eff90": fmt(res.thousand_min, pct=True, sig=2),
        "n_thousand": fmt(int(res.thousand_gpus)),
        "eth_n0": fmt(int(e.gpus_before)),
        "eth_ideal": fmt(e.ideal_x, "x", 2),
        "eth_model": fmt(e.model_x, "x"),
        "eth_gbit": fmt(e.gbit_per_gpu, "Gbit/s"),
        "eth_node": fmt(e.gbit_per_server, "Gbit/s"),
        "eth_share": fmt(e.lost, pct=True),
        "eth_cluster": e.cluster,
        "eth_takeaway": ethernet_takeaway(res),
        "thousand_weak": fmt(res.thousand_weak, pct=True),
        "thousand_strong": fmt(res.thousand_strong, pct=True),
        "batch_m": fmt(res.s["batch_million_tokens"], sig=2),
        "bandwidth_sentence": bandwidth_sentence(res),
        "slider_batch_caption": slider_caption(res, 0),
        "slider_share_caption": slider_caption(res, 1),
        "val_median": fmt(float(res.validated["error"].abs().median()), pct=True, sig=2),
        "val_max": fmt(float(res.validated["error"].abs().max()), pct=True, sig=2),
        "val_worst": worst_validation(res),
        "val_direction": worst_direction(res),
        "val_n": fmt(len(res.validated)),
        "val_close": fmt(CLOSE, pct=True, sig=2),
        "val_within_10": fmt(float((res.validated["error"].abs() <= CLOSE).mean()), pct=True, sig=2),
    }
