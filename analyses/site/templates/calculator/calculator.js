// The buy-or-rent calculator's page script (analyses/pages/calculator.py renders it after the generated
// formulas): reads the fields as people type numbers ("350万元", "３５０万", "3.5M", "3,500,000"), converts
// money between the fields' currency and per-server prices and the formulas' USD per GPU, runs the
// formulas, and writes the results, the answer and each error under its own field.
(function (calc, root) {
  "use strict";
  const cfg = JSON.parse(root.querySelector("script[data-config]").textContent);
  const W = cfg.words;
  const zh = cfg.lang === "zh";
  const specs = {};
  calc.inputs.forEach(s => { specs[s.name] = s; });
  const formulas = {};
  calc.formulas.forEach(f => { formulas[f.name] = f; });
  const field = name => root.querySelector('[data-param="' + name + '"]');
  const label = name => field(name).dataset.label || field(name).closest("label").querySelector(".calc-label").firstChild.textContent;
  const fill = (text, values) => text.replace(/\{(\w+)\}/g, (m, k) => (k in values ? values[k] : m));

  // ---------------------------------------------------------------- numbers as people type them
  const TIMES = {"万": 1e4, "亿": 1e8, "千": 1e3, "k": 1e3, "K": 1e3, "M": 1e6, "bn": 1e9, "B": 1e9, "T": 1e12};
  function parse(text) {
    let t = String(text)
      .replace(/[\uff01-\uff5e]/g, c => String.fromCharCode(c.charCodeAt(0) - 0xfee0))  // full-width to ASCII
      .replace(/[\s\u3000]/g, "").replace(/\u3002/g, ".");
    t = t.replace(/^(RMB|CNY|USD|US\$|\$|¥)/i, "").replace(/(元|人民币|美元|RMB|CNY|USD|%)$/i, "");
    const unit = t.match(/(万|亿|千|bn|[kKMBT])$/);
    const times = unit ? TIMES[unit[1]] : 1;
    if (unit) t = t.slice(0, -unit[1].length);
    if (/^[+-]?\d{1,3}(,\d{3})+(\.\d+)?$/.test(t)) t = t.replace(/,/g, "");
    if (!/^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i.test(t)) return NaN;
    return Number(t) * times;
  }

  // ---------------------------------------------------------------- numbers as the page writes them
  // Chinese figures carry no thousands separators (notes/zh-style.md): 1234天, 5.68万元
  const separated = (options) => { const f = new Intl.NumberFormat("en-US", options); return zh ? {format: v => f.format(v).replace(/,/g, "")} : f; };
  const grouped = separated({maximumSignificantDigits: 4});
  const plain = separated({maximumSignificantDigits: 8});
  const SUP = "\u207b\u2070\u00b9\u00b2\u00b3\u2074\u2075\u2076\u2077\u2078\u2079";
  function number(v) {
    const a = Math.abs(v);
    if (a !== 0 && (a >= 1e15 || a < 1e-4)) {  // as formula.readable: never e-notation
      const e = Math.floor(Math.log10(a));
      const sup = String(e).split("").map(c => SUP[c === "-" ? 0 : Number(c) + 1]).join("");
      return String(Number((v / Math.pow(10, e)).toPrecision(4))) + "\u00d710" + sup;
    }
    return grouped.format(v);
  }
  function wanyi(v, format) {  // 万 (10^4) and 亿 (10^8), as Chinese writes large sums
    const a = Math.abs(v);
    if (a >= 1e8) return format.format(v / 1e8) + "亿";
    if (a >= 1e4) return format.format(v / 1e4) + "万";
    return format.format(v);
  }
  const money = v => (zh ? wanyi(v, grouped) : grouped.format(v));
  const share = v => (v > 1 ? W.never : String(Number((v * 100).toPrecision(2))) + "%");
  function shown(v, f) {
    if (typeof v === "boolean") return v ? "yes" : "no";
    if (!Number.isFinite(v)) return f.infinite === "never" ? W.never : f.infinite;
    if (f.unit === "{currency}") return money(v / f.scale);
    if (f.unit === "fraction") return share(v);
    return number(v / f.scale);
  }
  const fieldText = v => (zh && Math.abs(v) >= 1e4 ? wanyi(v, plain) : plain.format(v));

  // ---------------------------------------------------------------- money in the reader's currency and per server
  let rate = specs[cfg.rate].default;
  // The units the money fields are written in (changed only by onChange, after reading them in the old ones).
  let units = {currency: field("currency").value, per: root.querySelector("[data-price-per]").value};
  const currency = () => cfg.currencies[units.currency] || "USD";  // the choice's code, by its value
  const perServer = () => units.per === "server";
  function factor(name) {  // field value = the formulas' value x factor
    const m = cfg.money[name];
    if (!m) return 1 / specs[name].scale;
    let f = 1;
    if (m.cur === "USD" && currency() !== "USD") f = rate;
    if (m.cur === "CNY" && currency() === "USD") f = 1 / rate;
    return m.server && perServer() ? f * m.server : f;
  }
  function moneyUnit(name) {
    const m = cfg.money[name];
    const per = m.server && perServer() ? "per server" : m.per;
    return fill(W["money:" + per], {currency: W["currency:" + currency()], n: m.server});
  }
  function bound(x) {  // an end of a money field's allowed range at four figures (as Words.allowed in Python)
    return zh && Math.abs(x) >= 1e4 ? wanyi(x, grouped) : grouped.format(x);
  }
  function moneyLabels() {  // units and allowed ranges of the money fields, in the currency and per unit set
    Object.keys(cfg.money).forEach(name => {
      const s = specs[name];
      const unit = moneyUnit(name);
      const f = factor(name);
      const tag = root.querySelector('[data-unit-of="' + name + '"]');
      if (tag) tag.textContent = zh ? "（" + unit + "）" : " (" + unit + ")";
      const hint = document.getElementById(cfg.ids + "-" + name + "-range");
      if (hint) hint.textContent = fill(W.allowed_range, {lo: bound(s.min * f), hi: bound(s.max * f), unit: zh ? unit : " " + unit});
    });
  }
  function rewrite(values) {  // fields showing ``values`` (the formulas' units) in the units set now
    if (cfg.rate in values) rate = values[cfg.rate];  // money is written at the rate it comes with
    Object.keys(values).forEach(name => {
      const el = field(name);
      if (!el || el.tagName === "SELECT") return;
      const x = values[name] * factor(name);  // money to six figures, as people write it; the rest exactly
      el.value = cfg.money[name] ? fieldText(x) : String(Number(x.toPrecision(15)));
    });
  }

  // ---------------------------------------------------------------- reading, computing, showing
  function read() {
    const r = parse(field(cfg.rate).value);
    if (Number.isFinite(r) && r >= specs[cfg.rate].min && r <= specs[cfg.rate].max) rate = r;
    const v = {};
    root.querySelectorAll("[data-param]").forEach(el => {
      const name = el.dataset.param;
      if (el.tagName === "SELECT") { v[name] = Number(el.value); return; }
      const x = parse(el.value);
      v[name] = x / factor(name);
    });
    return v;
  }
  function clearErrors() {
    root.querySelectorAll("[data-param]").forEach(el => el.removeAttribute("aria-invalid"));
    root.querySelectorAll(".calc-field-error").forEach(el => { el.hidden = true; el.textContent = ""; });
  }
  function showErrors(errors) {
    const labels = [];
    errors.forEach(e => {
      const el = field(e.input);
      if (!el) return;
      const hint = document.getElementById(cfg.ids + "-" + e.input + "-range");
      const typed = el.value.trim();
      const value = typed === "" || !Number.isFinite(parse(typed)) ? (typed === "" ? W.not_a_number : typed) : typed;
      const at = document.getElementById(cfg.ids + "-" + e.input + "-error");
      at.textContent = fill(W.message, {label: label(e.input), allowed: hint ? hint.textContent : e.allowed, value: value});
      at.hidden = false;
      el.setAttribute("aria-invalid", "true");
      if (el.closest("details")) el.closest("details").open = true;  // an error is never folded away
      labels.push('<a href="#' + el.id + '">' + label(e.input).replace(/[&<>"]/g, c => "&#" + c.charCodeAt(0) + ";") + "</a>");
    });
    const box = root.querySelector("[data-calc-error]");
    box.innerHTML = fill(W.errors, {fields: labels.join(W.list_separator)});
    box.hidden = false;
  }
  function decide(values, v) {
    const el = root.querySelector("[data-decision]");
    const none = !Number.isFinite(values.best_rented) && !Number.isFinite(values.best_owned);
    const key = none ? "decision_none" : values.owning_wins ? "decision_own"
      : values.break_even_run > 1 ? "decision_never" : "decision_rent";
    const cur = " " + W["currency:" + currency()];
    const parts = {
      rented_gpu: cfg.gens[values.cheapest_rented], owned_gpu: cfg.gens[values.cheapest_owned],
      rented_cost: money(values.best_rented) + (zh ? W["currency:" + currency()] : cur),
      owned_cost: money(values.best_owned) + (zh ? W["currency:" + currency()] : cur),
      busy: share(v[cfg.busy]), break_even: share(values.break_even_run),
    };
    el.dataset.decision = none ? "none" : values.owning_wins ? "own" : "rent";
    el.textContent = "";
    W[key].split(/(\{\w+\})/).forEach(piece => {
      const k = piece.slice(1, -1);
      if (piece.startsWith("{") && k in parts) {
        const b = document.createElement("strong");
        b.textContent = parts[k];
        b.dataset.part = k;
        el.appendChild(b);
      } else el.appendChild(document.createTextNode(piece));
    });
  }
  function rows(values) {  // a generation the run does not fit on shows that, and no time or cost
    root.querySelectorAll("tr[data-gen]").forEach(tr => {
      const k = tr.dataset.gen;
      const fits = values["fits_" + k] !== false;
      const unfit = tr.querySelector("[data-unfit]");
      tr.querySelectorAll("td:not([data-unfit]):not([hidden])").forEach(td => { td.classList.toggle("calc-off", !fits); });
      tr.dataset.fits = String(fits);
      unfit.hidden = fits;
      unfit.textContent = fits ? "" : fill(W.unfit, {
        n: field("n_gpus_" + k).value, least: grouped.format(Math.ceil(values["fewest_gpus_" + k] - 1e-9)),
      });
    });
  }
  function update() {
    const v = read();
    root.calcInputs = v;
    const out = calc.compute(v);
    clearErrors();
    root.querySelectorAll("[data-unit]").forEach(el => { el.textContent = W["currency:" + currency()]; });
    if (!out.ok) {
      showErrors(out.errors);
      root.querySelectorAll("[data-result]").forEach(el => { el.textContent = "\u2014"; el.dataset.value = ""; });
      root.querySelector("[data-decision]").textContent = "\u2014";
      root.dataset.state = "error";
      return;
    }
    root.querySelector("[data-calc-error]").hidden = true;
    root.querySelectorAll("[data-result]").forEach(el => {
      const x = out.values[el.dataset.result];
      const words = el.dataset.words ? JSON.parse(el.dataset.words) : null;
      el.dataset.value = String(x);
      el.textContent = words && String(x) in words ? words[String(x)] : shown(x, formulas[el.dataset.result]);
    });
    rows(out.values);
    decide(out.values, v);
    root.dataset.state = "ok";
  }
  function onChange(event) {
    const t = event.target;
    if (t === field("currency") || t.matches("[data-price-per]")) {  // keep every amount, rewrite it
      const before = read();  // in the units the fields were written in
      units = {currency: field("currency").value, per: root.querySelector("[data-price-per]").value};
      const amounts = {};
      Object.keys(cfg.money).forEach(k => { if (Number.isFinite(before[k])) amounts[k] = before[k]; });
      rewrite(amounts);
      moneyLabels();
    } else if (t.matches("[data-preset]")) {
      rewrite(JSON.parse(t.options[t.selectedIndex].dataset.values || "{}"));
    }
    update();
  }
  root.addEventListener("input", event => {
    if (event.target.tagName === "SELECT") return;  // a choice is handled on change
    if (event.target === field(cfg.rate)) { read(); moneyLabels(); }
    update();
  });
  root.addEventListener("change", onChange);
  root.calcSet = values => { rewrite(values); update(); };  // values in the formulas' units (tests, presets)
  // At load: the fields in the currency and per-unit set (the page writes the formulas' own units).
  const initial = {};
  Object.keys(cfg.money).forEach(k => { initial[k] = specs[k].default; });
  rewrite(initial);
  moneyLabels();
  update();
})
