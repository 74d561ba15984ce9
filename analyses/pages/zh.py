"""The Chinese edition's page parts as HTML, from the Chinese ledger (:mod:`analyses.chapters.ledger_zh`).

Every part is a function of the ledger frame (and the data tables of words and documents), so the
Chinese pages show the very verdicts and figures of the English ones: the ledger as one card per
claim (:func:`ledger_cards`), the words of verdicts, directions and kinds (:func:`terms_table`), the
documents (:func:`documents_table`), the counts by verdict and direction (:func:`counts_table`), the
front page's findings as short computed sentences (:func:`findings`), and a chapter's verdict box
(:func:`chapter_box`). Links to the English pages take ``en``, the relative path from the page to
the English book's folder (``../book/`` from ``zh/index.html``).
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable

import pandas as pd

from analyses import data, scenario
from analyses.pages.ledger_html import DOUBT_MARK, VERDICT_COLOURS, VERDICT_MARKS, VERDICT_STYLE
from analyses.pages.links import check_href, source_anchor, source_links
from analyses.pages.verdict_box import section_anchor
from analyses.units import zh as zh_units
from analyses.units.formats import fmt

# Each verdict's word carries its mark (VERDICT_MARKS, the English pages' own), each direction an
# arrow, so neither is told apart by colour alone.
DIRECTION_MARKS = {"overstates": "▲", "understates": "▼"}
LEDGER_PAGE = "ledger.html"  # the Chinese ledger, beside the front page in zh/


def anchor(claim_id: str) -> str:
    """The HTML id of a claim's card on the Chinese ledger."""
    return f"zh-{claim_id}"


def _e(text: object) -> str:
    return html.escape(str(text))


def verdict_badge(verdict: str, verdict_zh: str, shown_zh: str = "") -> str:
    """The verdict as its mark and Chinese word, coloured by the English pages' palette; a verdict in doubt
    (``shown_zh``, :func:`analyses.chapters.ledger_zh.shown`) as what it depends on, never a bare mark."""
    if isinstance(shown_zh, str) and shown_zh:
        # a sentence, not a word: it wraps (a verdict word never does)
        return (
            f'<span class="verdict-doubt" data-verdict="{_e(verdict)}" style="white-space:normal;overflow-wrap:anywhere">'
            f"{DOUBT_MARK} {_e(shown_zh)}</span>"
        )
    return f'<b class="verdict verdict-{_e(verdict)}">{VERDICT_MARKS[verdict]} {_e(verdict_zh)}</b>'


def direction_badge(direction: str, direction_zh: str, quantity: str = "") -> str:
    """The direction as its mark and Chinese word, said of its object where one is given (▼ 自购8张B300的
    月综合成本偏低: a cost written too low, which no reader takes for caution); empty for none."""
    if not direction:
        return ""
    said = f"文中{quantity}{direction_zh}" if quantity else direction_zh
    return f'<span class="zh-direction">{DIRECTION_MARKS[direction]} {_e(said)}</span>'


def codes() -> dict[str, str]:
    """Each document's file name -> its short code (000, 001)."""
    docs = data.documents()
    return dict(zip(docs["document"], docs["code"], strict=True))


def document_page(code: str) -> str:
    """The Chinese ledger page of one document (beside ledger.html)."""
    return f"ledger-{code}.html"


def card(row: pd.Series, en: str, code: str, prefix: str = "", full: bool = True) -> str:
    """One claim as a card: verdict, direction, id linked to its English check, kind, our Chinese
    wording, locator, figures as written, the recomputed value, the reason and how the vague words
    were read (``full``; else the reason's first sentence and a link to the document's ledger page,
    where the card is full), and its robustness (holds, flip point, margin)."""
    quantity = row.get("quantity_zh", "")
    direction = direction_badge(row.get("direction", ""), row.get("direction_zh", ""), quantity)
    english = f"{en}{check_href(row['id'], row['chapter'])}"
    reading = f"<dt>读法</dt><dd>{_e(row['reading_zh'])}</dd>" if full and row.get("reading_zh") else ""
    if full:
        why = _e(row["reason_zh"])
    else:
        more = f"{document_page(code)}#{anchor(row['id'])}"
        why = f'{_e(short_reason(row["reason_zh"]))} <a href="{more}">完整理由与读法</a>'
    return (
        f'<article class="zh-claim" id="{prefix}{anchor(row["id"])}" data-verdict="{_e(row["verdict"])}">'
        f'<p class="zh-head">{verdict_badge(row["verdict"], row["verdict_zh"], row.get("shown_zh", ""))}{direction}'
        f' <a href="{_e(english)}" hreflang="en" title="英文版核查"><code>{_e(row["id"])}</code></a>'
        f' <span class="zh-kind">{_e(row["kind_zh"])}类</span></p>'
        f'<p class="zh-text">{_e(row["claim_zh"])}</p><dl>'
        f"<dt>出处</dt><dd>{_e(code)} · {_e(row['locator_zh'])}</dd>"
        f"<dt>原文数字</dt><dd>{_e(row['written'])}</dd>"
        f"<dt>本书重算</dt><dd>{_e(quantity + '：' if quantity else '')}{_e(row['recomputed_zh'])}</dd>"
        f"<dt>理由</dt><dd>{why}</dd>{reading}"
        f"<dt>稳健性</dt><dd>{_e(row.get('robust_zh', ''))}</dd></dl></article>"
    )


def chapter_cards(frame: pd.DataFrame, chapter: str, en: str) -> str:
    """A chapter's claims as full cards (reason, reading, robustness), under ids of their own
    (``card-zh-<id>``) beside the chapter box's items."""
    code = codes()
    rows = frame[frame["chapter"] == chapter]
    cards = "".join(card(row, en, code[row["document"]], prefix="card-") for _, row in rows.iterrows())
    return f'{_style()}<div class="zh-ledger">{cards}</div>'


def _style() -> str:
    return VERDICT_STYLE


def ledger_cards(frame: pd.DataFrame, en: str, full: bool = True) -> str:
    """Every claim of the Chinese ledger as a card, with a verdict filter (``zh/_static/zh.js``; without
    JavaScript every card shows); ``full=False`` for the ledger of both documents, whose cards link
    to the full ones on each document's page (one page of full cards would pass 150 KB)."""
    code = codes()
    options = "".join(
        f'<option value="{_e(v)}">{VERDICT_MARKS[v]} {_e(w)}</option>'
        for v, w in data.terms_zh("verdict").items()
        if v in set(frame["verdict"])
    )
    controls = (
        '<p class="zh-controls" hidden><label>判定 <select data-zh-filter="verdict">'
        f'<option value="">全部</option>{options}</select></label> '
        '<label>搜索 <input type="search" data-zh-text placeholder="编号、数字或文字"></label> '
        f'<span class="zh-count" aria-live="polite">{len(frame)}条</span></p>'
    )
    cards = "".join(card(row, en, code[row["document"]], full=full) for _, row in frame.iterrows())
    return f'{_style()}<div class="zh-ledger">{controls}{cards}</div>'


def terms_table() -> str:
    """The Chinese words of verdicts, directions and kinds with what each means (data/terms_zh.csv):
    one group after another, each word with the English edition's term under it."""
    frame = data.table("terms_zh")
    groups = {"verdict": "判定", "direction": "方向", "kind": "说法类别"}
    rows = []
    for group, title in groups.items():
        rows.append(f'<tr class="zh-group"><th colspan="2">{title}</th></tr>')
        for _, r in frame[frame["group"] == group].iterrows():
            if group == "verdict":
                word = verdict_badge(r["term"], r["zh"])
            elif group == "direction":
                word = direction_badge(r["term"], r["zh"])
            else:
                word = f"<b>{_e(r['zh'])}</b>"
            rows.append(
                f'<tr><td class="zh-word">{word}<br><code lang="en">{_e(r["term"])}</code></td>'
                f"<td>{_e(r['explain_zh'])}</td></tr>"
            )
    head = "<tr><th>中文（英文版）</th><th>含义</th></tr>"
    return f'{_style()}<table class="zh-table zh-terms"><thead>{head}</thead><tbody>{"".join(rows)}</tbody></table>'


def documents_table() -> str:
    """The two audited documents: code, what each argues in our own Chinese and English (not their published
    titles, which the book does not copy), file name (the locator), parts."""
    rows = "".join(
        f'<tr><td>{_e(r["code"])}</td><td>{_e(r["title_zh"])}<br><small lang="en">{_e(r["title_en"])}</small></td>'
        f"<td><code>{_e(r['document'])}</code></td><td>{_e(r['parts_zh'])}</td></tr>"
        for _, r in data.documents().iterrows()
    )
    head = "<tr><th>代号</th><th>主旨（本书概括）</th><th>文件名</th><th>结构</th></tr>"
    return f'<table class="zh-table"><thead>{head}</thead><tbody>{rows}</tbody></table>'


def counts(frame: pd.DataFrame) -> pd.DataFrame:
    """Claims by verdict (rows, in the ledger's order of verdicts) and document (columns), with totals."""
    verdicts = [v for v in VERDICT_COLOURS if v in set(frame["verdict"])]
    code = codes()
    table = pd.crosstab(frame["verdict"], frame["document"].map(code)).reindex(verdicts).fillna(0).astype(int)
    table["合计"] = table.sum(axis=1)
    return table


def counts_table(frame: pd.DataFrame) -> str:
    """:func:`counts` as HTML, each verdict with its mark and word, their total, then the claims that
    err each way (the ledger's directions, which only verdicts other than consistent carry)."""
    words = data.terms_zh("verdict")
    table = counts(frame)
    head = "<tr><th>判定</th>" + "".join(f"<th>{_e(c)}</th>" for c in table.columns) + "</tr>"
    body = "".join(
        f"<tr><td>{verdict_badge(v, words[v])}</td>" + "".join(f"<td>{n}</td>" for n in row) + "</tr>"
        for v, row in table.iterrows()
    )
    total = "".join(f"<td>{int(n)}</td>" for n in table.sum(axis=0))
    body += f'<tr class="zh-total"><th>合计</th>{total}</tr>'
    if "direction" in frame.columns:
        dwords = data.terms_zh("direction")
        code = codes()
        body += f'<tr class="zh-group"><th colspan="{len(table.columns) + 1}">按方向（文中数字偏向哪一边）</th></tr>'
        for d in DIRECTION_MARKS:
            sub = frame[frame["direction"] == d]
            per = [int((sub["document"].map(code) == c).sum()) for c in table.columns[:-1]]
            body += (
                f'<tr class="zh-sub"><td>{direction_badge(d, dwords[d])}</td>'
                + "".join(f"<td>{n}</td>" for n in per)
                + f"<td>{len(sub)}</td></tr>"
            )
    return f'{_style()}<table class="zh-table zh-counts"><thead>{head}</thead><tbody>{body}</tbody></table>'


def _claim_link(row: pd.Series, ledger: str) -> str:
    return f'<a href="{ledger}#{anchor(row["id"])}"><code>{_e(row["id"])}</code></a>'


def _items(rows: Iterable[pd.Series], ledger: str) -> str:
    return "".join(
        f"<li>{verdict_badge(r['verdict'], r['verdict_zh'], r.get('shown_zh', ''))} {_claim_link(r, ledger)}：{_e(r['claim_zh'])}"
        f"（原文：{_e(r['written'])}；本书重算的{_e(r.get('quantity_zh', '') or '数字')}：{_e(r['recomputed_zh'])}）</li>"
        for r in rows
    )


# The kinds whose agreement says most about the hardware, for the front page's "what they get right".
RIGHT_KINDS = ("capability", "cost", "fact")


FINDINGS_PARTS = ("all", "summary", "details")


def findings(
    frame: pd.DataFrame, ledger: str = LEDGER_PAGE, part: str = "all", chapter_page: str = "chapters/tco.html"
) -> str:
    """The front page's findings as short sentences computed from the ledger, each claim linked to
    its card on the Chinese ledger: the counts, what the documents get right (consistent claims of
    the kinds in :data:`RIGHT_KINDS` that hold in at least 90% of the scenario's draws), what they
    overstate and understate, and what nothing public can check. ``part``: ``summary`` the counts'
    sentence alone (for the first screen), ``details`` the rest, ``all`` both."""
    if part not in FINDINGS_PARTS:
        raise ValueError(f"findings: part '{part}' is not one of {', '.join(FINDINGS_PARTS)}")
    words, kinds = data.terms_zh("verdict"), data.terms_zh("kind")
    n = len(frame)
    by = frame["verdict"].value_counts()
    parts = "，".join(f"{int(by[v])}条{words[v]}" for v in VERDICT_COLOURS if v in by.index)
    out = [
        f"<p>两篇文章共有{n}条量化说法，本书逐条重算后：{parts}（{fmt(by.get('consistent', 0) / n, pct=True, sig=2)}相符）。</p>"
    ]
    right = frame[(frame["verdict"] == "consistent") & frame["kind"].isin(RIGHT_KINDS) & (frame["holds"] >= 0.9)]
    right = right.assign(_order=right["kind"].map(RIGHT_KINDS.index)).sort_values("_order", kind="stable")
    per_kind = "，".join(
        f"{kinds[k]}类{int(((frame['kind'] == k) & (frame['verdict'] == 'consistent')).sum())}/{int((frame['kind'] == k).sum())}条"
        for k in RIGHT_KINDS
    )
    out.append(
        f"<h3>说对了的</h3><p>相符的比例：{per_kind}。在情景抽样中至少九成成立的相符说法有{len(right)}条，例如：</p>"
    )
    out.append(f'<ul class="zh-findings">{_items((r for _, r in right.head(5).iterrows()), ledger)}</ul>')
    if "direction" in frame.columns:
        dwords = data.terms_zh("direction")
        out.append(
            f"<p>下面的“{_e(dwords['overstates'])}”“{_e(dwords['understates'])}”只说文中数字相对本书重算结果的方向，"
            "要结合数字的对象来读：成本写低了，等于把自购的好处说大，并不是文章“保守”；加速比写低了，才是低估了B300。</p>"
        )
        for d, title in (("overstates", "文中数字偏高的"), ("understates", "文中数字偏低的")):
            rows = frame[frame["direction"] == d]
            out.append(f"<h3>{title}（{len(rows)}条）</h3>")
            if len(rows):
                out.append(f'<ul class="zh-findings">{_items((r for _, r in rows.iterrows()), ledger)}</ul>')
    cost = frame[frame["kind"] == "cost"]
    by_cost = cost["verdict"].value_counts()
    parts_cost = "，".join(f"{int(by_cost[v])}条{words[v]}" for v in VERDICT_COLOURS if v in by_cost.index)
    out.append(
        f"<h3>买还是租：成本类说法（{len(cost)}条）</h3><p>与采购、租用和回本周期有关的{len(cost)}条说法中，{parts_cost}。"
        f'逐条如下（重算用同一套价格、电价与利用率假设，见<a href="{chapter_page}">成本一章</a>）：</p>'
    )
    out.append(f'<ul class="zh-findings">{_items((r for _, r in cost.iterrows()), ledger)}</ul>')
    rest = frame[frame["verdict"] == "unverifiable"]
    figured = rest[~rest["recomputed_zh"].str.startswith("无")]
    bare = rest[rest["recomputed_zh"].str.startswith("无")]
    out.append(f"<h3>无法核实的（{len(rest)}条）</h3>")
    if len(figured):
        links = "、".join(_claim_link(r, ledger) for _, r in figured.iterrows())
        out.append(
            f"<p>其中{len(figured)}条是未具名部署的个案：本书能按硬件能力重算出对应的数字，并据此判断数字看来可信或不可信，"
            f"但这些部署本身没有公开记录，所以只能判为无法核实（卡片上给出重算的数字）：{links}。</p>"
        )
    if len(bare):
        links = "、".join(_claim_link(r, ledger) for _, r in bare.iterrows())
        out.append(f"<p>另外{len(bare)}条没有公开数据能重算，或只是未具名企业的经营结果：{links}。</p>")
    return {"all": "".join(out), "summary": out[0], "details": "".join(out[1:])}[part]


def short_reason(reason: str) -> str:
    """The first sentence of a Chinese reason (the rule's step: what the document says, what the book
    recomputes and whether it fits), cut at the first 。 outside any bracket or quote, for a box's one
    line; the ledger's card gives the reason in full (readings, holds, the flip point)."""
    depth = 0
    for i, ch in enumerate(str(reason)):
        if ch in "（(“《":
            depth += 1
        elif ch in "）)”》":
            depth -= 1
        elif ch == "。" and depth == 0:
            return str(reason)[: i + 1]
    return str(reason)


def english_section(claim_id: str, chapter: str, en: str) -> str:
    """The section of the English chapter that checks ``claim_id`` (its MyST label ``sec-<id>``, as the
    English verdict boxes link it)."""
    return f"{en}{chapter}.html#{section_anchor(claim_id)}"


def box_items(rows: pd.DataFrame, en: str, ledger: str) -> str:
    """Each claim of a box: verdict, direction, id linked to the English section that checks it, a link
    to its card on the Chinese ledger, our Chinese wording and a one-line reason."""
    return "".join(
        f'<li id="{anchor(r["id"])}">{verdict_badge(r["verdict"], r["verdict_zh"], r.get("shown_zh", ""))}'
        f"{direction_badge(r.get('direction', ''), r.get('direction_zh', ''), r.get('quantity_zh', ''))} "
        f'<a href="{_e(english_section(r["id"], r["chapter"], en))}" hreflang="en" title="英文版中核查这条说法的一节">'
        f"<code>{_e(r['id'])}</code></a>"
        f'（<a href="{ledger}#{anchor(r["id"])}">台账</a>）：{_e(r["claim_zh"])}'
        f'<br><span class="zh-reason">{_e(short_reason(r["reason_zh"]))}</span></li>'
        for _, r in rows.iterrows()
    )


def _counts_words(rows: pd.DataFrame) -> str:
    words = data.terms_zh("verdict")
    by = rows["verdict"].value_counts()
    return "，".join(f"{int(by[v])}条{words[v]}" for v in VERDICT_COLOURS if v in by.index)


def chapter_box(frame: pd.DataFrame, chapter: str, en: str, ledger: str) -> str:
    """A chapter's verdict box in Chinese: a sentence of counts and the chapter's takeaway, then each
    claim with its verdict, direction, Chinese wording and a one-line reason, linked to its section of
    the English chapter and its card on the Chinese ledger."""
    rows = frame[frame["chapter"] == chapter]
    note = takeaway(rows, "")  # links to the items on the same page
    return (
        f'{_style()}<div class="zh-box"><p class="zh-box-head"><b>判定</b> · 本章核查{len(rows)}条说法：{_counts_words(rows)}。</p>'
        f'<p class="zh-takeaway">{note}</p>'
        f'<ul class="zh-findings">{box_items(rows, en, ledger)}</ul></div>'
    )


def claims_box(frame: pd.DataFrame, ids: list[str], en: str, ledger: str) -> str:
    """The verdicts of the claims ``ids`` (each checked in its own chapter), as :func:`chapter_box` lists them."""
    rows = frame[frame["id"].isin(ids)]
    return (
        f'{_style()}<div class="zh-box"><p class="zh-box-head"><b>判定</b> · 这些工作负载重演的{len(rows)}条说法：'
        f"{_counts_words(rows)}，各在自己的一章中核查。</p>"
        f'<ul class="zh-findings">{box_items(rows, en, ledger)}</ul></div>'
    )


def takeaway(rows: pd.DataFrame, ledger: str) -> str:
    """A chapter's takeaway, computed from its rows: which claims overstate and which understate
    the evidence (each linked to its card), or that none errs."""
    if "direction" not in rows.columns:
        return ""
    dwords = data.terms_zh("direction")
    parts = []
    for d in DIRECTION_MARKS:
        hit = rows[rows["direction"] == d]
        if len(hit):
            links = "、".join(_claim_link(r, ledger) for _, r in hit.iterrows())
            parts.append(f"文中数字{dwords[d]}的{len(hit)}条（{links}）")
    if not parts:
        return f"要点：没有一条说法的数字{dwords['overstates']}或{dwords['understates']}。"
    return "要点：" + "，".join(parts) + "。"


def assumptions_table(frame: pd.DataFrame) -> str:
    """A chapter's assumptions (:func:`analyses.chapters.ledger_zh.assumptions`): each input's Chinese
    label, central value and 90% range in 元, and what it means."""
    if frame.empty:
        return "<p>本章的判定不依赖情景中的任何假设：文中数字直接与规格表、公开记录或文中自己的其他数字比较。</p>"
    head = "<tr><th>假设</th><th>中值</th><th>90%范围</th><th>含义</th></tr>"
    body = "".join(
        f'<tr><th scope="row">{_e(r.label_zh)}</th><td data-label="中值">{_e(r.central_zh)}</td>'
        f'<td data-label="90%范围">{_e(r.range_zh)}</td><td data-label="含义">{_e(r.explain_zh)}</td></tr>'
        for r in frame.itertuples()
    )
    return f'<table class="zh-table zh-assumptions"><thead>{head}</thead><tbody>{body}</tbody></table>'


def when(date: str) -> str:
    """A source's date as the style sheet writes it: 2023, 2023年7月, 2026年12月7日."""
    parts = [int(p) for p in str(date).split("-") if p.isdigit()]
    words = ("年", "月", "日")
    return "".join(f"{n}{w}" for n, w in zip(parts, words, strict=False)) if parts else str(date)


_CODE_WORD = re.compile(r"[\w./:-]*\w_\w[\w./:-]*")  # a file, function or field name in a source's text


def _quoted(text: str) -> str:
    """A source's English text, escaped, each file or code name in it set as code."""
    return _CODE_WORD.sub(lambda m: f"<code>{m.group()}</code>", _e(text))


def _link(reference: str) -> str:
    if reference.startswith("http"):
        return f'<a href="{_e(reference)}" rel="noopener">原文链接</a>'
    return f'<span lang="en">{_quoted(reference)}</span>'


def sources_table() -> str:
    """Every source the data tables cite: its id (as the tables name it), title and publisher as
    published, date, and a link; each row's id is the English sources page's (``source-<id>``), so a
    source id on a Chinese page links to its row here."""
    frame = data.table("sources")
    body = "".join(
        f'<tr id="{source_anchor(r.id)}"><td data-label="编号"><code>{_e(r.id)}</code></td>'
        f'<td data-label="来源" lang="en">{_quoted(r.title)}<br><small>{_quoted(r.publisher)}</small></td>'
        f'<td data-label="日期">{_e(when(r.date))}</td>'
        f'<td data-label="出处">{_link(str(r.reference))}</td></tr>'
        for r in frame.itertuples()
    )
    head = "<tr><th>编号</th><th>来源（按原文）</th><th>日期</th><th>出处</th></tr>"
    return f'<table class="zh-table zh-sources"><thead>{head}</thead><tbody>{body}</tbody></table>'


# --------------------------------------------------------------------------------------------
# The China context of the cost chapter (issue 34 item 4): US export rules and Chinese prices
# --------------------------------------------------------------------------------------------

CHINA_STATUS_ZH = {"presumption of denial": "推定拒绝", "licence required": "须申领许可", "case-by-case licence": "逐案审查"}
PRICE_ITEM_ZH = {"server_price_per_gpu": "整机价（每卡）", "rent_per_gpu_hour": "租金（每卡每小时）"}


def china_section(root: str = "../") -> str:
    """The cost chapter's China context in Chinese: what the US export rules allow (data/export_controls.csv,
    each with its date and Federal Register locator) and the public prices of GPUs in China
    (data/prices.csv, in 元 at the scenario's exchange rate), with the sentence that says which prices the
    book's cost rows assume; each source id links to its row of the Chinese sources page (``root``: the
    edition's folder from the page)."""
    rules = data.table("export_controls").sort_values("effective", kind="stable")
    by = rules.set_index("id")
    rate = float(scenario.values()["usd_cny"])
    prices = data.table("prices")
    china = prices[prices["provider_class"].isin(("china", "china-cloud")) & prices["gpu"].notna() & prices["gpu"].astype(str).ne("")]
    lead = (
        "<p>两篇文章写给中国买家、以元计价，但自"
        f"{_e(by.loc['bis-2022-10', 'effective'])}起，美国出口管制（{_e(by.loc['bis-2022-10', 'locator'])}）要求向中国出口"
        "A100、H100级GPU须申领许可，且推定拒绝；"
        f"{_e(by.loc['bis-2023-11', 'effective'])}起（{_e(by.loc['bis-2023-11', 'locator'])}）降速版A800、H800同样受限，"
        f"为符合旧规而设计的H20自{_e(by.loc['h20-2025-04', 'effective'])}起也须许可。"
        f"{_e(by.loc['bis-2026-01', 'effective'])}起，H200级芯片的许可改为逐案审查，而B200、B300等Blackwell芯片超出其上限，仍推定拒绝。"
        "因此在中国拥有B300的企业，要么在美国许可之外购得，要么把服务器放在境外。本书每条成本判定都按中国境外的公开市场价计B300，"
        "按国内云租金计租用的A100，并在判定的“框架”中写明；在中国购买B300只会更贵，回本周期更长、节省更少。</p>"
    )
    rows = "".join(
        f"<tr><td>{_e(r['effective'])}</td><td>{_e(r['action_zh'])}</td><td>{_e(r['parts'].replace(';', '、'))}</td>"
        f"<td>{_e(CHINA_STATUS_ZH[r['china']])}</td><td>{_e(r['locator'])}</td><td>{source_links(r['source'], root)}</td></tr>"
        for r in rules.to_dict("records")
    )
    head = "<tr><th>生效</th><th>内容</th><th>涉及芯片</th><th>对华出口</th><th>联邦公报</th><th>来源</th></tr>"

    def yuan(x: float, currency: str) -> str:
        return zh_units.wan_yi(x * (rate if currency == "USD" else 1.0), 2) + "元"

    price_rows = "".join(
        f"<tr><td>{_e(r['gpu'])}</td><td>{_e(PRICE_ITEM_ZH.get(r['item'], r['item']))}</td>"
        f"<td>{yuan(r['low'], r['currency'])}–{yuan(r['high'], r['currency'])}</td><td>{_e(r['date'])}</td>"
        f"<td>{source_links(r['source'], root)}</td></tr>"
        for r in china.to_dict("records")
    )
    price_head = "<tr><th>GPU</th><th>项目</th><th>价格区间</th><th>时间</th><th>来源</th></tr>"
    return (
        f'<div class="zh-china">{lead}<table class="zh-table"><thead>{head}</thead><tbody>{rows}</tbody></table>'
        f'<p>中国市场的公开价格（美元按情景汇率折算为元）：</p><table class="zh-table"><thead>{price_head}</thead>'
        f"<tbody>{price_rows}</tbody></table></div>"
    )
