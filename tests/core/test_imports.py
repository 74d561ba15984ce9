"""The package's import graph: no module imports itself back, at module level or inside a function."""

from __future__ import annotations

import ast
from pathlib import Path

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


def test_the_detector_finds_a_loop():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_loops_lazy_or_not():
    graph = import_graph()
    assert "analyses.models.memory" in graph["analyses.chapters.memory"]  # the graph sees real imports
    assert cycles(graph) == []


def test_models_import_no_chapter_or_site_module():
    """Models are the bottom layer: chapters and the site read them, never the other way round."""
    graph = import_graph()
    upward = {
        m: sorted(t for t in targets if t.startswith(("analyses.chapters", "analyses.site")))
        for m, targets in graph.items()
        if m.startswith("analyses.models")
    }
    assert {m: t for m, t in upward.items() if t} == {}
