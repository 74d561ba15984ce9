"""The book as a reader meets it (issue 15): readable numbers, linked sources, a usable ledger,
folded code, downloads that match the CLI, a printable ledger and a way to publish.

Unit tests run on small frames; the tests of the built site share one ``python -m analyses build``
(module fixture ``site``: nothing is re-executed when the committed notebooks are fresh).
"""

from __future__ import annotations

import copy
import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlparse

import nbformat
import pandas as pd
import pytest
import yaml

from analyses import data
from analyses.chapters import claims, sources
from analyses.chapters import ledger as book_ledger
from analyses.chapters.sources import figures as sources_figures
from analyses.data import REPO_ROOT
from analyses.pages import ledger_html, links, notebook
from analyses.site import build, deps, downloads
from analyses.units import formats

E_NOTATION = re.compile(r"(?<![\w.])[-+]?\d+(?:\.\d+)?[eE][-+]?\d+(?![\w.])")


# --------------------------------------------------------------------------------------------
# Readable numbers
# --------------------------------------------------------------------------------------------


def _cells(html_text: str) -> list[str]:
    """The text of every table cell (header and data) in ``html_text``."""
    parser = _TableText()
    parser.feed(html_text)
    return parser.cells


class _TableText(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.cells: list[str] = []
        self._depth = 0
        self._buf: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        if tag in ("td", "th"):
            self._buf = []

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._buf is not None:
            self.cells.append("".join(self._buf).strip())
            self._buf = None

    def handle_data(self, text):
        if self._buf is not None:
            self._buf.append(text)


def test_table_formats_by_column_semantics():
    frame = pd.DataFrame(
        {
            "year stated": [2018, 2025],
            "GPUs": [16384, 2147483647],
            "price (USD per GPU)": [6250.0, 25000.0],
            "USD per GPU-hour": [2.494, 11.0],
            "achievable share": [0.45, 0.875],
            "speedup": [3.0, 1.364],
            "FLOP": [3.14e23, 1.2e7],
            "tokens": [2.6e11, 1.0e10],
            "meets": [True, False],
        }
    )
    cells = _cells(notebook.table(frame, tokens="{:.2g}")._repr_html_())
    body = cells[len(frame.columns) :]
    assert body[:9] == ["2018", "16,384", "6,250", "2.49", "45%", "3.00", "3.14×10²³", "2.6×10¹¹", "yes"]
    # money to three significant figures, as prose writes it (fmt(11.0, "USD") is "11.0 USD")
    assert body[9:] == ["2025", "2,147,483,647", "25,000", "11.0", "87.5%", "1.36", "1.2×10⁷", "1×10¹⁰", "no"]
    assert not [c for c in cells if E_NOTATION.search(c)]


@pytest.mark.parametrize(
    ("spec", "value", "shown"),
    [
        ("{:,.3g}", 6250.0, "6,250"),
        ("{:,.3g}", 25000.0, "25,000"),
        ("{:,.3g}", 0.8, "0.8"),
        ("{:.3g}", 1.3015864320e10, "1.3×10¹⁰"),
        ("{:.2e}", 3.456e17, "3.46×10¹⁷"),
        ("{:.2e}", 7.25, "7.25"),
        ("{:+.1%}", 0.0336, "+3.4%"),
        ("{:.0f}", float("inf"), "∞"),
        ("money", 37500.0, "37,500"),
        ("share", 0.3, "30%"),
        ("count", 1022362.0, "1,022,362"),
        ("year", 2023, "2023"),
    ],
)
def test_explicit_formats_never_print_e_notation(spec, value, shown):
    assert _cells(notebook.table(pd.DataFrame({"x": [value]}), x=spec)._repr_html_())[1] == shown


def test_text_cells_rewrite_e_notation_but_not_ids():
    assert formats.readable_text("compute for 2.0e+12 tokens; 1e9 bytes") == "compute for 2.0×10¹² tokens; 10⁹ bytes"
    assert formats.readable_text("001_df9bc65650076e7a.txt, commit 3e5a") == "001_df9bc65650076e7a.txt, commit 3e5a"


# --------------------------------------------------------------------------------------------
# Links: sources and checks
# --------------------------------------------------------------------------------------------


def test_source_cells_link_each_known_id():
    cell = links.source_links("aiwiki-dgx-b300;v2pseo-gpu-tco-2026")
    assert cell == (
        '<a class="source-link" href="sources.html#source-aiwiki-dgx-b300">aiwiki-dgx-b300</a>; '
        '<a class="source-link" href="sources.html#source-v2pseo-gpu-tco-2026">v2pseo-gpu-tco-2026</a>'
    )
    cell = links.source_links("rajbhandari2020-zero, Fig 1 and Sec 5 (baseline)")
    assert cell.startswith('<a class="source-link" href="sources.html#source-rajbhandari2020-zero">')
    assert cell.endswith("</a>, Fig 1 and Sec 5 (baseline)")
    assert links.source_links("not-a-source & co") == "not-a-source &amp; co"


def test_references_link_urls_arxiv_and_dois_and_invent_nothing():
    assert sources.reference_links("arXiv:2407.21783") == [("arXiv:2407.21783", "https://arxiv.org/abs/2407.21783")]
    assert sources.reference_links("doi:10.1145/361147.361115") == [
        ("doi:10.1145/361147.361115", "https://doi.org/10.1145/361147.361115")
    ]
    both = sources.reference_links("arXiv:2207.02852; https://epoch.ai/blog/x")
    assert [u for _, u in both] == ["https://arxiv.org/abs/2207.02852", "https://epoch.ai/blog/x"]
    assert sources.reference_links("ifactoryapp.com (vendor listing)") == [("ifactoryapp.com (vendor listing)", None)]
    frame = sources.sources_table({"table": "all"})
    page = sources_figures.sources_html(frame)
    without = [r for r in frame["reference"] if not sources.has_link(r)]
    assert page.count('class="no-url"') == len(without)
    for sid in frame["id"]:
        assert f'<tr id="source-{sid}">' in page


def _ledger_with_new_columns() -> pd.DataFrame:
    """The real ledger with the columns the lead is adding (kind, holds, flips_if), filled in."""
    frame = book_ledger.ledger(chapter="memory")
    kinds = ["capability", "spec", "arithmetic", "recommendation", "assertion"]
    return frame.assign(
        kind=[kinds[i % len(kinds)] for i in range(len(frame))],
        holds=[0.25 * (i % 5) for i in range(len(frame))],
        flips_if=["speedup_b300_a100 < 3.2" if i % 2 else "" for i in range(len(frame))],
    )


def test_verdict_tables_anchor_every_check_and_show_new_columns():
    plain = book_ledger.ledger(chapter="memory")
    shown = ledger_html.verdict_table(plain)._repr_html_()
    for cid in plain["id"]:
        assert f'<tr id="check-{cid}">' in shown
        assert f'href="memory.html#check-{cid}"' in shown
    assert shown.index("verdict") < shown.index(">claim<")  # the verdict first
    rich = _ledger_with_new_columns()
    shown = ledger_html.verdict_table(rich)._repr_html_()
    assert "flips if" in shown and "speedup_b300_a100 &lt; 3.2" in shown
    assert ">75%<" in shown and ">capability<" in shown


def test_ledger_filters_follow_the_columns_it_has(whole_ledger):
    plain = ledger_html.LedgerTable(whole_ledger)._repr_html_()
    assert 'data-filter="verdict"' in plain and 'data-filter="document"' in plain and 'data-filter="chapter"' in plain
    assert ('data-filter="kind"' in plain) == ("kind" in whole_ledger.columns)
    one = ledger_html.LedgerTable(whole_ledger, leave_out=("document",))._repr_html_()  # a document's page
    assert 'data-filter="document"' not in one and 'data-field="document"' not in one and 'data-filter="chapter"' in one
    rich = _ledger_with_new_columns()
    shown = ledger_html.LedgerTable(rich)._repr_html_()
    assert 'data-filter="kind"' in shown and '<span data-field="kind">recommendation</span>' in shown
    assert 'data-sort-field="kind"' in shown and 'data-sort="0.750000"' in shown
    headers = re.findall(r'data-sort-col="(\d+)"(?: data-sort-field="(\w+)")?>([^<]+)<', shown)
    labels = [h[2] for h in headers]
    assert labels[0] == "verdict" and {"claim id", "kind", "holds", "flips if", "reason"} <= set(labels)
    for col in rich.columns:  # every column of the ledger has a header to sort by
        if col == ledger_html.WRITTEN:  # shown under `stated`, in its cell, sorted with it
            assert f'<small lang="zh-CN">{rich[col].iloc[0]}</small>' in shown
            continue
        if col in (*ledger_html.DOUBT_FIELDS, ledger_html.FRAME):  # a doubt shows in the verdict cell, the
            assert f'data-sort-field="{col}"' not in shown  # frame in the reason: no column of their own
            continue
        assert ledger_html.LEDGER_LABELS.get(col, col).replace("_", " ") in labels, col


# --------------------------------------------------------------------------------------------
# Folded code
# --------------------------------------------------------------------------------------------


def test_fold_rule_keeps_parameters_open_and_is_idempotent():
    nb = nbformat.v4.new_notebook()
    cells = [("x = 1", []), ("a = 1", ["parameters"]), ("secret", ["remove-cell"]), ("y", ["remove-input"]), ("z", [])]
    for src, tags in cells:
        cell = nbformat.v4.new_code_cell(src)
        cell.metadata["tags"] = list(tags)
        nb.cells.append(cell)
    nb.cells.append(nbformat.v4.new_markdown_cell("prose"))
    before = copy.deepcopy(nb)
    once = deps.fold_code_cells(nb)
    tags = [c.metadata.get("tags") for c in once.cells]
    assert tags == [["hide-input"], ["parameters"], ["remove-cell"], ["remove-input"], ["hide-input"], None]
    assert deps.fold_code_cells(once) == once
    assert deps.cells_digest(once) == deps.cells_digest(before)  # folding never re-executes a chapter


@pytest.mark.parametrize("path", build.notebooks(), ids=lambda p: p.name)
def test_committed_notebooks_fold_all_code_but_parameters(path):
    nb = nbformat.read(path, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    params = [c for c in code if "parameters" in c.metadata.get("tags", [])]
    assert len(params) == 1 and not set(params[0].metadata["tags"]) & deps.HIDDEN_TAGS
    for cell in code:
        if cell is not params[0]:
            assert set(cell.metadata.get("tags", [])) & deps.HIDDEN_TAGS, cell.source[:60]


# --------------------------------------------------------------------------------------------
# Publishing
# --------------------------------------------------------------------------------------------

WORKFLOW = REPO_ROOT / ".github" / "workflows" / "pages.yml"


def _readme_commands() -> list[str]:
    """The commands of the README's "two commands" block (``make book``, ``make test``)."""
    readme = (REPO_ROOT / "README.md").read_text()
    block = readme.split("## The two commands", 1)[1].split("```bash", 1)[1].split("```", 1)[0]
    return [line.split("#", 1)[0].strip() for line in block.strip().splitlines()]


def test_pages_workflow_runs_the_readme_commands_and_deploys_the_html():
    wf = yaml.safe_load(WORKFLOW.read_text())
    triggers = wf.get("on", wf.get(True))  # YAML 1.1 reads a bare `on` as true
    assert "push" in triggers and "workflow_dispatch" in triggers
    assert wf["permissions"] == {"contents": "read", "pages": "write", "id-token": "write"}
    steps = [s for job in wf["jobs"].values() for s in job.get("steps", [])]
    runs = [line.strip() for s in steps if "run" in s for line in s["run"].splitlines()]
    commands = _readme_commands()
    assert commands == ["make book", "make test"]
    for command in commands:
        assert command in runs, f"the workflow does not run `{command}` as the README says"
    assert runs.index("make test") < runs.index("make book")  # publish only what passed
    uses = {s["uses"].split("@")[0]: s for s in steps if "uses" in s}
    assert uses["actions/upload-pages-artifact"]["with"]["path"] == "_build/html"
    assert "actions/deploy-pages" in uses
    assert (REPO_ROOT / ".ci" / "run").read_text().count("make test") == 1  # CI runs the same command


def test_make_publish_pushes_the_built_html_with_ghp_import():
    proc = subprocess.run(["make", "-n", "publish"], cwd=REPO_ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    ghp = [line for line in lines if "ghp-import" in line and "pip" not in line]
    assert len(ghp) == 1 and ghp[0].rstrip().endswith("_build/html") and "--push" in ghp[0]
    assert any("-m analyses build" in line for line in lines)  # builds the book first
    readme = (REPO_ROOT / "README.md").read_text()
    assert "make publish" in readme and "pages.yml" in readme


def test_ghp_import_commits_the_site_to_a_pages_branch(tmp_path):
    """What ``make publish`` runs, without ``--push`` (no network): a gh-pages branch holding the site."""
    ghp = shutil.which("ghp-import", path=str(Path(sys.executable).parent))
    assert ghp, "ghp-import is a test dependency (pyproject.toml [test])"
    repo = tmp_path / "repo"
    (repo / "_build" / "html").mkdir(parents=True)
    (repo / "_build" / "html" / "index.html").write_text("<html>book</html>")
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org", "GIT_COMMITTER_NAME": "t"}
    env |= {"GIT_COMMITTER_EMAIL": "t@example.org", "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    subprocess.run(["git", "init", "-q", str(repo)], check=True, env=env)
    subprocess.run([ghp, "--no-jekyll", "-m", "Publish the book", "_build/html"], cwd=repo, check=True, env=env)
    files = subprocess.run(
        ["git", "ls-tree", "--name-only", "gh-pages"], cwd=repo, capture_output=True, text=True, check=True, env=env
    ).stdout.split()
    assert sorted(files) == [".nojekyll", "index.html"]


# --------------------------------------------------------------------------------------------
# The built site
# --------------------------------------------------------------------------------------------


def _pages(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.html") if not {"_static", "_sources"} & set(p.relative_to(root).parts))


class _Page(HTMLParser):
    """Ids, links, table cells, and text shown outside links and code blocks."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.links: list[str] = []
        self.loose_text: list[tuple[str, str]] = []  # (text, id of the enclosing row)
        self._stack: list[str] = []
        self._row_id = ""

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if "id" in attrs:
            self.ids.add(attrs["id"])
        if tag == "a" and attrs.get("href"):
            self.links.append(attrs["href"])
        if tag == "tr":
            self._row_id = attrs.get("id", "")
        if tag not in ("br", "img", "meta", "link", "input", "col", "hr", "wbr"):
            self._stack.append(tag)

    def handle_endtag(self, tag):
        if tag in self._stack:
            while self._stack and self._stack.pop() != tag:
                pass

    def handle_data(self, text):
        if text.strip() and not {"a", "pre", "script", "style", "title", "textarea", "option"} & set(self._stack):
            self.loose_text.append((text, self._row_id))


def _parse(path: Path) -> _Page:
    page = _Page()
    page.feed(path.read_text(errors="replace"))
    return page


def test_no_table_in_the_book_prints_e_notation(site):
    hits = []
    for path in _pages(site):
        for cell in _cells(path.read_text(errors="replace")):
            hits += [f"{path.relative_to(site)}: {cell[:80]!r}" for _ in E_NOTATION.finditer(cell)]
    assert hits == []


def test_every_source_id_shown_is_a_link_that_resolves(site):
    known = set(data.sources()["id"])
    token = re.compile(r"[a-z0-9][a-z0-9.-]*[a-z0-9]")
    parsed = {p: _parse(p) for p in _pages(site)}
    followed, broken, unlinked = 0, [], []
    for path, page in parsed.items():
        for href in page.links:
            url = urlparse(href)
            if url.scheme or not url.fragment.startswith("source-"):
                continue
            target = (path.parent / unquote(url.path)).resolve()
            followed += 1
            if target.name != "sources.html" or url.fragment not in parsed.get(target, _Page()).ids:
                broken.append(f"{path.name}: {href}")
            elif url.fragment.removeprefix("source-") not in known:
                broken.append(f"{path.name}: {href} names no source")
        for text, row in page.loose_text:
            for sid in set(token.findall(text)) & known:
                if row != f"source-{sid}":  # a source's own entry names it without a link
                    unlinked.append(f"{path.relative_to(site)}: {sid}")
    assert broken == [] and unlinked == []
    assert followed > 0  # ids shown are links (above), and every link was followed
    sources_page = parsed[site / "book" / "sources.html"]
    assert {f"source-{sid}" for sid in known} <= sources_page.ids


def ledger_page(document: str) -> str:
    """The ledger page of ``document`` (one page per document: claims-000.html)."""
    return f"claims-{ledger_html.short_document(document)}.html"


def test_every_claim_links_to_the_row_of_its_check(site, whole_ledger):
    """Each claim is on its document's ledger page, and only there, with a link to its check."""
    ledger = whole_ledger
    pages = {d: _parse(site / "book" / ledger_page(d)) for d in set(ledger["document"])}
    ids = {c: _parse(site / "book" / f"{c}.html").ids for c in set(ledger["chapter"])}
    for row in ledger.to_dict("records"):
        href = f"{row['chapter']}.html#check-{row['id']}"
        for document, page in pages.items():
            assert (href in page.links) == (document == row["document"]), (href, document)
        assert f"check-{row['id']}" in ids[row["chapter"]], href


def test_downloads_match_the_cli_and_the_data_byte_for_byte(site):
    out = site / downloads.DOWNLOADS
    for fmt in ("csv", "json"):
        cli = subprocess.run(
            [sys.executable, "-m", "analyses", "verdicts", "--format", fmt], cwd=REPO_ROOT, capture_output=True
        )
        assert cli.returncode == 0
        assert (out / f"ledger.{fmt}").read_bytes() == cli.stdout, fmt
    files = downloads.data_files()
    assert len(files) >= 2 * len(data.table_names()) - 1  # every table's CSV(s) and schema
    for rel in files:
        assert (out / "data" / rel).read_bytes() == (data.DATA_DIR / rel).read_bytes(), rel
    claims_page = _parse(site / "book" / "claims.html").links
    sources_page = _parse(site / "book" / "sources.html").links
    for name in ("ledger.csv", "ledger.json"):
        assert f"../downloads/{name}" in claims_page and f"../downloads/{name}" in sources_page
    assert f"../downloads/{downloads.PRINTABLE}" in claims_page
    for name in data.table_names():
        assert any(h.startswith(f"../downloads/data/{name}") for h in sources_page), name


def test_the_printable_ledger_holds_the_counts_and_every_claim(site, whole_ledger):
    page = (site / downloads.DOWNLOADS / downloads.PRINTABLE).read_text()
    ledger = whole_ledger
    assert "@media print" in page and "@page" in page and "display: table-header-group" in page
    for cid in ledger["id"]:
        assert f"../book/{ledger.set_index('id').loc[cid, 'chapter']}.html#check-{cid}" in page
    summary = claims.summary(ledger, "chapter").set_index("chapter")
    assert summary.loc["all", "total"] == len(ledger)
    cells = _cells(page)
    for verdict, n in ledger["verdict"].value_counts().items():
        assert f"{n} {verdict}" in page
        assert str(n) in cells


# --------------------------------------------------------------------------------------------
# In a browser (fixtures ``site`` and ``browser``: tests/site/conftest.py)
# --------------------------------------------------------------------------------------------


def _visible_rows(page) -> list[dict]:
    """Each shown row's verdict (what the filter compares: a verdict in doubt's data-value, else the text)
    and id."""
    return page.eval_on_selector_all(
        ".audit-ledger tbody tr",
        """rows => rows.filter(r => r.offsetParent !== null).map(r => ({
            verdict: (f => f.getAttribute('data-value') || f.textContent.trim())(r.querySelector('[data-field="verdict"]')),
            id: r.querySelector('[data-field="id"]').textContent.trim()}))""",
    )


def test_ledger_page_filters_sorts_and_links_at_1280_px(site, browser, whole_ledger):
    doc = "001_df9bc65650076e7a.txt"  # the document with every verdict but one: its page's filters have most to do
    ledger = whole_ledger
    ledger = ledger[ledger["document"] == doc]
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto((site / "book" / ledger_page(doc)).as_uri())
    page.wait_for_selector(".ledger-controls:not([hidden])")
    widths = page.evaluate(
        """() => { const d = document.documentElement, t = document.querySelector('.audit-ledger table');
                   return [d.scrollWidth, d.clientWidth, t.scrollWidth, t.clientWidth,
                           t.getBoundingClientRect().right]; }"""
    )
    assert widths[0] <= widths[1] and widths[2] <= widths[3] and widths[4] <= 1280, widths
    assert len(_visible_rows(page)) == len(ledger)
    assert page.locator('select[data-filter="document"]').count() == 0  # one document: nothing to choose

    page.select_option('select[data-filter="verdict"]', "inconsistent")
    rows = _visible_rows(page)
    assert {r["verdict"] for r in rows} == {"inconsistent"}
    assert len(rows) == (ledger["verdict"] == "inconsistent").sum()
    assert page.inner_text(".ledger-count") == f"{len(rows)} of {len(ledger)} claims"
    chapter = ledger.loc[ledger["verdict"] == "inconsistent", "chapter"].iloc[0]
    page.select_option('select[data-filter="chapter"]', chapter)
    rows = _visible_rows(page)
    expected = ledger[(ledger["verdict"] == "inconsistent") & (ledger["chapter"] == chapter)]
    assert sorted(r["id"] for r in rows) == sorted(expected["id"]) and rows
    page.select_option('select[data-filter="verdict"]', "")
    page.select_option('select[data-filter="chapter"]', "")
    assert len(_visible_rows(page)) == len(ledger)

    page.click('button[data-sort-field="id"]')
    ids = [r["id"] for r in _visible_rows(page)]
    assert ids == sorted(ids, key=lambda s: [int(p) if p.isdigit() else p for p in re.split(r"(\d+)", s.lower())])
    page.click('button[data-sort-field="id"]')
    assert [r["id"] for r in _visible_rows(page)] == ids[::-1]
    page.click('th button[data-sort-col="0"]')  # verdicts in the book's order
    order = {v: i for i, v in enumerate(ledger_html.VERDICT_COLOURS)}
    ranks = [order[r["verdict"]] for r in _visible_rows(page)]
    assert ranks == sorted(ranks)

    target = _visible_rows(page)[-1]
    claim = ledger.set_index("id").loc[target["id"]]
    page.click(f'.audit-ledger tbody tr [data-field="id"] a[href$="#check-{target["id"]}"]')
    page.wait_for_load_state()
    assert page.url.endswith(f"book/{claim['chapter']}.html#check-{target['id']}")
    landed = page.locator(f'tr[id="check-{target["id"]}"]')
    assert landed.count() == 1 and landed.is_visible()
    assert page.evaluate("document.querySelector(':target').id") == f"check-{target['id']}"
    box = landed.bounding_box()
    assert box is not None and 0 <= box["y"] < 900  # scrolled into view
    assert errors == []  # no console error (THEBE_JS_URL and the theme mode used to be logged)
    page.close()


def test_the_printable_ledger_prints_to_pdf(site, browser, tmp_path):
    page = browser.new_page()
    page.goto((site / downloads.DOWNLOADS / downloads.PRINTABLE).as_uri())
    pdf = page.pdf(path=str(tmp_path / "ledger.pdf"), prefer_css_page_size=True, print_background=True)
    page.close()
    assert pdf.startswith(b"%PDF")
    pages = len(re.findall(rb"/Type\s*/Page[^s]", pdf))
    assert 2 <= pages <= 40, pages
