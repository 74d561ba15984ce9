"""Export an executed chapter notebook to one standalone HTML page that renders offline.

Glue references in markdown (``{glue:}`name```, ``{glue:text}`name```, ```{glue:figure}``` blocks)
are resolved from the notebook's own glued outputs, since plain nbconvert does not know them, and
the vega bundle is inlined so charts render without a network.
"""

from __future__ import annotations

import copy
import html
import re
import warnings
from pathlib import Path

import nbformat

from analyses.site import vega_offline

PREFIX = "application/papermill.record/"
_ROLE_RE = re.compile(r"\{glue(?::text|:)?\}`([^`]+)`")
_FIGURE_RE = re.compile(r"```\{glue:figure\}\s+(\S+)\n((?::[^\n]*\n)*)(.*?)```", re.S)


def glued_values(nb: nbformat.NotebookNode) -> dict[str, dict[str, str]]:
    """name -> {mime: data} for every glued output of the notebook."""
    out: dict[str, dict[str, str]] = {}
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            name = output.get("metadata", {}).get("scrapbook", {}).get("name")
            if name:
                out[name] = {k[len(PREFIX) :]: v for k, v in output.get("data", {}).items() if k.startswith(PREFIX)}
    return out


def resolve_glue(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """A copy of ``nb`` whose markdown cells have their glue references replaced by the values."""
    nb = copy.deepcopy(nb)
    values = glued_values(nb)

    def figure(match: re.Match) -> str:
        bundle = values.get(match.group(1), {})
        body = bundle.get("text/html") or html.escape(bundle.get("text/plain", match.group(1)))
        caption = html.escape(match.group(3).strip())
        return f"<figure>\n{body}\n<figcaption>{caption}</figcaption>\n</figure>\n"

    def role(match: re.Match) -> str:
        return values.get(match.group(1), {}).get("text/plain", match.group(0))

    for cell in nb.cells:
        if cell.cell_type == "markdown":
            cell.source = _ROLE_RE.sub(role, _FIGURE_RE.sub(figure, cell.source))
    return nb


def to_html(notebook: Path, target: Path) -> Path:
    """Write ``notebook`` as one standalone offline HTML page at ``target``."""
    from nbconvert import HTMLExporter

    nb = resolve_glue(nbformat.read(notebook, as_version=4))
    exporter = HTMLExporter(template_name="lab")
    exporter.exclude_input_prompt = True
    exporter.exclude_output_prompt = True
    with warnings.catch_warnings():
        # glue records (application/papermill.record/...) have no HTML form; their values are
        # already substituted into the prose by resolve_glue
        warnings.filterwarnings("ignore", message="Your element with mimetype", category=UserWarning)
        body, _ = exporter.from_notebook_node(nb)
    target.write_text(vega_offline.inline_into(body))
    return target
