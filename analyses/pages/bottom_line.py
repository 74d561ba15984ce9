"""The buyer's bottom line, first on the front page and on the buy-or-rent page: for each of the
documents' workloads and the reader's default run, the cheapest option to rent, the cheapest to own,
and the busy share above which owning wins, in one sentence and one small table.

Both pages pass the same rows (:func:`analyses.scenario.buying.buy_or_rent` at the buy-or-rent page's
defaults, money in the page's currency), so they show the same answer. Owned runs are charged their
own hours only (the convention of :mod:`analyses.scenario.buying`); an owner whose GPUs are busy a
share ``u`` of their hours pays ``1/u`` times that per run, so owning beats the cheapest rental when
``u`` exceeds the owned run's cost over the rented run's (:func:`~analyses.scenario.buying.break_even_utilisation`
of the two costs).
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from analyses.scenario import buying
from analyses.units import SECONDS_PER_DAY
from analyses.units.formats import duration, fmt, percent


@dataclass(frozen=True)
class Answer:
    """One workload's bottom line: the cheapest rented and owned options and the busy share above
    which owning the second beats renting the first (above 1: never)."""

    key: str
    label: str
    rented: pd.Series
    owned: pd.Series
    owning_wins_above: float


def answers(runs: pd.DataFrame, workloads: Sequence[buying.Workload]) -> list[Answer]:
    """The bottom line of each of ``workloads`` that fits some generation, from ``runs`` (the rows of
    :func:`~analyses.scenario.buying.buy_or_rent`, money in any one currency as ``cost``)."""
    out = []
    for w in workloads:
        rows = runs[(runs["workload"] == w.key) & runs["cheapest"]]
        rented, owned = rows[rows["basis"] == "rented"], rows[rows["basis"] == "owned"]
        if rented.empty or owned.empty:
            continue
        r, o = rented.iloc[0], owned.iloc[0]
        out.append(Answer(w.key, w.label, r, o, buying.break_even_utilisation(o["cost"], r["cost"])))
    return out


def _days(x: float) -> str:
    return str(duration(float(x) * SECONDS_PER_DAY))


def option(row: pd.Series, currency: str) -> str:
    """An option in words: GPUs, time and cost ("12 × B200, 19 days, 231,000 RMB")."""
    return f"{int(row['n_gpus']):,} × {row['gpu']}, {_days(row['days'])}, {fmt(row['cost'], currency, 3)}"


def _gpus(rows: Sequence[pd.Series]) -> str:
    names = list(dict.fromkeys(f"{r['gpu']}s" for r in rows))
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]


def _shares(xs: Sequence[float]) -> str:
    lo, hi = percent(min(xs)), percent(max(xs))
    return lo if lo == hi else f"{lo.removesuffix('%')}–{hi}"


def sentence(rows: Sequence[Answer], reader: str = "your run") -> str:
    """The bottom line in one sentence: which GPUs to rent and to own, and the busy share from which
    owning wins (a range over the workloads), or that renting wins at any busy share."""
    if not rows:
        return "No generation can run these workloads within the GPUs allowed."
    wins = [a for a in rows if a.owning_wins_above < 1]
    rent, own = _gpus([a.rented for a in rows]), _gpus([a.owned for a in rows])
    n = len(rows)
    every = "each of the documents' workloads" + (f" and {reader}" if any(a.key == buying.READER for a in rows) else "")
    if not wins:
        return f"Rent: for {every}, renting {rent} costs less than owning {own} however busy the GPUs are kept."
    head = (
        f"Buy only what you will keep busy: for {every}, owning {_gpus([a.owned for a in wins])} costs less than "
        f"renting {_gpus([a.rented for a in wins])} once the owned GPUs are busy more than "
        f"{_shares([a.owning_wins_above for a in wins])} of their hours; below that, rent."
    )
    if len(wins) < n:
        never = ", ".join(a.label for a in rows if a.owning_wins_above >= 1)
        head += f" For {never}, renting wins at any busy share."
    return head


@dataclass(frozen=True)
class BottomLine:
    """The block as deterministic HTML, with a plain-text form (nbval compares both)."""

    html_text: str
    text: str

    def _repr_html_(self) -> str:
        return self.html_text

    def __repr__(self) -> str:
        return self.text


def block(rows: Sequence[Answer], currency: str, labels: dict[str, str] | None = None, more: str = "") -> BottomLine:
    """The bottom line as a page shows it first: the sentence (:func:`sentence`), then a table of the
    cheapest rented and owned option of each workload and the busy share above which owning wins;
    ``labels`` names a workload otherwise than its label (HTML), ``more`` (HTML) ends the sentence."""
    said = sentence(rows)
    body, plain = [], [said]
    for a in rows:
        name = (labels or {}).get(a.key, html.escape(a.label))
        wins = percent(a.owning_wins_above) if a.owning_wins_above < 1 else "never"
        never = "" if a.owning_wins_above < 1 else " bl-never"
        rent, own = option(a.rented, currency), option(a.owned, currency)
        body.append(
            f'<tr><th scope="row">{name}</th><td class="bl-rent">{html.escape(rent)}</td>'
            f'<td class="bl-own">{html.escape(own)}</td><td class="bl-share{never}">{wins}</td></tr>'
        )
        plain.append(f"{a.label}: rent {rent}; own {own}; owning wins above {wins} busy")
    head = (  # header cells of a thead are column headers
        "<thead><tr><th>workload</th><th>cheapest to rent</th><th>cheapest to own (its run hours)</th>"
        "<th>owning wins if busy over</th></tr></thead>"
    )
    out = (
        f'<div class="audit-bottom-line"><p class="bl-sentence"><b>Bottom line.</b> {html.escape(said)}'
        f"{' ' + more if more else ''}</p>"
        f'<table class="bl-table">{head}<tbody>{"".join(body)}</tbody></table></div>'
    )
    return BottomLine(out, "\n".join(plain))
