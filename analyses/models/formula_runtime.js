(function () {
  "use strict";
  // Generated from the formula system '@NAME' (analyses.models.formula): do not edit.
  const META = @META;
@CONSTANTS
@GRIDS
  function settle(x) { return Number.isFinite(x) ? Number(x.toPrecision(@SETTLE_DIGITS)) : x; }
  function cell(grid, v) {
    v = Math.min(Math.max(v, grid[0]), grid[grid.length - 1]);
    let i = 0;
    while (i < grid.length - 2 && grid[i + 1] <= v) i++;
    return [i, (v - grid[i]) / (grid[i + 1] - grid[i])];
  }
  function interpLogLog(g, x, y) {
    const [i, t] = cell(g.lx, Math.log(x));
    const [j, u] = cell(g.ly, Math.log(y));
    const a = g.lz[i][j] * (1 - t) + g.lz[i + 1][j] * t;
    const b = g.lz[i][j + 1] * (1 - t) + g.lz[i + 1][j + 1] * t;
    return Math.exp(a * (1 - u) + b * u);
  }
  const shown = (x, s) => (typeof x === "number" && Number.isFinite(x)) ? String(Number((x / s).toPrecision(6)))
    : (typeof x === "number" || x === undefined || x === null || x === "" ? "not a number" : String(x).slice(0, 40));
  function check(v) {
    const errors = [];
    for (const k of Object.keys(v)) {
      if (!META.inputs.some(s => s.name === k)) errors.push({input: k, value: shown(v[k], 1), allowed: "no such input", message: "unknown input '" + k + "'"});
    }
    for (const s of META.inputs) {
      const x = v[s.name];
      let bad = false;
      if (typeof x !== "number" || !Number.isFinite(x)) bad = true;
      else if (s.choices.length) bad = !s.choices.some(c => c[1] === x);
      else bad = x < s.min || x > s.max || (s.integer && !Number.isInteger(x));
      if (bad) {
        const value = shown(x, s.scale);
        const allowed = s.allowed || "within its range";  // a compact page's spec has no words (formula.to_js)
        errors.push({input: s.name, value: value, allowed: allowed, message: (s.label || s.name) + " must be " + allowed + "; got " + value});
      }
    }
    return errors;
  }
  function compute(v) {
    v = v || {};
    const errors = check(v);
    if (errors.length) return {ok: false, errors: errors};
@READS
@BODY
    const values = {@OUT};
    for (const k of META.results) {
      if (Number.isNaN(values[k])) errors.push({input: "", value: "", allowed: "", message: "result '" + k + "' is not a number"});
    }
    return errors.length ? {ok: false, errors: errors} : {ok: true, values: values};
  }
  function defaults() {
    const v = {};
    for (const s of META.inputs) v[s.name] = s.default;
    return v;
  }
  return {compute: compute, defaults: defaults, inputs: META.inputs, results: META.results, formulas: META.formulas, name: META.name};
})()
