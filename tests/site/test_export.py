"""Exported rerun pages: every figure renders offline in headless Chromium, nothing leaves the page.

The pages are made as a reader makes them (``python -m analyses run`` / ``plan`` in a fresh
process, into a temporary runs folder); the number of charts each must show is counted from the
executed notebook itself (glued figures in the prose plus chart outputs of visible cells), not
from the exporter.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from analyses.data import REPO_ROOT
from analyses.site import export, vega_offline

PLAN_PARAMS = "model_shape: llama2-7b\ntokens: 1.0e11\ndeadline_days: 10\nmax_gpus: 256\nmc_samples: 500\n"
RUNS = {
    "scaling-gap": ["run", "scaling-gap", "-p", "window_start", "2016"],
    "memory": ["run", "memory", "-p", "zero_stage", "3"],
    "tco": ["run", "tco", "-p", "mc_samples", "2000", "-p", "utilisation", "0.6"],
    "plan": ["plan", "--params-file", "{plan_yaml}"],
}
# The CLI in a fresh interpreter, writing into the folder given as the first argument.
_CLI = "import sys; from pathlib import Path; from analyses.site import cli; cli.RUNS_DIR = Path(sys.argv[1]); sys.exit(cli.main(sys.argv[2:]))"


def expected_charts(nb: nbformat.NotebookNode) -> int:
    """Charts a reader must see: glued figures named in the prose, and charts in visible outputs."""
    glued = {}
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            name = out.get("metadata", {}).get("scrapbook", {}).get("name")
            if name:
                glued[name] = json.dumps(out.get("data", {}))
    n = 0
    for cell in nb.cells:
        tags = set(cell.metadata.get("tags", []))
        if cell.cell_type == "markdown":
            n += sum("altair-viz-" in glued.get(k, "") for k in re.findall(r"\{glue:figure\}\s+(\S+)", cell.source))
        elif not tags & {"remove-cell", "remove-output"}:
            for out in cell.get("outputs", []):
                n += "altair-viz-" in out.get("data", {}).get("text/html", "")
    return n


def _recording_route(folder: str, requests: list[str], outside: list[str]):
    """A route handler that records every request and refuses those outside ``folder``."""

    def handle(route) -> None:
        url = route.request.url
        requests.append(url)
        if url.startswith(folder):
            route.continue_()
        else:  # recorded, and refused so that nothing can leave this machine
            outside.append(url)
            route.abort()

    return handle


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> dict[str, tuple[Path, Path]]:
    """name -> (notebook, page) for each run of :data:`RUNS`, made by the CLI in a fresh process."""
    runs = tmp_path_factory.mktemp("runs")
    plan_yaml = runs / "plan.yaml"
    plan_yaml.write_text(PLAN_PARAMS)
    out = {}
    for name, args in RUNS.items():
        args = [a.format(plan_yaml=plan_yaml) for a in args]
        proc = subprocess.run(
            [sys.executable, "-c", _CLI, str(runs), *args], cwd=REPO_ROOT, capture_output=True, text=True
        )
        assert proc.returncode == 0, proc.stderr[-2000:]
        notebook = Path(re.search(r"^notebook: (.+)$", proc.stdout, re.M).group(1))
        page = Path(re.search(r"^html: +(.+)$", proc.stdout, re.M).group(1))
        assert notebook.parent == runs and page.parent == runs
        out[name] = (notebook, page)
    return out


def test_rerun_pages_render_every_chart_offline_in_chromium(exported, browser):
    report, problems = {}, []
    folders = {path.parent.as_uri() + "/" for _, path in exported.values()}
    assert len(folders) == 1  # one runs folder: one page with one route visits every run
    (folder,) = folders
    context = browser.new_context(viewport={"width": 1100, "height": 900})
    page = context.new_page()
    errors: list[str] = []
    requests: list[str] = []
    outside: list[str] = []
    context.route("**/*", _recording_route(folder, requests, outside))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    for name, (notebook, path) in exported.items():
        expected = expected_charts(nbformat.read(notebook, as_version=4))
        for seen in (errors, requests, outside):
            seen.clear()
        page.goto(path.as_uri())
        roots = ".vega-embed > svg.marks, .vega-embed > canvas.marks"
        try:
            page.wait_for_function(f"document.querySelectorAll({roots!r}).length >= {expected}", timeout=20_000)
        except Exception:
            pass  # counted and reported below
        rendered = page.locator(roots).count()
        report[name] = (rendered, expected, path.stat().st_size)
        if rendered != expected:
            problems.append(f"{name}: {rendered} of {expected} charts rendered")
        if errors:
            problems.append(f"{name}: console errors {errors}")
        if outside or not requests:
            problems.append(f"{name}: requests outside {folder}: {outside} (all: {requests})")
        if page.locator("pre code").filter(has_text="<script").count():
            problems.append(f"{name}: a chart script shown as code")
    context.close()
    assert problems == [], problems
    assert all(e >= 3 for _, e, _ in report.values()), report


def test_rerun_page_shows_the_run_and_its_parameters(exported):
    notebook, path = exported["memory"]
    text = path.read_text()
    nb = nbformat.read(notebook, as_version=4)
    assert "zero_stage = 3" in text.split("run-banner", 1)[1].split("</p>", 1)[0]  # the banner names the change
    assert '<p class="label">This run\'s parameters</p>' in text
    # the book's stylesheet: the verdict box one row per claim, a card per claim on a phone
    head = text.split("</head>", 1)[0]
    assert ".audit-verdict-box li" in head and "@media (max-width: 700px)" in head
    # the layout glued in the prose is the run's (ZeRO-3), resolved from the notebook's own glue
    zero = export.glued_values(nb)["lay_zero"]["text/plain"]
    assert zero == "3" and "ZeRO-3, needs" in re.sub(r"<[^>]+>", "", text) and "{glue:" not in text
    # the vega bundle inlined once in the head; no CDN, require.js or MathJax anywhere else
    bundle = vega_offline.bundle_js()
    assert text.count(bundle) == 1 and text.index(bundle) < text.index("<body>")
    rest = text.replace(bundle, "")
    assert "require.js" not in rest and "MathJax" not in rest and "<script src" not in rest
    assert rest.count("var VEGA_DEBUG = {") == 1


def test_every_committed_chapter_renders_without_problems():
    """Each book chapter exports with every glue key, role and directive resolved and every figure captioned."""
    for path in sorted((REPO_ROOT / "book").glob("*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        text, page = export.render(nb)
        figures = sum(len(re.findall(r"\{glue:figure\}", c.source)) for c in nb.cells if c.cell_type == "markdown")
        assert page.problems == [], (path.name, page.problems)
        assert text.count("<figcaption>") == figures, path.name
        assert page.charts == expected_charts(nb), path.name
        assert not re.search(r"\{(glue|doc)[:}]", re.sub(r"<script.*?</script>", "", text, flags=re.S)), path.name


def test_markdown_html_blocks_never_swallow_chart_scripts():
    """The old defect: a blank line inside pasted chart HTML turned the script into a code block."""
    nb = nbformat.v4.new_notebook()
    chart = (
        '<div id="altair-viz-1"></div>\n\n<script type="text/javascript">\n  var x = 1;\n\n  vegaEmbed(x);\n</script>'
    )
    glue_cell = nbformat.v4.new_code_cell("glue('fig', chart)")
    glue_cell.metadata["tags"] = ["remove-cell"]
    glue_cell.outputs = [
        nbformat.v4.new_output(
            "display_data",
            data={"application/papermill.record/text/html": chart, "application/papermill.record/text/plain": "c"},
            metadata={"scrapbook": {"name": "fig", "mime_prefix": "application/papermill.record/"}},
        ),
        nbformat.v4.new_output(
            "display_data",
            data={"application/papermill.record/text/plain": "3.1 GB"},
            metadata={"scrapbook": {"name": "size", "mime_prefix": "application/papermill.record/"}},
        ),
        nbformat.v4.new_output(
            "display_data",
            data={"application/papermill.record/text/plain": "0.123456"},
            metadata={"scrapbook": {"name": "share", "mime_prefix": "application/papermill.record/"}},
        ),
    ]
    nb.cells = [
        nbformat.v4.new_markdown_cell(
            "# T\n\nIt takes {glue:}`size` and {glue:text}`size`; {glue:text}`share:.1%` of it."
        ),
        glue_cell,
        nbformat.v4.new_markdown_cell(
            "```{glue:figure} fig\n:name: fig-a\n\nA *caption*.\n```\n\nSee {numref}`fig-a`."
        ),
    ]
    text, page = export.render(nb)
    assert page.problems == []
    assert chart in text and "<pre><code" not in text
    assert text.count("3.1 GB") == 2 and "12.3%" in text and "<em>caption</em>" in text and 'href="#fig-a"' in text
    assert "Fig. 1" in text.split("<figcaption>", 1)[1]  # numbered as the book numbers figures
