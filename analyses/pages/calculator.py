"""The buy-or-rent page's cost calculator: the book's formulas (:mod:`analyses.models.calculator`) for
every generation the page plans, run in the page by the JavaScript generated from them.

:func:`buy_or_rent_system` builds the system from the chapter's result (its time per run from the
planner's grid, each claim it replays as the ledger judges it: what the page needs from the chapters
arrives as data in the result, never by import); :func:`buy_or_rent` renders it with the template
``analyses/site/templates/calculator/fragment.html`` and the script ``calculator.js`` beside it (the
reader's prices per GPU or per server, in RMB or USD, numbers typed as people write them, each error
at its own field); the words are :mod:`analyses.pages.calculator_words`; the styles are the
``.audit-calculator`` block of ``_static/audit.css``.
"""

from __future__ import annotations

import dataclasses
import functools
import html
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import jinja2
import numpy as np
from IPython.display import HTML
from markupsafe import Markup

from analyses import data, verdicts
from analyses.models import calculator as model
from analyses.models.formula import Formula, Input, System
from analyses.pages.calculator_words import WORDS_EN, Words  # noqa: F401  (the words, for the page's callers)
from analyses.pages.links import check_href
from analyses.scenario import buying
from analyses.scenario import calculator as wiring
from analyses.scenario import generations as ladder
from analyses.units import settle
from analyses.units.formats import percent, round_sig

TEMPLATES = Path(__file__).parents[1] / "site" / "templates" / "calculator"  # a file path, not an import
GRID_MAX_GPUS = 16_384  # the grid's largest cluster: the planner's largest max_gpus
ELEMENT_ID = "bor-calculator"  # the page's anchor: buy-or-rent.html#bor-calculator
FIELD_ID = "bc"  # a field's id is bc-<input>, its range bc-<input>-range, its error bc-<input>-error
PAYBACK_CLAIMS = tuple(c.claim for c in wiring.CASES)  # one stated band, one check
PAYBACK_CHAPTER = "tco"  # the chapter whose checks judge them (their rows: tco.html#check-<id>)
CURRENCY_LABELS = (("USD", 0.0), ("RMB", 1.0))  # the book's one name for the documents' currency
RATE = "usd_cny"  # the input that converts the documents' RMB and the formulas' USD
WORKLOAD_INPUTS = ("n_params", "tokens", "tokens_per_param")
# The assumptions that decide the answer, beside the inputs; every other one sits under "more".
MAIN_INPUTS = (
    "currency",
    model.BUSY,
    "rental_overhead_fraction",
    "depreciation_years",
    "electricity_usd_per_kwh",
    "cost_of_capital",
    "usd_cny",
    model.SPEEDUP_GIVEN,
)
PER_GPU = ("n_gpus", "server", "rent")
PRICE_PER = "server"  # the price basis the form opens with (a quote is per server); the template selects it
PERCENT_UNITS = {
    "fraction": "%",
    "fraction of GPU rent": "% of GPU rent",
    "fraction of server capex": "% of server capex",
}


def system(generations: Sequence[str] | None = None, *, workload: Mapping[str, Any], **kwargs: Any) -> System:
    """The calculator for ``generations`` (:func:`analyses.scenario.calculator.system`), its workload
    bounded and defaulted as the parameters ``workload`` (``n_params``, ``tokens``, ``max_gpus``)."""
    return wiring.system(generations, workload=workload, **kwargs)


def shown(gens: Sequence[str]) -> set[str]:
    """The results the buy-or-rent calculator shows or reads (every other formula is an intermediate)."""
    base, new = gens[0].lower(), ladder.NEW.lower()
    out = {
        f"payback_{new}_vs_rent_{base}",
        f"payback_{new}_vs_rent_{base}_china",
        f"payback_{new}_vs_owned_{base}",  # document 000's case: its own A100s (analyses/scenario/frame.py)
        f"speedup_{new}_vs_{base}",
        "claim_payback_verdict",
        "claim_payback_side",
        "best_rented",
        "best_owned",
        "cheapest_rented",
        "cheapest_owned",
        "owning_wins",
        "break_even_run",
    }
    for g in (g.lower() for g in gens):
        out |= {f"days_{g}", f"fits_{g}", f"fewest_gpus_{g}", f"cost_rented_{g}", f"cost_owned_{g}"}
        out |= {f"break_even_{g}", f"payback_buy_vs_rent_{g}"}
    return out


def _claim_formulas(case: Any, value: str) -> tuple[list[Formula], dict[str, float]]:
    """The payback claim's verdict for the reader's inputs: the ledger's rule of its kind applied to
    ``value`` with the interval the ledger read from the claim (``case``, its assessment)."""
    code, side, constants = verdicts.rule_formula(verdicts.RULES[case.kind], case.stated, value)
    return [
        Formula("claim_payback_verdict", code, "verdict on the documents' payback for these inputs", ""),
        Formula("claim_payback_side", side, "where the documents' payback falls", ""),
    ], constants


def _fewest_gpus_formulas(gens: Sequence[str]) -> list[Formula]:
    out = []
    for g in gens:
        k = g.lower()
        out.append(Formula(f"fewest_gpus_{k}", f"interp_loglog(fewest_{k}, n_params, 1)", f"fewest GPUs ({g})", "GPUs"))
        out.append(Formula(f"fits_{k}", f"n_gpus_{k} >= fewest_gpus_{k} * 0.999", f"fits on the GPUs set ({g})", ""))
    return out


def _defaults(sysm: System, res: Any, gens: Sequence[str]) -> list[Input]:
    """The system's inputs defaulted to the page's configuration (the scenario's central values unless a
    reader set them), each GPU count to the planner's for the reader's run, fractions shown in per cent,
    every number settled (no last bits of the arithmetic that made a bound or a default)."""
    cfg, s, mine = res.cfg, res.s, res.of(buying.READER)
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
    out = []
    for i in sysm.inputs:
        if i.name == "currency":
            i = dataclasses.replace(i, choices=CURRENCY_LABELS, default=1.0 if cfg["currency"] == "RMB" else 0.0)
        elif i.name in defaults and i.min <= defaults[i.name] <= i.max:
            i = dataclasses.replace(i, default=defaults[i.name])
        if i.unit in PERCENT_UNITS:
            i = dataclasses.replace(i, scale=0.01, display_unit=PERCENT_UNITS[i.unit])
        if not i.choices:
            i = dataclasses.replace(i, min=settle(i.min), max=settle(i.max), default=settle(i.default))
        out.append(i)
    return out


def buy_or_rent_system(res: Any) -> tuple[System, dict[str, Any]]:
    """The calculator of the buy-or-rent page for the chapter's result ``res``: every generation the
    page plans (the first the baseline), its time per run from the planner's grid
    (:func:`analyses.scenario.calculator.throughput_grids`, at the page's precision and scenario), the
    payback claim's verdict by the ledger's rule, inputs defaulted to the page's configuration. Returns
    the system and what the page shows around it (generations, presets, the claim, the grid's accuracy)."""
    gens, cfg, s = buying.gpus(), res.cfg, res.s
    grids, fewest, errors = {}, {}, []
    # the grid's nodes, and the size of every workload the page presets: the page starts at the chapter's
    # own figures (the planner's), not at an interpolation 2-4% off them
    sizes = tuple(sorted({*wiring.GRID_PARAMS, *(settle(float(w.shape.n_params)) for w in res.workloads)}))
    for g in gens:
        pair = wiring.throughput_grids(g, GRID_MAX_GPUS, s, cfg["precision"], sizes)
        grids[g], fewest[f"fewest_{g.lower()}"] = pair
        errors.append(np.abs(wiring.grid_errors(g, GRID_MAX_GPUS, s, cfg["precision"], grids=pair)))
    spread = np.concatenate(errors)
    case = res.cases[PAYBACK_CLAIMS[0]]
    claim, constants = _claim_formulas(case, wiring.CASES[0].result)
    sysm = system(
        gens,
        workload=res.bounds,
        grids=grids,
        wall_clock=True,
        currency="USD",
        extra=[*_fewest_gpus_formulas(gens), *claim],
        constants=constants,
        extra_grids=fewest,
        fits={g.lower(): f"n_gpus_{g.lower()} >= fewest_gpus_{g.lower()} * 0.999" for g in gens},
    )
    results = shown(gens)
    formulas = [dataclasses.replace(f, result=f.name in results) for f in sysm.formulas]
    constants = {k: settle(v) if np.isfinite(v) else v for k, v in sysm.constants.items()}
    sysm = System(sysm.name, _defaults(sysm, res, gens), formulas, constants, sysm.grids)
    presets = []
    for w in res.workloads:
        values = {"n_params": settle(float(w.shape.n_params)), "tokens": settle(float(w.tokens))}
        values[model.SPEEDUP_GIVEN] = 0.0  # the planner's speed-up for the workload
        rows = res.of(w.key)
        for g in gens:
            r = rows[(rows["gpu"] == g) & (rows["basis"] == "owned")]
            if not r.empty:
                values[f"n_gpus_{g.lower()}"] = float(r.iloc[0]["n_gpus"])
        presets.append(("workload", w.key, w.label, values))
    for c in wiring.CASES:
        # four figures, as a reader would type them: a model speed-up's 10th digit moves with the inputs' last bits
        values = {k: round_sig(v, 4) for k, v in wiring.case_values(c, s).items()}
        presets.append(("case", c.claim, c.claim, values))
    accuracy = (float(np.median(spread)), float(np.quantile(spread, 0.9)), len(sizes))
    return sysm, {"gens": gens, "presets": presets, "claim": case, "accuracy": accuracy}


def localised(sysm: System, words: Words, gens: Sequence[str]) -> System:
    """``sysm`` with its inputs' labels and choices' words in ``words``' language: the same formulas,
    constants and grids (so the same generated arithmetic), only what the page prints differs."""
    if words.lang == "en":
        return sysm
    inputs = [
        dataclasses.replace(i, label=words.label(i, gens), choices=tuple((words.choice(c), v) for c, v in i.choices))
        for i in sysm.inputs
    ]
    return System(sysm.name, inputs, sysm.formulas, sysm.constants, sysm.grids)


def money_inputs(sysm: System, gens: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Inputs that hold money, for the page's script: the currency they are declared in, the rest of their
    unit ("per GPU-hour"), and for a system price the GPUs of one server of its generation
    (``data/cluster_configs.csv``), so a reader may give the price of a whole server."""
    per_node = data.table("cluster_configs").groupby("gpu")["gpus_per_node"].max()
    out = {}
    for i in sysm.inputs:
        first, _, rest = i.unit.partition(" ")
        if first not in ("USD", "CNY") or rest.startswith("per USD"):
            continue
        spec: dict[str, Any] = {"cur": first, "per": rest}
        for g in gens:
            if i.name == f"server_{g.lower()}_usd_per_gpu" and g in per_node.index:
                spec["server"] = int(per_node[g])
        out[i.name] = spec
    return out


def _generation_inputs(gpu: str) -> dict[str, str]:
    """A generation's own inputs by their place in the form (:data:`PER_GPU`)."""
    names = model.input_names(model.Generation(gpu, 0.0))
    return {"n_gpus": names["gpus"], "server": names["server"], "rent": names["rent"]}


def money_view(i: Input, spec: Mapping[str, Any], words: Words, currency: str, rate: float) -> tuple[float, str]:
    """How the form shows money input ``i`` (``spec``: its :func:`money_inputs` entry) in ``currency`` ("USD"
    or "RMB") at ``rate`` CNY per USD (:func:`analyses.scenario.buying.rate_to`), a system price per server
    as the form opens (:data:`PRICE_PER`): the factor from the formulas' value to the field's, and the unit
    in ``words`` ("元/台（8卡）"). The page's script writes the same when the reader changes either
    (``factor`` and ``moneyUnit`` of calculator.js)."""
    factor, _ = buying.rate_to(i.unit, currency, {RATE: rate})
    server = spec.get("server") if PRICE_PER == "server" else None
    per = "per server" if server else spec["per"]
    unit = words[f"money:{per}"].format(currency=words[f"currency:{currency}"], n=server)
    return factor * (server or 1), unit


def _field(i: Input, words: Words, label: str | None = None, money: tuple[float, str] | None = None) -> dict[str, Any]:
    """One input as the template draws it: label, unit, value, allowed range, choices; a money input
    (``money``: :func:`money_view`) in the page's currency and price basis."""
    unit = money[1] if money else words.unit(i.shown_unit)
    return {
        "name": i.name,
        "id": f"{FIELD_ID}-{i.name}",
        "label": label or i.label,
        "full": i.label,  # the label an error message names it by, where the form shows a shorter one
        "unit": "" if unit in ("", "-") else unit,
        "value": words.amount(i.default * money[0]) if money else format(i.default / i.scale, ".15g"),
        "allowed": words.allowed(i, money),
        "choices": [(text, format(code, "g"), code == i.default) for text, code in i.choices],
    }


@functools.cache
def _script() -> str:
    """The page script without its comments and indentation (bytes the page need not carry; the script
    writes a trailing comment after two spaces, and no string or pattern of it holds "  // ")."""
    text = (TEMPLATES / "calculator.js").read_text(encoding="utf-8")
    lines = (line.split("  // ")[0].strip() for line in text.splitlines())
    return "\n".join(line for line in lines if line and not line.startswith("//")).rstrip(";")


@functools.cache
def _environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True, undefined=jinja2.StrictUndefined
    )


def _claim_sentence(words: Words, sysm: System, meta: Mapping[str, Any], links: Mapping[str, str]) -> Markup:
    """The payback claims' sentence: what the documents say, the calculator's payback for the reader's
    inputs and where the claim falls by the ledger's rule (spans the script fills)."""
    en, base, new = words.lang == "en", meta["gens"][0], ladder.NEW
    tol = f"{verdicts.RULES['cost'].tolerance:.0%}"
    said = words.interval(meta["claim"].stated, "months")
    sides = {"-1": words["side_faster"], "0": words["side_agrees"], "1": words["side_slower"]}
    sides = {k: v.format(tol=tol, said=said) for k, v in sides.items()}
    verdict_words = {str(i): v for i, v in enumerate(words.verdict_words)}
    hreflang = "" if en else ' hreflang="en"'  # from another language's page, the checks are in English
    joined = (" and " if en else "、").join(
        f'<a href="{html.escape(links[c])}"{hreflang}>{c[:3]} §{data.claim(c).section}</a>' for c in PAYBACK_CLAIMS
    )

    def result(name: str, tag: str = "span", words_map: Mapping[str, str] | None = None) -> str:
        w = f' data-words="{html.escape(json.dumps(words_map))}"' if words_map else ""
        return f'<{tag} data-result="{name}"{w} data-value="">…</{tag}>'

    return Markup(
        html.escape(words["claim"], quote=False).format(
            said=html.escape(said),
            links=joined,
            new=new,
            base=base,
            payback=f"<strong>{result(f'payback_{new.lower()}_vs_rent_{base.lower()}_china')}</strong>",
            speedup=result(f"speedup_{new.lower()}_vs_{base.lower()}"),
            neocloud=result(f"payback_{new.lower()}_vs_rent_{base.lower()}"),
            owned=result(f"payback_{new.lower()}_vs_owned_{base.lower()}"),
            verdict=result("claim_payback_verdict", "strong", verdict_words),
            side=result("claim_payback_side", "span", sides),
        )
    )


def buy_or_rent(res: Any, words: Words | None = None, links: Mapping[str, str] | None = None) -> HTML:
    """The buy-or-rent page's calculator (an HTML object for ``glue``): the reader's workload, GPU counts
    and prices; for every generation the time per run, its cost rented and owned side by side, the busy
    share above which owning it pays and the payback of buying it; the answer (the cheapest of each way,
    and the busy share that decides between them); where the documents' payback claim falls for those
    inputs. Recomputed in the page by JavaScript generated from the book's formulas; nothing loaded from
    elsewhere. ``words`` (:class:`Words`; English by default) gives every label in another language, and
    ``links`` the href of each payback claim's check (default: its row in the cost chapter)."""
    words = words or Words.en()
    sysm, meta = buy_or_rent_system(res)
    gens = meta["gens"]
    sysm = localised(sysm, words, gens)
    eid, by = ELEMENT_ID, sysm.input
    per_gen_names = {g: _generation_inputs(g) for g in gens}
    placed = set(WORKLOAD_INPUTS) | set(MAIN_INPUTS) | {n for names in per_gen_names.values() for n in names.values()}
    labels = {w.key: words.workload(w.key, w.label) for w in res.workloads}
    presets = [
        (labels.get(key, label) if kind == "workload" else words["case"].format(claim=label), json.dumps(values))
        for kind, key, label, values in meta["presets"]
    ]
    median, p90, sizes = meta["accuracy"]
    money = money_inputs(sysm, gens)
    currency = next(name for name, code in CURRENCY_LABELS if code == by["currency"].default)
    views = {n: money_view(by[n], spec, words, currency, by[RATE].default) for n, spec in money.items()}

    def field(i: Input, label: str | None = None) -> dict[str, Any]:
        return _field(i, words, label, views.get(i.name))

    config = {
        "lang": words.lang,
        "gens": gens,
        "words": words.script(),
        "money": money,
        "busy": model.BUSY,
        "rate": RATE,
        "currencies": {format(code, "g"): name for name, code in CURRENCY_LABELS},
        "ids": FIELD_ID,
    }
    fragment = (
        _environment()
        .get_template("fragment.html")
        .render(
            id=eid,
            lang=words.lang,
            config=Markup(json.dumps(config, ensure_ascii=False).replace("</", "<\\/")),  # safe in a script element
            w=words,
            gens=gens,
            base=gens[0],
            presets=presets,
            price_per=PRICE_PER,
            workload=[field(by[n]) for n in WORKLOAD_INPUTS],
            per_gen=[
                (g, [field(by[names[k]], words[f"gen_{k}"]) for k in PER_GPU]) for g, names in per_gen_names.items()
            ],
            main=[field(by[n]) for n in MAIN_INPUTS if n in by],
            rest=[field(i) for i in sysm.inputs if i.name not in placed],
            accuracy=words["accuracy"].format(sizes=sizes, median=percent(median), p90=percent(p90)),
            claim=_claim_sentence(
                words, sysm, meta, links or {c: check_href(c, PAYBACK_CHAPTER) for c in PAYBACK_CLAIMS}
            ),
            runtime=Markup(sysm.to_js(comments=False)),
            glue=Markup(_script()),
        )
    )
    return HTML(fragment)
