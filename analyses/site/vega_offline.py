"""Render altair charts with no network: the local Sphinx extension that ships the chart library.

altair's HTML output loads vega, vega-lite and vega-embed from a CDN unless ``window.VEGA_DEBUG``
already records the versions it asks for. At build time we write vl-convert's JavaScript bundle
(wrapped in a function scope so its top-level names cannot clash with Sphinx's ``_``) into
``_static/`` and, on pages that hold a chart, load it and preset ``VEGA_DEBUG`` with the versions
the page's chart scripts ask for. Pages without charts load nothing extra.
"""

from __future__ import annotations

import functools
import importlib.metadata
import os
import tempfile
from pathlib import Path
from typing import Any

from analyses.data import REPO_ROOT
from analyses.pages.charts import LOAD_RE

BUNDLE_NAME = "vega-offline.js"
CACHE_DIR = REPO_ROOT / "_build" / "cache"


@functools.lru_cache(maxsize=1)
def bundle_js() -> str:
    """vega + vega-lite + vega-embed as one script that defines ``window.vegaEmbed`` (~0.9 MB).

    Building it takes vl-convert seconds, so it is kept in ``_build/cache/`` under vl-convert's
    version (the bundle is a function of that version only) and reused by later processes.
    """
    cache = CACHE_DIR / f"vega-offline-{importlib.metadata.version('vl-convert-python')}.js"
    if cache.exists():
        return cache.read_text()
    import vl_convert  # heavy (a V8 engine), and needed only to build the bundle once per version

    js = "(function(){\n" + vl_convert.javascript_bundle() + "\n})();\n"
    cache.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=cache.parent, suffix=".tmp")
    with os.fdopen(fd, "w") as f:
        f.write(js)
    os.replace(tmp, cache)  # atomic: a concurrent reader sees the whole file or none
    return js


def debug_preset(html: str) -> str | None:
    """``VEGA_DEBUG`` preset (JavaScript) for the library versions the page's charts ask for."""
    versions = dict(LOAD_RE.findall(html))
    if not versions:
        return None
    items = ", ".join(f'"{lib.replace("-", "")}_version": "{ver}"' for lib, ver in sorted(versions.items()))
    return f"var VEGA_DEBUG = {{{items}}};"


def _write_bundle(app: Any) -> None:
    static = Path(app.outdir) / "_static"
    static.mkdir(parents=True, exist_ok=True)
    target = static / BUNDLE_NAME
    js = bundle_js()
    if not target.exists() or target.read_text() != js:
        target.write_text(js)


def _page_context(app: Any, pagename: str, templatename: str, context: dict, doctree: Any) -> None:
    body = context.get("body", "")
    preset = debug_preset(body) if "altair-viz-" in body else None
    if preset is None:
        return
    app.add_js_file(None, body=preset, priority=100)
    app.add_js_file(BUNDLE_NAME, priority=101)


def setup(app: Any) -> dict[str, Any]:
    """Sphinx entry point (``sphinx: extra_extensions: [analyses.site.vega_offline]`` in _config.yml)."""
    app.connect("builder-inited", _write_bundle)
    app.connect("html-page-context", _page_context)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1"}
