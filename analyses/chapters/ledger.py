"""The claims ledger: every claim of both documents with its check's recomputation, verdict and robustness.

Checks live in the chapter packages listed in :data:`analyses.chapters.CHAPTERS`; a claim's check is
in the package of its ``chapter`` (``data/claims.csv``). :func:`ledger` runs them at a chapter's
configuration (its defaults, i.e. the scenario's central values, when none is given) and applies
the rule of each claim's kind (:mod:`analyses.verdicts`).
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from analyses import chapters, data, verdicts
from analyses.scenario import cases
from analyses.scenario.generations import SPEEDUP
from analyses.verdicts import robustness, sweeps
from analyses.verdicts.sweeps import Slider

LEDGER_COLUMNS = [
    "id",
    "document",
    "section",
    "topic",
    "kind",
    "claim",
    "stated",
    "written",
    "recomputed",
    "verdict",
    "shown",
    "depends_on",
    "threshold",
    "above",
    "below",
    "direction",
    "holds",
    "flips_if",
    "margin",
    "reason",
    "frame",
    "chapter",
]
"""The ledger's columns. ``shown`` is the verdict as every page and download shows it: the verdict, or
for a verdict in doubt (:class:`analyses.verdicts.robustness.Doubt`: it holds in fewer than half the
draws, or its flip point lies inside its input's 90% range) "depends on <input>: <verdict> above X,
<verdict> below", with ``depends_on``, ``threshold`` (as the ledger writes it), ``above`` and
``below`` its parts (empty when not in doubt). ``frame`` names the buyer's frame the row judges in
(:mod:`analyses.scenario.frame`)."""


def checks_in(module: Any) -> dict[str, verdicts.CheckFn]:
    """Every check defined in a chapter package or its ``checks`` submodule, by claim id."""
    out: dict[str, verdicts.CheckFn] = {}
    spaces = [module]
    if importlib.util.find_spec(f"{module.__name__}.checks") is not None:
        spaces.append(importlib.import_module(f"{module.__name__}.checks"))
    for space in spaces:
        for obj in vars(space).values():
            for claim_id in getattr(obj, "claim_ids", ()):
                if claim_id in out and out[claim_id] is not obj:
                    raise ValueError(f"claim {claim_id} has two checks in {module.__name__}")
                out[claim_id] = obj
    return out


def checks(chapter: str) -> dict[str, verdicts.CheckFn]:
    """The checks of one chapter by claim id."""
    return checks_in(chapters.module(chapter))


def all_checks() -> dict[str, verdicts.CheckFn]:
    """Every check of the book by claim id."""
    out: dict[str, verdicts.CheckFn] = {}
    for slug in chapters.CHAPTERS:
        out.update(checks(slug))
    return out


def verify(chapter: str | None = None) -> None:
    """The claim rows and the checks match (of ``chapter``, or of the whole book): every claim row
    has exactly one check, in its chapter's package, and every check names a claim row of its
    chapter. A deleted claim row, a misspelt id or a claim moved to another chapter raises one
    :class:`~analyses.data.DataError` line naming data/claims.csv (and the row where there is
    one), so the ledger is never silently shorter than the book's checks."""
    by_id = {c.id: c for c in data.claims()}
    # the chapters claims name, and those with a checks module (found without importing the others:
    # a chapter's kernel imports only what it reads, and the build records it)
    folder = Path(chapters.__file__).parent
    with_checks = {s for s in chapters.CHAPTERS if (folder / s.replace("-", "_") / "checks.py").exists()}
    named = {c.chapter for c in by_id.values()}
    for slug in [chapter] if chapter is not None else [s for s in chapters.CHAPTERS if s in with_checks | named]:
        for claim_id, fn in checks(slug).items():
            where = f"{fn.__module__}.{getattr(fn, '__name__', 'check')}"
            claim = by_id.get(claim_id)
            if claim is None:
                raise data.DataError(
                    "data/claims.csv", f"no row for claim '{claim_id}', which {where} checks (was the row deleted?)"
                )
            if claim.chapter != slug:
                raise data.DataError(
                    claim.file, f"claim {claim_id} is checked in chapter {slug} ({where})", claim.row, "chapter"
                )
    for claim in by_id.values():
        if (chapter is None or claim.chapter == chapter) and claim.id not in checks(claim.chapter):
            raise data.DataError(
                claim.file, f"claim {claim.id} has no check in chapter {claim.chapter}", claim.row, "chapter"
            )


def evaluate(claim: data.Claim, cfg: Mapping[str, Any] | None = None, robust: bool = True) -> robustness.Assessment:
    """Assess one claim with its chapter's configuration (defaults when None)."""
    found = checks(claim.chapter)
    if claim.id not in found:
        raise data.DataError(
            claim.file, f"claim {claim.id} has no check in chapter {claim.chapter}", claim.row, "chapter"
        )
    fn = found[claim.id]
    if cfg is None:
        cfg = chapters.defaults(claim.chapter)
    return robustness.assess(fn, claim, cfg, robust=robust)


def assessments(
    chapter: str | None = None, cfg: Mapping[str, Any] | None = None, ids: Sequence[str] | None = None
) -> list[robustness.Assessment]:
    """Assessments of every claim (of ``chapter``, or only ``ids``), in ledger order; the whole
    ledger or a chapter's first checks that its claim rows and checks match (:func:`verify`)."""
    if ids is None:
        verify(chapter)
    out = []
    for claim in data.claims():
        if chapter is not None and claim.chapter != chapter:
            continue
        if ids is not None and claim.id not in ids:
            continue
        out.append(evaluate(claim, cfg if chapter is not None else None))
    return out


def frame(rows: Sequence[robustness.Assessment]) -> pd.DataFrame:
    """Assessments as the ledger table (:data:`LEDGER_COLUMNS`)."""
    records = []
    for a in rows:
        c = a.claim
        records.append(
            {
                "id": c.id,
                "document": c.document,
                "section": c.section,
                "topic": c.topic,
                "kind": a.kind,
                "claim": c.claim,
                "stated": c.stated,
                "written": c.written,
                "recomputed": a.recomputed,
                "verdict": a.verdict,
                "shown": a.shown,
                "depends_on": a.doubt.depends_on if a.doubt else "",
                "threshold": a.doubt.threshold_text if a.doubt else "",
                "above": a.doubt.above if a.doubt else "",
                "below": a.doubt.below if a.doubt else "",
                "direction": a.direction,
                "holds": a.holds,
                "flips_if": a.flips_if,
                "margin": a.margin,
                "reason": a.reason,
                "frame": "; ".join(dict.fromkeys(ch.words for ch in a.frame)),
                "chapter": c.chapter,
            }
        )
    return pd.DataFrame(records, columns=LEDGER_COLUMNS)


def ledger(
    chapter: str | None = None, cfg: Mapping[str, Any] | None = None, ids: Sequence[str] | None = None
) -> pd.DataFrame:
    """The claims ledger (:data:`LEDGER_COLUMNS`): all claims, one chapter's at ``cfg``, or ``ids``."""
    return frame(assessments(chapter, cfg, ids))


def documents_values(name: str) -> tuple[float, ...]:
    """The documents' own figures for assumption ``name`` (their 2.5-3x for the B300/A100 speed-up), which
    every slider over it reaches so a reader can dial the documents' claim; none for other assumptions."""
    return tuple(cases.stated_speedup()) if name == SPEEDUP else ()


def slider(
    name: str, claim_ids: Sequence[str], cfg_by_chapter: Mapping[str, Mapping[str, Any]] | None = None
) -> Slider:
    """Precompute a slider over assumption ``name`` for ``claim_ids`` (:func:`analyses.verdicts.sweeps.slider`),
    each claim checked by its chapter's check at ``cfg_by_chapter[chapter]`` (the chapter's defaults
    when absent); its span reaches the documents' own figures for the assumption (:func:`documents_values`)."""
    items = []
    for cid in claim_ids:
        claim = data.claim(cid)
        cfg = (cfg_by_chapter or {}).get(claim.chapter) or chapters.defaults(claim.chapter)
        items.append((claim, checks(claim.chapter)[cid], cfg))
    return sweeps.slider(name, items, documents_values(name))


# --------------------------------------------------------------------------------------------
# The ledger by document: one page per audited document (book/claims-<code>.ipynb). One page
# for all of them would pass the 150 KB a page may weigh (each row carries its reason in full).
# --------------------------------------------------------------------------------------------


def verdict_counts(frame: pd.DataFrame) -> dict[str, int]:
    """Claims per verdict (every verdict, zero where none) and ``all``."""
    counts = {v: int((frame["verdict"] == v).sum()) for v in verdicts.VERDICTS}
    counts["all"] = len(frame)
    return counts


def direction_counts(frame: pd.DataFrame) -> dict[str, int]:
    """Claims per direction (overstates, understates)."""
    return {d: int((frame["direction"] == d).sum()) for d in verdicts.DIRECTIONS}


def document_named(code: str) -> str:
    """The file name of the audited document whose short code is ``code`` (``000``)."""
    docs = data.documents()
    found = docs.loc[docs["code"].astype(str).str.zfill(3) == code, "document"]
    if found.empty:
        raise KeyError(f"no audited document with code '{code}'; codes: {', '.join(docs['code'].astype(str))}")
    return str(found.iloc[0])


def document_titles() -> dict[str, str]:
    """Each audited document's title in our English, by file name."""
    docs = data.documents()
    return dict(zip(docs["document"].astype(str), docs["title_en"].astype(str), strict=True))


def document_spec(code: str) -> chapters.ChapterSpec:
    """The spec of the ledger page of document ``code`` (slug ``claims-<code>``): a verdict filter."""
    return chapters.ChapterSpec(
        slug=f"claims-{code}",
        title=f"The claims of document {code}",
        params=(
            chapters.Param(
                "verdict", "str", "all", "-", "show only claims with this verdict", choices=("all", *verdicts.VERDICTS)
            ),
        ),
    )


@dataclass(frozen=True)
class DocumentPage:
    """One document's claims as its ledger page shows them, computed once."""

    cfg: chapters.Config
    document: str  # file name (data/documents.csv)
    code: str  # short code (000)
    title_en: str  # its title in our English
    ledger: pd.DataFrame  # the ledger rows of the document that the verdict filter keeps
    counts: dict[str, int]  # claims per verdict and "all"
    directions: dict[str, int]  # claims per direction


def document_page(cfg: Mapping[str, Any], code: str) -> DocumentPage:
    """The ledger rows of document ``code`` (at every chapter's defaults, as the whole ledger), kept by
    the page's verdict filter, with their counts."""
    document = document_named(code)
    ids = [c.id for c in data.claims() if c.document == document]
    rows = [a for a in assessments(ids=ids) if cfg["verdict"] in ("all", a.verdict)]
    table = frame(rows)
    return DocumentPage(
        cfg=cfg,  # type: ignore[arg-type]
        document=document,
        code=code,
        title_en=document_titles()[document],
        ledger=table,
        counts=verdict_counts(table),
        directions=direction_counts(table),
    )


def document_chapter(code: str) -> tuple[chapters.ChapterSpec, type[DocumentPage], Callable[[Any], DocumentPage]]:
    """What the chapter package of document ``code``'s ledger page (``analyses/chapters/claims_<code>``)
    defines: its ``SPEC``, ``Result`` and ``compute(cfg)``."""

    def compute(cfg: Any) -> DocumentPage:
        """The document's claims that the verdict filter keeps, assessed as the whole ledger assesses them."""
        return document_page(cfg, code)

    return document_spec(code), DocumentPage, compute
