"""Every verdict a chapter states equals its ledger row (issue 22 item 2).

A chapter states a verdict in three places: its summary table (its own ledger rows), the sentences of
its ``text.py`` (which read ``res.verdict(id)``) and the prose of its notebook. The ledger page and the
downloads come from the whole ledger. These tests fail when a chapter's rows differ from the whole
ledger's, when a sentence writes a verdict word it did not read from the ledger, or when a notebook's
prose states a verdict in words instead of gluing it.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pandas as pd
import pytest

from analyses import chapters, data, scenario, verdicts
from analyses.chapters import ledger
from analyses.scenario import generations, operations
from analyses.units.formats import round_sig

ROOT = Path(__file__).resolve().parents[2]
VERDICT_WORD = re.compile(r"\b(" + "|".join(verdicts.VERDICTS) + r")\b")
WITH_CLAIMS = sorted({c.chapter for c in data.claims()})
COMPARED = ("verdict", "direction", "holds", "flips_if", "margin", "reason")


@pytest.fixture(scope="module")
def whole(whole_assessments):
    return ledger.frame(whole_assessments).set_index("id")


@pytest.mark.parametrize("slug", WITH_CLAIMS)
def test_a_chapters_rows_are_the_ledgers(slug, chapter_results, whole):
    """The chapter's summary table at its defaults is the whole ledger's rows for its claims, word for word."""
    res = chapter_results(slug)
    mine = res.ledger.set_index("id")
    assert set(mine.index) == {c.id for c in data.claims() if c.chapter == slug}
    for cid, row in mine.iterrows():
        for col in COMPARED:
            a, b = row[col], whole.loc[cid, col]
            assert (pd.isna(a) and pd.isna(b)) or a == b, (
                f"{slug}: {cid} {col}: {a!r} in the chapter, {b!r} in the ledger"
            )
    if hasattr(res, "verdict"):  # the chapters whose sentences state verdicts read them here
        for cid in mine.index:
            assert res.verdict(cid) == whole.loc[cid, "verdict"]


def _output_strings(tree: ast.AST) -> list[tuple[int, str]]:
    """String constants of a module that can reach a page: every string literal and f-string part except
    docstrings, dictionary keys and the operands of comparisons (``verdict == "consistent"``)."""
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            for part in (node.left, *node.comparators):
                skip |= {id(n) for n in ast.walk(part)}
        elif isinstance(node, ast.Dict):
            skip |= {id(n) for k in node.keys if k is not None for n in ast.walk(k)}
        elif isinstance(node, (ast.FunctionDef, ast.Module, ast.ClassDef)) and ast.get_docstring(node) is not None:
            skip.add(id(node.body[0].value))
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip
    ]


@pytest.mark.parametrize("slug", chapters.chapter_slugs())
def test_sentences_take_their_verdicts_from_the_ledger(slug):
    """No chapter sentence or figure writes a verdict word itself: a verdict on a page is the ledger's
    (``res.verdict(id)`` or a ledger row), interpolated, never a literal that could disagree with it."""
    folder = ROOT / "analyses" / "chapters" / slug.replace("-", "_")
    found = []
    for name in ("text.py", "figures.py"):
        path = folder / name
        if not path.exists():
            continue
        for line, text in _output_strings(ast.parse(path.read_text(), str(path))):
            if VERDICT_WORD.search(text):
                found.append(f"{path.relative_to(ROOT)}:{line}: {text!r}")
    assert not found, "\n".join(found)


# Pages whose prose explains the verdicts themselves (the rules, what each verdict means): the front page
# and the ledger's overview; and the ledger's page of each document, which heads its counts per verdict
EXPLAINS_VERDICTS = {"claims", "intro"} | {s for s in chapters.chapter_slugs() if s.startswith("claims-")}


@pytest.mark.parametrize("slug", [s for s in chapters.chapter_slugs() if s not in EXPLAINS_VERDICTS])
def test_notebook_prose_glues_its_verdicts(slug):
    """A chapter's markdown never states a verdict in words: a verdict in prose is glued from the ledger,
    so the prose cannot keep a verdict the ledger has changed."""
    nb = json.loads((ROOT / "book" / f"{slug}.ipynb").read_text())
    found = []
    for i, cell in enumerate(nb["cells"]):
        if cell["cell_type"] != "markdown":
            continue
        text = re.sub(r"\{glue:[a-z]*\}`[^`]*`", "", "".join(cell["source"]))
        for m in VERDICT_WORD.finditer(text):
            found.append(f"cell {i}: ...{text[max(0, m.start() - 60) : m.end() + 20]!r}")
    assert not found, "\n".join(found)


def test_chapters_state_the_registrys_values(chapter_results):
    """A chapter that shows a named quantity shows the registry's value at its defaults, not its own."""
    s = scenario.values()
    tco = chapter_results("tco")
    assert tco.goodput == pytest.approx(float(operations.goodput(s)), rel=1e-12)
    assert tco.busy_share == pytest.approx(float(operations.busy_share(s)), rel=1e-12)
    assert tco.speedup == pytest.approx(float(generations.speedup(s, "pretrain")), rel=1e-12)
    reliability = chapter_results("reliability")
    # the named goodput is the model at the optimum to three figures (as main's derived scenario row)
    assert reliability.optimum.goodput_exact == pytest.approx(
        float(operations.goodput(s, reliability.optimum.exact_s)), rel=1e-9
    )
    assert round_sig(reliability.optimum.goodput_exact) == float(operations.goodput(s)) == s["goodput"]
