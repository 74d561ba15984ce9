// The Chinese ledger's filters (zh/ledger.html): a verdict and a text, matched against each card's
// text after folding full-width forms (NFKC: ９００ＧＢ／ｓ finds 900GB/s) and case. Without
// JavaScript the controls stay hidden and every card shows.
document.addEventListener("DOMContentLoaded", () => {
  const fold = (s) => s.normalize("NFKC").toLowerCase().replace(/\s+/g, "");
  document.querySelectorAll(".zh-ledger").forEach((box) => {
    const controls = box.querySelector(".zh-controls");
    if (!controls) return;
    const select = controls.querySelector("[data-zh-filter]");
    const text = controls.querySelector("[data-zh-text]");
    const count = controls.querySelector(".zh-count");
    const cards = Array.from(box.querySelectorAll("article.zh-claim"));
    const haystack = new Map(cards.map((c) => [c, fold(c.textContent)]));
    const apply = () => {
      const verdict = select.value;
      const query = fold(text.value);
      let shown = 0;
      cards.forEach((c) => {
        const show = (!verdict || c.dataset.verdict === verdict) && (!query || haystack.get(c).includes(query));
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
