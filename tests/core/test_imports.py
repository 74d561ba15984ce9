"""The package's import graph: layers that only import downwards, and no loops, at module level or
inside a function.

The layers, bottom to top (README, "The house in layers"): units and number formatting, data,
models, the scenario with the generation ladder and the models' wiring, verdict rules and
robustness, the chapters' computations (with the ledger that runs their checks), the page helpers,
the chapters' pages (each chapter's ``figures.py`` and ``text.py``), and the site (build, CLI,
export) on top. A module may import its own layer and any layer below it, never one above.
"""

from __future__ import annotations

import ast
import fnmatch
import functools
import re
from pathlib import Path

import pytest

from analyses.data import REPO_ROOT

PACKAGE = REPO_ROOT / "analyses"


def _modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(REPO_ROOT).with_suffix("").parts
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


def _resolve(name: str, modules: dict[str, Path]) -> str | None:
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


@functools.cache
def import_graph() -> dict[str, set[str]]:
    """Every ``analyses`` module's imports of other ``analyses`` modules, wherever they occur
    (``from analyses.x import y`` counts as importing ``analyses.x.y`` when that is a module)."""
    modules = _modules()
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for name, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text())):
            targets = []
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("analyses"):
                targets = [f"{node.module}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names if a.name.startswith("analyses")]
            graph[name] |= {t for t in (_resolve(x, modules) for x in targets) if t and t != name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in graph:
        if v not in index:
            visit(v)
    return found


# Bottom to top; a module belongs to the layer of its most specific (longest) matching pattern.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("units", ("analyses", "analyses.units", "analyses.units.*")),
    ("data", ("analyses.tables", "analyses.table_schema", "analyses.table_refs", "analyses.claim_values", "analyses.plausibility", "analyses.data")),
    ("models", ("analyses.models", "analyses.models.*")),
    ("scenario", ("analyses.scenario", "analyses.scenario.*")),
    ("verdicts", ("analyses.verdicts", "analyses.verdicts.*")),
    ("chapters", ("analyses.chapters", "analyses.chapters.*")),
    ("pages", ("analyses.pages", "analyses.pages.*")),
    ("chapter pages", ("analyses.chapters.*.figures", "analyses.chapters.*.text")),
    ("site", ("analyses.site", "analyses.site.*", "analyses.__main__")),
)
RANK = {name: i for i, (name, _) in enumerate(LAYERS)}


def layer(module: str) -> str:
    """The layer of ``module``: its most specific matching pattern in :data:`LAYERS`."""
    best = max(
        (
            (len(pattern), name)
            for name, patterns in LAYERS
            for pattern in patterns
            if fnmatch.fnmatchcase(module, pattern)
        ),
        default=None,
    )
    if best is None:
        raise LookupError(f"{module} belongs to no layer: add it to LAYERS (and to the README's picture)")
    return best[1]


def upward(graph: dict[str, set[str]]) -> list[str]:
    """Every import of a module from a higher layer, as 'importer (layer) -> imported (layer)'."""
    return sorted(
        f"{m} ({layer(m)}) -> {t} ({layer(t)})"
        for m, targets in graph.items()
        for t in targets
        if RANK[layer(t)] > RANK[layer(m)]
    )


def test_the_layer_detector_finds_an_upward_import():
    assert layer("analyses.chapters.tco.figures") == "chapter pages" and layer("analyses.chapters.tco") == "chapters"
    assert layer("analyses.units.formats") == "units" and layer("analyses.site.cli") == "site"
    assert upward({"analyses.models.tco": {"analyses.scenario"}, "analyses.scenario": set()}) == [
        "analyses.models.tco (models) -> analyses.scenario (scenario)"
    ]
    assert upward({"analyses.site.cli": {"analyses.chapters.ledger"}, "analyses.chapters.ledger": set()}) == []


def test_every_module_belongs_to_a_layer():
    for module in import_graph():
        layer(module)


def test_no_module_imports_from_a_layer_above_it_lazily_or_not():
    assert upward(import_graph()) == []


@pytest.mark.parametrize(
    "below", ["analyses.data", "analyses.tables", "analyses.scenario", "analyses.chapters", "analyses.site"]
)
def test_models_read_no_data_scenario_chapter_or_site(below):
    """Models are pure: numbers and frames in, numbers and frames out; the wiring sits above them."""
    graph = import_graph()
    offenders = {
        m: sorted(t for t in targets if t == below or t.startswith(below + "."))
        for m, targets in graph.items()
        if layer(m) == "models"
    }
    assert {m: t for m, t in offenders.items() if t} == {}


def test_chapters_import_no_other_chapter():
    graph = import_graph()
    chapter = lambda m: m.split(".")[2] if m.startswith("analyses.chapters.") and m.count(".") >= 2 else None  # noqa: E731
    shared = {"ledger"}  # the ledger runs every chapter's checks: it is not a chapter
    crossing = sorted(
        f"{m} -> {t}"
        for m, targets in graph.items()
        for t in targets
        if chapter(m) not in (None, *shared) and chapter(t) not in (None, *shared) and chapter(m) != chapter(t)
    )
    assert crossing == []


def test_the_detector_finds_a_loop():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_loops_lazy_or_not():
    graph = import_graph()
    assert "analyses.models.memory" in graph["analyses.chapters.memory"]  # the graph sees real imports
    assert cycles(graph) == []


def test_the_readme_draws_the_layers_the_graph_enforces():
    """README.md's picture lists these layers top to bottom, and every path its "Where do I change X"
    table names exists."""
    readme = (REPO_ROOT / "README.md").read_text()
    section = readme.split("## The house in layers", 1)[1].split("\n## ", 1)[0]
    picture = section.split("```text", 1)[1].split("```", 1)[0]
    drawn = [line[:15].strip() for line in picture.splitlines() if line[:15].strip()]
    assert drawn == [name for name, _ in reversed(LAYERS)]
    table = section.split("### Where do I change X", 1)[1]
    paths = {p for p in re.findall(r"`((?:analyses|data|tests|book)/[^`<]*?)`", table) if "*" not in p}
    assert paths and [p for p in sorted(paths) if not (REPO_ROOT / p).exists()] == []
