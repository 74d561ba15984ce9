"""The built book: fresh notebooks, a warning-free build, offline links, no machine paths, charts that render.

One module-scoped fixture builds the book once (``python -m analyses build``: it re-executes
nothing when the committed notebooks are fresh, then runs ``jupyter-book build -W``).
"""

from __future__ import annotations

import shutil
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest

from analyses.data import REPO_ROOT
from analyses.site import build, deps, stamps

# No console error is benign: the repeated THEBE_JS_URL declaration (analyses/site/sphinx_hooks.py)
# and the empty theme mode (_config.yml default_mode) that every page used to log are fixed.
BENIGN_CONSOLE: tuple[str, ...] = ()


def test_committed_notebooks_are_fresh():
    stale = [p.name for p in build.stale()]
    assert stale == [], f"re-run `python -m analyses build` and commit: {stale}"


def _copy_repo(tmp_path: Path) -> Path:
    """The repository's inputs (no build outputs, environments or caches) under ``tmp_path``."""
    root = tmp_path / "repo"
    skip = shutil.ignore_patterns("__pycache__", ".*", "*.egg-info", "_build", "runs")
    shutil.copytree(REPO_ROOT, root, ignore=lambda d, names: skip(d, names) | ({".venv"} & set(names)))
    return root


def _deps(nb_path: Path) -> dict:
    import nbformat

    return deps.audit_of(nbformat.read(nb_path, as_version=4), nb_path, nb_path.parents[1])["deps"]


def _readers(root: Path, rel: str) -> set[str]:
    return {p.name for p in build.notebooks(root / "book") if rel in _deps(p)["files"]}


@pytest.fixture()
def repo_copy(tmp_path) -> Path:
    root = _copy_repo(tmp_path)
    assert build.stale(root=root) == [], "the committed notebooks are stale: run `python -m analyses build`"
    return root


def test_a_data_row_stales_exactly_the_chapters_that_read_it(repo_copy):
    for rel in ("data/gpus.csv", "data/failure_logs.csv", "data/claims.csv"):
        readers = _readers(repo_copy, rel)
        assert readers, f"no chapter recorded reading {rel}"
        path = repo_copy / rel
        before = path.read_bytes()
        text = before.decode()
        last = text.rstrip("\n").rsplit("\n", 1)[1]
        path.write_text(text.replace(last, last.replace(",", ", ", 1)))  # one cell of the last row
        assert {p.name for p in build.stale(root=repo_copy)} == readers, rel
        path.write_bytes(before)
    # a table only some chapters read: not every chapter re-runs
    assert _readers(repo_copy, "data/failure_logs.csv") < {p.name for p in build.notebooks(repo_copy / "book")}


def test_a_new_file_in_a_folder_a_chapter_listed_stales_it(repo_copy):
    # data/ is read file by file through data/datapackage.json (a new table or source file joins it there);
    # the package's folder is listed, so a new module stales the chapters that imported from it
    (repo_copy / "analyses" / "zz_new.py").write_text("")
    listed = {p.name for p in build.notebooks(repo_copy / "book") if "analyses" in _deps(p)["listings"]}
    assert listed and {p.name for p in build.stale(root=repo_copy)} >= listed


def test_a_module_stales_only_the_chapters_that_imported_it(repo_copy):
    # the MIG model: read by the utilisation chapter (and the claims ledger), not by memory; most
    # models are read by every chapter now that the scenario's speed-up runs the planner
    mig = repo_copy / "analyses" / "models" / "mig.py"
    mig.write_text(mig.read_text() + "\n# touched\n")
    stale = {p.name for p in build.stale(root=repo_copy)}
    assert stale == _readers(repo_copy, "analyses/models/mig.py")
    assert "utilisation.ipynb" in stale and "memory.ipynb" not in stale
    mig.write_text(mig.read_text().replace("\n# touched\n", ""))
    export = repo_copy / "analyses" / "site" / "export.py"  # the HTML exporter: no chapter imports it
    export.write_text(export.read_text() + "\n# touched\n")
    assert build.stale(root=repo_copy) == []
    (repo_copy / "pyproject.toml").write_text((repo_copy / "pyproject.toml").read_text() + "\n")
    assert len(build.stale(root=repo_copy)) == len(build.notebooks(repo_copy / "book"))


def test_old_metadata_depends_on_everything(tmp_path):
    import nbformat

    root = tmp_path
    (root / "book").mkdir()
    (root / "data").mkdir()
    (root / "analyses").mkdir()
    (root / "pyproject.toml").write_text("[project]\n")
    (root / "data" / "t.csv").write_text("a\n1\n")
    (root / "analyses" / "m.py").write_text("X = 1\n")
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("1")])
    nb.metadata["audit"] = {"inputs_sha256": deps.inputs_digest(nb, deps.shared_inputs_digest(root))}
    nbformat.write(nb, root / "book" / "c.ipynb")
    assert build.stale(root=root) == []
    (root / "analyses" / "m.py").write_text("X = 2\n")  # never recorded as read, yet stale
    assert [p.name for p in build.stale(root=root)] == ["c.ipynb"]


def test_recorded_deps_and_digest(tmp_path):
    """deps_digest: files by content (missing counts), listings by names, pyproject always."""
    import nbformat

    root = tmp_path
    (root / "data" / "sub").mkdir(parents=True)
    (root / "pyproject.toml").write_text("[project]\n")
    (root / "data" / "a.csv").write_text("x\n1\n")
    (root / "data" / "b.csv").write_text("x\n2\n")
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("1")])
    read = {"files": ["data/a.csv", "data/absent.csv"], "listings": ["data/sub/*.csv", "data"]}
    d0 = deps.deps_digest(nb, read, deps.snapshot(root), root=root)
    (root / "data" / "b.csv").write_text("x\n3\n")  # not read: same digest
    assert deps.deps_digest(nb, read, deps.snapshot(root), root=root) == d0
    for change in (
        lambda: (root / "data" / "a.csv").write_text("x\n9\n"),
        lambda: (root / "data" / "absent.csv").write_text("x\n"),
        lambda: (root / "data" / "sub" / "new.csv").write_text("x\n"),
        lambda: (root / "data" / "c.txt").write_text(""),
        lambda: (root / "pyproject.toml").write_text("[project]\nname = 'x'\n"),
    ):
        before = deps.deps_digest(nb, read, deps.snapshot(root), root=root)
        change()
        assert deps.deps_digest(nb, read, deps.snapshot(root), root=root) != before
    report = {
        "opened": [str(root / "analyses" / "__pycache__" / "m.cpython-311.pyc"), "/usr/lib/python3/x.py"],
        "listed": [str(root / "data" / "sub")],
        "modules": [str(root / "analyses" / "m.py")],
        "reads": ["data/a.csv", "data/q/*.csv"],
    }
    assert deps.recorded_deps(report, root) == {
        "files": ["analyses/m.py", "data/a.csv"],
        "listings": ["data/q/*.csv", "data/sub"],
    }


def test_execute_records_what_the_kernel_read(tmp_path):
    import nbformat

    code = (
        "from analyses import data\n"
        "n = len(data.gpus())\n"
        f"open({str(REPO_ROOT / 'README.md')!r}).read()\n"
        f"import os; os.listdir({str(REPO_ROOT / 'tools')!r})\n"
        "print(n)"
    )
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code)])
    nbformat.write(nb, tmp_path / "probe.ipynb")
    out = build.execute(tmp_path / "probe.ipynb", tmp_path / "out.ipynb")
    written = nbformat.read(out, as_version=4)
    read = written.metadata["audit"]["deps"]
    assert len(written.cells) == 1 and written.cells[0].execution_count == 1  # probe cells removed
    # the data package names every table's files: data.py reads it, not a listing of data/
    for rel in ("README.md", "analyses/data.py", "data/datapackage.json", "data/gpus.csv", "data/gpus.schema.yaml"):
        assert rel in read["files"], rel
    assert "data/sources/hardware.csv" in read["files"]  # gpus.csv's sources are checked with it
    assert "analyses/models/memory.py" not in read["files"] and "data/prices.csv" not in read["files"]
    assert "tools" in read["listings"] and "data/datapackage.json" in read["files"]
    assert written.metadata["audit"]["inputs_sha256"] == deps.deps_digest(nb, read, deps.snapshot())


def test_a_run_whose_outputs_did_not_change_leaves_its_notebook_and_files_its_record(tmp_path):
    """promote: what a run read goes to book/inputs.json, not into the notebook; a notebook whose
    outputs are the same is not rewritten (so a data edit changes only the notebooks it changes)."""
    import nbformat

    (tmp_path / "book").mkdir()
    same, moved = tmp_path / "book" / "same.ipynb", tmp_path / "book" / "moved.ipynb"
    for path, value in ((same, "1"), (moved, "1")):
        nbformat.write(deps.normalise(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(value)])), path)
    staged = {}
    for path, value in ((same, "1"), (moved, "2")):
        nb = deps.normalise(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(value)]))
        nb.metadata["audit"] = {"inputs_sha256": f"digest-{path.stem}", "deps": {"files": [], "listings": []}}
        staged[path] = tmp_path / f"{path.stem}.staged.ipynb"
        nbformat.write(nb, staged[path])
    same_before = same.stat()
    deps.promote(staged, tmp_path)
    assert same.stat().st_mtime_ns == same_before.st_mtime_ns and not staged[same].exists()  # left as it was
    assert nbformat.read(moved, as_version=4).cells[0].source == "2"
    assert "audit" not in nbformat.read(moved, as_version=4).metadata
    filed = deps.record(tmp_path)
    assert {k: v["inputs_sha256"] for k, v in filed.items()} == {"same": "digest-same", "moved": "digest-moved"}
    assert deps.audit_of(nbformat.read(same, as_version=4), same, tmp_path)["inputs_sha256"] == "digest-same"


def test_normalise_strips_run_specific_metadata():
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.metadata["papermill"] = {"start_time": "2026-01-01T00:00:00"}
    cell = nbformat.v4.new_code_cell("1")
    cell.metadata["execution"] = {"iopub.status.busy": "2026"}
    cell.metadata["papermill"] = {"duration": 0.1}
    nb.cells = [cell]
    out = build.normalise(nb, digest="abc")
    assert "papermill" not in out.metadata and out.metadata["audit"] == {"inputs_sha256": "abc"}
    assert out.cells[0].metadata == {"tags": ["hide-input"]}  # folded by the build's rule


def test_a_cell_that_only_glues_leaves_its_code_off_the_page_and_code_is_not_highlighted():
    import nbformat

    from analyses.site import deps

    glue = nbformat.v4.new_code_cell('glue("x", 1, display=False)')
    glue.outputs = [nbformat.v4.new_output("display_data", data={"application/papermill.record/text/plain": "1"})]
    shown = nbformat.v4.new_code_cell('glue("y", 2)\nchart')
    shown.outputs = [*glue.outputs, nbformat.v4.new_output("display_data", data={"text/plain": "chart"})]
    nb = nbformat.v4.new_notebook(cells=[glue, shown, nbformat.v4.new_code_cell("quiet = 1")])
    out = build.normalise(nb)
    assert [c.metadata["tags"] for c in out.cells] == [["remove-input"], ["hide-input"], ["hide-input"]]
    assert out.metadata["language_info"]["pygments_lexer"] == "text"
    # the tag the build adds changes the page, not the computation: the digest ignores it
    assert deps.cells_digest(out) == deps.cells_digest(nb)


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.refs: list[tuple[str, str]] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if "id" in attrs:
            self.ids.add(attrs["id"])
        for key in ("href", "src"):
            if attrs.get(key):
                self.refs.append((tag, attrs[key]))


def _parse(path: Path) -> _Links:
    parser = _Links()
    parser.feed(path.read_text(errors="replace"))
    return parser


def test_links_resolve_offline(site):
    pages = sorted(p for p in site.rglob("*.html") if "_static" not in p.parts)
    assert len(pages) >= 4
    parsed = {p: _parse(p) for p in pages}
    broken = []
    for page, links in parsed.items():
        for tag, ref in links.refs:
            url = urlparse(ref)
            if url.scheme in ("http", "https"):
                if tag != "a":
                    broken.append(f"{page.name}: loads external {ref}")
                continue
            if url.scheme in ("mailto", "data", "javascript"):
                continue
            target = (page.parent / unquote(url.path)).resolve() if url.path else page
            if not target.exists():
                broken.append(f"{page.name}: missing {ref}")
            elif url.fragment and target.suffix == ".html":
                ids = parsed[target].ids if target in parsed else _parse(target).ids
                if url.fragment not in ids:
                    broken.append(f"{page.name}: no #{url.fragment} in {target.name}")
    assert broken == []


def test_no_machine_paths_in_the_site(site):
    needles = [str(REPO_ROOT), "/root/", "/tmp/", "/home/", sys.prefix]
    hits = []
    for path in site.rglob("*"):
        if path.suffix in (".html", ".js", ".css", ".txt", ".json", ".ipynb") and path.is_file():
            text = path.read_text(errors="replace")
            hits += [f"{path.relative_to(site)}: {n}" for n in needles if n in text]
    assert hits == []


def test_chapter_pages_stay_small(site):
    sizes = {p.name: p.stat().st_size for p in (site / "book").glob("*.html")}
    assert max(sizes.values()) < 400_000, sizes


def test_charts_render_offline_in_headless_chromium(site, page_visits):
    """Every page (at a phone's and a laptop's width: tests/site/conftest.py, ``page_visits``) draws
    every chart it holds, logs no console error and requests nothing outside its own files."""
    problems, checked = [], 0
    for width, visits in page_visits.items():
        for v in visits:
            name = f"{v.path.relative_to(site)} at {width} px"
            checked += bool(v.expected)
            if v.rendered < v.expected:
                problems.append(f"{name}: {v.rendered} of {v.expected} charts rendered")
            errors = [e for e in v.errors if not any(b in e for b in BENIGN_CONSOLE)]
            if errors:
                problems.append(f"{name}: console errors {errors}")
            if v.external:
                problems.append(f"{name}: requested {v.external}")
    assert checked >= 2 and problems == []


def test_sphinx_is_skipped_only_when_the_site_inputs_are_unchanged(tmp_path):
    root = tmp_path
    for rel in ("book/intro.md", "_config.yml", "_toc.yml", "pyproject.toml", "analyses/site/vega_offline.py"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(rel)
    (root / "_build" / "html").mkdir(parents=True)
    (root / "_build" / "html" / "index.html").write_text("<html></html>")
    assert not stamps.SITE.current(root)  # no stamp yet
    stamps.SITE.record(stamps.SITE.digest(root), root)
    assert stamps.SITE.current(root)
    (root / "notes").mkdir()
    (root / "notes" / "x.md").write_text("not part of the site")
    assert stamps.SITE.current(root)
    (root / "book" / "intro.md").write_text("changed")
    assert not stamps.SITE.current(root)


# The slider figures checked in the browser: (chapter, figure id, index of the slider in the chapter's result).
SLIDERS_CHECKED = (("throughput", "fig-speedup-slider", 0), ("tco", "fig-tco-slider-price", 1))


def _texts(page, fig: str) -> list[tuple[str, str]]:
    """The (text, fill colour) of every verdict label a slider figure shows (not the white marks
    written on the strips themselves)."""
    found = page.eval_on_selector_all(
        f"#{fig} g.mark-text.role-mark text", "els => els.map(e => [e.textContent, e.getAttribute('fill')])"
    )
    return [tuple(x) for x in found if x[1] != "white"]


def _expected(rows) -> list[tuple[str, str]]:
    from analyses.pages.ledger_html import VERDICT_COLOURS

    return sorted((f"{r.verdict} ({r.recomputed})", VERDICT_COLOURS[r.verdict]) for r in rows.itertuples())


def test_sliders_move_to_what_the_models_give(site, tab):
    """Move a slider on two pages: the value shown and each claim's verdict, figure and colour become
    what the chapter's own Python checks computed for that value (not a formula in JavaScript)."""
    import importlib

    import numpy as np

    from analyses import chapters

    for slug, fig, index in SLIDERS_CHECKED:
        res = chapters.module(slug).compute(chapters.spec(slug).defaults())
        # the slider as the page shows it: a price in the page's currency where the chapter converts it
        figs = importlib.import_module(f"analyses.chapters.{slug.replace('-', '_')}.figures")
        shown = getattr(figs, "_page_slider", None)
        s = shown(res, index) if shown else res.sliders[index]
        central = s.at(s.central)
        # the grid point whose verdicts differ most from the central value's
        xs = np.unique(s.grid["x"].to_numpy())
        changed = [(s.at(x)["verdict"] != central["verdict"]).sum() for x in xs]
        target = float(xs[int(np.argmax(changed))])
        assert max(changed) > 0, f"{slug}: no verdict moves over the slider's span"
        page = tab()
        page.goto((site / "book" / f"{slug}.html").as_uri())
        page.wait_for_function(
            f"document.querySelectorAll('#{fig} g.mark-text.role-mark text').length > 0", timeout=20_000
        )
        assert sorted(_texts(page, fig)) == _expected(central), slug
        page.eval_on_selector(
            f"#{fig} input[type=range]",
            "(el, x) => { el.value = x; el.dispatchEvent(new Event('input', {bubbles: true})); }",
            target,
        )
        want = _expected(s.at(target))
        for _ in range(100):  # Vega re-renders asynchronously: wait up to 10 s for the new rows
            if sorted(_texts(page, fig)) == want:
                break
            page.wait_for_timeout(100)
        shown = float(page.inner_text(f"#{fig} .vega-bind input[type=range] + span"))
        assert shown == pytest.approx(target, rel=1e-9), slug
        assert sorted(_texts(page, fig)) == want, (slug, target)


def test_each_script_is_written_once_per_page():
    """Sphinx 7.4 lists an inline script registered after Builder.init() twice, as filename None and
    as '' (sphinx-thebe's THEBE_JS_URL: 'has already been declared' on every page); the hook keeps one."""
    from sphinx.builders.html._assets import _JavaScript

    from analyses.site import sphinx_hooks

    thebe = 'const THEBE_JS_URL = "x"'
    scripts = [
        _JavaScript("_static/doctools.js", priority=200),
        _JavaScript(None, body=thebe),
        _JavaScript("_static/sphinx-thebe.js", **{"async": "async"}),
        _JavaScript("", body=thebe),
        _JavaScript("", body="var other = 1"),
    ]
    context = {"script_files": scripts}
    sphinx_hooks._drop_repeated_scripts(None, "p", "page.html", context, None)
    assert [(js.filename, js.attributes.get("body")) for js in context["script_files"]] == [
        ("_static/doctools.js", None),
        (None, thebe),
        ("_static/sphinx-thebe.js", None),
        ("", "var other = 1"),
    ]
    assert context["script_files"] is scripts  # Sphinx's own list, edited in place


def test_a_plain_sphinx_build_writes_the_downloads(tmp_path):
    """The hook writes the downloads at the end of a successful HTML build (a plain
    ``jupyter-book build .`` has working download links), and nothing after a failed one."""
    from types import SimpleNamespace

    from analyses.site import downloads, sphinx_hooks

    app = SimpleNamespace(builder=SimpleNamespace(name="html"), outdir=str(tmp_path))
    sphinx_hooks.write_downloads(app, RuntimeError("the build failed"))
    assert not (tmp_path / downloads.DOWNLOADS).exists()
    sphinx_hooks.write_downloads(app, None)
    out = tmp_path / downloads.DOWNLOADS
    import csv
    import json

    from analyses import data

    rows = list(csv.DictReader((out / "ledger.csv").open(encoding="utf-8")))
    assert [r["id"] for r in rows] == [c.id for c in data.claims()]
    assert [r["verdict"] for r in rows] == [r["verdict"] for r in json.loads((out / "ledger.json").read_text())]
    assert (out / downloads.PRINTABLE).read_text().count("<tr") >= len(rows)
    assert {p.relative_to(out / "data").as_posix() for p in (out / "data").rglob("*") if p.is_file()} == {
        p.as_posix() for p in downloads.data_files()
    }
