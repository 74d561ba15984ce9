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
from analyses.units.formats import fmt
from analyses.verdicts import (
    RULES,
    VERDICTS,
    CheckFn,
    Finding,
    Interval,
    Rule,
    as_array,
    recomputed_figure,
    rule_clause,
    sentence,
    show,
    show_interval,
    verdict_codes,
)

# --------------------------------------------------------------------------------------------
# Assessing one claim: central verdict, robustness, flip point
# --------------------------------------------------------------------------------------------

DRAWS = 1000  # joint scenario draws per claim for `holds`
GRID = 41  # points per input across its 90% range for `flips_if`
DRAWS_SLOW, GRID_SLOW = 48, 9  # the same for checks that are not vectorised
DRAW_SEED = 2026  # every assumption has its own stream from this seed: every claim sees the same draws


class _Recorder(Mapping[str, Any]):
    """A read-only mapping that records which keys a check reads."""

    def __init__(self, values: Mapping[str, Any]):
        self._values, self.read = values, []

    def __getitem__(self, key: str) -> Any:
        if key not in self._values:
            raise KeyError(f"'{key}' is not an assumption of the scenario (data/scenario.csv)")
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
    sig: int = 3  # significant figures the check writes its figures to
    figure: str = ""  # the recomputed figure as the reason prints it (:func:`analyses.verdicts.recomputed_figure`)


def _call(fn: CheckFn, claim: data.Claim, s: Mapping[str, Any], cfg: Mapping[str, Any]) -> Finding:
    out = fn(claim, s, cfg)
    if not isinstance(out, Finding):
        raise TypeError(f"the check of {claim.id} returned {type(out).__name__}, not a Finding")
    return out


def _evaluate(
    fn: CheckFn, claim: data.Claim, batch: Mapping[str, np.ndarray], cfg: Mapping[str, Any], n: int, rule: Rule
):
    """(verdict codes, values) of the check on ``n`` scenario points."""
    if getattr(fn, "vectorised", True):
        f = _call(fn, claim, batch, cfg)
        return verdict_codes(f, rule, n), _bounds(f, n)
    codes, values = np.empty(n, dtype=int), np.empty((2, n))
    for i in range(n):
        point = {k: float(v[i]) for k, v in batch.items()}
        f = _call(fn, claim, point, cfg)
        codes[i] = verdict_codes(f, rule, 1)[0]
        values[:, i] = _bounds(f, 1)[:, 0]
    return codes, values


def _bounds(f: Finding, n: int) -> np.ndarray:
    """(2, n) array of the recomputed interval's low and high at each point (NaN when there is none)."""
    if f.value is None:
        return np.full((2, n), np.nan)
    value = as_array(f.value, n)
    lo = np.minimum(as_array(f.low, n), value) if f.low is not None else value
    hi = np.maximum(as_array(f.high, n), value) if f.high is not None else value
    return np.stack([lo, hi])


def assess(fn: CheckFn, claim: data.Claim, cfg: Mapping[str, Any], robust: bool = True) -> Assessment:
    """Run ``fn`` for ``claim``: its verdict at the central scenario (with ``cfg``'s overrides), how
    much of the scenario's range it holds in, and the nearest single-input flip."""
    rule = RULES[claim.kind]
    central = scenario.values(cfg)
    rec = _Recorder(central)
    f = _call(fn, claim, rec, cfg)
    code = int(verdict_codes(f, rule, 1)[0])
    verdict = VERDICTS[code]
    recomputed = f.recomputed() if callable(f.recomputed) else f.recomputed
    context = f.context(verdict) if callable(f.context) else f.context
    clauses = [rule_clause(f, rule, verdict), context]
    if f.strict is not None:
        strict = VERDICTS[int(verdict_codes(f, rule, 1, stated=f.strict)[0])]
        if strict != verdict:
            clauses.append(
                f"the strict reading ({show_interval(f.strict, f.unit, f.sig, as_stated=True)}) would make it {strict}"
            )
    value = None if f.value is None else float(np.asarray(f.value))
    inputs = tuple(k for k in rec.read if not scenario.ranges(cfg)[k].degenerate)
    holds, flips, flip, span = 1.0, "", None, None
    if robust and inputs and f.value is not None:
        holds, span, flip = _robustness(fn, claim, cfg, rule, code, inputs)
        if flip is not None:
            flips = flip["text"]
            what = f"{flip['verdict']} if {flip['label']} {flip['side']} {flip['threshold_text']}"
            clauses.append(f"it would turn {what}")
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
        sig=f.sig,
        figure=recomputed_figure(f) if value is not None else "",
    )


def _robustness(
    fn: CheckFn, claim: data.Claim, cfg: Mapping[str, Any], rule: Rule, code: int, inputs: Sequence[str]
) -> tuple[float, tuple[float, float] | None, dict[str, Any] | None]:
    """(holds, 90% range of the value, nearest flip) over the scenario ranges of ``inputs``."""
    vectorised = getattr(fn, "vectorised", True)
    n_draws, n_grid = (DRAWS, GRID) if vectorised else (DRAWS_SLOW, GRID_SLOW)
    ranges = scenario.ranges(cfg)
    draws = scenario.sample(inputs, n_draws, DRAW_SEED, cfg)
    z = np.linspace(-Z90, Z90, n_grid)
    blocks = {
        name: np.concatenate(
            [draws[name]]
            + [ranges[name].quantile(z) if other == name else np.full(n_grid, ranges[name].central) for other in inputs]
        )
        for name in draws
    }
    n = n_draws + n_grid * len(inputs)
    codes, values = _evaluate(fn, claim, blocks, cfg, n, rule)
    holds = float(np.mean(codes[:n_draws] == code))
    lows, highs = values[0, :n_draws], values[1, :n_draws]
    span = None
    if np.isfinite(lows).any() and np.isfinite(highs).any():
        tail = (1 - INTERVAL_LEVEL) / 2
        lo = np.quantile(lows[np.isfinite(lows)], tail, method="inverted_cdf")
        hi = np.quantile(highs[np.isfinite(highs)], 1 - tail, method="inverted_cdf")
        span = (float(lo), float(hi))
    best = None
    for k, name in enumerate(inputs):
        grid_codes = codes[n_draws + k * n_grid : n_draws + (k + 1) * n_grid]
        changed = np.flatnonzero(grid_codes != code)
        if changed.size == 0:
            continue
        i = changed[np.argmin(np.abs(z[changed]))]
        if best is None or abs(z[i]) < best[0]:
            # the flip lies between grid point i and its neighbour towards the centre: narrowed there
            j = i + 1 if z[i] < 0 else i - 1
            outside = float(ranges[name].quantile(z[i]))
            threshold = (
                refine_flip(fn, claim, cfg, name, float(ranges[name].quantile(z[j])), outside)
                if 0 <= j < n_grid
                else outside
            )
            best = (abs(z[i]), name, int(grid_codes[i]), threshold, "below" if z[i] < 0 else "above")
    flip = None
    if best is not None:
        _, name, new_code, threshold, side = best
        a = scenario.assumption(name)
        text_threshold = show(*in_ledger_currency(threshold, a.unit, scenario.values(cfg)), 2)
        flip = {
            "input": name,
            "label": a.label,
            "verdict": VERDICTS[new_code],
            "threshold": threshold,
            "threshold_text": text_threshold,
            "side": side,
            "text": f"{VERDICTS[new_code]} if {a.label} {'<' if side == 'below' else '>'} {text_threshold}",
        }
    return holds, span, flip


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
    codes, bounds = _evaluate(fn, claim, batch, cfg, xs.size, rule)
    return {"verdict": np.asarray(VERDICTS)[codes], "low": bounds[0], "high": bounds[1]}
