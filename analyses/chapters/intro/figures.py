"""The front page's findings as HTML, drawn from a computed :class:`~analyses.chapters.intro.Result`.

One block for the first screen: a lead with the counts by verdict (and direction), the findings
(what the documents get right, overstate and understate, each a sentence with its example claims)
and the claims that matter most to a purchase; every claim links to its row of the ledger.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import Any

import pandas as pd

from analyses.chapters.intro import Result, text
from analyses.pages.ledger_html import VERDICT_STYLE, doubt_html, in_doubt, short_document
from analyses.pages.links import check_href
from analyses.pages.verdict_box import (
    DIRECTION_MARKS,
    VERDICT_MARKS,
    VerdictBox,
    counts_line,
    direction_of,
    direction_word,
    verdict_word,
)
from analyses.units.formats import share
from analyses.verdicts import VERDICTS

GROUP_MARKS = {"right": VERDICT_MARKS[VERDICTS[0]], "disagree": VERDICT_MARKS[VERDICTS[1]], **DIRECTION_MARKS}


def _claim_cell(row: Mapping[str, Any]) -> str:
    """The claim, cut to its line, linked to its ledger row in the chapter that checks it (the full claim in
    the link's title)."""
    claim = html.escape(str(row["claim"]))
    where = f"{short_document(row['document'])} §{html.escape(str(row['section']))}"
    return (
        f'<td class="af-claim"><a class="ledger-link" href="{check_href(str(row["id"]), str(row["chapter"]))}" title="{claim}">'
        f'<span class="af-where">{where}</span> {claim}</a></td>'
    )


def _figure_cells(row: Mapping[str, Any]) -> str:
    stated = html.escape(str(row["stated figure"])) or "–"
    recomputed = html.escape(str(row["recomputed figure"])) or "–"
    return f'<td class="af-num af-stated">{stated}</td><td class="af-num af-recomputed">{recomputed}</td>'


def _verdict(row: Mapping[str, Any], holds: bool = False) -> str:
    """A row's verdict (or, in doubt, what it depends on), with how often it holds for a purchase claim."""
    shown = doubt_html(row) if in_doubt(row) else verdict_word(row["verdict"])
    if holds and row.get("holds") is not None:
        shown += f'<br><small class="af-holds">holds in {share(float(row["holds"]))} of draws</small>'
    return shown


def _row(row: Mapping[str, Any], direction: bool, holds: bool = False) -> str:
    cells = [f'<td class="af-verdict">{_verdict(row, holds)}</td>']
    if direction:
        cells.append(f'<td class="af-direction">{direction_word(direction_of(row)) or "–"}</td>')
    cells += [_claim_cell(row), _figure_cells(row)]
    return f'<tr data-claim="{html.escape(str(row["id"]))}">{"".join(cells)}</tr>'


def _colgroup(direction: bool) -> str:
    cols = ["verdict", *(["direction"] if direction else []), "claim", "stated", "recomputed"]
    return "<colgroup>" + "".join(f'<col class="af-col-{c}">' for c in cols) + "</colgroup>"


def _head(direction: bool) -> str:
    cells = [
        "verdict",
        *(["direction"] if direction else []),
        "claim (links to its ledger row)",
        "stated",
        "recomputed",
    ]
    return "<thead><tr>" + "".join(f'<th scope="col">{c}</th>' for c in cells) + "</tr></thead>"


def findings(res: Result) -> VerdictBox:
    """The first screen of the front page: the counts, the findings and the purchase list."""
    direction = res.has_direction
    width = 5 if direction else 4
    body, plain = [], [text.lead(res)]
    for group in res.groups:
        title = html.escape(text.TITLES[group.key])
        sentence = html.escape(text.group_sentence(res, group))
        body.append(
            f'<tr class="af-group af-group-{group.key}"><th scope="rowgroup" colspan="{width}">'
            f'<span aria-hidden="true">{GROUP_MARKS[group.key]}</span> <b>{title}.</b> {sentence}</th></tr>'
        )
        body += [_row(r, direction) for r in group.examples.to_dict("records")]
        plain.append(f"{text.TITLES[group.key]}: {text.group_sentence(res, group)} " + ", ".join(group.examples["id"]))
    purchase = [_row(r, direction, holds=True) for r in res.purchase.to_dict("records")]
    plain.append(f"{text.purchase_head(res)}: " + ", ".join(res.purchase["id"]))
    out = (
        f'<div class="audit-findings">{VERDICT_STYLE}'
        f'<p class="af-lead">{html.escape(text.lead(res))} {counts_line(res.ledger)}.</p>'
        f'<table class="af-table">{_colgroup(direction)}<tbody>{"".join(body)}</tbody></table>'
        f'<p class="af-purchase-head"><b>{html.escape(text.purchase_head(res))}</b> '
        f'(<a href="#how-the-findings-are-picked">picked by a rule</a>):</p>'
        f'<table class="af-table">{_colgroup(direction)}{_head(direction)}<tbody>{"".join(purchase)}</tbody></table>'
        "</div>"
    )
    return VerdictBox(out, "\n".join(plain))


def speedup_table(res: Result) -> pd.DataFrame:
    """The three B300/A100 speed-ups the reader meets, for the page: each range in words."""
    out = res.speedups.copy()
    out.insert(1, "speed-up", [text._span(r) for r in out.to_dict("records")])
    return out.drop(columns=["low", "high"])


def purchase_table(res: Result) -> pd.DataFrame:
    """The purchase list with its figures, for the section that explains the rule."""
    cols = ["id", "shown", *(["direction"] if res.has_direction else []), "holds", "kind", "purchase figures"]
    cols += ["stated figure", "recomputed figure", "90% range"]
    return res.purchase[cols]
