/* The book's tables, offline and without libraries.
 *
 * - A table with `data-sortable` sorts by a column when its header button is pressed (again:
 *   reverse). A header may hold several buttons, one per field stacked in its cells
 *   (`data-sort-field` names the `[data-field]` element). A cell's (or field's) `data-sort`
 *   attribute, where present, is its sort key (verdicts in the book's order, sections and
 *   percentages by value); otherwise its text, numbers compared as numbers.
 * - In `.audit-ledger`, each `select[data-filter=COL]` keeps the rows whose `[data-field=COL]`
 *   element's `data-value` (its text where it has none) equals the chosen value, and `input[data-filter-text]` keeps rows containing the
 *   text: a figure matches however it is written (900GB/s, 900 GB/s, ９００ＧＢ／ｓ; 300万 and 3M),
 *   with the book search's normaliser (`auditSearch`, analyses/site/figure_search.js) where the
 *   page has it. The choice is kept
 *   in the page address (?verdict=inconsistent&document=...) so a filtered view can be shared.
 * - In the ledger and the chapters' verdict tables, each cell gets its column's name as
 *   `data-label`, which the narrow-screen stylesheet shows above the value (a table as cards).
 * - A table cell that holds a sentence keeps about 12 characters a line (td.sentence).
 * - A chart scales down to its column (audit.css) but never so far that its smallest text is below
 *   10 px on a phone (MIN_TEXT_PX): beyond that it scrolls sideways inside its own box.
 * Without JavaScript every row shows and the controls stay hidden.
 */
(function () {
  "use strict";

  function key(row, col, field) {
    var cell = row.cells[col];
    if (cell && field) cell = cell.querySelector('[data-field="' + field + '"]');
    if (!cell) return "";
    return cell.hasAttribute("data-sort") ? cell.getAttribute("data-sort") : cell.textContent.trim();
  }

  function asNumber(text) {
    var t = text.replace(/[,%\s]/g, "").replace("\u2212", "-");
    return /^[-+]?\d+(\.\d+)?$/.test(t) ? parseFloat(t) : NaN;
  }

  function compare(a, b) {
    var x = asNumber(a), y = asNumber(b);
    if (!isNaN(x) && !isNaN(y)) return x - y;
    return a.localeCompare(b, "en", { numeric: true, sensitivity: "base" });
  }

  function sortable(table) {
    var body = table.tBodies[0];
    if (!body || !table.tHead) return;
    var buttons = Array.prototype.slice.call(table.tHead.querySelectorAll("button"));
    buttons.forEach(function (button, i) {
      var th = button.closest("th");
      var col = button.hasAttribute("data-sort-col") ? parseInt(button.getAttribute("data-sort-col"), 10) : th.cellIndex;
      var field = button.getAttribute("data-sort-field");
      button.addEventListener("click", function () {
        var ascending = button.getAttribute("data-dir") !== "ascending";
        buttons.forEach(function (b) {
          b.removeAttribute("data-dir");
          b.closest("th").removeAttribute("aria-sort");
        });
        button.setAttribute("data-dir", ascending ? "ascending" : "descending");
        th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
        var rows = Array.prototype.slice.call(body.rows);
        rows.sort(function (r1, r2) {
          var c = compare(key(r1, col, field), key(r2, col, field));
          return ascending ? c : -c;
        });
        rows.forEach(function (r) { body.appendChild(r); });
      });
    });
  }

  function filterable(root) {
    var controls = root.querySelector(".ledger-controls");
    var table = root.querySelector("table");
    if (!controls || !table || !table.tBodies[0]) return;
    var rows = Array.prototype.slice.call(table.tBodies[0].rows);
    var selects = Array.prototype.slice.call(controls.querySelectorAll("select[data-filter]"));
    var text = controls.querySelector("input[data-filter-text]");
    var count = controls.querySelector(".ledger-count");

    var search = window.auditSearch;
    function haystack(tr) {
      if (tr._audit_text === undefined) {
        var t = tr.textContent;
        tr._audit_text = t.toLowerCase() + (search ? " " + search.indexTerms(t).join(" ") : "");
      }
      return tr._audit_text;
    }
    function matches(tr, q) {
      var hay = haystack(tr);
      if (hay.indexOf(q) >= 0) return true;
      var terms = search ? search.queryTerms(q) : [];
      return terms.length > 0 && terms.every(function (t) { return hay.indexOf(t) >= 0; });
    }

    function apply(remember) {
      var q = text ? text.value.trim().toLowerCase() : "";
      var shown = 0;
      rows.forEach(function (tr) {
        var keep = selects.every(function (s) {
          var field = tr.querySelector('[data-field="' + s.getAttribute("data-filter") + '"]');
          if (!s.value) return true;
          if (field === null) return false;
          var value = field.hasAttribute("data-value") ? field.getAttribute("data-value") : field.textContent.trim();
          return value === s.value;
        });
        if (keep && q) keep = matches(tr, q);
        tr.style.display = keep ? "" : "none";
        if (keep) shown += 1;
      });
      if (count) count.textContent = shown + " of " + rows.length + " claims";
      if (remember && window.history && window.history.replaceState) {
        var params = new URLSearchParams();
        selects.forEach(function (s) { if (s.value) params.set(s.getAttribute("data-filter"), s.value); });
        if (q) params.set("q", q);
        var search = params.toString();
        try {
          window.history.replaceState(null, "", (search ? "?" + search : window.location.pathname) + window.location.hash);
        } catch (e) { /* some browsers refuse to change the address of a file:// page */ }
      }
    }

    var wanted = new URLSearchParams(window.location.search);
    selects.forEach(function (s) {
      var v = wanted.get(s.getAttribute("data-filter"));
      if (v !== null && Array.prototype.some.call(s.options, function (o) { return o.value === v; })) s.value = v;
      s.addEventListener("change", function () { apply(true); });
    });
    if (text) {
      if (wanted.get("q")) text.value = wanted.get("q");
      text.addEventListener("input", function () { apply(true); });
    }
    controls.hidden = false;
    apply(false);
  }

  function labelled(table) {
    if (!table.tHead || !table.tBodies[0]) return;
    var names = Array.prototype.map.call(table.tHead.rows[0].cells, function (th) {
      return th.textContent.replace(/\s+/g, " ").trim();
    });
    Array.prototype.forEach.call(table.tBodies[0].rows, function (tr) {
      Array.prototype.forEach.call(tr.cells, function (td, i) {
        if (names[i]) td.setAttribute("data-label", names[i]);
      });
    });
  }

  /* Arriving at a claim's evidence row (chapter.html#check-<id>) from another page of the book (the
   * front page, a ledger page, another chapter's box), the row offers the way back to where the reader
   * was: a link followed to a check row records, for this tab (sessionStorage; file:// pages send no
   * referrer), the page and the row it was followed from; the row it lands on shows that place. */
  var FROM_KEY = "audit-from";
  function rememberFrom(e) {
    var a = e.target.closest && e.target.closest('a[href*="#check-"]');
    if (!a || !window.sessionStorage) return;
    var row = a.closest("tr[id], [id^='check-']");
    var from = window.location.href.split("#")[0] + (row && row.id ? "#" + row.id : "");
    try {
      window.sessionStorage.setItem(FROM_KEY, JSON.stringify({ to: a.href, from: from, title: document.title }));
    } catch (err) { /* storage refused: no way back shown */ }
  }

  function backLink() {
    var id = decodeURIComponent(window.location.hash.slice(1));
    var row = id && document.getElementById(id);
    if (!row || row.tagName !== "TR" || row.querySelector("a.back-link")) return;
    var came = null;
    try {
      came = JSON.parse(window.sessionStorage.getItem(FROM_KEY) || "null");
    } catch (err) { came = null; }
    var here = window.location.href;
    var from = came && came.to === here ? came.from : document.referrer;
    if (!from || from.split("#")[0] === here.split("#")[0]) return;
    var cell = row.querySelector("td.c-about") || row.cells[0];
    if (!cell) return;
    var line = document.createElement("div");
    line.className = "back";
    var a = document.createElement("a");
    a.className = "back-link";
    a.href = from;
    var title = came && came.to === here && came.title ? came.title.split(/ [—–|-] /)[0] : "";
    a.textContent = "\u21a9 back to " + (title ? title : "where you were");
    line.appendChild(a);
    cell.appendChild(line);
  }

  /* A chart scales down to its column, but never so far that its smallest text falls below
   * MIN_TEXT_PX on a phone (DESK_TEXT_PX on a wider screen, where the widest charts fit their column at
   * that size; nor below MIN_SCALE of its size): beyond that it scrolls sideways in its own box. */
  var MIN_SCALE = 0.7;
  var MIN_TEXT_PX = 10;
  var DESK_TEXT_PX = 8.5;
  var PHONE_PX = 700; // audit.css's card layout begins below this width too
  function smallestText(g) {
    if (g.tagName.toLowerCase() !== "svg") return MIN_TEXT_PX; // a canvas keeps its size
    var least = Infinity;
    Array.prototype.forEach.call(g.querySelectorAll("text"), function (t) {
      if (!t.textContent.trim()) return;
      var size = parseFloat(t.getAttribute("font-size")) || parseFloat(window.getComputedStyle(t).fontSize);
      if (size < least) least = size;
    });
    return isFinite(least) ? least : MIN_TEXT_PX;
  }
  function fitCharts() {
    Array.prototype.forEach.call(document.querySelectorAll(".vega-embed > svg.marks, .vega-embed > canvas.marks"), function (g) {
      var w = parseFloat(g.getAttribute("width"));
      if (!w) return;
      var floor = window.innerWidth <= PHONE_PX ? MIN_TEXT_PX : DESK_TEXT_PX;
      var scale = Math.min(1, Math.max(MIN_SCALE, floor / smallestText(g)));
      var wanted = Math.round(w * scale) + "px";
      if (g.style.minWidth !== wanted) g.style.minWidth = wanted;
    });
  }

  /* A table cell that holds a sentence keeps at least about 12 characters a line (audit.css,
   * td.sentence): in an auto-width table the browser would otherwise squeeze it to its longest word
   * and let a wide table's numbers have the width; the table scrolls inside its box instead. */
  var SENTENCE_WORDS = 6;
  function sentenceCells() {
    Array.prototype.forEach.call(document.querySelectorAll(".bd-article td"), function (td) {
      if (td.textContent.trim().split(/\s+/).length >= SENTENCE_WORDS) td.classList.add("sentence");
    });
  }

  function init() {
    sentenceCells();
    fitCharts();
    if (window.MutationObserver && document.querySelector(".vega-embed, [id^='altair-viz-']")) {
      new MutationObserver(fitCharts).observe(document.body, { childList: true, subtree: true });
      window.addEventListener("resize", fitCharts);
    }
    Array.prototype.forEach.call(document.querySelectorAll(".audit-ledger table, table.audit-verdicts, .audit-sources table"), labelled);
    backLink();
    window.addEventListener("hashchange", backLink);
    document.addEventListener("click", rememberFrom, true);
    Array.prototype.forEach.call(document.querySelectorAll("table[data-sortable]"), sortable);
    Array.prototype.forEach.call(document.querySelectorAll(".audit-ledger"), filterable);
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
