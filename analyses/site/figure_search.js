/* Figures in search: the JavaScript half of analyses/site/figure_search.py (read that module's
 * docstring). The build fills in the configuration (the figure pattern, units and magnitudes) from
 * the Python tables and puts this script into Sphinx's language_data.js, where `splitQuery`
 * replaces Sphinx's own query splitter. `auditSearch` is also what the ledger page's text filter
 * uses (_static/audit.js). tests/site/test_screens.py checks both halves give the same terms.
 */
var auditSearch = (function (config) {
  "use strict";
  var FIGURE = new RegExp(config.figure, "g");
  var CJK_RUN = new RegExp(config.cjk, "g");
  var CJK_ONLY = new RegExp("^(?:" + config.cjk + ")$");
  var WORD = /[\p{L}\p{N}_]+/gu;
  var DASHES = { 0x2013: "-", 0x2014: "-", 0x2212: "-", 0x301c: "~", 0x3000: " " };

  function fold(text) {
    var out = "";
    for (var i = 0; i < text.length; i++) {
      var cp = text.charCodeAt(i);
      if (cp >= 0xff01 && cp <= 0xff5e) out += String.fromCharCode(cp - 0xfee0);
      else out += DASHES[cp] || text.charAt(i);
    }
    return out.toLowerCase();
  }

  function numberTerm(number, exponent) {
    var parts = number.replace(/,/g, "").split(".");
    var frac = parts[1] || "";
    var digits = (parts[0] + frac).replace(/^0+/, "");
    var exp = exponent - frac.length;
    if (!digits) return "0";
    var stripped = digits.replace(/0+$/, "");
    exp += digits.length - stripped.length;
    digits = stripped;
    if (exp >= 3) return digits + "e" + exp;
    if (exp >= 0) return digits + "0".repeat(exp);
    if (digits.length > -exp) return digits.slice(0, exp) + "p" + digits.slice(exp);
    return "0p" + "0".repeat(-exp - digits.length) + digits;
  }

  function quantity(number, magnitude, bare) {
    if (bare) return numberTerm("1", config.magnitudes[bare]);
    if (number === undefined) return null;
    return numberTerm(number, magnitude ? config.magnitudes[magnitude.trim()] : 0);
  }

  function figures(text) {
    var out = [];
    var m;
    FIGURE.lastIndex = 0;
    var folded = fold(text);
    while ((m = FIGURE.exec(folded)) !== null) {
      if (m[0] === "") { FIGURE.lastIndex++; continue; }
      var low = quantity(m[1], m[2], m[3]);
      var high = quantity(m[5], m[6], m[7]);
      var unit = config.units[m[8] || m[4] || ""] || "";
      out.push([unit, high ? low + "to" + high : String(low)]);
    }
    return out;
  }

  function figureTerms(text, withBare) {
    var out = [];
    figures(text).forEach(function (f) {
      if (f[0]) out.push(f[0] + f[1]);
      if ((withBare || !f[0]) && !/^[0-9]+$/.test(f[1])) out.push(f[1]);
    });
    return out;
  }

  function cjkTerms(text, pairsOnly) {
    var out = [];
    (text.match(CJK_RUN) || []).forEach(function (run) {
      var chars = Array.from(run);
      if (chars.length === 1) { out.push(run); return; }
      for (var i = 0; i < chars.length - 1; i++) out.push(chars[i] + chars[i + 1]);
      if (!pairsOnly) out.push.apply(out, chars);
    });
    return out;
  }

  function indexTerms(text) {
    var folded = fold(text);
    return figureTerms(folded, true).concat(cjkTerms(folded, false));
  }

  function queryTerms(query) {
    var folded = fold(query);
    var terms = figureTerms(folded, false);
    var rest = folded.replace(FIGURE, " ").replace(CJK_RUN, function (run) { return " " + run + " "; });
    (rest.match(WORD) || []).forEach(function (word) {
      if (CJK_ONLY.test(word)) terms.push.apply(terms, cjkTerms(word, true));
      else terms.push(word);
    });
    return terms.filter(function (t) { return t; });
  }

  return { fold: fold, numberTerm: numberTerm, figureTerms: figureTerms, indexTerms: indexTerms, queryTerms: queryTerms };
})(__FIGURE_SEARCH_CONFIG__);

var splitQuery = auditSearch.queryTerms;
