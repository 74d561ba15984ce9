"""The book's cost calculator and a standalone HTML fragment that runs it in the page.

:func:`system` is :func:`analyses.scenario.calculator.system` with the workload bounded and
defaulted as the planner's parameters (``n_params``, ``tokens``, ``max_gpus`` of
:data:`analyses.chapters.plan.SPEC`).

:func:`demo_html` turns any :class:`~analyses.models.formula.System` into an HTML fragment: inputs
carrying ``data-param="<name>"`` (defaults = the declared defaults, the allowed range beside each),
results ``data-result="<name>"`` (with the full-precision value in ``data-value``), a preset list,
and an inline script (the generated JavaScript and a few lines of glue; nothing loaded from
elsewhere). Out-of-range input shows the allowed range and a dash in every result, never NaN.
"""

from __future__ import annotations

import html
import json
from collections.abc import Mapping, Sequence
from typing import Any

from analyses.models.formula import Input, System
from analyses.scenario import calculator as wiring
from analyses.scenario.calculator import (  # noqa: F401  (the wiring's names, for the page and its tests)
    FLOPS_SCALE,
    FLOPS_UNIT,
    achieved_input,
    scenario_input,
    scenario_pair,
)


def workload() -> dict[str, Any]:
    """The planner's parameters that bound and default the calculator's workload."""
    from analyses.chapters import plan as plan_chapter

    params = {p.name: p for p in plan_chapter.SPEC.params}
    return {name: params[name] for name in wiring.WORKLOAD}


def workload_inputs(generations: Sequence[str]) -> dict[str, Input]:
    """:func:`analyses.scenario.calculator.workload_inputs` bounded by the planner's parameters."""
    return wiring.workload_inputs(generations, workload())


def system(generations: Sequence[str] | None = None, **kwargs: Any) -> System:
    """The calculator for ``generations`` (:func:`analyses.scenario.calculator.system`), its
    workload bounded and defaulted as the planner's parameters."""
    return wiring.system(generations, workload=workload(), **kwargs)


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
