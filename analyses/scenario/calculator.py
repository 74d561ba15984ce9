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

from collections.abc import Mapping, Sequence
from typing import Any

from analyses import data, scenario
from analyses.models import calculator
from analyses.models.formula import Input, LogGrid, System
from analyses.scenario import generations as ladder

FLOPS_SCALE, FLOPS_UNIT = 1e12, "TFLOP/s"  # how a page shows FLOP/s inputs
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
    electricity: str = "electricity_usd_per_kwh",
    cost_basis: str = "owned",
    currency: str = "USD",
) -> System:
    """The calculator for ``generations`` (baseline first; the scenario's pair by default).

    Achieved FLOP/s per GPU: from ``grids[gpu]`` (interpolated over model parameters and GPUs) when
    given; else, for the scenario's pair, ``peak x mfu_a100_bf16`` and that ``x speedup_b300_a100``
    (those assumptions become inputs); else from ``achieved[gpu] = (default, low, high)`` as an input.
    Owned GPUs pay the tariff ``electricity`` (the documents' Chinese one, as the cost chapter).
    ``workload`` bounds and defaults the workload's inputs (:func:`workload_inputs`).
    """
    old, new = scenario_pair()
    names = list(generations) if generations is not None else [old, new]
    grids, achieved = dict(grids or {}), dict(achieved or {})
    peak_old = ladder.peak_flops(old)
    own: dict[str, Input] = workload_inputs(names, workload) | calculator.choice_inputs(cost_basis, currency)
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
        gens.append(calculator.Generation(name, data.gpu(name).tdp_w, throughput))
    # The workload and choices first, then the scenario's assumptions in its order.
    inputs = own | {n: scenario_input(n) for n in scenario.assumptions() if n not in own}
    china = f"rent_{names[0].lower()}_china_cny_per_gpu_hour"
    return calculator.build(
        gens,
        inputs,
        electricity=electricity,
        china_rent=china if china in inputs else None,
        constants={f"PEAK_FLOPS_{old}": peak_old},
    )
