"""The cost calculator wired to the book, and a standalone HTML fragment that runs it in the page.

:func:`system` builds the calculator (:mod:`analyses.models.calculator`, written once in the formula
language of :mod:`analyses.models.formula`) with every input declared from where the book already
defines it: each scenario assumption's label, unit, central value and allowed bounds
(:mod:`analyses.scenario`, ``data/scenario.csv``); the workload's bounds and defaults from the
planner's parameters (``n_params``, ``tokens``, ``max_gpus`` of :data:`analyses.chapters.plan.SPEC`);
each GPU's TDP from its datasheet; the achieved FLOP/s of the documents' two generations from the
scenario's MFU and speed-up (as :func:`analyses.models.tco.achieved_flop_per_s`).

:func:`demo_html` turns any :class:`~analyses.models.formula.System` into an HTML fragment: inputs
carrying ``data-param="<name>"`` (defaults = the declared defaults, the allowed range beside each),
results ``data-result="<name>"`` (with the full-precision value in ``data-value``), a preset list,
and an inline script (the generated JavaScript and a few lines of glue; nothing loaded from
elsewhere). Out-of-range input shows the allowed range and a dash in every result, never NaN.

Layering: this module only wires and renders; when the page helpers leave ``analyses/site`` for
their own layer, :func:`demo_html` goes with them and :func:`system` with the scenario's wiring.
"""

from __future__ import annotations

import html
import json
from collections.abc import Mapping, Sequence
from typing import Any

from analyses import data, scenario
from analyses.models import calculator, tco
from analyses.models.formula import Input, LogGrid, System

FLOPS_SCALE, FLOPS_UNIT = 1e12, "TFLOP/s"  # how a page shows FLOP/s inputs


def _plan_param(name: str) -> Any:
    from analyses.chapters import plan as plan_chapter

    for p in plan_chapter.SPEC.params:
        if p.name == name:
            return p
    raise KeyError(f"the planner has no parameter {name}")


def scenario_input(name: str) -> Input:
    """An assumption of the scenario as a calculator input: its label, unit, central value and bounds."""
    a = scenario.assumption(name)
    return Input(name, a.label, a.unit, a.central, a.min, a.max)


def workload_inputs(generations: Sequence[str]) -> dict[str, Input]:
    """Model parameters, training tokens and each generation's GPU count, bounded and defaulted as the
    planner's ``n_params``, ``tokens`` (0: tokens per parameter x parameters) and ``max_gpus``."""
    n, t, g = _plan_param("n_params"), _plan_param("tokens"), _plan_param("max_gpus")
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
    (new, _), (old, _) = tco.generations()
    return old, new


def system(
    generations: Sequence[str] | None = None,
    *,
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
    """
    old, new = scenario_pair()
    names = list(generations) if generations is not None else [old, new]
    grids, achieved = dict(grids or {}), dict(achieved or {})
    peak_old = tco.peak_flops(old)
    own: dict[str, Input] = workload_inputs(names) | calculator.choice_inputs(cost_basis, currency)
    gens = []
    for name in names:
        throughput: str | LogGrid | None
        if name in grids:
            throughput = grids[name]
        elif name == old:
            throughput = f"PEAK_FLOPS_{old} * {tco.OLD_MFU}"
        elif name == new:
            throughput = f"PEAK_FLOPS_{old} * {tco.OLD_MFU} * {tco.SPEEDUP}"
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


# --------------------------------------------------------------------------------------------
# The HTML fragment
# --------------------------------------------------------------------------------------------

_GLUE = """
(function () {
  "use strict";
  const root = document.getElementById(%(id)s);
  const calc = %(calc)s;
  const specs = {};
  calc.inputs.forEach(s => { specs[s.name] = s; });
  const formulas = {};
  calc.formulas.forEach(f => { formulas[f.name] = f; });
  const SUP = {"-": "\\u207b", "0": "\\u2070", "1": "\\u00b9", "2": "\\u00b2", "3": "\\u00b3", "4": "\\u2074",
               "5": "\\u2075", "6": "\\u2076", "7": "\\u2077", "8": "\\u2078", "9": "\\u2079"};
  const grouped = new Intl.NumberFormat("en-US", {maximumSignificantDigits: 4});
  function show(v, f) {
    if (typeof v === "boolean") return v ? "yes" : "no";
    if (!Number.isFinite(v)) return f.infinite;
    const a = Math.abs(v);
    if (a !== 0 && (a >= 1e15 || a < 1e-4)) {  // as formula.readable: never e-notation
      const e = Math.floor(Math.log10(a));
      const m = Number((v / Math.pow(10, e)).toPrecision(4));
      return String(m) + "\\u00d710" + String(e).split("").map(c => SUP[c]).join("");
    }
    return grouped.format(v);
  }
  function read() {
    const v = {};
    root.querySelectorAll("[data-param]").forEach(el => {
      const s = specs[el.dataset.param];
      const text = el.value.trim();
      v[el.dataset.param] = text === "" ? NaN : Number(text) * s.scale;
    });
    return v;
  }
  function currency() {
    const el = root.querySelector('[data-param="currency"]');
    const s = specs.currency;
    if (!el || !s) return "USD";
    const hit = s.choices.find(c => String(c[1]) === el.value);
    return hit ? hit[0] : "";
  }
  function update() {
    const out = calc.compute(read());
    const box = root.querySelector("[data-calc-error]");
    root.querySelectorAll("[data-param]").forEach(el => el.removeAttribute("aria-invalid"));
    root.querySelectorAll("[data-unit]").forEach(el => {
      el.textContent = el.dataset.unit.split("{currency}").join(currency());
    });
    if (!out.ok) {
      box.hidden = false;
      box.textContent = out.errors.map(e => e.message).join("; ");
      out.errors.forEach(e => {
        const el = root.querySelector('[data-param="' + e.input + '"]');
        if (el) el.setAttribute("aria-invalid", "true");
      });
      root.querySelectorAll("[data-result]").forEach(el => {
        el.textContent = "\\u2014";
        el.dataset.value = "";
      });
      root.dataset.state = "error";
      return;
    }
    box.hidden = true;
    box.textContent = "";
    root.querySelectorAll("[data-result]").forEach(el => {
      const v = out.values[el.dataset.result];
      el.dataset.value = String(v);
      const f = formulas[el.dataset.result];
      el.textContent = show(typeof v === "number" ? v / f.scale : v, f);
    });
    root.dataset.state = "ok";
  }
  const presets = root.querySelector("[data-preset]");
  if (presets) presets.addEventListener("change", () => {
    const opt = presets.options[presets.selectedIndex];
    const values = JSON.parse(opt.dataset.values || "{}");
    Object.keys(values).forEach(k => {
      const el = root.querySelector('[data-param="' + k + '"]');
      if (el) el.value = String(values[k] / specs[k].scale);
    });
    update();
  });
  root.addEventListener("input", update);
  root.addEventListener("change", update);
  update();
})();
"""

_STYLE = """
.audit-calculator .calc-inputs { display: grid; grid-template-columns: repeat(auto-fit, minmax(15rem, 1fr)); gap: .5rem 1rem; }
.audit-calculator label { display: flex; flex-direction: column; font-size: .9rem; }
.audit-calculator input, .audit-calculator select { font: inherit; padding: .2rem; max-width: 100%; }
.audit-calculator [aria-invalid="true"] { outline: 2px dashed currentColor; }
.audit-calculator .calc-range { font-size: .75rem; opacity: .8; }
.audit-calculator .calc-error { font-weight: bold; border-left: .3rem solid currentColor; padding-left: .5rem; }
.audit-calculator table { border-collapse: collapse; width: 100%; }
.audit-calculator th, .audit-calculator td { text-align: left; padding: .15rem .5rem; border-bottom: 1px solid #ccc; }
.audit-calculator td[data-result] { text-align: right; font-variant-numeric: tabular-nums; }
"""


def _value(x: float, scale: float) -> str:
    """An input's value as the field shows it (in its display unit, 15 significant digits)."""
    return format(x / scale, ".15g")


def _input_html(element_id: str, i: Input) -> str:
    hint_id = f"{element_id}-range-{i.name}"
    unit = f" ({html.escape(i.shown_unit)})" if i.shown_unit not in ("", "-") else ""
    label = f'<span class="calc-label">{html.escape(i.label)}{unit}</span>'
    if i.choices:
        options = "".join(
            f'<option value="{_value(code, 1.0)}"{" selected" if code == i.default else ""}>{html.escape(text)}</option>'
            for text, code in i.choices
        )
        field = f'<select data-param="{i.name}" aria-describedby="{hint_id}">{options}</select>'
    else:
        step = "1" if i.integer else "any"
        field = (
            f'<input type="number" data-param="{i.name}" value="{_value(i.default, i.scale)}" '
            f'min="{_value(i.min, i.scale)}" max="{_value(i.max, i.scale)}" step="{step}" '
            f'inputmode="decimal" aria-describedby="{hint_id}">'
        )
    hint = f'<small class="calc-range" id="{hint_id}">{html.escape(i.allowed)}</small>'
    return f'<label class="calc-input">{label}{field}{hint}</label>'


def demo_html(
    system: System,
    *,
    element_id: str = "audit-calculator",
    presets: Sequence[tuple[str, Mapping[str, float]]] = (),
    caption: str | None = None,
) -> str:
    """A standalone HTML fragment running ``system`` in the page: one input per input of the system
    (``data-param``), one row per result (``data-result``), an optional preset list (label and the
    input values it sets, in the inputs' own units), and an inline script; no external resource."""
    for label, values in presets:
        unknown = [k for k in values if k not in system.input]
        if unknown:
            raise KeyError(f"preset {label!r} sets unknown inputs {unknown}")
    eid = html.escape(element_id)
    preset_html = ""
    if presets:
        options = ['<option value="">choose a workload…</option>'] + [
            f'<option data-values="{html.escape(json.dumps({k: float(v) for k, v in values.items()}))}">{html.escape(label)}</option>'
            for label, values in presets
        ]
        preset_html = f'<label class="calc-input"><span class="calc-label">preset</span><select data-preset>{"".join(options)}</select></label>'
    fields = "".join(_input_html(eid, i) for i in system.inputs)
    rows = "".join(
        f'<tr><th scope="row">{html.escape(f.label or f.name)}</th>'
        f'<td data-result="{f.name}" data-value="">…</td>'
        f'<td class="calc-unit" data-unit="{html.escape(f.shown_unit)}">{html.escape(f.shown_unit)}</td></tr>'
        for f in system.formulas
        if f.result
    )
    caption_html = f"<caption>{html.escape(caption)}</caption>" if caption else ""
    script = _GLUE % {"id": json.dumps(element_id), "calc": system.to_js()}
    return (
        f'<div class="audit-calculator" id="{eid}" data-state="loading">'
        f"<style>{_STYLE}</style>"
        f'<form class="calc-inputs" onsubmit="return false">{preset_html}{fields}</form>'
        f'<p class="calc-error" role="alert" data-calc-error hidden></p>'
        f'<table class="calc-results">{caption_html}<tbody>{rows}</tbody></table>'
        f"<script>{script}</script>"
        "</div>"
    )
