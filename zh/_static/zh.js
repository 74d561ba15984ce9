// The Chinese ledger's filters (zh/ledger.html): a verdict, and a text matched against each card's
// text after folding full-width forms (NFKC: ９００ＧＢ／ｓ finds 900GB/s) and case, or, where the
// page has the book search's normaliser (auditSearch, analyses/site/figure_search.js), against the
// figure terms it makes (6~12个月 finds 6–12个月, 300万 finds 3M), as the English ledger's filter
// does. Without JavaScript the controls stay hidden and every card shows.
document.addEventListener("DOMContentLoaded", () => {
  const fold = (s) => s.normalize("NFKC").toLowerCase().replace(/\s+/g, "");
  const search = window.auditSearch;
  document.querySelectorAll(".zh-ledger").forEach((box) => {
    const controls = box.querySelector(".zh-controls");
    if (!controls) return;
    const select = controls.querySelector("[data-zh-filter]");
    const text = controls.querySelector("[data-zh-text]");
    const count = controls.querySelector(".zh-count");
    const cards = Array.from(box.querySelectorAll("article.zh-claim"));
    const haystack = new Map(
      cards.map((c) => [c, fold(c.textContent) + (search ? " " + search.indexTerms(c.textContent).join(" ") : "")]),
    );
    const matches = (card, query) => {
      const hay = haystack.get(card);
      if (hay.includes(fold(query))) return true;
      const terms = search ? search.queryTerms(query) : [];
      return terms.length > 0 && terms.every((t) => hay.includes(t));
    };
    const apply = () => {
      const verdict = select.value;
      const query = text.value.trim();
      let shown = 0;
      cards.forEach((c) => {
        const show = (!verdict || c.dataset.verdict === verdict) && (!query || matches(c, query));
        c.hidden = !show;
        shown += show ? 1 : 0;
      });
      count.textContent = `${shown}条`;
    };
    select.addEventListener("change", apply);
    text.addEventListener("input", apply);
    controls.hidden = false;
  });
});
