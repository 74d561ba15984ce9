"""Notebooks as prose: every glued name a chapter's prose uses is produced by its notebook, and a
notebook glues its numbers and phrases in one call (``glue_all(text.glued(res))``), its figures,
tables and verdict box one by one.

The prose twin (``prose/<slug>.md``) is what a writer edits; a ``{glue:}`name``` there that the
executed notebook never glued renders as an error on the page (and a warning jupyter-book's ``-W``
turns into a failed build only when the page is rebuilt).
"""

from __future__ import annotations

import ast
import re

import nbformat
import pytest

from analyses.site import build, deps

# Uses of a glued name in MyST: the inline role, and the block directives.
ROLE = re.compile(r"\{glue(?::(?:any|text|md)?)?\}`([^`]+)`")
DIRECTIVE = re.compile(r"^(?:```|~~~)\{glue(?::(?:any|figure|math|md)?)?\}[ \t]+(\S+)", re.M)
# What a notebook may glue by itself beside its one ``glue_all``: figures (``fig-``), tables (``tab-``)
# and the verdict box, not numbers.
RICH = re.compile(r"^(?:fig-|tab-|verdict-box$)")
# Notebooks still gluing numbers one call at a time (none since the ledger's pages were converted). A
# converted notebook must leave this set: the test below is a strict xfail for these, so it fails the
# day one is converted and not removed.
PENDING: set[str] = set()


def glue_uses(markdown: str) -> set[str]:
    """Every glued name ``markdown`` shows (roles and directives)."""
    return set(ROLE.findall(markdown)) | set(DIRECTIVE.findall(markdown))


def glued_names(nb: nbformat.NotebookNode) -> set[str]:
    """Every name an executed notebook glued (myst-nb records each as a scrapbook output)."""
    return {
        name
        for cell in nb.cells
        for out in cell.get("outputs", [])
        if (name := out.get("metadata", {}).get("scrapbook", {}).get("name"))
    }


def _rich_value(call: ast.Call) -> bool:
    """Whether a ``glue`` call glues a rich display built by the chapter's ``figures``, the page's
    ``calculator`` or ``verdict_box`` (a chart, a table, the front page's findings), not a number."""
    value = call.args[1] if len(call.args) > 1 else None
    if not isinstance(value, ast.Call):
        return False
    fn = value.func
    if isinstance(fn, ast.Attribute) and isinstance(fn.value, ast.Name):
        return fn.value.id in ("figures", "calculator")
    return isinstance(fn, ast.Name) and fn.id == "verdict_box"


def glue_calls(source: str) -> tuple[int, list[str]]:
    """In a code cell's ``source``: the number of ``glue_all`` calls, and the names of the ``glue``
    calls that glue something other than a figure, a table or the verdict box (named ``fig-``,
    ``tab-``, ``verdict-box``, or built by ``figures``/``calculator``/``verdict_box``; any other call
    counts as gluing a number: the test cannot tell what else it glues)."""
    tree = ast.parse(source)
    n_all, loose = 0, []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            if node.func.id == "glue_all":
                n_all += 1
            elif node.func.id == "glue":
                first = node.args[0] if node.args else None
                if isinstance(first, ast.JoinedStr) and first.values:  # f"fig-slider-{name}": its literal start
                    first = first.values[0] if isinstance(first.values[0], ast.Constant) else first
                name = first.value if isinstance(first, ast.Constant) and isinstance(first.value, str) else None
                if (name is None or not RICH.match(name)) and not _rich_value(node):
                    loose.append(name or ast.unparse(first) if first is not None else "?")
    return n_all, loose


@pytest.mark.parametrize(
    ("markdown", "names"),
    [
        ("costs {glue:}`own` and {glue:text}`rent`; {glue}`x`", {"own", "rent", "x"}),
        ("```{glue:figure} fig-a\n:name: fig-a\n\nA caption {glue:}`cap`.\n```", {"fig-a", "cap"}),
        ("```{glue} verdict-box\n```\n`glue` in code is no use", {"verdict-box"}),
    ],
)
def test_glue_use_detector(markdown, names):
    assert glue_uses(markdown) == names


@pytest.mark.parametrize(
    ("source", "found"),
    [
        ('res = ch.compute(cfg)\nglue_all(text.glued(res))\n_ = glue("verdict-box", box)', (1, [])),
        ('_ = glue("fig-x", chart)\nglue("tab-x", t)\nglue(f"fig-slider-{name}", c)', (0, [])),
        ('glue("findings", figures.findings(res))\nglue("bor-calculator", calculator.buy_or_rent(res))', (0, [])),
        ('glue("n", len(frame))\nglue("x", text.sentence(res))', (0, ["n", "x"])),
        ('glue("util", res.util, pct=True)\nfor k in ks:\n    glue(f"pfd_{k}", v)', (0, ["util", "pfd_"])),
    ],
)
def test_glue_call_counter(source, found):
    assert glue_calls(source) == found


def _pairs() -> list[tuple[str, object, object]]:
    return [(nb.stem, nb, deps.REPO_ROOT / "prose" / f"{nb.stem}.md") for nb in build.notebooks()]


@pytest.mark.parametrize(("slug", "notebook", "twin"), _pairs(), ids=lambda v: v if isinstance(v, str) else "")
def test_every_glued_name_in_the_prose_is_glued_by_its_notebook(slug, notebook, twin):
    used = glue_uses(twin.read_text())
    produced = glued_names(nbformat.read(notebook, as_version=4))
    assert used, f"prose/{slug}.md glues nothing"
    assert used <= produced, f"prose/{slug}.md shows names its notebook never glues: {sorted(used - produced)}"


def _notebooks() -> list[object]:
    return [
        pytest.param(nb, id=nb.stem, marks=pytest.mark.xfail(strict=True, reason="not converted yet"))
        if nb.stem in PENDING
        else pytest.param(nb, id=nb.stem)
        for nb in build.notebooks()
    ]


@pytest.mark.parametrize("notebook", _notebooks())
def test_a_notebook_glues_its_numbers_in_one_call(notebook):
    nb = nbformat.read(notebook, as_version=4)
    n_all, loose = 0, []
    for cell in nb.cells:
        if cell.cell_type == "code":
            n, names = glue_calls(cell.source)
            n_all, loose = n_all + n, loose + names
    assert (n_all, loose) == (1, []), (
        f"{notebook.name}: {n_all} glue_all call(s); numbers glued one by one: {loose}. "
        "Put them in the chapter's text.glued(res) and glue them with one glue_all call."
    )


def test_pending_names_real_notebooks():
    assert PENDING <= {nb.stem for nb in build.notebooks()}
