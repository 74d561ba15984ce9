"""The words of the buy-or-rent calculator, apart from the page that prints them: the English words by
key (:data:`WORDS_EN`) and :class:`Words`, one language's labels, units, messages and sentences (the
Chinese edition's are the rows of ``data/calculator_zh.csv`` with the same keys). Placeholders in
braces are filled by the page or its script. Only words: the formulas, the generated JavaScript and
every number are the same in both languages."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from analyses import data, verdicts
from analyses.models.formula import Input, readable
from analyses.units import zh as zh_units

WORDS_EN: dict[str, str] = {
    "preset": "the documents' workloads and cases, and yours",
    "choose": "choose a workload or a case…",
    "case": "case: {claim}",
    "legend_workload": "Workload",
    "legend_gens": "GPUs and prices of each generation",
    "legend_pay": "The assumptions that decide the answer",
    "more": "More assumptions (PUE, hosting, staff, network and storage, rent in China)",
    "price_per": "prices per",
    "per_gpu": "GPU",
    "per_server": "server",
    "caption": "One run on each generation: rented and owned side by side, in the currency set below",
    "col_gpu": "GPU",
    "col_time": "time per run",
    "col_rented": "rented: cost per run",
    "col_owned": "owned: cost per run",
    "col_break_even": "owning pays above this busy share",
    "col_payback": "payback, buy vs rent",
    "gen_n_gpus": "how many",
    "gen_server": "system price",
    "gen_rent": "rent (neocloud)",
    "unfit": "does not fit on {n} GPUs (needs at least {least})",
    "decision_own": (
        "For this run owning is cheaper: {owned_gpu}s owned cost {owned_cost} a run at a busy share of {busy}, "
        "against {rented_cost} renting {rented_gpu}s. Owning beats the cheapest rental while the GPUs are busy "
        "more than {break_even} of their hours."
    ),
    "decision_rent": (
        "For this run renting is cheaper: {rented_gpu}s rented cost {rented_cost} a run, against {owned_cost} for "
        "{owned_gpu}s owned at a busy share of {busy}. Owning wins only above {break_even} busy."
    ),
    "decision_never": (
        "For this run renting is cheaper: {rented_gpu}s rented cost {rented_cost} a run; owning costs more even "
        "with the GPUs busy every hour ({owned_cost} for {owned_gpu}s at a busy share of {busy})."
    ),
    "decision_none": "The run fits on none of the GPU counts set: raise the number of GPUs.",
    "errors": "Check the highlighted fields: {fields}.",
    "message": "{label} must be {allowed}; got {value}",
    "not_a_number": "not a number",
    "separator": "; ",
    "list_separator": ", ",
    "never": "never",
    "allowed_range": "a number from {lo} to {hi}{unit}",
    "allowed_integer": "a whole number from {lo} to {hi}{unit}",
    "allowed_choices": "one of {choices}",
    "currency:USD": "USD",
    "currency:RMB": "RMB",
    "money:per GPU": "{currency} per GPU",
    "money:per server": "{currency} per server of {n} GPUs",
    "money:per GPU-hour": "{currency} per GPU-hour",
    "money:per kWh": "{currency} per kWh",
    "money:per kW per month": "{currency} per kW per month",
    "money:per GPU per year": "{currency} per GPU per year",
    "accuracy": (
        "Time per run is the planner's at {sizes} model sizes from 100 million to 2 trillion parameters (each preset's "
        "among them) and every cluster size it plans, interpolated between them: half-way between two of those sizes "
        "it differs from the "
        "planner's own answer by {median} at the median and by at most {p90} at nine points in ten (most of that "
        "above a thousand GPUs, where the batch limits the layouts). A rented GPU is paid for the hours the run "
        "holds it, storage and network included; an owned one every hour, busy or not."
    ),
    "claim": (
        "Both documents say the investment pays back in {said} ({links}). For these inputs one {new} bought "
        "instead of renting in China the {base}s whose work it does pays back in {payback} months (a per-GPU "
        "speed-up of {speedup}×; against neocloud {base} rents {neocloud} months; against owned {base}s whose book "
        "value is spent, document 000's case, {owned} months): {verdict}: {side} (the ledger's "
        "rule for cost claims)."
    ),
    "side_faster": "the documents promise a faster payback than this, by more than {tol}",
    "side_agrees": "the documents' {said} agrees with it within {tol}",
    "side_slower": "the documents' payback is slower than this, by more than {tol}",
    "months": "months",
    "days": "days",
    "ratio": "×",
}


class Words:
    """The labels of the buy-or-rent calculator in one language: :data:`WORDS_EN`, or another language's
    words with the same keys (:meth:`zh`), with each input's label (``input:<name>``, ``{gpu}`` standing for
    a generation in a per-generation name), each choice's (``choice:<label>``), each unit's (``unit:<unit>``),
    the documents' workloads (``workload:<key>``), and the verdict words."""

    def __init__(self, lang: str, text: Mapping[str, str], verdict_words: Sequence[str], unit_word: Any = None):
        missing = [k for k in WORDS_EN if k not in text]
        if missing:
            raise KeyError(f"the calculator's words in '{lang}' lack {missing}")
        self.lang, self.text, self.verdict_words, self._unit_word = lang, dict(text), tuple(verdict_words), unit_word

    @classmethod
    def en(cls) -> Words:
        return cls("en", WORDS_EN, verdicts.VERDICTS)

    @classmethod
    def zh(cls) -> Words:
        """The Chinese edition's words (data/calculator_zh.csv; verdict words data/terms_zh.csv; units
        analyses/units/zh.py where the table gives none)."""
        words = data.terms_zh("verdict")
        return cls("zh", data.calculator_zh(), [words[v] for v in verdicts.VERDICTS], zh_units.unit_word)

    def __getitem__(self, key: str) -> str:
        return self.text[key]

    def get(self, key: str, default: str) -> str:
        return self.text.get(key, default) if self.lang != "en" else default

    def label(self, i: Input, gens: Sequence[str] = ()) -> str:
        """An input's label: its own (English), or ``input:<name>`` (a generation's name as ``{gpu}``)."""
        if self.lang == "en":
            return i.label
        key = f"input:{i.name}"
        if key in self.text:
            return self.text[key]
        for g in gens:
            generic = f"input:{i.name.replace(g.lower(), '{gpu}')}"
            if generic != key and generic in self.text:
                return self.text[generic].replace("{gpu}", g)
        raise KeyError(f"the calculator's words in '{self.lang}' lack a label for input '{i.name}' (key {key})")

    def choice(self, label: str) -> str:
        return self.get(f"choice:{label}", label)

    def unit(self, unit: str) -> str:
        """A unit as the calculator prints it in this language."""
        if self.lang == "en":
            return unit
        key = f"unit:{unit}"
        if key in self.text:
            return self.text[key]
        return self._unit_word(unit).strip() if self._unit_word else unit

    def number(self, x: float, sig: int = 8) -> str:
        """A figure the form prints (a bound, a field's amount) at up to ``sig`` significant figures: in
        Chinese without thousands separators and from 10,000 in 万/亿 (1.6384万, 28.4万; notes/zh-style.md)."""
        x = float(f"{x:.{sig}g}")
        if self.lang == "zh" and abs(x) >= 1e4:
            return zh_units.wan_yi_large(x, sig)
        return readable(x).replace(",", "") if self.lang == "zh" else readable(x)

    def amount(self, x: float) -> str:
        """A money field's amount as the page's script writes it (``fieldText``): six to eight figures."""
        return self.number(x)

    def interval(self, stated: Any, unit: str) -> str:
        """A stated interval (a :class:`~analyses.verdicts.Finding`'s ``stated``) as this language writes it."""
        if self.lang == "zh":
            return zh_units.interval(float(stated.lo), float(stated.hi), unit, written=True)
        return verdicts.show_interval(stated, unit, as_stated=True)

    def allowed(self, i: Input, money: tuple[float, str] | None = None) -> str:
        """An input's allowed values in words, in the units the page shows it: a money input (``money``, the
        factor from the formulas' value to the field's and the unit the field is in) at four figures, as
        the page's script writes it when the reader changes the currency or the price basis."""
        if i.choices:
            return self["allowed_choices"].format(
                choices=self["list_separator"].join(self.choice(c) for c, _ in i.choices)
            )
        if money:
            factor, unit, sig = money[0], money[1], 4
        else:
            factor, unit, sig = 1 / i.scale, self.unit(i.shown_unit), 8
        unit = f" {unit}" if self.lang == "en" and unit not in ("", "-", "fraction", "ratio", "x") else unit
        key = "allowed_integer" if i.integer else "allowed_range"
        return self[key].format(lo=self.number(i.min * factor, sig), hi=self.number(i.max * factor, sig), unit=unit)

    def workload(self, key: str, label: str) -> str:
        return self.get(f"workload:{key}", label)

    def script(self) -> dict[str, str]:
        """The words the page's script fills in (messages, money units, sentences), by key."""
        keys = [k for k in self.text if k.startswith(("money:", "currency:", "decision_"))]
        keys += ["unfit", "errors", "message", "not_a_number", "separator", "list_separator", "never"]
        keys += ["allowed_range", "allowed_integer"]
        return {k: self.text[k] for k in keys}
