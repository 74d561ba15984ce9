"""The cost calculator wired to the scenario: every input declared from where the book already defines it.

:func:`system` builds the calculator (:mod:`analyses.models.calculator`, written once in the formula
language of :mod:`analyses.models.formula`) with each scenario assumption's label, unit, central
value and allowed bounds (:mod:`analyses.scenario`, ``data/scenario.csv``); the workload's bounds and
defaults from the parameters it is given (the planner's ``n_params``, ``tokens``, ``max_gpus``:
:func:`analyses.pages.calculator.system` passes them, since the planner is a chapter, above this
layer); each GPU's TDP from its datasheet; the achieved FLOP/s of the documents' two generations from
the scenario's MFU and speed-up (as :func:`analyses.scenario.generations.achieved_flop_per_s`).
The HTML fragment that runs a calculator in the page is :func:`analyses.pages.calculator.demo_html`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from analyses import data, scenario
from analyses.models import calculator, layouts
from analyses.models import plan as pl
from analyses.models.formula import Input, LogGrid, System
from analyses.scenario import buying, planning
from analyses.scenario import generations as ladder
from analyses.units import SECONDS_PER_DAY

FLOPS_SCALE, FLOPS_UNIT = 1e12, "TFLOP/s"  # how a page shows FLOP/s inputs


@dataclass(frozen=True)
class Case:
    """A document's case the calculator replays: the ledger claim whose recomputed figure its result
    ``result`` gives when a page sets :func:`case_values` (the speed-up of the claim's workload, a
    :data:`analyses.scenario.generations.WORKLOADS` key, and the bought GPU kept busy)."""

    claim: str
    workload: str
    baseline: str  # what the bought GPU replaces, as the buyer's frame has the document's status quo

    @property
    def result(self) -> str:
        """The calculator's result in the check's frame (analyses/scenario/frame.py): one new GPU bought
        instead of renting old ones in China (001's status quo), or instead of running owned old ones whose
        book value is spent (000's: the upgrade saves their running cost)."""
        new, old = ladder.NEW.lower(), ladder.OLD.lower()
        return f"payback_{new}_vs_rent_{old}_china" if self.baseline == "rent in China" else f"payback_{new}_vs_owned_{old}"


# The payback claims of both documents, each against its case's status quo (analyses/scenario/frame.py):
# 001's (its fine-tunes, rented A100s in China) first, the one the page's sentence judges; 000's (pretraining,
# its own A100s at book value) second.
CASES = (
    Case("001-6-payback-6-12-months", "finetune", "rent in China"),
    Case("000-6-payback-6-12-months", "pretrain", "keep owned"),
)


def case_values(case: Case, s: Mapping[str, Any]) -> dict[str, float]:
    """The inputs a page sets for ``case`` (the rest stay at the page's values): the per-GPU speed-up of
    the case's workload and an owned GPU busy every hour, as the ledger's check takes them."""
    return {calculator.SPEEDUP_GIVEN: float(np.asarray(ladder.speedup(s, case.workload))), calculator.BUSY: 1.0}


WORKLOAD = ("n_params", "tokens", "max_gpus")  # the parameters whose bounds and defaults the workload takes


def _workload_param(workload: Mapping[str, Any], name: str) -> Any:
    if name not in workload:
        raise KeyError(f"the workload's bounds have no parameter {name} (give {', '.join(WORKLOAD)})")
    return workload[name]


def scenario_input(name: str) -> Input:
    """An assumption of the scenario as a calculator input: its label, unit, central value and bounds."""
    a = scenario.assumption(name)
    return Input(name, a.label, a.unit, a.central, a.min, a.max)


def workload_inputs(generations: Sequence[str], workload: Mapping[str, Any]) -> dict[str, Input]:
    """Model parameters, training tokens and each generation's GPU count, bounded and defaulted as the
    parameters ``workload`` maps :data:`WORKLOAD` to (each with ``unit``, ``default``, ``min``, ``max``:
    the planner's ``n_params``, ``tokens`` (0: tokens per parameter x parameters) and ``max_gpus``)."""
    n, t, g = (_workload_param(workload, k) for k in WORKLOAD)
    out = {
        "n_params": Input("n_params", "model parameters", n.unit, n.default, n.min, n.max),
        "tokens": Input(
            "tokens", "training tokens (0: tokens per parameter × parameters)", t.unit, t.default, t.min, t.max
        ),
    }
    for name in generations:
        key = f"n_gpus_{name.lower()}"
        out[key] = Input(key, f"{name} GPUs", g.unit, g.default, g.min, g.max, integer=True)
    return out


def busy_share_input() -> Input:
    """The share of an owned GPU's calendar hours that carry work. The scenario takes an owned cluster
    to be kept scheduled by its owner's jobs (``data/scenario.csv``, ``utilisation``: "no hours without a
    job", the case most favourable to owning), so its default is 1; a reader's own share decides
    whether owning pays (:func:`analyses.scenario.buying.break_even_utilisation`)."""
    return Input(calculator.BUSY, "share of an owned GPU's hours in use", "fraction", 1.0, 0.01, 1.0)


def speedup_given_input(new: str, old: str) -> Input:
    """A per-GPU speed-up of ``new`` over ``old`` the reader (or a document's case) gives for the payback;
    0 keeps the planner's for the reader's run."""
    label = f"per-GPU speed-up of {new} over {old} for the payback (0: the planner's for this run)"
    return Input(calculator.SPEEDUP_GIVEN, label, "x", 0.0, 0.0, 100.0)


def achieved_input(gpu: str, default: float, low: float, high: float) -> Input:
    """An achieved FLOP/s per GPU input (shown in TFLOP/s)."""
    key = f"achieved_flop_per_s_{gpu.lower()}"
    return Input(
        key,
        f"achieved FLOP/s per GPU ({gpu})",
        "FLOP/s",
        default,
        low,
        high,
        scale=FLOPS_SCALE,
        display_unit=FLOPS_UNIT,
    )


def scenario_pair() -> tuple[str, str]:
    """(old, new): the generations the scenario's speed-up compares (A100, B300)."""
    return ladder.OLD, ladder.NEW


def system(
    generations: Sequence[str] | None = None,
    *,
    workload: Mapping[str, Any],
    grids: Mapping[str, LogGrid] | None = None,
    achieved: Mapping[str, tuple[float, float, float]] | None = None,
    currency: str = "USD",
    wall_clock: bool = False,
    extra: Sequence[Any] = (),
    constants: Mapping[str, float] | None = None,
    extra_grids: Mapping[str, LogGrid] | None = None,
    fits: Mapping[str, str] | None = None,
) -> System:
    """The calculator for ``generations`` (baseline first; the scenario's pair by default).

    Achieved FLOP/s per GPU: from ``grids[gpu]`` (interpolated over model parameters and GPUs) when
    given; else, for the scenario's pair, ``peak x mfu_a100_bf16`` and that ``x speedup_b300_a100``
    (those assumptions become inputs); else from ``achieved[gpu] = (default, low, high)`` as an input.
    Owned GPUs pay the tariff of ``electricity_usd_per_kwh`` (the documents' Chinese one, as the cost chapter).
    ``workload`` bounds and defaults the workload's inputs (:func:`workload_inputs`). ``wall_clock``:
    the grids are per wall-clock second of the run (:func:`throughput_grids`: failures included, so
    the run's GPU-hours do not divide by ``goodput`` or the job's busy share, and the reader may give the
    new generation's speed-up, :func:`speedup_given_input`). ``extra``, ``constants``, ``extra_grids``
    and ``fits`` add formulas and what they read (:func:`analyses.models.calculator.build`).
    """
    old, new = scenario_pair()
    names = list(generations) if generations is not None else [old, new]
    grids, achieved = dict(grids or {}), dict(achieved or {})
    peak_old = ladder.peak_flops(old)
    own: dict[str, Input] = workload_inputs(names, workload) | {
        "currency": calculator.currency_input(currency),
        calculator.BUSY: busy_share_input(),
    }
    given = wall_clock and bool(grids) and names[-1] == new
    if given:
        own[calculator.SPEEDUP_GIVEN] = speedup_given_input(new, old)
    gens = []
    for name in names:
        throughput: str | LogGrid | None
        if name in grids:
            throughput = grids[name]
        elif name == old:
            throughput = f"PEAK_FLOPS_{old} * {ladder.OLD_MFU}"
        elif name == new:
            throughput = f"PEAK_FLOPS_{old} * {ladder.OLD_MFU} * {ladder.SPEEDUP}"
        elif name in achieved:
            throughput = None
            own[f"achieved_flop_per_s_{name.lower()}"] = achieved_input(name, *achieved[name])
        else:
            raise ValueError(
                f"no achieved FLOP/s for {name}: pass grids[{name!r}] (the throughput model's grid) "
                f"or achieved[{name!r}] = (default, low, high)"
            )
        gens.append(
            calculator.Generation(
                name, data.gpu(name).tdp_w, throughput, wall_clock=wall_clock and isinstance(throughput, LogGrid)
            )
        )
    # The workload and choices first, then the scenario's assumptions in its order.
    inputs = own | {n: scenario_input(n) for n in scenario.assumptions() if n not in own}
    china = f"rent_{names[0].lower()}_china_cny_per_gpu_hour"
    return calculator.build(
        gens,
        inputs,
        china_rent=china if china in inputs else None,
        constants={f"PEAK_FLOPS_{old}": peak_old} | dict(constants or {}),
        extra=extra,
        grids=extra_grids,
        speedup_given=given,
        fits=fits,
    )


# --------------------------------------------------------------------------------------------
# Time per run from the planner: achieved FLOP/s per GPU over model sizes and GPU counts
# --------------------------------------------------------------------------------------------

# Model sizes the grid is planned at: four a decade (the planner's rate jumps where a generic shape's
# heads or layers change the layouts that fit, so coarser nodes miss it by more; see grid_errors).
GRID_PARAMS = tuple(float(f"{v:.3g}") for v in np.logspace(8, 12, 17)) + (2e12,)
GRID_MIN_GPUS = 8  # one 8-GPU node
# Significant digits of the grid's logs (about 35): 1e-3 relative, far inside the planner's own error. At 6 the
# last digit moved with the inputs' last bits (the step-time fit converges to a tolerance, not to the bit)
GRID_DIGITS = 5


def grid_gpu_counts(max_gpus: int) -> tuple[int, ...]:
    """GPU counts the grid is planned at: the planner's own cluster sizes (2^k and 3·2^k) from one node
    to ``max_gpus``."""
    return tuple(n for n in layouts.data_parallel_sizes(max_gpus) if n >= GRID_MIN_GPUS) + (
        () if max_gpus in layouts.data_parallel_sizes(max_gpus) else (max_gpus,)
    )


def planned_rates(
    gpu: str,
    n_params: float,
    counts: Sequence[int],
    s: Mapping[str, Any] | None = None,
    precision: str = "bf16",
) -> np.ndarray:
    """Achieved model FLOP/s per GPU per wall-clock second of a run of ``n_params`` (a generic shape)
    on ``gpu`` at each GPU count, as the planner gives it (:func:`analyses.scenario.planning.evaluate`:
    the fastest layout that fits on exactly that many GPUs; bubbles, communication, the data-loading
    stall, checkpoints and failures included): ``6 N T / (GPUs x wall-clock seconds)``.

    NaN where no layout fits on that many GPUs (too few for the model's memory; a count the batch
    cannot be split over)."""
    s = scenario.values() if s is None else s
    tokens = float(s["tokens_per_param"]) * n_params  # the rate does not depend on the tokens (time ∝ tokens)
    work = buying.Workload("grid", "grid", pl.Shape.from_params(n_params), tokens, 365.0)
    req = buying.request(work, s, gpu, precision, min_gpus=int(min(counts)), max_gpus=int(max(counts)))
    frame = planning.evaluate(req, gpu)
    frame = frame[frame["fits"]]
    fastest = frame.groupby("n_gpus")["days"].min()
    days = fastest.reindex([float(n) for n in counts]).to_numpy(float)
    return 6.0 * n_params * tokens / (np.asarray(counts, float) * days * SECONDS_PER_DAY)


def _filled(counts: np.ndarray, rates: np.ndarray) -> tuple[np.ndarray, float]:
    """A row of the grid without holes, and the fewest GPUs the model fits on: below that count the
    per-GPU rate of the fewest (the page flags the run as not fitting); between two planned counts
    log-log interpolation; above the largest usable count the extra GPUs idle (time stays)."""
    ok = np.isfinite(rates)
    if not ok.any():
        raise ValueError("no layout fits at any GPU count")
    first, last = np.flatnonzero(ok)[[0, -1]]
    out = rates.copy()
    out[:first] = rates[first]
    out[last + 1 :] = rates[last] * counts[last] / counts[last + 1 :]
    inner = ~np.isfinite(out)
    if inner.any():
        out[inner] = np.exp(np.interp(np.log(counts[inner]), np.log(counts[ok]), np.log(rates[ok])))
    return out, float(counts[first])


def throughput_grids(
    gpu: str,
    max_gpus: int,
    s: Mapping[str, Any] | None = None,
    precision: str = "bf16",
    sizes: Sequence[float] = GRID_PARAMS,
) -> tuple[LogGrid, LogGrid]:
    """The planner's achieved FLOP/s per GPU of ``gpu`` over model sizes x GPU counts (a wall-clock
    :class:`LogGrid`, see :func:`planned_rates`), and the fewest GPUs each size fits on (a grid over
    model sizes, constant in its dummy second axis), for the page to interpolate."""
    counts = np.asarray(grid_gpu_counts(max_gpus), float)
    rows, fewest = [], []
    for n in sizes:
        row, least = _filled(counts, planned_rates(gpu, n, counts.astype(int), s, precision))
        rows.append(row)
        fewest.append([least, least])
    return (
        LogGrid(tuple(sizes), tuple(counts), rows, digits=GRID_DIGITS),
        LogGrid(tuple(sizes), (1.0, 2.0), fewest, digits=GRID_DIGITS),
    )


def grid_errors(
    gpu: str,
    max_gpus: int,
    s: Mapping[str, Any] | None = None,
    precision: str = "bf16",
    grids: tuple[LogGrid, LogGrid] | None = None,
) -> np.ndarray:
    """Relative differences between the grid's interpolated rate and the planner's own, at the model
    sizes half-way (geometrically) between the grid's nodes and every planned GPU count the model fits
    on: what a reader's run between the nodes may be off by."""
    rate, fewest = throughput_grids(gpu, max_gpus, s, precision) if grids is None else grids
    counts = np.asarray(rate.y)
    out = []
    for a, b in zip(rate.x[:-1], rate.x[1:], strict=True):
        n = math.sqrt(a * b)
        planned = planned_rates(gpu, n, counts.astype(int), s, precision)
        fits = np.isfinite(planned) & (counts >= float(fewest(n, 1.0)) * 0.999)
        out.append(rate(n, counts[fits]) / planned[fits] - 1.0)
    return np.concatenate(out)
