"""The theme's page assets, trimmed: a Sphinx extension (``_config.yml``: ``extra_extensions``).

pydata-sphinx-theme loads Font Awesome's script (``fontawesome.js``, 1.5 MB) on every page to
draw about a dozen icons (menu, search, colour mode, previous and next) as inline SVG. Its own
stylesheet already draws the same icons from Font Awesome's web font, so the book overrides the
theme's ``static/webpack-macros.html`` (``analyses/site/templates/``) with one that leaves the
script out and keeps everything else the theme loads.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

TEMPLATES = Path(__file__).with_name("templates")


def _add_templates(app: Any, config: Any) -> None:
    if str(TEMPLATES) not in config.templates_path:
        config.templates_path.insert(0, str(TEMPLATES))


def setup(app: Any) -> dict[str, Any]:
    """Sphinx entry point."""
    app.connect("config-inited", _add_templates)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1"}
