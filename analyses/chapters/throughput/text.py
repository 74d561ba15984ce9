"""Sentences of the throughput chapter (takeaways and captions), each read from a computed Result."""

from __future__ import annotations

from analyses import data, units
from analyses.chapters.throughput import SLUG, Result
from analyses.models.uncertainty import INTERVAL_LEVEL
from analyses.pages import sliders
from analyses.scenario.generations import NEW, OLD, OLD_MFU
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


def peak_sentence(res: Result) -> str:
    """How B300's dense peaks step up with precision."""
    return (
        f"On {NEW}, FP8 gives {fmt(res.fp8_over_bf16, 'x')} the dense BF16 peak "
        f"and FP4 {fmt(res.fp4_over_fp8, 'x')} the FP8 peak."
    )


def speedup_sentence(res: Result) -> str:
    """The scenario's B300/A100 speed-up with its range, and the B300 MFU it implies."""
    r = res.speedup
    return (
        f"The scenario puts B300 at {fmt(r.central, 'x')} an A100 per GPU ({fmt(INTERVAL_LEVEL, pct=True, sig=2)} "
        f"range {fmt(r.low, 'x')} to {fmt(r.high, 'x')}): with the A100 at {fmt(res.s[OLD_MFU], pct=True, sig=2)} "
        f"MFU, B300 reaches {fmt(res.mfu_b300, pct=True, sig=2)} of its FP8 peak"
    )


def worked_example(res: Result) -> str:
    """The implied per-GPU speed-up of the documents' GPU-count anecdote, as arithmetic."""
    row = res.anecdotes.set_index("claim").loc[WORKED_EXAMPLE]
    c = data.claim(WORKED_EXAMPLE)
    g0, d0, g1, d1 = (c.value(k) for k in ("gpus_before", "days_before", "gpus_after", "days_after"))
    return f"{stated(g0)} × {stated(d0)} / ({stated(g1)} × {stated(d1)}) = {fmt(row['implied per-GPU speed-up'])}"


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
        "within that span"
        if inside
        else f"{'above' if res.fp8_gain > hi else 'below'} every measured BF16-to-FP8 gain"
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


def months_takeaway(res: Result) -> str:
    """The 100B run on hundreds of A100s and as many B300s, and the months-to-weeks verdict."""
    h = res.hundred_b
    per_week = units.DAYS_PER_MONTH / units.DAYS_PER_WEEK
    weeks = (h.months_b300_many * per_week, h.months_b300_few * per_week)
    does = (
        "turns months into weeks" if res.verdict(MONTHS_TO_WEEKS) == "consistent" else "does not turn months into weeks"
    )
    at_stated = h.months_a100_few / res.stated_high
    return (
        f"trained on {fmt(res.s['tokens_per_param'])} tokens per parameter, a {billions(h.params)} model takes "
        f"{fmt(h.months_a100_many, 'months', 2)} to {fmt(h.months_a100_few, 'months', 2)} on {stated(h.gpus_high)} "
        f"to {stated(h.gpus_low)} {OLD}s and {fmt(weeks[0], 'weeks', 2)} to {fmt(weeks[1], 'weeks', 2)} on as "
        f"many {NEW}s: at the scenario's speed-up {NEW} {does}, where the documents' own "
        f"{stated(res.stated_high)}× would leave the slower run at {fmt(at_stated, 'months', 2)}"
    )


def anecdotes_takeaway(res: Result) -> str:
    """How the anecdotes and the stated speed-ups stand against the scenario's speed-up, as judged."""
    x = res.expected
    implied = res.anecdotes["implied per-GPU speed-up"]
    below = int((implied <= x).sum())
    share = "every anecdote asks" if below == len(implied) else f"{below} of {len(implied)} anecdotes ask"
    words = {"inconsistent": "understates it", "implausible": "overstates it", "consistent": "holds", "unverifiable": "cannot be checked"}
    ranges = [
        f"the stated {stated(c.value('speedup_low_x'))}-{stated(c.value('speedup_high_x'))}× "
        f"{words.get(res.verdict(c.id), 'cannot be judged')} ({res.verdict(c.id)})"
        for c in (data.claim(i) for i in STATED_CLAIMS)
    ]
    return (
        f"{share} for no more per GPU than the scenario's {fmt(x, 'x')}, and an outcome one deployment reports may "
        f"fall short of the hardware; as claims of what {NEW} delivers, " + " and ".join(ranges)
    )


def finetune_sentence(res: Result) -> str:
    """A month's new entries of the customer-service case against its stated fine-tune days."""
    f = res.finetune
    return (
        f"A full fine-tune of the {stated(f.params / 1e9)}B model on a month's {fmt(f.samples, sig=2)} new entries "
        f"takes {fmt(f.hours, 'hours', 2)} on {stated(f.gpus)} {OLD}s; the case's {stated(f.days_stated)} days "
        f"are {fmt(f.multiple, 'x', 2)} that, so its fine-tune must run over a corpus far larger than a month's "
        "additions, whose size the case does not give."
    )


# --------------------------------------------------------------------------------------------
# Captions
# --------------------------------------------------------------------------------------------


def ladder_caption(res: Result) -> str:
    return (
        "Dense peak, the matmul rate measured on one H200 and the best published model TFLOP/s per GPU, by "
        "generation and precision (log scale). Achieved rates sit well below peaks on every generation."
    )


def speedup_caption(res: Result) -> str:
    r = res.speedup
    return (
        f"Per-GPU speed-up each anecdote implies (bars) against the stated {stated(res.stated_low)}-"
        f"{stated(res.stated_high)}×, the scenario's speed-up of {fmt(r.central, 'x')} (shaded: its "
        f"{fmt(INTERVAL_LEVEL, pct=True, sig=2)} range, "
        f"{fmt(r.low, 'x')} to {fmt(r.high, 'x')}) and the datasheet ratios (dashed rules). A bar below the "
        "scenario's speed-up asks for no more than B300 delivers: an anecdote may fall short of the hardware."
    )


def slider_caption(res: Result, index: int) -> str:
    """Caption of slider figure ``index``."""
    return sliders.caption(res.sliders[index], SLUG)
