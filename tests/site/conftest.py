"""The site's shared fixtures: the book built once and one headless Chromium per test session, and
the fuzz figures.

``site`` runs ``python -m analyses build`` once per session (it re-executes nothing when the
committed notebooks are fresh, then runs ``jupyter-book build -W`` when the pages changed) for
every test that reads the built HTML; ``browser`` is one Chromium for every test that renders it.
A parallel run keeps their modules in one worker (``conftest.py`` at the root: ``SITE_MODULES``),
and the build holds a lock, so two sessions never build the book at once.

Fuzz figures: every fuzzed input is classified, and the counts are printed at the end of the run
(for the closing note: inputs tried, clean one-line errors, accepted, tracebacks, hangs, files
written on failure). ``FUZZ_EXAMPLES=500 pytest tests/site/test_fuzz.py`` runs a larger, random
campaign; ``make test`` runs a small, derandomised one."""

from __future__ import annotations

import collections
import dataclasses
import fcntl
import importlib.util
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from analyses.data import REPO_ROOT
from analyses.site import build

HTML = REPO_ROOT / "_build" / "html"
CHROMIUM_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@pytest.fixture(scope="session")
def site() -> Path:
    """The built book's HTML folder, built once per session from the committed notebooks."""
    # The test command never rewrites committed notebooks: with a stale one, fail before building.
    stale = [p.name for p in build.stale()]
    assert stale == [], f"stale notebooks (re-run `python -m analyses build` and commit): {stale}"
    lock = REPO_ROOT / "_build" / "test-site.lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    with lock.open("w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)  # released when the file closes
        proc = subprocess.run(
            [sys.executable, "-m", "analyses", "build"], cwd=REPO_ROOT, capture_output=True, text=True
        )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "up to date" in proc.stdout  # nothing was re-executed: the committed outputs are current
    return HTML


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    """One headless Chromium (Debian's package, driven by Playwright) for the session."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    assert chromium, "headless Chromium is required: `make chromium` installs Debian's package"
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=chromium, headless=True, args=CHROMIUM_FLAGS)
        yield b
        b.close()


@pytest.fixture(scope="session")
def _warm_page(browser: Any) -> Iterator[Any]:
    """One page kept open for the session: navigating it from page to page reuses its renderer process
    and the scripts it compiled (vega, the theme), about half the CPU of a new page per visit."""
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    yield context.new_page()
    context.close()


@pytest.fixture
def tab(_warm_page: Any) -> Callable[..., Any]:
    """``tab(width, height)``: the session's warm page at that viewport, for a test that navigates and
    reads; the test leaves it open. A test that listens to events, emulates print or changes the page
    otherwise opens its own with ``browser.new_page``."""

    def at(width: int = 1280, height: int = 800) -> Any:
        _warm_page.set_viewport_size({"width": width, "height": height})
        return _warm_page

    return at


# --------------------------------------------------------------------------------------------
# Every page of the built site in the browser, once per width
# --------------------------------------------------------------------------------------------

SWEEP_WIDTHS = (390, 1280)  # a phone and a laptop


@dataclasses.dataclass
class Visit:
    """What one page showed in Chromium at one width (see :func:`page_visits`)."""

    path: Path
    width: int
    expected: int  # distinct altair charts in the HTML
    rendered: int  # drawn marks ('.marks'), once the page has drawn its charts
    embedded: int  # of them inside a vega-embed container
    scroll: int  # the document's width
    inner: int  # the window's width
    lang: str  # <html lang>
    names: list[str]  # each chart's aria-label
    errors: list[str]  # console errors and uncaught page errors
    external: list[str]  # requests that left the page's own files (file:, data:, about:)


def _settled(page: Any, script: str) -> Any:
    """``page.evaluate(script)``, once more after a moment if the page replaced its document
    meanwhile (seen now and then on a page that finished loading)."""
    from playwright.sync_api import Error

    try:
        return page.evaluate(script)
    except Error:
        page.wait_for_timeout(500)
        return page.evaluate(script)


@pytest.fixture(scope="session")
def page_visits(site: Path, browser: Any) -> dict[int, list[Visit]]:
    """Every HTML page of the built site (``_static`` aside) opened once at each of
    :data:`SWEEP_WIDTHS`, waited on until it has drawn every chart it holds (20 s at most), then
    measured: charts drawn and their names, the document's width, console errors and requests that
    left the page. The offline-rendering test (test_build.py) and the screen tests (test_screens.py)
    assert on these visits; opening every page three times (once per test) cost about a minute."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    pages = sorted(p for p in site.rglob("*.html") if "_static" not in p.relative_to(site).parts)
    visits: dict[int, list[Visit]] = {}
    # One page per width, navigated from page to page (a new page per visit cost twice the CPU); each
    # visit listens with its own handlers and removes them before the next.
    context = browser.new_context()
    for width in SWEEP_WIDTHS:
        visits[width] = []
        page = context.new_page()
        page.set_viewport_size({"width": width, "height": 800})
        for path in pages:
            text = path.read_text()
            expected = len(set(re.findall(r'id="(altair-viz-[0-9a-f]+)"', text)))
            refresh = re.search(r'http-equiv="refresh" content="\d+; *url=([^"]+)"', text, re.IGNORECASE)
            errors: list[str] = []
            external: list[str] = []
            handlers = {
                "console": lambda m, e=errors: e.append(m.text) if m.type == "error" else None,
                "pageerror": lambda exc, e=errors: e.append(str(exc)),
                "request": lambda r, x=external: (
                    x.append(r.url) if not r.url.startswith(("file:", "data:", "about:")) else None
                ),
            }
            for event, handler in handlers.items():
                page.on(event, handler)
            page.goto(path.as_uri())
            if refresh:  # a redirect (the site's index.html): measured where it lands, once it has
                page.wait_for_url((path.parent / refresh.group(1)).resolve().as_uri())
            if expected:
                try:
                    page.wait_for_function(
                        f"document.querySelectorAll('.vega-embed .marks').length >= {expected}", timeout=20_000
                    )
                except PlaywrightTimeout:
                    pass  # the visit records how many were drawn; the tests say which page fell short
            page.wait_for_load_state("load")
            scroll, inner, lang = _settled(
                page, "[document.scrollingElement.scrollWidth, window.innerWidth, document.documentElement.lang]"
            )
            names = page.eval_on_selector_all(".vega-embed", "els => els.map(e => e.getAttribute('aria-label') || '')")
            visits[width].append(
                Visit(
                    path=path,
                    width=width,
                    expected=expected,
                    rendered=page.locator(".marks").count(),
                    embedded=page.locator(".vega-embed .marks").count(),
                    scroll=scroll,
                    inner=inner,
                    lang=lang,
                    names=names,
                    errors=errors,
                    external=external,
                )
            )
            for event, handler in handlers.items():
                page.remove_listener(event, handler)
        page.close()
    context.close()
    return visits


FUZZ: collections.Counter = collections.Counter()
KINDS = ("inputs", "clean one-line errors", "accepted", "tracebacks", "hangs", "files written on failure")
# tests/site/test_data_faults.py: mutations of a copy of data/ and what became of them
FAULTS: collections.Counter = collections.Counter()
FAULT_KINDS = ("mutations", "one-line errors", "tracebacks", "silent acceptances", "out-of-range values accepted")


def pytest_sessionfinish(session: pytest.Session) -> None:
    """In a parallel run, each worker hands its fuzz counters to the controller (pytest-xdist)."""
    out = getattr(session.config, "workeroutput", None)
    if out is not None:
        out["fuzz"] = dict(FUZZ)
        out["faults"] = dict(FAULTS)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    """The controller adds up the workers' fuzz counters (a pytest-xdist hook)."""
    FUZZ.update(getattr(node, "workeroutput", {}).get("fuzz", {}))
    FAULTS.update(getattr(node, "workeroutput", {}).get("faults", {}))


def pytest_terminal_summary(terminalreporter):
    if FUZZ["inputs"]:
        figures = ", ".join(f"{k}: {FUZZ[k]}" for k in KINDS)
        terminalreporter.write_sep("-", "fuzz figures")
        terminalreporter.write_line(figures)
        for key in sorted(k for k in FUZZ if k.startswith("inputs ")):
            terminalreporter.write_line(f"  {key}: {FUZZ[key]}")
    if FAULTS["mutations"]:
        terminalreporter.write_sep("-", "data fault injection")
        terminalreporter.write_line(", ".join(f"{k}: {FAULTS[k]}" for k in FAULT_KINDS))
        for key in sorted(k for k in FAULTS if k.startswith("kind: ")):
            terminalreporter.write_line(f"  {key[6:]}: {FAULTS[key]}")
    if FAULTS["frictionless: faults"]:  # test_data_faults.py: how much of the checking Table Schema expresses
        terminalreporter.write_sep("-", "data faults frictionless names (file, row, column) and ours alone")
        for key in sorted(k for k in FAULTS if k.startswith("frictionless: ")):
            terminalreporter.write_line(f"  {key[len('frictionless: ') :]}: {FAULTS[key]}")


@pytest.fixture(scope="session")
def fault_figures() -> collections.Counter:
    """The fault-injection counters (see :data:`FAULT_KINDS`)."""
    return FAULTS


@pytest.fixture(scope="session")
def fuzz_figures() -> collections.Counter:
    """The run's fuzz counters (see :data:`KINDS`)."""
    return FUZZ


@pytest.fixture(scope="session")
def calculators() -> Any:
    """tests/site/calculators.py, the calculator tests' shared helpers (loaded by path: under pytest's
    importlib mode test modules do not import each other)."""
    spec = importlib.util.spec_from_file_location("_calculators", Path(__file__).with_name("calculators.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
