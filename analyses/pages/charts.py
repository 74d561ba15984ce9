"""Charts as the book shows them: specs with rounded floats and content-derived ids, each drawn by a
short script over the page's shared, offline chart library.

Every chart in a notebook goes through the ``book`` altair renderer (:func:`render`, enabled by
:func:`analyses.pages.notebook.setup`): its floats are rounded (:data:`CHART_DIGITS`), its datasets
and its div named by digests of what is shown, so re-executing an unchanged chapter writes identical
outputs. The script (:data:`CHART_TEMPLATE`) names the library versions it needs in a comment that
the site's Sphinx extension (:mod:`analyses.site.vega_offline`) and the run export read to load one
local bundle instead of a CDN.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from typing import Any

import altair as alt

from analyses.pages.encodings import CATEGORY_COLOURS
from analyses.units import settle

# Significant digits of every float in a chart's spec. A chart is at most about 1,000 pixels
# across, so 4 digits place every mark to the pixel; 6 keep tooltips and data exports at least as
# precise as any fact in data/ (datasheets and papers print 2-4 digits) while staying 10 orders of
# magnitude above the last bits of a double (about 1e-16 relative), which differ between CPUs
# (numpy's AVX-512 and AVX2 code paths) and after a one-ulp change of an input. A rounded value
# changes with those bits only when the value lies within 1e-16 of a 6-digit rounding boundary.
CHART_DIGITS = 6


# Below this magnitude a float in a chart is the rounding residue of a quantity that is zero by
# construction (the error of a calibration point: -5e-14 on one machine, -3.7e-12 after a one-ulp
# change of an input); no quantity the book charts is that small in its own units.
CHART_ZERO = 1e-9


def round_floats(value: Any, digits: int = CHART_DIGITS) -> Any:
    """``value`` (JSON-like: dicts, lists, numbers, strings) with every finite float rounded to
    ``digits`` significant digits (residues below :data:`CHART_ZERO` become 0); ints, strings
    and booleans as they are."""
    if isinstance(value, float):
        if not math.isfinite(value):
            return value
        return 0.0 if abs(value) < CHART_ZERO else float(f"{settle(value):.{digits}g}")
    if isinstance(value, dict):
        return {k: round_floats(v, digits) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [round_floats(v, digits) for v in value]
    return value


def digest(value: Any, n: int) -> str:
    """The first ``n`` hex digits of the SHA-256 of ``value`` as sorted JSON (content-derived ids)."""
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()[:n]


def _rename(value: Any, names: dict[str, str]) -> Any:
    if isinstance(value, str):
        return names.get(value, value)
    if isinstance(value, dict):
        return {k: _rename(v, names) for k, v in value.items()}
    if isinstance(value, list):
        return [_rename(v, names) for v in value]
    return value


def chart_spec(spec: dict) -> dict:
    """A Vega-Lite spec as the book shows it: floats rounded (:data:`CHART_DIGITS`), and datasets,
    which altair names by a hash of their full-precision values, renamed by their rounded values."""
    spec = round_floats(spec)
    datasets = spec.get("datasets") or {}
    names = {old: f"data-{digest(values, 32)}" for old, values in datasets.items()}
    if names:
        spec = _rename({k: v for k, v in spec.items() if k != "datasets"}, names)
        spec["datasets"] = {names[old]: values for old, values in datasets.items()}
    return spec


def render(spec: dict, **kwargs: Any) -> dict[str, str]:
    """The book's altair renderer: a short script that draws the rounded spec (:func:`chart_html`), in
    a div whose id is derived from the spec."""
    spec = chart_spec(spec)
    versions = {"vega": alt.VEGA_VERSION, "vega-lite": alt.VEGALITE_VERSION, "vega-embed": alt.VEGAEMBED_VERSION}
    html = chart_html(spec, f"altair-viz-{digest(spec, 20)}", versions, {"actions": False})
    return {"text/html": html}


LIBRARIES = ("vega", "vega-lite", "vega-embed")
# Each chart's script names the library versions it was made for in a comment (see chart_html).
LOAD_RE = re.compile(r"\b(vega|vega-lite|vega-embed)@([\w.]+)\b(?=[^\n]*\*/)")

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


def chart_html(spec: dict, div: str, versions: dict[str, str], options: dict[str, Any]) -> str:
    """The HTML of one chart (:data:`CHART_TEMPLATE`): ``versions`` maps each of :data:`LIBRARIES`
    to the version its spec was made for; ``options`` are vega-embed's (``mode`` added, and the
    book's category colours, :data:`analyses.pages.encodings.CATEGORY_COLOURS`)."""
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
