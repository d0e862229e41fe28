"""The HTML report's own stylesheet and script, inlined into every page so it opens with no network.

The script reads its data only from ``<script type="application/json">`` blocks and builds every element that
shows data with ``textContent``: a model's output can never become markup or code.
"""

from __future__ import annotations

CSS = """
:root { --fg: #1f2933; --muted: #6b7785; --line: #d9dee3; --bg: #ffffff; --band: #f4f6f8; --accent: #3366cc; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); background: var(--bg); }
header.top { padding: 16px 24px 8px; border-bottom: 1px solid var(--line); }
header.top h1 { margin: 0 0 4px; font-size: 20px; }
nav a { margin-right: 14px; color: var(--accent); text-decoration: none; }
main { padding: 0 24px 40px; }
section { margin-top: 24px; }
h2 { font-size: 17px; border-bottom: 2px solid var(--accent); padding-bottom: 2px; }
h3 { font-size: 15px; margin: 18px 0 6px; }
h4 { font-size: 14px; margin: 14px 0 4px; color: var(--muted); }
table { border-collapse: collapse; margin: 6px 0 10px; }
th, td { border: 1px solid var(--line); padding: 3px 8px; text-align: left; vertical-align: top; }
thead th { background: var(--band); position: sticky; top: 0; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.ci, .muted, .n { color: var(--muted); font-size: 12px; }
.ci { display: block; }
th[data-sortable] { cursor: pointer; user-select: none; }
th[data-sortable]::after { content: " \\2195"; color: var(--muted); font-size: 11px; }
th[aria-sort="ascending"]::after { content: " \\25B2"; color: var(--fg); }
th[aria-sort="descending"]::after { content: " \\25BC"; color: var(--fg); }
tr.family th { background: var(--band); font-variant: small-caps; letter-spacing: 0.03em; }
.controls { display: flex; flex-wrap: wrap; gap: 10px 18px; align-items: center; margin: 8px 0; }
.weights label { display: inline-grid; grid-template-columns: 90px 160px 52px; align-items: center; gap: 6px; }
.weights output { font-variant-numeric: tabular-nums; text-align: right; }
.dyna-tables { display: flex; flex-wrap: wrap; gap: 8px 24px; }
table.dyna caption { text-align: left; font-weight: 600; padding: 2px 0; }
td.rank { text-align: right; width: 3em; }
.summary li { margin: 2px 0; }
.status-not_evaluated { color: #9a6700; }
.status-failed, .outcome.failed, .outcome.error, .wrong { color: #b03a2e; font-weight: 600; }
.status-passed, .outcome.passed, .right { color: #1e8449; }
.outcome.skipped { color: var(--muted); }
.charts { display: flex; flex-wrap: wrap; gap: 10px 28px; align-items: flex-start; }
figure { margin: 4px 0; }
figcaption { font-size: 12px; color: var(--muted); max-width: 540px; }
svg.chart text { font: 11px system-ui, sans-serif; fill: var(--fg); }
svg.chart .plot { fill: #fafbfc; stroke: var(--line); }
svg.chart .axis { stroke: #8a949e; }
svg.chart .diagonal { stroke: #8a949e; stroke-dasharray: 4 3; }
svg.chart .whisker { stroke: #1f2933; stroke-width: 1.2; }
svg.chart .worst { stroke: #b03a2e; stroke-width: 2; }
svg.chart .worst-group { stroke: #b03a2e; stroke-width: 2; }
svg.chart .best-group { stroke: #1e8449; stroke-width: 2; }
#dd-table { width: 100%; table-layout: fixed; }
#dd-table td { overflow-wrap: anywhere; }
#dd-table pre { margin: 0; white-space: pre-wrap; font: 12px/1.35 ui-monospace, SFMono-Regular, Menlo, monospace; max-height: 22em; overflow: auto; }
#dd-table .prefix { color: var(--muted); }
#dd-table pre.error { color: #b03a2e; }
#dd-table ul { margin: 0; padding-left: 1.1em; }
#dd-table li.gold { font-weight: 600; }
#dd-table summary { cursor: pointer; }
.pager button { padding: 2px 10px; }
html, body { max-width: 100%; }
header.top h1, .summary li { overflow-wrap: anywhere; }
.scroll { overflow-x: auto; max-width: 100%; }
.scroll > table { margin: 0; }
svg.chart { max-width: 100%; height: auto; }
svg.chart .grid-line { stroke: #e3e7eb; }
svg.chart a:hover text { fill: var(--accent); text-decoration: underline; }
section.scenario { scroll-margin-top: 8px; }
section.scenario:target { outline: 2px solid var(--accent); outline-offset: 4px; }
#overview h3 { margin: 12px 0 4px; }
.first-screen { display: grid; grid-template-columns: minmax(0, 1fr); gap: 4px; }
.verdict-box { max-height: 11.5em; overflow-y: auto; }
#verdicts-table td, #verdicts-table th, table.grid td, table.grid th, .glance td, .glance th { padding: 2px 6px; }
.badge { display: inline-block; padding: 0 6px; border-radius: 3px; font-size: 12px; font-weight: 600; }
.badge.failed { background: #f6d5d1; color: #8e2a20; }
.badge.passed { background: #d4efdc; color: #18693a; }
.badge.not_evaluated { background: #fbefc9; color: #7a5200; }
tr.verdict-failed td { background: #fdf3f2; }
table.grid th a, .glance a { color: var(--fg); }
table.grid th .edition { font-size: 11px; font-weight: normal; color: var(--muted); }
#verdicts a { color: var(--accent); }
table.grid th .metric { display: block; color: var(--muted); font-size: 11px; font-weight: normal; }
table.grid tbody th { min-width: 10em; max-width: 18em; font-weight: 600; overflow-wrap: anywhere; position: sticky; left: 0; background: var(--bg); z-index: 1; }
table.grid td { padding: 0; min-width: 6.5em; }
a.cell { display: block; padding: 2px 6px; color: var(--fg); text-decoration: none; font-variant-numeric: tabular-nums; }
a.cell:hover, a.cell:focus { outline: 2px solid var(--accent); outline-offset: -2px; }
a.cell .ci { display: inline-block; margin-left: 4px; font-size: 11px; white-space: nowrap; }
td.ci-inline .ci { display: inline; }
.swatch { display: inline-block; width: 8px; height: 8px; margin-right: 4px; border-radius: 2px; }
.shade-0 { background: #f3f6fb; } .shade-1 { background: #e1e9f5; } .shade-2 { background: #cbd9ee; }
.shade-3 { background: #b0c6e6; } .shade-4 { background: #93b1dc; }
.gate-failed { background: #f6d5d1; box-shadow: inset 3px 0 #b03a2e; }
.gate-passed { background: #d4efdc; box-shadow: inset 3px 0 #1e8449; }
.gate-not_evaluated { background: #fbefc9; box-shadow: inset 3px 0 #9a6700; }
.legend .key { padding: 0 5px; border-radius: 2px; color: var(--fg); }
.glances { display: flex; flex-wrap: wrap; gap: 8px 28px; align-items: flex-start; }
.glance { min-width: 0; max-width: 100%; }
.glance .tall { max-height: 18em; overflow-y: auto; }
.loss { color: #b03a2e; font-size: 12px; }
ul.notes { margin: 4px 0; }
@media (max-width: 900px) { header.top { padding: 10px 12px 6px; } main { padding: 0 12px 32px; } }
"""

JS = r"""
(function () {
  "use strict";
  var doc = document;
  function byId(id) { return doc.getElementById(id); }
  function data(id) { var node = byId(id); return node ? JSON.parse(node.textContent) : null; }
  function each(list, fn) { Array.prototype.forEach.call(list, fn); }
  function el(tag, text, cls) {
    var node = doc.createElement(tag);
    if (text !== undefined && text !== null) node.textContent = String(text);
    if (cls) node.className = cls;
    return node;
  }
  function fmt(v) {
    if (v === null || v === undefined || !isFinite(v)) return "\u2014";
    if (v !== 0 && Math.abs(v) < 0.001) return v.toExponential(2);
    return Math.abs(v) >= 100 ? v.toFixed(1) : v.toFixed(3);
  }
  function nullsLast(a, b, sign) {
    if (a[0] === null || b[0] === null) return a[0] === null ? (b[0] === null ? compare(a[1], b[1]) : 1) : -1;
    return a[0] < b[0] ? -sign : a[0] > b[0] ? sign : compare(a[1], b[1]);
  }
  function compare(a, b) { return a < b ? -1 : a > b ? 1 : 0; }

  /* Sortable tables: the first click puts the best first (data-direction), the next reverses. */
  function sortKey(row, index) {
    var cell = row.cells[index], raw = cell ? cell.getAttribute("data-sort") : null;
    if (raw === null || raw === "") return null;
    var num = Number(raw);
    return isNaN(num) ? raw.toLowerCase() : num;
  }
  function sortBy(table, th) {
    var index = th.cellIndex, body = table.tBodies[0];
    var preferred = th.getAttribute("data-direction") === "higher" ? "descending" : "ascending";
    var order = th.getAttribute("aria-sort") === preferred ? (preferred === "ascending" ? "descending" : "ascending") : preferred;
    each(table.tHead.rows[0].cells, function (cell) { cell.removeAttribute("aria-sort"); });
    th.setAttribute("aria-sort", order);
    var sign = order === "ascending" ? 1 : -1;
    var rows = Array.prototype.map.call(body.rows, function (row, i) { return [sortKey(row, index), i, row]; });
    rows.sort(function (a, b) { return nullsLast(a, b, sign); });
    rows.forEach(function (entry) { body.appendChild(entry[2]); });
  }
  each(doc.querySelectorAll("table.sortable"), function (table) {
    each(table.tHead.rows[0].cells, function (th) {
      if (!th.hasAttribute("data-sortable")) return;
      th.tabIndex = 0;
      th.addEventListener("click", function () { sortBy(table, th); });
      th.addEventListener("keydown", function (event) { if (event.key === "Enter" || event.key === " ") { event.preventDefault(); sortBy(table, th); } });
    });
  });

  /* Leaderboard: show the main columns, or one family's. */
  var family = byId("lb-family");
  if (family) {
    family.addEventListener("change", function () {
      var chosen = family.value;
      each(doc.querySelectorAll("#leaderboard-table [data-family]"), function (cell) {
        cell.hidden = chosen === "main" ? cell.getAttribute("data-main") !== "1" : cell.getAttribute("data-family") !== chosen;
      });
    });
  }

  /* Dynascore (as leaderboard.scores computes it): the weights normalised over the scenario's metrics that have an
     AMRS, z_M = w_M / sum(w); score = sum of z_M * good_M / AMRS_M; ties by model name. */
  var dyna = data("holistic-dynascore");
  var sliders = doc.querySelectorAll("input.weight");
  function dynascore(entry, model, weights) {
    var goods = entry.goods[model];
    if (!goods) return null;
    var usable = dyna.metrics.filter(function (metric) { return entry.amrs[metric]; });
    var total = usable.reduce(function (sum, metric) { return sum + weights[metric]; }, 0);
    if (!(total > 0)) return null;
    var score = 0;
    for (var k = 0; k < usable.length; k++) {
      var good = goods[usable[k]];
      if (good === null || good === undefined) return null;
      score += (weights[usable[k]] / total) * good / entry.amrs[usable[k]];
    }
    return score;
  }
  function rerank() {
    var weights = {}, total = 0;
    each(sliders, function (slider) {
      var w = Math.max(0, Number(slider.value) || 0);
      weights[slider.getAttribute("data-metric")] = w;
      total += w;
    });
    each(sliders, function (slider) {
      var share = byId(slider.id + "-share");
      if (share) share.textContent = total > 0 ? (100 * weights[slider.getAttribute("data-metric")] / total).toFixed(1) + "%" : "\u2014";
    });
    each(doc.querySelectorAll("table.dyna"), function (table) {
      var entry = dyna.scenarios[table.getAttribute("data-scenario")], body = table.tBodies[0];
      if (!entry) return;
      var rows = Array.prototype.map.call(body.rows, function (row) {
        var model = row.getAttribute("data-model"), score = dynascore(entry, model, weights), cell = row.querySelector("td.score");
        cell.textContent = fmt(score);
        cell.setAttribute("data-sort", score === null ? "" : String(score));
        return [score === null ? null : -score, model, row];
      });
      rows.sort(function (a, b) { return nullsLast(a, b, 1); });
      rows.forEach(function (item, i) { item[2].querySelector("td.rank").textContent = String(i + 1); body.appendChild(item[2]); });
    });
  }
  if (dyna) {
    each(sliders, function (slider) {
      slider.addEventListener("input", rerank);
      slider.addEventListener("change", rerank);
    });
    var reset = byId("dyna-reset");
    if (reset) reset.addEventListener("click", function () {
      each(sliders, function (slider) { slider.value = slider.getAttribute("data-default"); });
      rerank();
    });
    rerank();
  }

  /* Drill-down: filter every record, draw one page of rows. */
  var dd = data("holistic-instances");
  if (dd) {
    var text = byId("dd-text"), outcome = byId("dd-outcome"), model = byId("dd-model"), scenario = byId("dd-scenario");
    var variant = byId("dd-perturbation"), rowsNode = byId("dd-rows"), prev = byId("dd-prev"), next = byId("dd-next");
    var haystacks = [], matches = [], page = 0, timer = null;
    var known = { passed: 1, failed: 1, error: 1, skipped: 1 };
    var haystack = function (i) {
      if (haystacks[i] === undefined) {
        var r = dd.records[i];
        haystacks[i] = [r[1], r[2] || "", r[4] || "", r[5] || "", r[6].map(function (ref) { return ref[0]; }).join("\n"), r[8] || ""]
          .join("\n").toLowerCase();
      }
      return haystacks[i];
    };
    var shorten = function (value, limit) {
      var flat = value.replace(/\s+/g, " ").trim();
      return flat.length > limit ? "\u2026" + flat.slice(flat.length - limit) : flat;
    };
    var row = function (r) {
      var run = dd.runs[r[0]], tr = el("tr");
      var id = el("td");
      id.appendChild(el("div", r[1], "id"));
      id.appendChild(el("div", run.scenario + " \u00b7 " + run.model, "muted"));
      tr.appendChild(id);
      tr.appendChild(el("td", r[2] === null ? "original" : r[2], r[2] === null ? "muted" : ""));
      var state = el("td");
      state.appendChild(el("span", r[3], "outcome " + (known[r[3]] ? r[3] : "other")));
      if (r[9] !== null) state.appendChild(el("div", r[9] ? "right" : "wrong", r[9] ? "right" : "wrong"));
      tr.appendChild(state);
      var prompt = el("td");
      if (r[4] === null) {
        prompt.appendChild(el("span", "(no prompt)", "muted"));
      } else {
        var details = el("details"), pre = el("pre");
        details.appendChild(el("summary", shorten(r[4] || run.prefix, 90) || "(empty prompt)"));
        if (run.prefix) pre.appendChild(el("span", run.prefix, "prefix"));
        pre.appendChild(doc.createTextNode(r[4]));
        details.appendChild(pre);
        prompt.appendChild(details);
      }
      tr.appendChild(prompt);
      var answer = el("td");
      answer.appendChild(r[5] === null ? el("span", "(no answer)", "muted") : el("pre", r[5], "completion"));
      if (r[10] !== null) answer.appendChild(el("div", "p = " + fmt(r[10]), "muted"));
      if (r[8]) answer.appendChild(el("pre", r[8], "error"));
      tr.appendChild(answer);
      var refs = el("td"), list = el("ul");
      r[6].forEach(function (ref) { list.appendChild(el("li", (ref[1] ? "\u2713 " : "") + ref[0], ref[1] ? "gold" : "")); });
      refs.appendChild(list);
      tr.appendChild(refs);
      var scores = el("td");
      Object.keys(r[7]).forEach(function (name) { scores.appendChild(el("div", name + ": " + fmt(r[7][name]))); });
      tr.appendChild(scores);
      return tr;
    };
    var draw = function () {
      var size = dd.page_size, pages = Math.max(1, Math.ceil(matches.length / size));
      page = Math.max(0, Math.min(page, pages - 1));
      while (rowsNode.firstChild) rowsNode.removeChild(rowsNode.firstChild);
      matches.slice(page * size, (page + 1) * size).forEach(function (i) { rowsNode.appendChild(row(dd.records[i])); });
      byId("dd-count").textContent = matches.length + " of " + dd.records.length + " instances";
      byId("dd-page").textContent = "page " + (page + 1) + " of " + pages;
      prev.disabled = page === 0;
      next.disabled = page >= pages - 1;
    };
    var filter = function () {
      var needle = text.value.trim().toLowerCase(), wantOutcome = outcome.value, wantModel = model.value;
      var wantScenario = scenario.value, wantVariant = variant.value;
      matches = [];
      for (var i = 0; i < dd.records.length; i++) {
        var r = dd.records[i], run = dd.runs[r[0]];
        if (wantOutcome && r[3] !== wantOutcome) continue;
        if (wantModel && run.model !== wantModel) continue;
        if (wantScenario && run.scenario !== wantScenario) continue;
        if (wantVariant === "original" && r[2] !== null) continue;
        if (wantVariant.indexOf("variant:") === 0 && r[2] !== wantVariant.slice(8)) continue;
        if (needle && haystack(i).indexOf(needle) < 0) continue;
        matches.push(i);
      }
      page = 0;
      draw();
    };
    text.addEventListener("input", function () { clearTimeout(timer); timer = setTimeout(filter, 120); });
    [outcome, model, scenario, variant].forEach(function (node) { node.addEventListener("change", filter); });
    prev.addEventListener("click", function () { page -= 1; draw(); });
    next.addEventListener("click", function () { page += 1; draw(); });
    filter();
  }
  doc.documentElement.setAttribute("data-ready", "1");
})();
"""
