"""The book's other Sphinx hooks (``sphinx: extra_extensions`` in _config.yml): the whole site from a
plain ``jupyter-book build .``, and no script written twice.

- **Downloads**: when the HTML build finishes, the site's downloads (ledger CSV/JSON, data files,
  printable ledger; :mod:`analyses.site.downloads`) are written into it, so a plain
  ``jupyter-book build .`` links to files that exist. ``python -m analyses build`` runs Sphinx
  the same way and writes them itself only when it skips Sphinx.
- **One of each script**: Sphinx 7.4 adds an inline script registered after ``Builder.init()``
  (sphinx-thebe's ``const THEBE_JS_URL = ...`` at ``env-before-read-docs``, sphinx-togglebutton's
  selector) once with filename ``None`` through ``app.add_js_file`` and again with filename ``''``
  in ``prepare_writing``; the two assets compare unequal, so every page declared ``THEBE_JS_URL``
  twice and logged "Identifier 'THEBE_JS_URL' has already been declared" in the browser console.

Sphinx loads this module; in the package only :mod:`analyses.site.zh_site` imports it (the Chinese book
keeps one of each script the same way).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from analyses.site import downloads


def _drop_repeated_scripts(app: Any, pagename: str, templatename: str, context: dict, doctree: Any) -> None:
    """Keep one of each script on the page: an inline script added as filename ``None`` and again as
    ``''`` (see the module docstring) is one script; the first stays, in its place."""
    scripts = context.get("script_files")
    if not isinstance(scripts, list):
        return
    seen: set[tuple[str, tuple[tuple[str, str], ...]]] = set()
    unique = []
    for js in scripts:
        attributes = getattr(js, "attributes", {})
        key = (getattr(js, "filename", None) or "", tuple(sorted((k, str(v)) for k, v in attributes.items())))
        if key not in seen:
            seen.add(key)
            unique.append(js)
    scripts[:] = unique


def write_downloads(app: Any, exception: Exception | None) -> None:
    """After a successful HTML build, write the site's downloads into its output folder, so a plain
    ``jupyter-book build .`` links to files that exist (``python -m analyses build`` runs the same)."""
    if exception is not None or getattr(app.builder, "name", "") != "html":
        return
    downloads.publish(Path(app.outdir))


def setup(app: Any) -> dict[str, Any]:
    """Sphinx entry point (``sphinx: extra_extensions: [analyses.site.sphinx_hooks]`` in _config.yml)."""
    app.connect("html-page-context", _drop_repeated_scripts, priority=900)  # after every extension's own
    app.connect("build-finished", write_downloads)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1"}
