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

Sphinx copies ``_static/`` only when some page is rebuilt: a change to ``audit.css`` alone ends in
"no targets are out of date" and an old stylesheet in the site. When a static file changed since
the last build, the front page is marked updated (:func:`_static_changed`), so the build goes on
and copies them.
"""

from __future__ import annotations

import hashlib
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
    app.connect("build-finished", _collapse_pages)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1"}
