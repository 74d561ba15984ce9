"""The theme's page assets, trimmed: a Sphinx extension (``_config.yml``: ``extra_extensions``).

pydata-sphinx-theme loads Font Awesome's script (``fontawesome.js``, 1.5 MB) on every page to
draw about a dozen icons (menu, search, colour mode, previous and next) as inline SVG. Its own
stylesheet already draws the same icons from Font Awesome's web font, so the book overrides the
theme's ``static/webpack-macros.html`` (``analyses/site/templates/``) with one that leaves the
script out and keeps everything else the theme loads.

The book's ``layout.html`` (same folder) trims the page itself: one ``h1`` a page (the theme's
print-only copy of the title becomes a paragraph), and the search index (``searchindex.js``, about
170 KB) with Sphinx's search script only on the search page, which the search box on every page
opens (the theme's search-as-you-type, which would need them everywhere, is off); the figure
normaliser (``language_data.js``) loads where a ledger's text filter uses it.

The theme's templates also indent every line of every page (2-10 KB a page, the claims ledger
near its 150 KB budget): after the build, runs of blank space that hold a line break collapse to
one line break (:func:`collapse_blank_lines`), which changes nothing a browser shows: HTML
renders a run of white space as one space, and ``<pre>``, ``<textarea>`` and scripts are kept
as they are.

A page's large inline script (the buy-or-rent calculator's formulas, about 58 KB, in both editions)
is marked ``<script data-static="NAME">`` where it is made; the build moves its text into
``_static/NAME-<digest>.js`` and leaves ``<script src=...>`` in its place (:func:`externalise`), so
the page stays small and only the pages that embed it load it, once, from the browser's cache (the
name changes with the text, so a cached copy is never stale). It runs at the same point of the page
as before. A chapter rerun's standalone page keeps it inline (``analyses/site/export.py``).

MyST-NB wraps every number a page glues into its prose in ``<span class="output text_plain">``, a
class no stylesheet styles outside a cell's output (the cost chapter glues 159 of them, 5 KB): the
build writes the number alone (:func:`unwrap_glued`).

Sphinx copies ``_static/`` only when some page is rebuilt: a change to ``audit.css`` alone ends in
"no targets are out of date" and an old stylesheet in the site. When a static file changed since
the last build, the front page is marked updated (:func:`_static_changed`), so the build goes on
and copies them.
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path
from typing import Any

TEMPLATES = Path(__file__).with_name("templates")


def _add_templates(app: Any, config: Any) -> None:
    if str(TEMPLATES) not in config.templates_path:
        config.templates_path.insert(0, str(TEMPLATES))


# Elements whose text is kept byte for byte, and a run of blank space holding a line break.
_VERBATIM = re.compile(r"(<(pre|textarea|script|style)\b.*?</\2>)", re.DOTALL | re.IGNORECASE)
_BLANK_LINES = re.compile(r"[ \t]*\n[ \t\n]*")


def collapse_blank_lines(page: str) -> str:
    """``page`` with each run of spaces, tabs and line breaks that holds a line break reduced to
    one line break, except inside ``<pre>``, ``<textarea>``, ``<script>`` and ``<style>``."""
    parts = _VERBATIM.split(page)
    # split() returns text, then for each match the whole element and its tag name
    out = []
    for i, part in enumerate(parts):
        kind = i % 3
        if kind == 0:
            out.append(_BLANK_LINES.sub("\n", part))
        elif kind == 1:
            out.append(part)
    return "".join(out)


def _collapse_pages(app: Any, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    for path in Path(app.outdir).rglob("*.html"):
        text = path.read_text(encoding="utf-8")
        slim = collapse_blank_lines(text)
        if slim != text:
            path.write_text(slim, encoding="utf-8")


def static_digest(confdir: str | Path, static_paths: list[str]) -> str:
    """Digest of every file (path and bytes) under the project's static folders."""
    h = hashlib.sha256()
    for folder in static_paths:
        root = Path(confdir) / folder
        for path in sorted(p for p in root.rglob("*") if p.is_file()) if root.is_dir() else ():
            h.update(f"\0{path.relative_to(root).as_posix()}\0".encode())
            h.update(path.read_bytes())
    return h.hexdigest()


_STATIC_SCRIPT = re.compile(r'<script data-static="([a-z][a-z0-9-]*)">(.*?)</script>', re.DOTALL)


def externalise(body: str, write: Any, href: Any) -> str:
    """``body`` with each ``<script data-static="NAME">TEXT</script>`` replaced by a script loaded from
    ``_static/NAME-<digest of TEXT>.js``: ``write(file name, text)`` stores it, ``href(file name)``
    gives its address from the page."""

    def moved(m: re.Match) -> str:
        name = f"{m.group(1)}-{hashlib.sha256(m.group(2).encode()).hexdigest()[:12]}.js"
        write(name, m.group(2))
        return f'<script src="{href(name)}"></script>'

    return _STATIC_SCRIPT.sub(moved, body)


def _write_static(app: Any, name: str, text: str) -> None:
    target = Path(app.outdir) / "_static" / name
    if target.exists() and target.read_text(encoding="utf-8") == text:
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, target)  # atomic: a page written in parallel sees the whole file or none


_GLUED = re.compile(r'<span class="output text_plain">([^<]*)</span>')


def unwrap_glued(body: str) -> str:
    """``body`` with each number glued into prose (MyST-NB's ``<span class="output text_plain">``
    around plain text) written alone."""
    return _GLUED.sub(r"\1", body)


def _slim_body(app: Any, pagename: str, templatename: str, context: dict, doctree: Any) -> None:
    if "body" not in context:  # the index and search pages
        return
    body = unwrap_glued(context["body"])
    if "<script data-static=" in body:
        pathto = context["pathto"]
        body = externalise(
            body, lambda name, text: _write_static(app, name, text), lambda name: pathto(f"_static/{name}", 1)
        )
    context["body"] = body


def _static_changed(app: Any, env: Any) -> list[str]:
    digest = static_digest(app.confdir, list(app.config.html_static_path))
    if getattr(env, "audit_static_digest", None) == digest:
        return []
    env.audit_static_digest = digest
    return [app.config.root_doc]


def setup(app: Any) -> dict[str, Any]:
    """Sphinx entry point."""
    app.connect("config-inited", _add_templates)
    app.connect("env-get-updated", _static_changed)
    app.connect("html-page-context", _slim_body)
    app.connect("build-finished", _collapse_pages)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1"}
