"""The throughput chapter's glued numbers and phrases: :func:`glued` maps every name its page glues
to text formatted through :mod:`analyses.units.formats`; the sentences live in the notebook's
markdown, and the phrases here branch on a verdict or a comparison, each ``fn(result) -> str``."""

from __future__ import annotations

from typing import Any

from analyses import data, units
from analyses.chapters.throughput import SLUG, Result
from analyses.models.uncertainty import INTERVAL_LEVEL
from analyses.pages import sliders
from analyses.scenario.generations import NEW, OLD_MFU
from analyses.units.formats import billions, fmt, stated

STATED_RANGE = "000-3-table-throughput"
STATED_CLAIMS = ("000-2.1-per-gpu-2-3x", STATED_RANGE)  # the documents' two stated per-GPU ranges
MONTHS_TO_WEEKS = "000-6-months-to-weeks"
WORKED_EXAMPLE = "000-2.1-64x30-to-32x20"


def sibling_sentence() -> str:
    """B300 against B200, precision by precision, from the datasheet table."""
    new, old = data.gpu("B300"), data.gpu("B200")
    same, gains = [], []
    for p in ("bf16", "fp8", "fp4"):
        ratio = new.peak_flops(p) / old.peak_flops(p)
        (same if abs(ratio - 1) < 1e-9 else gains).append((p.upper(), ratio))
    text = "B300's dense " + " and ".join(p for p, _ in same) + " peaks equal B200's" if same else "B300"
    if gains:
        text += "; it gains over B200 in " + ", ".join(f"{p} ({fmt(r, 'x')})" for p, r in gains) + " only"
    return text + "."


def precision_takeaway(res: Result) -> str:
    """What a precision switch buys end to end, like with like, and what the scenario's speed-up asks of FP8."""
    ps = res.precision
    fp8 = ps[ps["baseline_precision"].eq("bf16") & ps["new_precision"].str.contains("fp8")]
    lo, hi = float(fp8["speedup_low"].min()), float(fp8["speedup_high"].max())
    inside = lo <= res.fp8_gain <= hi
    others = ps.drop(fp8.index)
    rest = (
        f" (the published switches from FP8 down to FP4 gain {fmt(float(others['speedup_low'].min()), 'x')} to "
        f"{fmt(float(others['speedup_high'].max()), 'x')}, another pair)"
        if not others.empty
        else ""
    )
    where = (
        "within that span" if inside else f"{'above' if res.fp8_gain > hi else 'below'} every measured BF16-to-FP8 gain"
    )
    return (
        f"count a switch from BF16 to FP8 as about {fmt(lo, 'x')} to {fmt(hi, 'x')} end to end, not the "
        f"{fmt(res.fp8_over_bf16, 'x')} of the dense peaks{rest}; the scenario's speed-up asks FP8 for "
        f"{fmt(res.fp8_gain, 'x')} over BF16 at equal MFU, {where}"
    )


def stated_takeaway(res: Result) -> str:
    """Where the stated 2.5-3x stands against the scenario's speed-up, as the ledger judged it."""
    span = f"{stated(res.stated_low)}-{stated(res.stated_high)}×"
    verdict = res.verdict(STATED_RANGE)
    expected = fmt(res.expected, "x")
    if verdict == "inconsistent":
        return f"at the scenario's {expected} the stated {span} understates {NEW}; it is the anecdotes that look modest"
    if verdict == "implausible":
        return f"at a speed-up of {expected} the stated {span} overstates {NEW}"
    return f"at a speed-up of {expected} the stated {span} holds within the capability tolerance"


def months_does(res: Result) -> str:
    """Whether the new GPU turns months into weeks, as the ledger judges the claim."""
    if res.verdict(MONTHS_TO_WEEKS) == "consistent":
        return "turns months into weeks"
    return "does not turn months into weeks"


def anecdotes_takeaway(res: Result) -> str:
    """How the anecdotes and the stated speed-ups stand against the scenario's speed-up, as judged."""
    x = res.expected
    implied = res.anecdotes["implied per-GPU speed-up"]
    below = int((implied <= x).sum())
    share = "every anecdote asks" if below == len(implied) else f"{below} of {len(implied)} anecdotes ask"
    words = {
        "inconsistent": "understates it",
        "implausible": "overstates it",
        "consistent": "holds",
        "unverifiable": "cannot be checked",
    }
    ranges = [
        f"the stated {stated(c.value('speedup_low_x'))}-{stated(c.value('speedup_high_x'))}× "
        f"{words.get(res.verdict(c.id), 'cannot be judged')} ({res.verdict(c.id)})"
        for c in (data.claim(i) for i in STATED_CLAIMS)
    ]
    return (
        f"{share} for no more per GPU than the scenario's {fmt(x, 'x')}, and an outcome one deployment reports may "
        f"fall short of the hardware; as claims of what {NEW} delivers, " + " and ".join(ranges)
    )


def slider_caption(res: Result, index: int) -> str:
    """Caption of slider figure ``index``."""
    return sliders.caption(res.sliders[index], SLUG)


def glued(res: Result) -> dict[str, Any]:
    """Every number and phrase the chapter's page glues, by name, formatted for the page."""
    quoted = res.quoted.set_index(["gpu", "precision"])
    h200, b300 = quoted.loc[("H200", "bf16")], quoted.loc["B300"]
    row = res.anecdotes.set_index("claim").loc[WORKED_EXAMPLE]
    c = data.claim(WORKED_EXAMPLE)
    g0, d0, g1, d1 = (c.value(k) for k in ("gpus_before", "days_before", "gpus_after", "days_after"))
    r, h, f = res.speedup, res.hundred_b, res.finetune
    per_week = units.DAYS_PER_MONTH / units.DAYS_PER_WEEK
    return {
        "level": fmt(INTERVAL_LEVEL, pct=True, sig=2),
        # peaks
        "h200_bf16_meas": fmt(h200["measured matmul TFLOP/s"], "TFLOP/s"),
        "h200_bf16_share": fmt(h200["measured matmul TFLOP/s"] / h200["peak TFLOP/s"], pct=True, sig=2),
        "b300_bf16": fmt(b300.loc["bf16", "peak TFLOP/s"], "TFLOP/s"),
        "b300_fp8": fmt(b300.loc["fp8", "peak TFLOP/s"], "TFLOP/s"),
        "sibling": sibling_sentence(),
        "fp8_over_bf16": fmt(res.fp8_over_bf16, "x"),
        "fp4_over_fp8": fmt(res.fp4_over_fp8, "x"),
        # precision
        "fp8_lo": fmt(res.precision["speedup_low"].min(), "x"),
        "fp8_hi": fmt(res.precision["speedup_high"].max(), "x"),
        "fp8_peak_ratio": fmt(res.fp8_over_bf16, "x"),
        "take_precision": precision_takeaway(res),
        # the scenario's speed-up
        "speedup_central": fmt(r.central, "x"),
        "speedup_low": fmt(r.low, "x"),
        "speedup_high": fmt(r.high, "x"),
        "mfu_a100": fmt(res.s[OLD_MFU], pct=True, sig=2),
        "mfu_b300": fmt(res.mfu_b300, pct=True, sig=2),
        "bf16_ratio": fmt(res.bf16_ratio, "x"),
        "fp8_ratio": fmt(res.fp8_ratio, "x"),
        "fp8_gain": fmt(res.fp8_gain, "x"),
        "pub_ratio": fmt(res.best_published, "x"),
        "take_stated": stated_takeaway(res),
        # the anecdotes
        "worked_g0": stated(g0),
        "worked_d0": stated(d0),
        "worked_g1": stated(g1),
        "worked_d1": stated(d1),
        "worked_x": fmt(row["implied per-GPU speed-up"]),
        "take_anecdotes": anecdotes_takeaway(res),
        "stated_span": f"{stated(res.stated_low)}-{stated(res.stated_high)}×",
        "cap_speedup_slider": slider_caption(res, 0),
        # months to weeks and the fine-tune
        "m100_tpp": fmt(res.s["tokens_per_param"]),
        "m100_params": billions(h.params),
        "m100_a100_many": fmt(h.months_a100_many, "months", 2),
        "m100_a100_few": fmt(h.months_a100_few, "months", 2),
        "m100_gpus_high": stated(h.gpus_high),
        "m100_gpus_low": stated(h.gpus_low),
        "m100_weeks_many": fmt(h.months_b300_many * per_week, "weeks", 2),
        "m100_weeks_few": fmt(h.months_b300_few * per_week, "weeks", 2),
        "m100_does": months_does(res),
        "stated_high": stated(res.stated_high),
        "m100_at_stated": fmt(h.months_a100_few / res.stated_high, "months", 2),
        "ft_params": f"{stated(f.params / 1e9)}B",
        "ft_samples": fmt(f.samples, sig=2),
        "ft_hours": fmt(f.hours, "hours", 2),
        "ft_gpus": stated(f.gpus),
        "ft_days": stated(f.days_stated),
        "ft_multiple": fmt(f.multiple, "x", 2),
        "cap_months_slider": slider_caption(res, 1),
    }
