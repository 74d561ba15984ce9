"""Render altair charts with no network: a local Sphinx extension and an HTML helper.

altair's HTML output loads vega, vega-lite and vega-embed from a CDN unless ``window.VEGA_DEBUG``
already records the versions it asks for. At build time we write vl-convert's JavaScript bundle
(wrapped in a function scope so its top-level names cannot clash with Sphinx's ``_``) into
``_static/`` and, on pages that hold a chart, load it and preset ``VEGA_DEBUG`` with the versions
the page's chart scripts ask for. Pages without charts load nothing extra.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import Any

from analyses.data import REPO_ROOT

BUNDLE_NAME = "vega-offline.js"
LIBRARIES = ("vega", "vega-lite", "vega-embed")
# Each chart's script names the library versions it was made for in a comment (see chart_html).
_LOAD_RE = re.compile(r"\b(vega|vega-lite|vega-embed)@([\w.]+)\b(?=[^\n]*\*/)")

# A chart in a page: the div and a short script that draws the spec with the vegaEmbed the page
# already loaded (the book's pages and exported runs load the bundle in their head). In Jupyter,
# where no bundle is loaded, the script loads the three libraries first, as altair's own
# template does. About 0.8 KB per chart instead of altair's 2.4 KB.
CHART_TEMPLATE = """<div id="{div}"></div>
<script type="text/javascript">
/* {versions} */
(function (spec) {{
  var el = document.getElementById("{div}");
  function show() {{
    vegaEmbed(el, spec, {options}).catch(function (e) {{
      el.innerHTML = '<div class="error" style="color:red;">' + e.message + "</div>";
    }});
  }}
  if (typeof vegaEmbed === "function") {{ show(); return; }}
  var urls = {urls};
  (function next(i) {{
    if (i === urls.length) {{ show(); return; }}
    var s = document.createElement("script");
    s.src = urls[i];
    s.onload = function () {{ next(i + 1); }};
    document.head.appendChild(s);
  }})(0);
}})({spec});
</script>"""


CACHE_DIR = REPO_ROOT / "_build" / "cache"


@functools.lru_cache(maxsize=1)
def bundle_js() -> str:
    """vega + vega-lite + vega-embed as one script that defines ``window.vegaEmbed`` (~0.9 MB).

    Building it takes vl-convert seconds, so it is kept in ``_build/cache/`` under vl-convert's
    version (the bundle is a function of that version only) and reused by later processes.
    """
    import importlib.metadata
    import os
    import tempfile

    cache = CACHE_DIR / f"vega-offline-{importlib.metadata.version('vl-convert-python')}.js"
    if cache.exists():
        return cache.read_text()
    import vl_convert

    js = "(function(){\n" + vl_convert.javascript_bundle() + "\n})();\n"
    cache.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=cache.parent, suffix=".tmp")
    with os.fdopen(fd, "w") as f:
        f.write(js)
    os.replace(tmp, cache)  # atomic: a concurrent reader sees the whole file or none
    return js


def chart_html(spec: dict, div: str, versions: dict[str, str], options: dict[str, Any]) -> str:
    """The HTML of one chart (:data:`CHART_TEMPLATE`): ``versions`` maps each of :data:`LIBRARIES`
    to the version its spec was made for; ``options`` are vega-embed's (``mode`` added, and the
    book's category colours, :data:`analyses.site.encodings.CATEGORY_COLOURS`)."""
    import json

    from analyses.site.encodings import CATEGORY_COLOURS

    named = " ".join(f"{lib}@{versions[lib]}" for lib in LIBRARIES)
    # the book's category colours (each visible on the white chart: 3:1), unless the spec sets its own
    options = {"config": {"range": {"category": list(CATEGORY_COLOURS)}}, **options}
    urls = [f"https://cdn.jsdelivr.net/npm/{lib}@{versions[lib]}" for lib in LIBRARIES]
    return CHART_TEMPLATE.format(
        div=div,
        versions=named,
        options=json.dumps({**options, "mode": "vega-lite"}),
        urls=json.dumps(urls),
        spec=json.dumps(spec, separators=(",", ":")),
    )


def debug_preset(html: str) -> str | None:
    """``VEGA_DEBUG`` preset (JavaScript) for the library versions the page's charts ask for."""
    versions = dict(_LOAD_RE.findall(html))
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
