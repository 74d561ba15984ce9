"""The built book: fresh notebooks, a warning-free build, offline links, no machine paths, charts that render.

One module-scoped fixture builds the book once (``python -m analyses build``: it re-executes
nothing when the committed notebooks are fresh, then runs ``jupyter-book build -W``).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest

from analyses import build
from analyses.data import REPO_ROOT

HTML = REPO_ROOT / "_build" / "html"
# Console errors that every Jupyter Book 1 page logs and that do not affect the content.
BENIGN_CONSOLE = ("THEBE_JS_URL", "Got invalid theme mode")


def test_committed_notebooks_are_fresh():
    stale = [p.name for p in build.stale()]
    assert stale == [], f"re-run `python -m analyses build` and commit: {stale}"


def test_changing_a_data_row_makes_every_chapter_stale(tmp_path):
    for part in ("analyses", "data", "book"):
        shutil.copytree(REPO_ROOT / part, tmp_path / part, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO_ROOT / "pyproject.toml", tmp_path)
    assert build.stale(root=tmp_path) == []
    gpus = tmp_path / "data" / "gpus.csv"
    gpus.write_text(gpus.read_text().replace(",700,", ",701,", 1))
    assert {p.name for p in build.stale(root=tmp_path)} == {p.name for p in build.notebooks(tmp_path / "book")}


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
    assert out.cells[0].metadata == {}


@pytest.fixture(scope="module")
def built_book() -> Path:
    proc = subprocess.run([sys.executable, "-m", "analyses", "build"], cwd=REPO_ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "up to date" in proc.stdout  # nothing was re-executed: the committed outputs are current
    return HTML


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


def test_links_resolve_offline(built_book):
    pages = sorted(p for p in built_book.rglob("*.html") if "_static" not in p.parts)
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


def test_no_machine_paths_in_the_site(built_book):
    needles = [str(REPO_ROOT), "/root/", "/tmp/", "/home/", sys.prefix]
    hits = []
    for path in built_book.rglob("*"):
        if path.suffix in (".html", ".js", ".css", ".txt", ".json", ".ipynb") and path.is_file():
            text = path.read_text(errors="replace")
            hits += [f"{path.relative_to(built_book)}: {n}" for n in needles if n in text]
    assert hits == []


def test_chapter_pages_stay_small(built_book):
    sizes = {p.name: p.stat().st_size for p in (built_book / "book").glob("*.html")}
    assert max(sizes.values()) < 400_000, sizes


def test_charts_render_offline_in_headless_chromium(built_book):
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    assert chromium, "headless Chromium is required: `make chromium` installs Debian's package"
    from playwright.sync_api import sync_playwright

    pages = sorted(p for p in built_book.rglob("*.html") if "_static" not in p.parts)
    problems, checked = [], 0
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, args=["--no-sandbox", "--disable-gpu"])
        for path in pages:
            expected = len(set(re.findall(r'id="(altair-viz-[0-9a-f]+)"', path.read_text())))
            page = browser.new_page()
            errors, external = [], []
            page.on("console", lambda m, e=errors: e.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda exc, e=errors: e.append(str(exc)))
            page.on(
                "request",
                lambda r, x=external: x.append(r.url) if not r.url.startswith(("file:", "data:", "about:")) else None,
            )
            page.goto(path.as_uri())
            if expected:
                page.wait_for_function(f"document.querySelectorAll('.marks').length >= {expected}", timeout=20_000)
                checked += 1
            rendered = page.locator(".marks").count()
            name = path.relative_to(built_book)
            if rendered < expected:
                problems.append(f"{name}: {rendered} of {expected} charts rendered")
            errors = [e for e in errors if not any(b in e for b in BENIGN_CONSOLE)]
            if errors:
                problems.append(f"{name}: console errors {errors}")
            if external:
                problems.append(f"{name}: requested {external}")
            page.close()
        browser.close()
    assert checked >= 2 and problems == []
