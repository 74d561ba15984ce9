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

import numpy as np

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
      const words = el.dataset.words ? JSON.parse(el.dataset.words) : null;
      el.textContent = words && String(v) in words ? words[String(v)] : show(typeof v === "number" ? v / f.scale : v, f);
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


def _input_html(element_id: str, i: Input, label_text: str | None = None) -> str:
    hint_id = f"{element_id}-range-{i.name}"
    unit = f" ({html.escape(i.shown_unit)})" if i.shown_unit not in ("", "-") else ""
    label = f'<span class="calc-label">{html.escape(label_text or i.label)}{unit}</span>'
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


# --------------------------------------------------------------------------------------------
# The buy-or-rent page's calculator
# --------------------------------------------------------------------------------------------

GRID_MAX_GPUS = 16_384  # the grid's largest cluster: the planner's largest max_gpus
ELEMENT_ID = "bor-calculator"  # the page's anchor: buy-or-rent.html#bor-calculator
PAYBACK_CLAIMS = ("000-6-payback-6-12-months", "001-6-payback-6-12-months")  # one stated band, one check
PAYBACK_CHAPTER = "tco"  # the chapter whose checks judge them (their rows: tco.html#check-<id>)
FITS_WORDS = {"true": "", "false": "(too few GPUs: the model does not fit)"}
CURRENCY_LABELS = (("USD", 0.0), ("RMB", 1.0))  # the book's one name for the documents' currency
# The inputs a buyer sets first; every other input of the system sits under "more assumptions".
MAIN_INPUTS = (
    "cost_basis",
    "currency",
    "utilisation",
    "electricity_usd_per_kwh",
    "pue",
    "depreciation_years",
    "usd_cny",
)
WORKLOAD_INPUTS = ("n_params", "tokens", "tokens_per_param")
PER_GPU = (("n_gpus", "how many"), ("server", "system price"), ("rent", "rent (neocloud)"))


def _claim_formulas(base: str, new: str) -> tuple[list[Any], dict[str, float], str]:
    """The payback claim's verdict for the reader's inputs: the ledger's rule of its kind applied to
    the calculator's payback of one ``new`` GPU bought instead of renting ``base`` GPUs (the check's
    recomputed figure, :func:`analyses.chapters.tco.checks.check_payback_6_12_months`)."""
    from analyses import data, scenario, verdicts
    from analyses.chapters.tco.checks import check_payback_6_12_months
    from analyses.models.formula import Formula

    claim = data.claim(PAYBACK_CLAIMS[0])
    rule = verdicts.RULES[claim.kind]
    # The check's own reading of the stated figure (its Finding), so the page and the ledger judge the same
    # interval; the check caps "never" at a number of months, which gets the same verdict as infinity.
    finding = check_payback_6_12_months(claim, scenario.values(), {})
    stated = finding.stated
    value = f"payback_{new.lower()}_vs_rent_{base.lower()}"
    code, side, constants = verdicts.rule_formula(rule, stated, value)
    formulas = [
        Formula("claim_payback_verdict", code, "verdict on the documents' payback for these inputs", ""),
        Formula("claim_payback_side", side, "where the documents' payback falls", ""),
    ]
    said = verdicts.show_interval(stated, "months", as_stated=True)
    return formulas, constants, said


def _fewest_gpus_formulas(gens: Sequence[str]) -> list[Any]:
    from analyses.models.formula import Formula

    out = []
    for g in gens:
        k = g.lower()
        out.append(
            Formula(
                f"fewest_gpus_{k}",
                f"interp_loglog(fewest_{k}, n_params, 1)",
                f"fewest GPUs the model fits on ({g})",
                "GPUs",
            )
        )
        out.append(Formula(f"fits_{k}", f"n_gpus_{k} >= fewest_gpus_{k} * 0.999", f"fits on the GPUs set ({g})", ""))
    return out


def shown(gens: Sequence[str], new: str = "B300") -> set[str]:
    """The results the buy-or-rent calculator shows (every other formula is an intermediate)."""
    base = gens[0].lower()
    out = {
        f"payback_{new.lower()}_vs_rent_{base}",
        f"payback_{new.lower()}_vs_rent_{base}_china",
        f"speedup_{new.lower()}_vs_{base}",
        "claim_payback_verdict",
        "claim_payback_side",
    }
    for g in gens:
        k = g.lower()
        out |= {f"days_{k}", f"fits_{k}", f"cost_{k}", f"payback_buy_vs_rent_{k}"}
        if k != base:
            out.add(f"cost_ratio_{k}_vs_{base}")
    return out


def buy_or_rent_system(res: Any) -> tuple[System, dict[str, Any]]:
    """The calculator of the buy-or-rent page for the chapter's result ``res``: every generation the
    page plans (A100 the baseline), its time per run from the planner's grid (:func:`analyses.scenario.calculator.throughput_grids`,
    at the page's precision and scenario), the payback claim's verdict, inputs defaulted to the page's
    configuration (the scenario's central values unless a reader set them) and each GPU count to the
    planner's choice for the reader's run. Returns the system and what the page shows around it."""
    import dataclasses

    from analyses.scenario import buying
    from analyses.scenario import calculator as sc
    from analyses.units import settle

    gens = buying.gpus()
    cfg, s = res.cfg, res.s
    grids, fewest, errors = {}, {}, []
    for g in gens:
        grids[g], fewest[f"fewest_{g.lower()}"] = pair = sc.throughput_grids(g, GRID_MAX_GPUS, s, cfg["precision"])
        errors.append(np.abs(sc.grid_errors(g, GRID_MAX_GPUS, s, cfg["precision"], grids=pair)))
    spread = np.concatenate(errors)
    claim, constants, said = _claim_formulas(gens[0], "B300")
    sysm = system(
        gens,
        grids=grids,
        wall_clock=True,
        cost_basis="owned",
        currency="USD",
        extra=[*_fewest_gpus_formulas(gens), *claim],
        constants=constants,
        extra_grids=fewest,
    )
    # Defaults: the page's configuration, and the planner's GPU count for the reader's run.
    mine = res.of(buying.READER)
    defaults: dict[str, float] = {}
    for i in sysm.inputs:
        if i.name in cfg and not i.choices and isinstance(cfg[i.name], int | float):
            defaults[i.name] = float(cfg[i.name])
        elif i.name in s and not i.choices:
            defaults[i.name] = float(s[i.name])
    for g in gens:
        rows = mine[(mine["gpu"] == g) & (mine["basis"] == "owned")]
        if not rows.empty:
            defaults[f"n_gpus_{g.lower()}"] = float(rows.iloc[0]["n_gpus"])
    inputs = []
    for i in sysm.inputs:
        if i.name == "currency":
            code = 1.0 if cfg["currency"] == "RMB" else 0.0
            i = dataclasses.replace(i, choices=CURRENCY_LABELS, default=code)
        elif i.name in defaults and i.min <= defaults[i.name] <= i.max:
            i = dataclasses.replace(i, default=defaults[i.name])
        inputs.append(i)
    # Only what the page shows is a result (the rest stay intermediates: fewer bytes in the page).
    formulas = [dataclasses.replace(f, result=f.name in shown(gens)) for f in sysm.formulas]
    # Every number written into the page settled, so that the page never shows the last bits of the
    # arithmetic that made a bound, a default or a constant (0.10000000000000002 on another code path).
    inputs = [
        i if i.choices else dataclasses.replace(i, min=settle(i.min), max=settle(i.max), default=settle(i.default))
        for i in inputs
    ]
    constants = {k: settle(v) if np.isfinite(v) else v for k, v in sysm.constants.items()}
    sysm = System(sysm.name, inputs, formulas, constants, sysm.grids)
    presets = []
    for w in res.workloads:
        # settled: a preset's figures must not carry the last bits of the arithmetic that made them
        values = {"n_params": settle(float(w.shape.n_params)), "tokens": settle(float(w.tokens))}
        rows = res.of(w.key)
        for g in gens:
            r = rows[(rows["gpu"] == g) & (rows["basis"] == "owned")]
            if not r.empty:
                values[f"n_gpus_{g.lower()}"] = float(r.iloc[0]["n_gpus"])
        presets.append((w.label, values))
    accuracy = (float(np.median(spread)), float(np.quantile(spread, 0.9)), len(sc.GRID_PARAMS))
    return sysm, {"gens": gens, "presets": presets, "claim_said": said, "accuracy": accuracy}


_PAGE_STYLE = """
.bor-calc fieldset { border: 1px solid #8888; border-radius: .3rem; margin: 0 0 .8rem; padding: .4rem .6rem; min-width: 0; }
.bor-calc legend { font-weight: bold; font-size: 1rem; padding: 0 .3rem; width: auto; float: none; margin: 0; }
.bor-calc .calc-gens { display: grid; grid-template-columns: repeat(2, minmax(0, 1fr)); gap: .6rem 1rem; }
.bor-calc .calc-gen h4 { margin: .2rem 0; font-size: 1rem; }
.bor-calc details { margin: .4rem 0 .8rem; }
.bor-calc summary { cursor: pointer; }
.bor-calc input, .bor-calc select { width: 100%; box-sizing: border-box; }
.bor-calc .calc-results th, .bor-calc .calc-results td { text-align: right; }
.bor-calc .calc-results th:first-child { text-align: left; }
.bor-calc .calc-claim { border-left: .3rem solid currentColor; padding: .3rem .6rem; }
.bor-calc [data-result^="fits_"] { font-size: .8rem; }
@media (max-width: 700px) {
  .bor-calc .calc-results thead { display: none; }
  .bor-calc .calc-results tr { display: block; border-bottom: 2px solid #8888; padding: .3rem 0; }
  .bor-calc .calc-results td, .bor-calc .calc-results th { display: flex; justify-content: space-between; gap: .5rem; border: 0; padding: .1rem 0; text-align: right; }
  .bor-calc .calc-results td::before { content: attr(data-label); text-align: left; }
}
"""


def _cell(name: str, label: str, unit: str = "", words: Mapping[float, str] | None = None, extra: str = "") -> str:
    """One result cell: ``data-result`` with its column's name for the phone layout, and its unit."""
    w = f' data-words="{html.escape(json.dumps({_word_key(k): v for k, v in words.items()}))}"' if words else ""
    space = "" if unit == "×" else " "  # 0.46×, 6.85 days
    u = f'{space}<span class="calc-unit" data-unit="{html.escape(unit)}">{html.escape(unit)}</span>' if unit else ""
    return (
        f'<td data-label="{html.escape(label)}"><span class="calc-val"><span data-result="{name}"{w} data-value="">…</span>'
        f"{u}{extra}</span></td>"
    )


def buy_or_rent(res: Any) -> Any:
    """The buy-or-rent page's calculator (an HTML object for ``glue``): the reader's workload, GPU counts
    and prices, time and cost per run of every generation, the ratio to the baseline, the payback of
    buying, and where the documents' payback claim falls for those inputs (the ledger's rule), all
    recomputed in the page by JavaScript generated from the book's formulas; nothing loaded from elsewhere."""
    from IPython.display import HTML

    from analyses import verdicts
    from analyses.pages.links import check_href
    from analyses.units.formats import percent

    sysm, meta = buy_or_rent_system(res)
    gens, base = meta["gens"], meta["gens"][0]
    eid = ELEMENT_ID
    by = sysm.input
    # Inputs: the workload, each generation's GPUs and prices, the main prices, the rest folded.
    options = ['<option value="">choose a workload…</option>'] + [
        f'<option data-values="{html.escape(json.dumps(values))}">{html.escape(label)}</option>'
        for label, values in meta["presets"]
    ]
    preset = (
        '<label class="calc-input"><span class="calc-label">the documents\' workloads and yours</span>'
        f"<select data-preset>{''.join(options)}</select></label>"
    )
    workload = "".join(_input_html(eid, by[n]) for n in WORKLOAD_INPUTS)
    per_gen = []
    placed = set(WORKLOAD_INPUTS) | set(MAIN_INPUTS)
    for g in gens:
        names = {
            "n_gpus": f"n_gpus_{g.lower()}",
            "server": f"server_{g.lower()}_usd_per_gpu",
            "rent": f"rent_{g.lower()}_usd_per_gpu_hour",
        }
        placed |= set(names.values())
        fields = "".join(_input_html(eid, by[names[k]], short) for k, short in PER_GPU if names[k] in by)
        per_gen.append(f'<div class="calc-gen"><h4>{html.escape(g)}</h4>{fields}</div>')
    main = "".join(_input_html(eid, by[n]) for n in MAIN_INPUTS)
    rest = "".join(_input_html(eid, i) for i in sysm.inputs if i.name not in placed)
    form = (
        f'<form class="calc-form" onsubmit="return false">'
        f'<fieldset><legend>Workload</legend><div class="calc-inputs">{preset}{workload}</div></fieldset>'
        f'<fieldset><legend>GPUs and prices of each generation</legend><div class="calc-gens">{"".join(per_gen)}</div></fieldset>'
        f'<fieldset><legend>How you pay</legend><div class="calc-inputs">{main}</div>'
        f"<details><summary>More assumptions (hosting, staff, overheads, cost of capital)</summary>"
        f'<div class="calc-inputs">{rest}</div></details></fieldset>'
        "</form>"
    )
    # Results: one row per generation.
    head = (
        "<thead><tr><th>GPU</th><th>time per run</th><th>cost per run</th>"
        f"<th>cost vs {base}</th><th>payback, buy vs rent</th></tr></thead>"
    )
    rows = []
    for g in gens:
        k = g.lower()
        ratio = (
            _cell(f"cost_ratio_{k}_vs_{base.lower()}", f"cost vs {base}", "×")
            if g != base
            else f'<td data-label="cost vs {base}"><span class="calc-val">1×</span></td>'
        )
        rows.append(
            f'<tr><th scope="row">{html.escape(g)}</th>'
            + _cell(
                f"days_{k}",
                "time per run",
                "days",
                extra=f' <span data-result="fits_{k}" data-words="{html.escape(json.dumps(FITS_WORDS))}" data-value=""></span>',
            )
            + _cell(f"cost_{k}", "cost per run", "{currency}")
            + ratio
            + _cell(f"payback_buy_vs_rent_{k}", "payback, buy vs rent", "months")
            + "</tr>"
        )
    caption = "<caption>One run, on the cost basis and in the currency set below</caption>"
    median, p90, sizes = meta["accuracy"]
    accuracy = (
        f'<p class="calc-note">Time per run is the planner\'s at {sizes} model sizes from 100 million to 2 trillion '
        "parameters and every cluster size it plans, interpolated between them: half-way between two of those sizes "
        f"it differs from the planner's own answer by {percent(median)} at the median and by at most "
        f"{percent(p90)} at nine points in ten (most of that above a thousand GPUs, where the batch limits the "
        "layouts).</p>"
    )
    results = f'<table class="calc-results">{caption}{head}<tbody>{"".join(rows)}</tbody></table>'
    new = "B300"
    words = {float(i): v for i, v in enumerate(verdicts.VERDICTS)}
    tol = verdicts.RULES["cost"].tolerance
    sides = {
        -1.0: f"the documents promise a faster payback than this, by more than {tol:.0%}",
        0.0: f"the documents' {meta['claim_said']} agrees with it within {tol:.0%}",
        1.0: f"the documents' payback is slower than this, by more than {tol:.0%}",
    }
    links = " and ".join(f'<a href="{check_href(c, PAYBACK_CHAPTER)}">{c[:3]} §6</a>' for c in PAYBACK_CLAIMS)
    claim = (
        '<p class="calc-claim">'
        f"Both documents say the investment pays back in {html.escape(meta['claim_said'])} ({links}). "
        f"For these inputs one {new} bought instead of renting the {base}s whose work it does pays back in "
        f'<strong><span data-result="payback_{new.lower()}_vs_rent_{base.lower()}" data-value="">…</span> months</strong> '
        f'(a per-GPU speed-up of <span data-result="speedup_{new.lower()}_vs_{base.lower()}" data-value="">…</span>×; '
        f'against {base} rents in China <span data-result="payback_{new.lower()}_vs_rent_{base.lower()}_china" data-value="">…</span> months): '
        f'<strong data-result="claim_payback_verdict" data-words="{html.escape(json.dumps({_word_key(k): v for k, v in words.items()}))}" data-value="">…</strong>: '
        f'<span data-result="claim_payback_side" data-words="{html.escape(json.dumps({_word_key(k): v for k, v in sides.items()}))}" data-value="">…</span> '
        "(the ledger's rule for cost claims).</p>"
    )
    script = _GLUE % {"id": json.dumps(eid), "calc": sysm.to_js(comments=False)}
    fragment = (
        f'<div class="audit-calculator bor-calc" id="{eid}" data-state="loading">'
        f"<style>{_STYLE}{_PAGE_STYLE}</style>"
        '<p class="calc-error" role="alert" data-calc-error hidden></p>'
        f"{results}{accuracy}{claim}{form}"
        f"<script>{script}</script>"
        "</div>"
    )
    return HTML(fragment)


def _word_key(code: float) -> str:
    """A code as JavaScript's ``String(v)`` writes it (``0``, ``-1``): the key of ``data-words``."""
    return format(code, "g")
