"""Helpers of the calculator tests (the buy-or-rent page's calculator and its Chinese edition): open a
fragment in the session's Chromium with the book's stylesheet, type into its fields, set inputs in the
formulas' own units, read its results, and the Python model they are compared with. Loaded through the
``calculators`` fixture (tests/site/conftest.py): under pytest's importlib mode test modules do not
import each other."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

STYLE = Path(__file__).parents[2] / "_static" / "audit.css"
PAGE = (
    '<!DOCTYPE html><html lang="{lang}"><head><meta charset="utf-8">'
    '<meta name="viewport" content="width=device-width, initial-scale=1"><title>{title}</title>'
    "<style>{style}</style></head><body>{fragment}</body></html>"
)
ROOT = ".audit-calculator"


def open_page(
    browser: Any,
    folder: Path,
    fragment: str,
    ready: str,
    width: int = 1280,
    lang: str = "en",
    title: str = "calculator",
) -> tuple[Any, Any]:
    """``fragment`` alone in a page of ``browser`` at ``width`` px with the book's stylesheet, once
    ``ready`` (a selector) shows: (the context, the page with the page errors it raised in ``page.errors``)."""
    path = folder / "calculator.html"
    style = STYLE.read_text(encoding="utf-8")
    path.write_text(PAGE.format(lang=lang, title=title, style=style, fragment=fragment), encoding="utf-8")
    context = browser.new_context(viewport={"width": width, "height": 844 if width < 600 else 900})
    page = context.new_page()
    page.errors = []
    page.on("pageerror", lambda exc: page.errors.append(str(exc)))
    page.goto(path.as_uri())
    page.wait_for_selector(ready)
    return context, page


def set_fields(page: Any, values: dict[str, str]) -> None:
    """Type ``values`` (field texts) into the page's calculator in one go, then let it recompute once."""
    page.evaluate(
        """values => {
            const el = document.querySelector('.audit-calculator');
            for (const [k, v] of Object.entries(values)) el.querySelector(`[data-param="${k}"]`).value = v;
            el.dispatchEvent(new Event('input', {bubbles: true}));
        }""",
        values,
    )


def set_inputs(page: Any, values: dict[str, float]) -> None:
    """Set inputs in the formulas' own units (USD per GPU, fractions): the page writes each field in the
    currency and per-unit shown, then recomputes."""
    page.evaluate("values => document.querySelector('.audit-calculator').calcSet(values)", values)


def choose(page: Any, selector: str, value: str) -> None:
    """Pick ``value`` in the select ``selector`` of the calculator (a change event, as a reader's click)."""
    page.select_option(f"{ROOT} {selector}", value)


def fields(page: Any) -> dict[str, str]:
    """Every input's text, by its ``data-param``."""
    return page.eval_on_selector_all(
        "[data-param]", "els => Object.fromEntries(els.map(e => [e.dataset.param, e.value]))"
    )


def inputs(page: Any) -> dict[str, float]:
    """The inputs the page last computed with, in the formulas' units (what it read from the fields)."""
    return page.evaluate("document.querySelector('.audit-calculator').calcInputs")


def values(page: Any) -> dict[str, str]:
    """Every result's value (``data-value``: the number behind the text), by its ``data-result``."""
    return page.eval_on_selector_all(
        "[data-result]", "els => Object.fromEntries(els.map(e => [e.dataset.result, e.dataset.value]))"
    )


def results(page: Any) -> dict[str, tuple[str, str]]:
    """Every result's value and text, by its ``data-result``."""
    return page.eval_on_selector_all(
        "[data-result]", "els => Object.fromEntries(els.map(e => [e.dataset.result, [e.dataset.value, e.textContent]]))"
    )


def python(system: Any, page: Any) -> dict[str, Any]:
    """The Python model at the inputs the page computed with."""
    return {k: v.item() for k, v in system.evaluate(inputs(page)).items()}


def same(got: str, want: object) -> bool:
    """A page value (``String(v)``) equals Python's to 4 significant figures (booleans exactly)."""
    if isinstance(want, bool):
        return got == ("true" if want else "false")
    x, y = float(got), float(want)
    if math.isinf(y) or math.isinf(x):
        return x == y
    return x == y or abs(x - y) <= 5e-5 * max(abs(x), abs(y))


def draw(system: Any, rng: np.random.Generator) -> dict[str, float]:
    """One random input combination in the formulas' units (choices left as they are: a test picks
    them as a reader does, :func:`choose`): ranges log-uniform where they span a decade or more
    (uniform otherwise), whole numbers rounded."""
    out = {}
    for i in system.inputs:
        if i.choices:
            continue
        lo, hi = i.min, i.max
        if i.name in ("tokens", "speedup_given") and rng.random() < 0.3:
            v = 0.0  # tokens per parameter x parameters; the planner's speed-up
        elif lo > 0 and hi / lo >= 10:
            v = math.exp(rng.uniform(math.log(lo), math.log(hi)))
        else:
            v = rng.uniform(max(lo, 0.0) if lo >= 0 else lo, hi)
        v = float(np.round(v)) if i.integer else float(f"{v / i.scale:.4g}") * i.scale
        # inside the bounds by a little: a money field shows eight figures, which may round a bound over it
        inside = min(max(v, lo + (hi - lo) * 1e-6), hi - (hi - lo) * 1e-6)
        out[i.name] = v if i.integer or v == 0 else inside
    return out
