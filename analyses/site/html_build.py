"""The HTML step of the build: the English book and its Chinese edition, each built by jupyter-book in
a work folder of its own and put in place whole, then the downloads.

``_build/html`` is always the last complete site, or absent. jupyter-book writes into
``_build/en/`` (the English book, incremental: its Sphinx environment is kept between builds) and
``_build/zh/`` (the Chinese edition, every page re-read since its content comes from the ledger);
only a run that succeeded is copied into the site (:func:`analyses.site.staging.install`: the
English keeps the site's ``zh/`` folder, the Chinese replaces only that folder). A work folder whose
run failed or was interrupted is started afresh by the next run
(:func:`analyses.site.staging.work_folder`). Each part's stamp (:mod:`analyses.site.stamps`) is
written once its output is in place: a part that did not finish is built by the next build, a part
whose inputs did not change is skipped.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from analyses import data
from analyses.data import REPO_ROOT
from analyses.pages.links import ZH_DIR
from analyses.site import downloads, staging, stamps
from analyses.site.staging import BUILD_DIR, BuildError

SITE_DIR = BUILD_DIR / "html"  # the published site
EN_WORK = "en"  # jupyter-book's work folders under _build/ (each holds _build/html and _build/.doctrees)
ZH_WORK = "zh"


def jupyter_book(source: Path, work: Path, *options: str, what: str = "", root: Path = REPO_ROOT) -> Path:
    """Run ``jupyter-book build`` (warnings as errors) on ``source`` in the work folder ``work``; return
    the HTML folder it wrote. A failure is a :class:`BuildError` with the end of jupyter-book's output."""
    cmd = [str(Path(sys.executable).parent / "jupyter-book"), "build", str(source), "--path-output", str(work)]
    cmd += [*options, "-W", "-n", "--keep-going", "-q"]
    with staging.work_folder(work):
        proc = subprocess.run(cmd, cwd=root, capture_output=True, text=True)
        if proc.returncode != 0:
            tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-30:])
            raise BuildError(f"jupyter-book build{what} failed:\n{tail}")
    return work / "_build" / "html"


def build_english(force: bool = False, root: Path = REPO_ROOT) -> bool:
    """Build the English site (the Sphinx hook writes its downloads) and put it at ``_build/html``,
    keeping the Chinese edition's folder; skipped when its inputs are the ones of the site there
    (:data:`analyses.site.stamps.SITE`) and ``force`` is off. True when it built."""
    digest = stamps.SITE.digest(root)
    if not force and stamps.SITE.current(root, digest):
        print("The HTML is current; skipping jupyter-book.", flush=True)
        return False
    stamps.SITE.clear(root)
    html = jupyter_book(root, root / "_build" / EN_WORK, root=root)
    staging.install(html, root / "_build" / "html", keep=(ZH_DIR,))
    stamps.SITE.record(digest, root)
    return True


def build_zh(force: bool = False, root: Path = REPO_ROOT) -> bool:
    """Build the Chinese edition (``zh/``) and put it at ``_build/html/zh/``; skipped when its inputs
    are the ones of the edition there (:data:`analyses.site.stamps.ZH`). True when it built."""
    digest = stamps.ZH.digest(root)
    if not force and stamps.ZH.current(root, digest):
        print("The Chinese edition is current; skipping it.", flush=True)
        return False
    stamps.ZH.clear(root)
    html = jupyter_book(root / "zh", root / "_build" / ZH_WORK, "--all", what=" of the Chinese edition", root=root)
    staging.install(html, root / "_build" / "html" / ZH_DIR)
    stamps.ZH.record(digest, root)
    print("Built the Chinese edition (_build/html/zh/).", flush=True)
    return True


def html_step(force: bool = False, root: Path = REPO_ROOT) -> Path:
    """The English site, the Chinese edition, and the downloads when the ledger or the data changed
    without any page changing (always, while ``AUDIT_DATA_DIR`` points outside the repository: the
    stamp's digest cannot see that folder). Returns the site's front page."""
    in_repository = Path(os.path.abspath(data.DATA_DIR)) == root / "data"
    downloads_digest = stamps.DOWNLOADS.digest(root) if in_repository else None
    english = build_english(force, root)
    build_zh(force, root)
    if not english and (downloads_digest is None or not stamps.DOWNLOADS.current(root, downloads_digest)):
        stamps.DOWNLOADS.clear(root)
        downloads.publish(root / "_build" / "html")
    if downloads_digest is not None:
        stamps.DOWNLOADS.record(downloads_digest, root)
    return root / "_build" / "html" / "index.html"
