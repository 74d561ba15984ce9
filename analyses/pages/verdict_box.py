"""A chapter's verdicts in its first screen: one compact box listing each claim of the chapter with its
verdict, the way it errs (where the ledger has a ``direction`` column), a one-line reason, and a
link to the section of the chapter that checks it.

A notebook glues the box right after computing (``glue("verdict-box", verdict_box(res.ledger))``)
and pastes it under its title (```` ```{glue} verdict-box ```` ````). The section that checks a claim
carries the MyST label ``(sec-<claim id>)=`` right above its heading; :func:`section_anchor` is the
HTML id Sphinx gives that label, and the site tests check that every link of every box resolves.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import Any

import pandas as pd

from analyses import verdicts
from analyses.pages.ledger_html import DOUBT_MARK, VERDICT_STYLE, doubt_html, in_doubt, short_document

# A mark for each verdict and each direction, so neither is told by colour alone.
VERDICT_MARKS = {"consistent": "✓", "inconsistent": "✗", "implausible": "!", "unverifiable": "?"}
DIRECTION_MARKS = {"overstates": "▲", "understates": "▼"}
DIRECTIONS = tuple(DIRECTION_MARKS)
SECTION_PREFIX = "sec-"
SUMMARY_ANCHOR = "summary"  # the id Sphinx gives every chapter's "## Summary" section


def section_label(claim_id: str) -> str:
    """The MyST label a chapter puts above the heading of the section that checks ``claim_id``."""
    return f"{SECTION_PREFIX}{claim_id}"


def section_anchor(claim_id: str) -> str:
    """The HTML id Sphinx gives :func:`section_label` (docutils ids: lower case, runs of characters
    other than letters and digits as one hyphen: ``sec-000-2-1-per-gpu-2-3x``)."""
    from docutils.nodes import make_id

    return make_id(section_label(claim_id))


def has_direction(ledger: pd.DataFrame) -> bool:
    """Whether the ledger says which way each claim errs (its ``direction`` column)."""
    return "direction" in ledger.columns


def direction_of(row: Mapping[str, Any]) -> str:
    """A row's direction (``overstates``, ``understates``) or "" (consistent, or no column)."""
    value = row.get("direction")
    return str(value) if isinstance(value, str) and value in DIRECTION_MARKS else ""


def verdict_word(verdict: str) -> str:
    """A verdict as HTML: its mark and word, coloured by the ledger's verdict style."""
    v = html.escape(str(verdict))
    return f'<b class="verdict verdict-{v}">{VERDICT_MARKS.get(verdict, "")} {v}</b>'


def direction_word(direction: str) -> str:
    """A direction as HTML: its mark and word ("" for none)."""
    if not direction:
        return ""
    d = html.escape(direction)
    return f'<span class="direction direction-{d}">{DIRECTION_MARKS[direction]} {d}</span>'


def counts_line(ledger: pd.DataFrame) -> str:
    """How many claims got each verdict (and each direction, where the ledger has them), as HTML."""
    parts = [f"{n} {verdict_word(v)}" for v in verdicts.VERDICTS if (n := int((ledger["verdict"] == v).sum()))]
    if has_direction(ledger):
        parts += [f"{n} {direction_word(d)}" for d in DIRECTIONS if (n := int((ledger["direction"] == d).sum()))]
    if "shown" in ledger.columns and (n := sum(in_doubt(r) for r in ledger.to_dict("records"))):
        parts.append(f'{n} <span class="verdict-doubt">{DOUBT_MARK} in doubt</span>')
    return " · ".join(parts)


def short_reason(reason: str) -> str:
    """The part of a reason a one-line box shows: the check's own explanation, after the rule's clause
    (which compares the stated and recomputed figures) where the reason has both; the whole reason
    otherwise (the chapter's summary, linked from the box's head, gives every reason in full)."""
    rule, sep, why = str(reason).partition("; ")
    if not sep or not why.strip() or not rule.startswith("The stated"):
        return str(reason)
    why = why.strip()
    return why[0].upper() + why[1:]


# A line of the box shows about this many characters of the claim and of the reason at 1280 px; the
# HTML keeps a little more (a phone wraps it) and the section linked, and the chapter's summary, the rest.
CLAIM_CHARS, REASON_CHARS = 70, 100


def clip(text: str, n: int) -> str:
    """``text`` cut at a word boundary to at most ``n`` characters, with "…" where it was cut."""
    if len(text) <= n:
        return text
    return text[: text.rfind(" ", 0, n)].rstrip(" ,;:") + "…"


class VerdictBox:
    """The box as deterministic HTML, with a plain-text form (nbval compares both)."""

    def __init__(self, html_text: str, text: str):
        self._html, self._text = html_text, text

    def _repr_html_(self) -> str:
        return self._html

    def __repr__(self) -> str:
        return self._text


def section_href(claim_id: str, chapter: str, page: str | None = None) -> str:
    """Link to the section of ``chapter`` that checks ``claim_id``, from the page ``page`` (a chapter
    slug; None: the claim's own chapter)."""
    anchor = section_anchor(claim_id)
    return f"#{anchor}" if page in (None, chapter) else f"{chapter}.html#{anchor}"


def verdict_box(ledger: pd.DataFrame, page: str | None = None, summary: str = SUMMARY_ANCHOR) -> VerdictBox:
    """A chapter's verdicts for its first screen: a line of counts, then one line per claim (verdict,
    direction where the ledger has it, the document and section with the claim, the reason, each cut to
    its line: :func:`clip`), each
    claim linked to the section that checks it (on its own chapter's page when ``page`` is another
    chapter); ``summary`` is the id of the section that shows every figure and reason in full."""
    direction = has_direction(ledger)
    n = len(ledger)
    own = page is None or set(ledger["chapter"]) <= {page}
    where = "checked in this chapter" if own else "this page replays, each checked in its own chapter"
    head = (
        f'<p class="vb-head"><b>Verdicts</b> · {n} claim{"s" if n != 1 else ""} {where}: '
        f'{counts_line(ledger)} · <a href="#{summary}">figures and reasons</a></p>'
    )
    rows, text = [], [f"Verdicts: {n} claims"]
    for row in ledger.to_dict("records"):
        cid = str(row["id"])
        claim = html.escape(clip(str(row["claim"]), CLAIM_CHARS))
        shown = html.escape(clip(short_reason(str(row["reason"])), REASON_CHARS))
        where = f"{short_document(row['document'])} §{html.escape(str(row['section']))}"
        d = direction_of(row)
        cells = [verdict_word(row["verdict"]) if not in_doubt(row) else doubt_html(row)]
        if direction:
            cells.append(direction_word(d) or "<span>–</span>")
        cells += [
            f'<a href="{section_href(cid, str(row["chapter"]), page)}"><b>{where}</b> {claim}</a>',
            f"<span>{shown}</span>",
        ]
        rows.append(f"<li>{''.join(cells)}</li>")
        said = str(row["shown"]) if in_doubt(row) else str(row["verdict"])
        text.append(f"{said}{' ' + d if d else ''}: {cid}: {row['reason']}")
    grid = " vb-dir" if direction else ""
    body = (
        f'<nav class="audit-verdict-box{grid}" aria-label="Verdicts of this chapter">{VERDICT_STYLE}{head}'
        f"<ul>{''.join(rows)}</ul></nav>"
    )
    return VerdictBox(body, "\n".join(text))
