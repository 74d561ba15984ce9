"""What each step of the build was last made from: the digest of its inputs, stamped once it succeeded.

A step (the English HTML, the Chinese edition, the prose twins' sync, the downloads) is skipped
when the digest of its inputs (the names and contents of the files its patterns match, from the
repository snapshot: nothing is imported or executed) is the one its stamp under ``_build/``
recorded, and what it made is still there. The build removes a stamp before its step starts and
writes it only after the step succeeded, with the digest taken before it started: a failed or
interrupted step runs again next time, and a file edited while it ran makes it stale.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from analyses.data import REPO_ROOT
from analyses.pages.links import DOWNLOADS as DOWNLOADS_DIR
from analyses.pages.links import PRINTABLE
from analyses.site.deps import glob_regex, snapshot


def files_digest(patterns: Iterable[str], root: Path = REPO_ROOT) -> str:
    """Digest of the names and contents of the files under ``root`` matching ``patterns``."""
    snap = snapshot(root)
    h = hashlib.sha256()
    for pattern in patterns:
        rx = glob_regex(pattern)
        for rel in sorted(k for k in snap if rx.match(k)):
            h.update(f"\0{rel}\0{snap[rel]}".encode())
    return h.hexdigest()


@dataclass(frozen=True)
class Stamp:
    """A step's stamp: ``_build/<name>`` holds the digest of the files ``patterns`` match when the
    step last succeeded; ``output`` (relative to the repository) is what it made."""

    name: str
    patterns: tuple[str, ...]
    output: str | None = None

    def path(self, root: Path = REPO_ROOT) -> Path:
        return root / "_build" / self.name

    def digest(self, root: Path = REPO_ROOT) -> str:
        return files_digest(self.patterns, root)

    def current(self, root: Path = REPO_ROOT, digest: str | None = None) -> bool:
        """True when the step succeeded from exactly these inputs (``digest``: the current one) and its
        output is there."""
        stamp = self.path(root)
        if (self.output is not None and not (root / self.output).exists()) or not stamp.exists():
            return False
        return stamp.read_text().strip() == (digest or self.digest(root))

    def clear(self, root: Path = REPO_ROOT) -> None:
        self.path(root).unlink(missing_ok=True)

    def record(self, digest: str, root: Path = REPO_ROOT) -> None:
        self.path(root).parent.mkdir(parents=True, exist_ok=True)
        self.path(root).write_text(digest + "\n")


# Everything `jupyter-book build` reads for the English site: the pages, the book's config and TOC,
# the pinned dependencies and the local Sphinx extensions.
SITE = Stamp(
    "site-inputs.sha256",
    (
        "book/**/*",
        "_static/**/*",
        "_config.yml",
        "_toc.yml",
        "pyproject.toml",
        "analyses/__init__.py",
        "analyses/site/__init__.py",
        "analyses/site/vega_offline.py",
        "analyses/pages/__init__.py",
        "analyses/pages/charts.py",  # the chart script's version comment the extension reads
        "analyses/pages/encodings.py",  # the category colours charts.chart_html gives every chart
        "analyses/site/sphinx_hooks.py",
        "analyses/site/theme_assets.py",
        "analyses/site/figure_search.*",
        "analyses/site/templates/**/*",
        "analyses/site/zh_site.py",  # the link to the Chinese edition on every page
        "analyses/pages/links.py",  # ZH_DIR, the Chinese edition's folder that link points to
        "data/claims.csv",  # which chapters have a Chinese page to link to
    ),
    "_build/html/index.html",
)
# The Chinese edition (zh/): its pages are computed from the ledger at build time, so everything the
# ledger reads is an input, with its own sources, the shared static files and the dependencies.
ZH = Stamp(
    "zh-inputs.sha256",
    ("zh/**/*", "_static/**/*", "pyproject.toml", "analyses/**/*", "data/**/*"),
    "_build/html/zh/index.html",
)
# The prose twins' sync: the notebooks, their twins and the pairing rule.
TWINS = Stamp("twins-inputs.sha256", ("book/*.ipynb", "prose/*.md", "jupytext.toml"))
# What the downloads are made of: the ledger (every module and data file) and the data files.
DOWNLOADS = Stamp(
    "downloads-inputs.sha256",
    ("analyses/**/*", "data/**/*", "pyproject.toml"),
    f"_build/html/{DOWNLOADS_DIR}/{PRINTABLE}",
)
