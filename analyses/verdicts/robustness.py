"""How robust a verdict is: the rule at the scenario's central values, over its 90% ranges, and its flip point.

:func:`assess` runs a claim's check (:mod:`analyses.verdicts`) once with the scenario's central
values (recording which assumptions the check reads) and once, vectorised, on joint draws of those
assumptions and on a one-input grid across each one's 90% range. The verdict at the central values
is the ledger's; ``holds`` is the share of draws in which the rule gives the same verdict, and
``flips_if`` names the single input whose smallest change within its range flips it, and the
threshold. :func:`sweep` evaluates a check along one assumption for the slider figures.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from analyses import data, scenario
from analyses.models.uncertainty import INTERVAL_LEVEL, Z90
from analyses.scenario import frame, generations, quantities
from analyses.units.formats import fmt, round_sig
from analyses.verdicts import (
    RULES,
    VERDICTS,
    CheckFn,
    Finding,
    Interval,
    Rule,
    as_array,
    direction,
    recomputed_figure,
    rule_clause,
    sentence,
    show,
    show_interval,
    verdict_codes,
)
from analyses.verdicts.doubt import DOUBT_HOLDS, Doubt, doubt_of  # noqa: F401 (DOUBT_HOLDS re-exported)

# --------------------------------------------------------------------------------------------
# Assessing one claim: central verdict, robustness, flip point
# --------------------------------------------------------------------------------------------

DRAWS = 1000  # joint scenario draws per claim for `holds`
NO_FIGURE = "nothing: no figure is recomputed, so no assumption turns it"  # flips_if of a row without a value
GRID = 41  # points per input across its 90% range for `flips_if`
BEYOND = 24  # points per side between the 90% range and the values a reader may set, for flips outside the range
DRAWS_SLOW, GRID_SLOW = 48, 9  # the same for checks that are not vectorised
DRAW_SEED = 2026  # every assumption has its own stream from this seed: every claim sees the same draws


class _Recorder(Mapping[str, Any]):
    """A read-only mapping that records which keys a check reads."""

    def __init__(self, values: Mapping[str, Any]):
        self._values, self.read = values, []

    def __getitem__(self, key: str) -> Any:
        if key not in self._values:
            raise data.DataKeyError("data/scenario.csv", f"no row for assumption '{key}', which a check reads", column="name")
        if key not in self.read:
            self.read.append(key)
        return self._values[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)


@dataclass(frozen=True)
class Assessment:
    """One ledger row's outcome: the check's words, the rule's verdict and its robustness."""

    claim: data.Claim
    kind: str
    recomputed: str
    verdict: str
    reason: str
    holds: float
    flips_if: str
    inputs: tuple[str, ...] = ()
    value: float | None = None
    value_range: tuple[float, float] | None = None
    stated: Interval | None = None
    unit: str = ""
    flip: dict[str, Any] | None = field(default=None, compare=False)
    direction: str = ""
    margin: float | None = None  # |flip point's score| / the 90% range's half-width: below 1 flips inside the range
    readings: tuple[tuple[str, str], ...] = ()  # (label, verdict) of every other reading at the central scenario
    quantities: tuple[tuple[str, tuple[Any, ...]], ...] = ()  # named quantities the check used, with their arguments
    sig: int = 3  # significant figures the check writes its figures to
    figure: str = ""  # the recomputed figure as the reason prints it (:func:`analyses.verdicts.recomputed_figure`)
    frame: tuple[frame.Choice, ...] = ()  # the buyer's frame the row judges in (analyses/scenario/frame.py)
    doubt: Doubt | None = None  # why the verdict may not be shown bare (:func:`doubt_of`); None when it may

    @property
    def shown(self) -> str:
        """The verdict as every page and download shows it: the verdict, or, when it is in doubt, what it
        depends on (:meth:`Doubt.text`)."""
        return self.verdict if self.doubt is None else self.doubt.text()


def _call(fn: CheckFn, claim: data.Claim, s: Mapping[str, Any], cfg: Mapping[str, Any]) -> Finding:
    out = fn(claim, s, cfg)
    if not isinstance(out, Finding):
        raise TypeError(f"the check of {claim.id} returned {type(out).__name__}, not a Finding")
    return out


def _evaluate(
    fn: CheckFn, claim: data.Claim, batch: Mapping[str, np.ndarray], cfg: Mapping[str, Any], n: int, rule: Rule
):
    """(verdict codes, values, codes under each other reading) of the check on ``n`` scenario points."""
    if getattr(fn, "vectorised", True):
        f = _call(fn, claim, batch, cfg)
        alts = [verdict_codes(g, rule, n) for _, g in f.alternatives()]
        return verdict_codes(f, rule, n), _bounds(f, n), np.array(alts, dtype=int).reshape(len(alts), n)
    codes, values, alts = np.empty(n, dtype=int), np.empty((2, n)), None
    for i in range(n):
        point = {k: float(v[i]) for k, v in batch.items()}
        f = _call(fn, claim, point, cfg)
        codes[i] = verdict_codes(f, rule, 1)[0]
        values[:, i] = _bounds(f, 1)[:, 0]
        others = f.alternatives()
        if alts is None:
            alts = np.empty((len(others), n), dtype=int)
        for k, (_, g) in enumerate(others):
            alts[k, i] = verdict_codes(g, rule, 1)[0]
    return codes, values, alts if alts is not None else np.empty((0, n), dtype=int)


def _bounds(f: Finding, n: int) -> np.ndarray:
    """(2, n) array of the recomputed interval's low and high at each point (NaN when there is none)."""
    if f.value is None:
        return np.full((2, n), np.nan)
    value = as_array(f.value, n)
    lo = np.minimum(as_array(f.low, n), value) if f.low is not None else value
    hi = np.maximum(as_array(f.high, n), value) if f.high is not None else value
    return np.stack([lo, hi])


def _reading_clause(f: Finding, verdict: str, others: Sequence[tuple[str, str]]) -> list[str]:
    """The reason's clause on the reading taken of the claim's words (the charitable one where the
    check names none but has others) and each other reading that would turn the verdict."""
    taken = f.taken or (f"charitably, {show_interval(f.stated, f.unit, f.sig, as_stated=True)}" if others else "")
    if not taken:
        return []
    turns = [
        f"read {'' if label.startswith('strictly') else 'as '}{label}, it would be {v}" for label, v in others if v != verdict
    ]
    return ["; ".join([f"reading taken: {taken}", *turns])]


def _flip_clauses(flip: Mapping[str, Any]) -> list[str]:
    """The reason's clauses on a flip point (and the key input's other side, and where it flips nothing)."""
    out = [
        f"it would turn {f['verdict']} if {f['label']} {f['side']} {f['threshold_text']}{f['range_text']}"
        for f in (flip, *flip.get("also", ()))
    ]
    return out + ([flip["steady"]["text"]] if "steady" in flip else [])


def assess(fn: CheckFn, claim: data.Claim, cfg: Mapping[str, Any], robust: bool = True) -> Assessment:
    """Run ``fn`` for ``claim``: its verdict at the central scenario (with ``cfg``'s overrides), how
    much of the readings x the scenario's range it holds in, its direction and the nearest
    single-input flip (outside the input's 90% range too)."""
    rule = RULES[claim.kind]
    central = scenario.values(cfg)
    rec = _Recorder(central)
    with quantities.recording() as used:  # the named quantities the check and its words use
        f = _call(fn, claim, rec, cfg)
        code = int(verdict_codes(f, rule, 1)[0])
        verdict = VERDICTS[code]
        recomputed = f.recomputed() if callable(f.recomputed) else f.recomputed
        context = f.context(verdict) if callable(f.context) else f.context
    choices = tuple(frame.lookup(*args, cfg=cfg) for name, args in used if name == "frame")
    used[:] = [u for u in used if u[0] != "frame"]
    clauses = [rule_clause(f, rule, verdict)]
    clauses += [c.clause() for c in f.credits if c is not f.contradicting_credit]
    clauses.append(context)
    alternatives = f.alternatives()
    if f.readings and not f.taken:
        raise ValueError(f"the check of {claim.id} gives other readings but does not name the one it takes (taken=)")
    others = tuple((label, VERDICTS[int(verdict_codes(g, rule, 1)[0])]) for label, g in alternatives)
    clauses += _reading_clause(f, verdict, others)
    if f.documents:
        at = [f"{r.label}: {VERDICTS[int(verdict_codes(r.apply(f), rule, 1)[0])]}" for r in f.documents]
        clauses.append("at the documents' own " + "; at ".join(at))
    value = None if f.value is None else float(np.asarray(f.value))
    inputs = tuple(k for k in rec.read if not scenario.ranges(cfg)[k].degenerate)
    holds, flips, flip, span, margin = 1.0, "", None, None, None
    if others:
        holds = float(np.mean([v == verdict for _, v in others] + [True]))
    if robust and inputs and f.value is not None:
        holds, span, flip = _robustness(fn, claim, cfg, rule, code, inputs, own_workload(used))
        if flip is not None and "verdict" not in flip:  # only the speed-up's statement that it flips nothing
            flips, flip = flip["text"], None
            clauses.append(flips)
        elif flip is not None:
            flips, margin = flip["text"], flip["margin"]
            clauses += _flip_clauses(flip)
    if f.value is None:  # nothing recomputed (a business result, an unstated size): no input can turn it
        flips = NO_FIGURE
    if choices:
        clauses.append(frame.words(choices))
    if span is not None and value is not None and span[0] < span[1]:
        recomputed = f"{recomputed} ({fmt(INTERVAL_LEVEL, pct=True, sig=2)} range over the scenario: {show_interval(span, f.unit, f.sig)})"
    return Assessment(
        claim=claim,
        kind=claim.kind,
        recomputed=recomputed,
        verdict=verdict,
        reason=sentence(*clauses),
        holds=round(holds, 2),
        flips_if=flips,
        inputs=inputs,
        value=value,
        value_range=span,
        stated=f.stated,
        unit=f.unit,
        flip=flip,
        direction=direction(f, rule, verdict),
        margin=margin,
        readings=others,
        quantities=tuple(used),
        sig=f.sig,
        figure=recomputed_figure(f) if value is not None else "",
        frame=choices,
        doubt=doubt_of(verdict, round(holds, 2), margin, flip, others),
    )


def beyond(name: str, r: Any) -> tuple[np.ndarray, np.ndarray]:
    """Values of assumption ``name`` between its 90% range (``r``) and the bounds a reader may set,
    :data:`BEYOND` on each side (geometric where the law is lognormal), and their scores in ``r``."""
    a = scenario.assumption(name)
    lo_bound, hi_bound = a.min, a.max
    if r.distribution == "logitnormal":
        lo_bound, hi_bound = max(lo_bound, 1e-4), min(hi_bound, 1 - 1e-4)
    if r.distribution == "lognormal":
        lo_bound = max(lo_bound, r.low * 1e-3, 1e-12)
        below = np.geomspace(lo_bound, r.low, BEYOND + 1)[:-1] if lo_bound < r.low else np.empty(0)
        above = np.geomspace(r.high, hi_bound, BEYOND + 1)[1:] if hi_bound > r.high else np.empty(0)
    else:
        below = np.linspace(lo_bound, r.low, BEYOND + 1)[:-1] if lo_bound < r.low else np.empty(0)
        above = np.linspace(r.high, hi_bound, BEYOND + 1)[1:] if hi_bound > r.high else np.empty(0)
    xs = np.concatenate([below, above])
    return xs, np.asarray(r.score(xs), dtype=float)


def own_workload(used: Sequence[tuple[str, tuple[Any, ...]]]) -> tuple[str, float] | None:
    """(label, factor) of the one workload other than the reference whose speed-up a row read
    (:func:`analyses.scenario.generations.speedup`), or None: a flip point on the scenario's speed-up
    (the reference workload's) is then also stated on the claim's own workload (factor × it)."""
    ids = {args[0] for name, args in used if name == "speedup" and args and isinstance(args[0], str)}
    own = {
        w: generations.workload_factor(w)
        for w in ids
        if w in generations.WORKLOADS and generations.model_workload(w) is not None
    }
    factors = {round(f, 6) for f in own.values()}
    if len(factors) != 1 or abs(next(iter(factors)) - 1) < 1e-6:
        return None
    w = sorted(own)[0]
    return generations.WORKLOADS[w].label, own[w]


def _value_span(lows: np.ndarray, highs: np.ndarray) -> tuple[float, float] | None:
    """The 90% range of a recomputed value over the draws (``lows``, ``highs``: each draw's span), or
    None where no draw recomputes it."""
    if not (np.isfinite(lows).any() and np.isfinite(highs).any()):
        return None
    tail = (1 - INTERVAL_LEVEL) / 2
    lo = np.quantile(lows[np.isfinite(lows)], tail, method="inverted_cdf")
    hi = np.quantile(highs[np.isfinite(highs)], 1 - tail, method="inverted_cdf")
    return float(lo), float(hi)


def _grid_flips(
    fn: CheckFn,
    claim: data.Claim,
    cfg: Mapping[str, Any],
    code: int,
    grids: Mapping[str, tuple[np.ndarray, np.ndarray]],
    codes: np.ndarray,
) -> dict[str, tuple]:
    """Each input's nearest flip on its grid (``grids``: values and scores; ``codes``: the verdict codes
    along the grids, input after input), narrowed between the last grid point that keeps verdict
    ``code`` and the first that turns it: (|score|, new code, threshold, side) by input, the key
    input's on each side (``<input>:below``, ``<input>:above``). An input whose first change lies no
    nearer than a flip already found is not narrowed."""
    found: dict[str, tuple] = {}
    start = 0
    for name, (xs, z) in grids.items():
        grid_codes = codes[start : start + xs.size]
        start += xs.size
        changed = np.flatnonzero(grid_codes != code)
        if changed.size == 0:
            continue
        sides = [changed[z[changed] < 0], changed[z[changed] > 0]] if name == KEY_INPUT else [changed]
        for side_points in sides:
            if side_points.size == 0:
                continue
            i = side_points[np.argmin(np.abs(z[side_points]))]
            key = name if name != KEY_INPUT else f"{name}:{'below' if z[i] < 0 else 'above'}"
            others = [v[0] for k, v in found.items() if not k.startswith(KEY_INPUT)]
            if name != KEY_INPUT and others and abs(z[i]) >= min(others):
                continue  # a nearer flip is known: no need to narrow this one
            # the flip lies between grid point i and its neighbour towards the centre: narrowed there
            j = i + 1 if z[i] < 0 else i - 1
            outside = float(xs[i])
            threshold = refine_flip(fn, claim, cfg, name, float(xs[j]), outside) if 0 <= j < xs.size else outside
            found[key] = (abs(z[i]), int(grid_codes[i]), threshold, "below" if z[i] < 0 else "above")
    return found


def _robustness(
    fn: CheckFn,
    claim: data.Claim,
    cfg: Mapping[str, Any],
    rule: Rule,
    code: int,
    inputs: Sequence[str],
    own: tuple[str, float] | None = None,
) -> tuple[float, tuple[float, float] | None, dict[str, Any] | None]:
    """(holds over readings x draws, 90% range of the value, nearest flip) over the scenario ranges
    of ``inputs``; the flip is searched across each input's 90% range and on to the values a reader
    may set, so a verdict that turns only outside the range still names where."""
    vectorised = getattr(fn, "vectorised", True)
    n_draws, n_grid = (DRAWS, GRID) if vectorised else (DRAWS_SLOW, GRID_SLOW)
    ranges = scenario.ranges(cfg)
    draws = scenario.sample(inputs, n_draws, DRAW_SEED, cfg)
    z_in = np.linspace(-Z90, Z90, n_grid)
    grids = {}
    for name in inputs:
        xs_out, z_out = beyond(name, ranges[name]) if vectorised else (np.empty(0), np.empty(0))
        xs = np.concatenate([ranges[name].quantile(z_in), xs_out])
        z = np.concatenate([z_in, z_out])
        order = np.argsort(z, kind="stable")
        grids[name] = (xs[order], z[order])
    blocks = {
        name: np.concatenate(
            [draws[name]]
            + [grids[other][0] if other == name else np.full(grids[other][0].size, ranges[name].central) for other in inputs]
        )
        for name in draws
    }
    n = n_draws + sum(g[0].size for g in grids.values())
    codes, values, alts = _evaluate(fn, claim, blocks, cfg, n, rule)
    holds = float(np.mean(np.concatenate([codes[:n_draws], *(a[:n_draws] for a in alts)]) == code))
    span = _value_span(values[0, :n_draws], values[1, :n_draws])
    found = _grid_flips(fn, claim, cfg, code, grids, codes[n_draws:])
    steady = None  # the speed-up read, searched over every value a reader may set, and no flip on it
    if KEY_INPUT in grids and vectorised and not any(k.startswith(KEY_INPUT) for k in found):
        a, xs = scenario.assumption(KEY_INPUT), grids[KEY_INPUT][0]
        steady = {
            "input": KEY_INPUT,
            "label": a.label,
            "text": f"no {a.label} from {show_interval((float(xs.min()), float(xs.max())), a.unit, 2)} turns it",
        }
    if not found and steady is None and vectorised:  # no input it reads turns it, anywhere a reader may set it
        steady = {"text": "no single input it reads turns it, from its 90% range to the values a reader may set"}
    if not found:
        return holds, span, steady
    nearest = min(found, key=lambda k: found[k][0])
    central = scenario.values(cfg)
    flip = _flip(nearest.split(":")[0], found[nearest], ranges[nearest.split(":")[0]], central, own)
    also = [
        _flip(KEY_INPUT, found[k], ranges[KEY_INPUT], central, own)
        for k in sorted(found)
        if k.startswith(KEY_INPUT) and k != nearest
    ]
    if also:
        flip["also"] = also
        flip["text"] = "; ".join([flip["text"], *(a["text"] for a in also)])
    if steady is not None:
        flip["steady"] = steady
        flip["text"] = f"{flip['text']}; {steady['text']}"
    return holds, span, flip


# The input whose flip point every row that reads it names, even when another input flips the verdict
# sooner: the per-GPU speed-up the documents' cost and time claims rest on.
KEY_INPUT = "speedup_b300_a100"


def _flip(
    name: str, hit: tuple, r: Any, s: Mapping[str, Any], own: tuple[str, float] | None = None
) -> dict[str, Any]:
    """A flip point as the ledger states it: the input, the verdict beyond, the threshold and how far
    it lies from the central value in units of the 90% range's half-width (``margin``); a flip on the
    scenario's speed-up (the reference workload's) also names the speed-up of the claim's own workload
    there (``own``: its label and the model's factor, :func:`own_workload`). Money reads in the ledger's
    currency (:func:`in_ledger_currency`, at the scenario ``s``'s exchange rate)."""
    _, new_code, threshold, side = hit
    a = scenario.assumption(name)
    text_threshold = show(*in_ledger_currency(threshold, a.unit, s), 2)
    # two significant figures before anything reads it: the flip point comes from a bisection, and a third
    # digit showed its tolerance (000 §6's margin read 3.19 or 3.20 by the CPU's code path). Inside follows
    # the figure shown, so a flip at the range's edge (margin 1.0) counts as in doubt: fragile looks fragile
    margin = round_sig(abs(r.score(threshold)) / Z90, 2)
    inside = margin <= 1.0
    low, unit = in_ledger_currency(r.low, a.unit, s)
    high, _ = in_ledger_currency(r.high, a.unit, s)
    shown_range = show_interval((low, high), unit, 2)
    range_text = "" if inside else f" (outside its 90% range, {shown_range})"
    return {
        "input": name,
        "label": a.label,
        "verdict": VERDICTS[new_code],
        "threshold": threshold,
        "threshold_text": text_threshold,
        "side": side,
        "margin": margin,
        "inside": inside,
        "range_text": range_text,
        "text": f"{VERDICTS[new_code]} if {a.label} {'<' if side == 'below' else '>'} {text_threshold}"
        + ("" if inside else f" (90% range {shown_range})")
        + (
            f", {show(threshold * own[1], a.unit, 2)} on the claim's own workload ({own[0]})"
            if own is not None and name == KEY_INPUT
            else ""
        ),
    }


def in_ledger_currency(x: float, unit: str, s: Mapping[str, Any]) -> tuple[float, str]:
    """An amount in an assumption's unit as the ledger writes it: money in the documents' RMB (a USD
    price at the scenario's exchange rate ``usd_cny``), anything else unchanged."""
    if str(unit).startswith("USD"):
        return float(x) * float(np.asarray(s["usd_cny"], dtype=float)), "RMB" + str(unit)[3:]
    if str(unit).startswith("CNY ") and not str(unit).startswith("CNY per USD"):
        return float(x), "RMB" + str(unit)[3:]  # one name for the currency: the documents' RMB
    return float(x), unit


REFINE_POINTS = 21  # points per narrowing round of a flip's bracket
REFINE_ROUNDS = 2  # rounds: the bracket shrinks to 1/400 of the grid step it started from


def refine_flip(
    fn: CheckFn, claim: data.Claim, cfg: Mapping[str, Any], name: str, inside: float, outside: float
) -> float:
    """Where the verdict of ``claim`` changes between ``inside`` (the verdict at the central
    scenario) and ``outside`` (another verdict), with the other assumptions central: the bracket
    is narrowed :data:`REFINE_ROUNDS` times over :data:`REFINE_POINTS` points and its midpoint
    returned. The ledger's ``flips_if`` and the sliders' flip marks both come from here, so they
    agree to the figures they show."""
    base = sweep(fn, claim, cfg, name, np.array([inside]))["verdict"][0]
    for _ in range(REFINE_ROUNDS):
        xs = np.linspace(inside, outside, REFINE_POINTS)
        changed = np.flatnonzero(sweep(fn, claim, cfg, name, xs)["verdict"] != base)
        if changed.size == 0 or changed[0] == 0:  # not monotone here: keep the bracket
            break
        inside, outside = float(xs[changed[0] - 1]), float(xs[changed[0]])
    return (inside + outside) / 2.0


def sweep(fn: CheckFn, claim: data.Claim, cfg: Mapping[str, Any], name: str, xs: np.ndarray) -> dict[str, np.ndarray]:
    """The check of ``claim`` with assumption ``name`` at each of ``xs`` and the rest central.

    Returns arrays ``verdict`` (names), ``low`` and ``high`` (the recomputed interval; equal for a
    point value) over ``xs``: what a slider over ``name`` shows for this claim.
    """
    rule = RULES[claim.kind]
    xs = np.asarray(xs, dtype=float)
    batch = {k: np.full(xs.size, v) for k, v in scenario.values(cfg).items()}
    batch[name] = xs
    codes, bounds, _ = _evaluate(fn, claim, batch, cfg, xs.size, rule)
    return {"verdict": np.asarray(VERDICTS)[codes], "low": bounds[0], "high": bounds[1]}
