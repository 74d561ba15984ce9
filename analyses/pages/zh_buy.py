"""The Chinese edition's buy-or-rent answer as HTML, from the very result the English page shows
(:class:`analyses.chapters.buy_or_rent.Result`, computed by :func:`analyses.scenario.buying.buy_or_rent`).

For each of the documents' workloads and the reader's default run: the time and cost of one run on
every GPU generation, rented and owned, with their 90% ranges, the cheapest of each basis marked (★
and the word 最省), and the utilisation above which owning beats renting; a summary of the cheapest
answers for the front page; the convention the figures follow. Money is in the page's currency (RMB
unless a reader set USD) written in 万 and 亿 (:mod:`analyses.units.zh`); the words are data
(``data/calculator_zh.csv`` for the workloads' names).
"""

from __future__ import annotations

import html
from typing import Any

import pandas as pd

from analyses import data
from analyses.models.uncertainty import INTERVAL_LEVEL
from analyses.pages import bottom_line as bl
from analyses.units import zh as zh_units
from analyses.units.formats import fmt

CHEAPEST = "★"  # the English page's mark for the cheapest generation of a basis
CHEAPEST_WORD = "最省"
BASIS_ZH = {"rented": "租用", "owned": "自购"}
LEVEL = str(fmt(INTERVAL_LEVEL, pct=True, sig=2))  # the ranges' level, "90%"


def _e(text: object) -> str:
    return html.escape(str(text))


def money(res: Any, x: float, sig: int = 3) -> str:
    """An amount in the page's currency: 34.6万元, 1.2亿元 (USD: 3.5万美元)."""
    if res.currency == "RMB":
        return zh_units.number(x, "RMB", sig)
    return f"{zh_units.wan_yi(x, sig)}美元"


def money_span(res: Any, lo: float, hi: float) -> str:
    """A 90% range of an amount, the unit once where both ends share it (23万～70万元)."""
    a, b = money(res, lo, 2), money(res, hi, 2)
    unit = "元" if res.currency == "RMB" else "美元"
    return f"{a.removesuffix(unit)}{zh_units.RANGE}{b}"


def days(x: float) -> str:
    """A run's length as the English page writes it (two figures; days from two days up, hours below)."""
    if x >= 2:
        return f"{zh_units.plain(x, 2)}天"
    return f"{zh_units.plain(x * 24, 2)}小时"


def days_span(row: pd.Series) -> str:
    if row["days"] >= 2:
        return f"{zh_units.plain(row['days_lo'], 2)}{zh_units.RANGE}{zh_units.plain(row['days_hi'], 2)}天"
    return f"{zh_units.plain(row['days_lo'] * 24, 2)}{zh_units.RANGE}{zh_units.plain(row['days_hi'] * 24, 2)}小时"


def workload_name(w: Any) -> str:
    """A workload's Chinese name (data/calculator_zh.csv ``workload:<key>``)."""
    return data.calculator_zh().get(f"workload:{w.key}", w.label)


def workload_title(w: Any) -> str:
    """A workload with its size, tokens and deadline: 13B模型预训练…：130亿参数、2,600亿token、21天内."""
    return (
        f"{workload_name(w)}：{zh_units.wan_yi_large(w.shape.n_params, 3)}参数、{zh_units.wan_yi_large(w.tokens, 2)}个token、"
        f"{zh_units.plain(w.deadline_days, 2)}天内完成"
    )


def basis(res: Any) -> str:
    """The convention every figure follows, with the exchange rate it converts at."""
    rate = res.rate
    on = "各代GPU都用" if res.cfg["precision"] == "bf16" else "支持它的各代GPU（A100仍用BF16）用"
    usd_cny = zh_units.plain(float(res.s["usd_cny"]), 3)
    currency = (
        f"金额为人民币，以美元计的报价按汇率{usd_cny}元/美元换算（{_e(rate.date)}）"
        if res.currency == "RMB"
        else f"金额为美元（汇率{usd_cny}元/美元）"
    )
    return (
        "<p><b>口径</b>：一次训练的耗时取自规划器：在截止日期内最省钱的并行布局（都赶不上时取最快的），"
        f"{on}{_e(res.cfg['precision'].upper())}训练，已计入故障与检查点。成本是这次训练占用的卡时乘以每卡时的价格："
        "租用按GPU云服务商（专门出租GPU算力的云厂商，区别于大型公有云）的租金，含存储和网络；"
        "自购按一张自购GPU每个日历小时的成本（资本按折旧年限和资金成本摊销，电费按国内电价，另加托管和人力），"
        "只计这次训练的小时数。所以自购的GPU只有在忙碌时间超过表中比例时才比租用便宜。"
        f"{currency}。区间为{LEVEL}区间，涵盖情景中价格的范围和单步耗时模型对公开训练记录的误差。</p>"
    )


def answer_table(res: Any, key: str) -> str:
    """One workload on every generation: GPUs and layout, time, rented and owned cost with their 90%
    ranges (the cheapest of each basis marked), and the utilisation above which owning pays."""
    rows = res.of(key)
    body = []
    for gpu, g in rows.groupby("gpu", sort=False):
        rented = g[g["basis"] == "rented"].iloc[0]
        owned = g[g["basis"] == "owned"].iloc[0]

        def cost(r: pd.Series) -> str:
            mark = f' <b class="zh-cheapest">{CHEAPEST} {CHEAPEST_WORD}</b>' if r["cheapest"] else ""
            return (
                f"{_e(money(res, r['cost']))}{mark}<br><small>{_e(money_span(res, r['cost_lo'], r['cost_hi']))}</small>"
            )

        late = "" if rented["meets_deadline"] else "<br><small>赶不上截止日期</small>"
        body.append(
            f'<tr><th scope="row">{_e(gpu)}</th>'
            f'<td data-label="GPU数·布局">{int(rented["n_gpus"])}张 · <code>{_e(rented["layout"])}</code></td>'
            f'<td data-label="耗时">{_e(days(rented["days"]))}<br><small>{_e(days_span(rented))}</small>{late}</td>'
            f'<td data-label="租用">{cost(rented)}</td>'
            f'<td data-label="自购">{cost(owned)}</td>'
            f'<td data-label="自购更省，若忙碌超过">{_e(zh_units.percent(owned["break_even_utilisation"]))}</td></tr>'
        )
    head = (
        "<tr><th>GPU</th><th>GPU数 · 并行布局</th>"
        f"<th>耗时（{LEVEL}区间）</th><th>租用成本（{LEVEL}区间）</th>"
        f"<th>自购成本（{LEVEL}区间）</th><th>自购更省，若忙碌超过</th></tr>"
    )
    return (
        f'<table class="zh-table zh-buy" data-workload="{_e(key)}"><thead>{head}</thead>'
        f"<tbody>{''.join(body)}</tbody></table>"
    )


def cheapest_sentence(res: Any, key: str) -> str:
    """The answer for one workload: the cheapest rented and owned options, and when owning pays."""
    answer = res.answer(key)
    if answer is None:
        return "没有一代GPU能跑：在允许的GPU数以内，模型放不进任何并行布局。"
    rented, owned, pair = answer
    miss = "" if rented["meets_deadline"] else "（没有一代赶得上截止日期，列出的是最快的）"
    return (
        f"最省的租用方案：{int(rented['n_gpus'])}张{rented['gpu']}，{days(rented['days'])}，"
        f"{money(res, rented['cost'])}（{money_span(res, rented['cost_lo'], rented['cost_hi'])}）{miss}。"
        f"最省的自购方案：{int(owned['n_gpus'])}张{owned['gpu']}，按这次训练占用的小时计{money(res, owned['cost'])}"
        f"（{money_span(res, owned['cost_lo'], owned['cost_hi'])}），而租用同样的{owned['gpu']}要{money(res, pair['cost'])}："
        f"只有这些GPU一年中有超过{zh_units.percent(owned['break_even_utilisation'])}的时间在忙，自购才比租用便宜。"
    )


def summary_table(res: Any, page: str = "") -> str:
    """The cheapest rented and owned answer of every workload, one row each (``page``: the href of the
    buy-or-rent page, to link each workload to its section there; "" on that page itself)."""
    body = []
    for w in res.workloads:
        cells = []
        for b in ("rented", "owned"):
            r = res.cheapest(w.key, b)
            if r is None:
                cells.append(f'<td data-label="最省的{BASIS_ZH[b]}方案">放不下</td>')
                continue
            cells.append(
                f'<td data-label="最省的{BASIS_ZH[b]}方案">{int(r["n_gpus"])}张{_e(r["gpu"])}，{_e(days(r["days"]))}<br>'
                f"<b>{_e(money(res, r['cost']))}</b> <small>（{_e(money_span(res, r['cost_lo'], r['cost_hi']))}）</small></td>"
            )
        name = _e(workload_name(w))
        link = f'<a href="{page}#zh-buy-{_e(w.key)}">{name}</a>'
        body.append(f'<tr><th scope="row">{link}</th>{"".join(cells)}</tr>')
    head = f"<tr><th>工作负载</th><th>最省的租用方案（{LEVEL}区间）</th><th>最省的自购方案（{LEVEL}区间）</th></tr>"
    return f'<table class="zh-table zh-buy-summary"><thead>{head}</thead><tbody>{"".join(body)}</tbody></table>'


def workloads(res: Any, finetune: str = "") -> str:
    """Every workload: its title, the answer in a sentence, and its table (``finetune``: a note, HTML,
    after the monthly fine-tune's, :func:`finetune_note`)."""
    out = []
    for w in res.workloads:
        note = finetune if "finetune" in w.key else ""
        out.append(
            f'<section class="zh-buy-workload" id="zh-buy-{_e(w.key)}"><h3>{_e(workload_title(w))}</h3>'
            f"<p>{_e(cheapest_sentence(res, w.key))}</p>{answer_table(res, w.key)}{note}</section>"
        )
    if res.not_covered:
        names = "、".join(res.not_covered)
        out.append(f"<p>{_e(names)}尚未列入本页：本书的数据中还没有它的InfiniBand集群配置、整机价格或租金。</p>")
    return "".join(out)


def bottom_line(res: Any) -> str:
    """The buyer's answer in two sentences, for the first screen: which generation is cheapest to
    rent and to buy for the documents' workloads, and the busy share above which owning wins (the
    English page's bottom line, from the same result)."""
    rented, owned, shares = {}, {}, []
    # the English bottom line's answers (one break-even in one frame: the cheapest owned option against the
    # cheapest rental); an Answer names its workload by key and label, as workload_name reads them
    for a in bl.answers(res.runs, res.workloads):
        rented.setdefault(a.rented["gpu"], []).append(workload_name(a))
        owned.setdefault(a.owned["gpu"], []).append(workload_name(a))
        shares.append(float(a.owning_wins_above))
    if not shares:
        return ""

    def who(by: dict[str, list[str]], basis: str) -> str:
        if len(by) == 1:
            return f"每种工作负载最省的{basis}方案都是{next(iter(by))}"
        return "；".join(f"{'、'.join(names)}最省的{basis}方案是{gpu}" for gpu, names in by.items())

    lo, hi = min(shares), max(shares)
    share = (
        zh_units.percent(lo)
        if zh_units.percent(lo) == zh_units.percent(hi)
        else f"{zh_units.percent(lo)}{zh_units.RANGE}{zh_units.percent(hi)}"
    )
    return (
        f'<p class="zh-bottom-line"><b>结论</b>：按本书的情景与国内电价，{who(rented, "租用")}，{who(owned, "自购")}。'
        f"自购的GPU只有一年中忙碌时间超过{share}才比租用便宜；达不到这一比例，就租用。"
        "每次训练的成本与区间见下表，用你自己的报价可在计算器中重算。</p>"
    )


# The claim whose monthly bill a reader sets beside the monthly fine-tune's cost per run.
RENTAL_CLAIM = "001-4-rental-80k-rmb-month"


def finetune_note(res: Any, frame: pd.DataFrame) -> str:
    """Why one monthly fine-tune costs tens of 元 here while document 001's customer paid about 8万元 a
    month: the document's bill is a month of renting the cluster around the clock; the book's figure is
    the GPU-hours the run itself occupies."""
    rows = frame[frame["id"] == RENTAL_CLAIM]
    key = next((w.key for w in res.workloads if "finetune" in w.key), None)
    if rows.empty or key is None or res.answer(key) is None:
        return ""
    r = rows.iloc[0]
    rented, owned, _ = res.answer(key)
    hours = float(rented["days"]) * 24 * int(rented["n_gpus"])
    return (
        f"<p>为什么这里每次微调只要{money(res, owned['cost'])}（自购）或{money(res, rented['cost'])}（租用），"
        f"而文章001的客户每月要付{_e(r['written'])}？文中的数字是整月全天候租用一个A100集群的账单"
        f"（本书重算为{_e(r['recomputed_zh'])}，判定：{_e(r['verdict_zh'])}）；本页的数字只计这次微调实际占用的"
        f"约{zh_units.plain(hours, 2)}卡时。一个月新增的语料很少，包月租下的集群大部分时间是空闲的："
        "按次计费，或把集群同时用于别的工作，账单才会接近本页的数字。</p>"
    )
