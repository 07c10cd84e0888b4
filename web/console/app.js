// wukongd console: tabs of queries with their results kept in the
// browser's storage, history, share links, running and cancelling, and
// the result views. Everything that comes from data or the server is put
// into the page as text, never as HTML (see util.js).
import { $, el, known, declaredPrefixes, shareURL, fmtInt, fmtMs } from "./util.js";
import { Editor } from "./editor.js";
import { Table, drawChart, parseNTriples, drawGraph, isNumeric } from "./results.js";
import { showPlan, initPlanKeys } from "./plan.js";
import { showStore, initUpdateForm } from "./store.js";

const STORE_KEY = "wukongd.console.v1";
const MAX_HISTORY = 50;
const MAX_KEPT_ROWS = 2000; // rows of a result kept in storage
const MAX_KEPT_RAW = 256 * 1024;

let state = load();
let current = null; // {controller, id, tab} of the running request
const editor = new Editor(() => run("none"), () => { activeTab().query = editor.value; renameTab(activeTab()); renderTabs(); save(); });
const table = new Table((iri) => openTab("DESCRIBE <" + iri + ">", { run: true }));

// --- state ------------------------------------------------------------------
function load() {
  try {
    const s = JSON.parse(localStorage.getItem(STORE_KEY) || "null");
    if (s && Array.isArray(s.tabs) && s.tabs.length) return s;
  } catch (_) { /* a fresh start */ }
  return { tabs: [newTab($("query").value)], active: null, history: [], seq: 1 };
}
function newTab(query, opts) {
  const t = { id: "t" + Date.now().toString(36) + Math.random().toString(36).slice(2, 6), name: "", query,
    mode: (opts && opts.mode) || "auto", timeout: (opts && opts.timeout) || 30, infer: true, view: "table", result: null };
  renameTab(t);
  return t;
}
function renameTab(t) {
  const line = t.query.split("\n").map((l) => l.trim()).find((l) => l && !/^(PREFIX|BASE|#)/i.test(l)) || "empty";
  t.name = line.length > 28 ? line.slice(0, 27) + "…" : line;
}
function activeTab() { return state.tabs.find((t) => t.id === state.active) || state.tabs[0]; }

let saveTimer = 0;
function save() {
  clearTimeout(saveTimer);
  saveTimer = setTimeout(saveNow, 200);
}
function saveNow() {
  const slim = Object.assign({}, state, { tabs: state.tabs.map((t) => Object.assign({}, t, { result: slimResult(t.result) })) });
  try {
    localStorage.setItem(STORE_KEY, JSON.stringify(slim));
  } catch (_) {
    // Over the quota: keep the queries, drop the results.
    try { localStorage.setItem(STORE_KEY, JSON.stringify(Object.assign({}, slim, { tabs: slim.tabs.map((t) => Object.assign({}, t, { result: null })) }))); } catch (_) { /* give up */ }
  }
}
function slimResult(r) {
  if (!r) return r;
  const s = Object.assign({}, r);
  if (s.bindings && s.bindings.length > MAX_KEPT_ROWS) { s.bindings = s.bindings.slice(0, MAX_KEPT_ROWS); s.keptRows = MAX_KEPT_ROWS; }
  if (s.raw && s.raw.length > MAX_KEPT_RAW) { s.raw = s.raw.slice(0, MAX_KEPT_RAW); s.rawCut = true; }
  return s;
}

// --- tabs -------------------------------------------------------------------
function renderTabs() {
  const bar = $("tabs");
  bar.replaceChildren();
  state.tabs.forEach((t, i) => {
    const sel = t.id === state.active;
    const wrap = el("div", { className: "tab" + (sel ? " active" : ""), role: "presentation" });
    const b = el("button", { role: "tab", id: "tab-" + t.id, className: "tab-btn", "aria-selected": sel ? "true" : "false", "aria-controls": "query", tabindex: sel ? "0" : "-1", title: t.query.slice(0, 300), dataset: { tab: t.id } }, t.name);
    b.addEventListener("click", () => switchTab(t.id));
    b.addEventListener("keydown", (e) => {
      if (e.key === "ArrowRight" || e.key === "ArrowLeft") {
        const j = (i + (e.key === "ArrowRight" ? 1 : state.tabs.length - 1)) % state.tabs.length;
        switchTab(state.tabs[j].id);
        $("tab-" + state.tabs[j].id).focus();
      } else if (e.key === "Delete") closeTab(t.id);
    });
    wrap.appendChild(b);
    const x = el("button", { className: "tab-close", "aria-label": "Close tab " + t.name, title: "Close tab" }, "×");
    x.addEventListener("click", () => closeTab(t.id));
    wrap.appendChild(x);
    bar.appendChild(wrap);
  });
}
function switchTab(id) {
  const cur = activeTab();
  if (cur) cur.table = table.state();
  state.active = id;
  const t = activeTab();
  editor.value = t.query;
  $("mode").value = t.mode || "auto";
  $("timeout").value = String(t.timeout || 30);
  $("infer").checked = t.infer !== false;
  $("share-box").hidden = true;
  renderTabs();
  showResult(t);
  save();
}
function openTab(query, opts) {
  const t = newTab(query, opts);
  state.tabs.push(t);
  switchTab(t.id);
  if (opts && opts.run) run("none");
  return t;
}
function closeTab(id) {
  if (current && current.tab.id === id) cancel();
  const i = state.tabs.findIndex((t) => t.id === id);
  if (i < 0) return;
  state.tabs.splice(i, 1);
  if (state.tabs.length === 0) state.tabs.push(newTab("SELECT * WHERE {\n  ?s ?p ?o\n}\nLIMIT 100"));
  if (state.active === id) state.active = state.tabs[Math.min(i, state.tabs.length - 1)].id;
  switchTab(state.active);
}
$("tab-new").addEventListener("click", () => { openTab("SELECT * WHERE {\n  ?s ?p ?o\n}\nLIMIT 100"); $("query").focus(); });
document.addEventListener("keydown", (e) => { if (e.altKey && (e.key === "t" || e.key === "T")) { e.preventDefault(); $("tab-new").click(); } });
for (const id of ["mode", "timeout", "infer"]) {
  $(id).addEventListener("change", () => {
    const t = activeTab();
    t.mode = $("mode").value; t.timeout = Number($("timeout").value) || 30; t.infer = $("infer").checked;
    save();
  });
}

// --- history and share links -----------------------------------------------
function renderHistory() {
  const sel = $("history");
  sel.replaceChildren(el("option", { value: "" }, "— recent queries (" + state.history.length + ") —"));
  state.history.forEach((h, i) => {
    const when = new Date(h.at).toLocaleTimeString();
    const line = h.query.replace(/\s+/g, " ").replace(/^(PREFIX\s+\S*\s*<[^>]*>\s*)+/i, "").slice(0, 70);
    sel.appendChild(el("option", { value: String(i) }, when + " — " + line + (h.rows != null ? " (" + fmtInt(h.rows) + " rows)" : "")));
  });
}
$("history").addEventListener("change", (e) => {
  const h = state.history[Number(e.target.value)];
  e.target.value = "";
  if (h) openTab(h.query, { mode: h.mode, timeout: h.timeout });
});
function remember(entry) {
  state.history = [entry].concat(state.history.filter((h) => h.query !== entry.query)).slice(0, MAX_HISTORY);
  renderHistory();
}
$("share").addEventListener("click", async () => {
  const t = activeTab();
  const url = shareURL(editor.value, $("mode").value, Number($("timeout").value) || 0);
  $("share-box").hidden = false;
  $("share-url").value = url;
  $("share-url").select();
  try { await navigator.clipboard.writeText(url); setStatus("Link copied to the clipboard"); } catch (_) { setStatus("Copy the link from the box"); }
  t.query = editor.value;
});
// A share link (#query=…&mode=…&timeout=…) opens its query in a new tab.
function openShared() {
  if (!location.hash.startsWith("#")) return false;
  const p = new URLSearchParams(location.hash.slice(1));
  const q = p.get("query");
  if (!q) return false;
  history.replaceState(null, "", location.pathname + location.search);
  const same = state.tabs.find((t) => t.query === q);
  if (same) { switchTab(same.id); } else {
    const mode = ["auto", "in-place", "fork-join"].includes(p.get("mode")) ? p.get("mode") : "auto";
    const timeout = Math.max(1, Math.min(3600, Number(p.get("timeout")) || 30));
    openTab(q, { mode, timeout });
  }
  return true;
}
window.addEventListener("hashchange", openShared);

// --- examples ---------------------------------------------------------------
let examples = [];
fetch("/api/examples", { headers: { Accept: "application/json" } })
  .then((r) => (r.ok ? r.json() : []))
  .then((list) => {
    examples = Array.isArray(list) ? list : [];
    const sel = $("examples");
    examples.forEach((ex, i) => sel.appendChild(el("option", { value: String(i) }, ex.name + (ex.description ? " — " + ex.description : ""))));
  })
  .catch(() => {});
$("examples").addEventListener("change", (e) => {
  const ex = examples[Number(e.target.value)];
  e.target.value = "";
  if (ex) { editor.value = ex.query; activeTab().query = ex.query; renameTab(activeTab()); renderTabs(); save(); }
});

// The store's prefixes join the common ones; a first request warms the
// term index (the server builds it in the background).
fetch("/api/prefixes", { headers: { Accept: "application/json" } })
  .then((r) => (r.ok ? r.json() : {}))
  .then((p) => { for (const [k, v] of Object.entries(p || {})) if (typeof v === "string") known.prefixes[k] = v; showResult(activeTab()); })
  .catch(() => {});
fetch("/api/complete?kind=entity&q=&limit=1").catch(() => {});

// --- running ----------------------------------------------------------------
function newID() {
  const b = new Uint8Array(8);
  crypto.getRandomValues(b);
  return "c" + Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
}
function setStatus(text, isError) {
  $("status").textContent = text;
  $("status").className = isError ? "status error" : "status";
}
function setRunning(on) {
  $("run").disabled = on; $("explain").disabled = on; $("analyze").disabled = on;
  $("cancel").disabled = !on;
}
function params(explain) {
  const p = new URLSearchParams();
  p.set("query", editor.value);
  const t = Number($("timeout").value);
  if (t > 0) p.set("timeout", String(t));
  const mode = $("mode").value;
  if (mode && mode !== "auto") p.set("mode", mode);
  if (!$("infer").checked) p.set("infer", "false");
  if (explain !== "none") p.set("explain", explain);
  return p;
}
async function errorOf(resp) {
  const e = { status: resp.status, message: "HTTP " + resp.status };
  try {
    const j = await resp.json();
    e.message += " " + (j.error || "") + ": " + (j.message || "");
    if (j.line) { e.line = j.line; e.col = j.col; e.message += " (line " + j.line + ", column " + j.col + ")"; e.syntax = j.message; }
    if (j.queryId) e.message += " [query " + j.queryId + "]";
  } catch (_) { /* not JSON */ }
  return e;
}

async function run(explain) {
  if (current) return;
  editor.addPrefixesFor(editor.value);
  const tab = activeTab();
  tab.query = editor.value;
  const id = newID();
  const controller = new AbortController();
  current = { controller, id, tab };
  setRunning(true);
  setStatus("Running… [query " + id + "]");
  const t0 = performance.now();
  const res = { at: Date.now(), queryId: id, explain };
  try {
    const resp = await fetch("/sparql", {
      method: "POST",
      signal: controller.signal,
      headers: {
        "Content-Type": "application/x-www-form-urlencoded",
        "X-Query-Id": id,
        Accept: "application/sparql-results+json, application/n-triples;q=0.9",
      },
      body: params(explain),
    });
    res.ms = performance.now() - t0;
    if (!resp.ok) {
      const e = await errorOf(resp);
      res.kind = "error";
      res.status = e.message;
      if (e.line) editor.showError({ line: e.line, col: e.col, message: e.syntax });
    } else {
      const ct = resp.headers.get("Content-Type") || "";
      res.raw = await resp.text();
      res.rawType = ct;
      res.ms = performance.now() - t0;
      res.truncated = resp.headers.get("Wukong-Truncated") === "true";
      if (explain !== "none") {
        res.kind = "plan";
        res.plan = JSON.parse(res.raw).plan;
        res.rows = res.plan.analyzed ? res.plan.rows || 0 : null;
      } else if (ct.startsWith("application/sparql-results+json")) {
        const doc = JSON.parse(res.raw);
        if (typeof doc.boolean === "boolean") {
          res.kind = "ask";
          res.boolean = doc.boolean;
          res.vars = ["ASK"];
          res.bindings = [{ ASK: { type: "literal", value: String(doc.boolean), datatype: "http://www.w3.org/2001/XMLSchema#boolean" } }];
          res.rows = 1;
        } else {
          res.kind = "select";
          res.vars = doc.head.vars || [];
          res.bindings = doc.results.bindings || [];
          res.rows = res.bindings.length;
        }
      } else {
        res.kind = "graph";
        res.rows = res.raw.split("\n").filter((l) => l.trim() !== "").length;
      }
    }
  } catch (e) {
    res.kind = "error";
    res.ms = performance.now() - t0;
    res.status = e.name === "AbortError" ? "Cancelled after " + res.ms.toFixed(0) + " ms [query " + id + "]" : "Failed: " + e.message;
  } finally {
    current = null;
    setRunning(false);
  }
  res.status = res.status || statusLine(res);
  tab.result = res;
  tab.table = null;
  tab.view = res.kind === "plan" ? "plan" : res.kind === "graph" ? "graph" : "table";
  if (res.kind !== "error" || res.status.startsWith("HTTP")) {
    remember({ query: tab.query, mode: $("mode").value, timeout: Number($("timeout").value) || 30, at: res.at, rows: res.rows, ms: res.ms });
  }
  if (activeTab() === tab) showResult(tab);
  save();
}
function statusLine(res) {
  const n = res.rows;
  const cut = res.truncated ? " (cut at the server's row cap)" : "";
  const q = " [query " + res.queryId + "]";
  switch (res.kind) {
    case "plan": return (res.plan.analyzed ? "Analyzed plan: " + fmtInt(n) + " rows" : "Plan") + " in " + fmtMs(res.ms) + q;
    case "ask": return "ASK: " + res.boolean + " in " + fmtMs(res.ms) + q;
    case "select": return fmtInt(n) + " row" + (n === 1 ? "" : "s") + " in " + fmtMs(res.ms) + cut + q;
    case "graph": return fmtInt(n) + " triple" + (n === 1 ? "" : "s") + " in " + fmtMs(res.ms) + cut + q;
  }
  return "";
}
function cancel() {
  if (!current) return;
  fetch("/api/cancel?id=" + encodeURIComponent(current.id), { method: "POST" }).catch(() => {});
  current.controller.abort();
}
$("run").addEventListener("click", () => run("none"));
$("explain").addEventListener("click", () => run("true"));
$("analyze").addEventListener("click", () => run("analyze"));
$("cancel").addEventListener("click", cancel);

// --- result views -----------------------------------------------------------
const VIEWS = ["table", "raw", "chart", "graph", "plan"];
function setView(v) {
  const t = activeTab();
  t.view = v;
  for (const name of VIEWS) {
    $("view-" + name).setAttribute("aria-selected", name === v ? "true" : "false");
    $("view-" + name).tabIndex = name === v ? 0 : -1;
    $("pane-" + name).hidden = name !== v;
  }
  renderView(t);
  save();
}
VIEWS.forEach((name, i) => {
  const b = $("view-" + name);
  b.addEventListener("click", () => setView(name));
  b.addEventListener("keydown", (e) => {
    if (e.key !== "ArrowRight" && e.key !== "ArrowLeft") return;
    const next = VIEWS[(i + (e.key === "ArrowRight" ? 1 : VIEWS.length - 1)) % VIEWS.length];
    setView(next);
    $("view-" + next).focus();
  });
});

function prefixesOf(t) { return Object.assign({}, known.prefixes, declaredPrefixes(t.query)); }

function showResult(t) {
  const r = t.result;
  setStatus(r ? r.status + (r.keptRows ? " — " + fmtInt(r.keptRows) + " rows kept in the browser" : "") : "", r && r.kind === "error");
  setView(t.view || "table");
}
function renderView(t) {
  const r = t.result, v = t.view;
  const prefixes = prefixesOf(t);
  if (v === "table") {
    if (r && r.bindings) table.set(r.vars, r.bindings, prefixes, t.table);
    else if (r && r.kind === "graph") {
      const trs = parseNTriples(r.raw || "");
      table.set(["subject", "predicate", "object"], trs.map((x) => ({ subject: x.s, predicate: x.p, object: x.o })), prefixes, t.table);
    } else table.set([], [], prefixes, null);
  } else if (v === "raw") {
    $("raw").textContent = r ? (r.raw != null ? r.raw + (r.rawCut ? "\n… (cut: the browser keeps the first 256 KiB)" : "") : r.status) : "";
  } else if (v === "chart") {
    renderChartControls(t, prefixes);
  } else if (v === "graph") {
    const trs = r && r.kind === "graph" ? parseNTriples(r.raw || "") : [];
    if (r && r.kind === "select" && r.vars.length >= 3) {
      // A SELECT of ?s ?p ?o shape draws too.
      const [s, p, o] = r.vars;
      for (const b of r.bindings.slice(0, 400)) if (b[s] && b[p] && b[o] && b[p].type === "uri") trs.push({ s: b[s], p: b[p], o: b[o] });
    }
    drawGraph(trs, prefixes, (iri) => openTab("DESCRIBE <" + iri + ">", { run: true }));
  } else if (v === "plan") {
    if (r && r.plan) showPlan(r.plan);
    else {
      $("plan-summary").textContent = "No plan yet: use Explain or Explain analyze.";
      $("plan").replaceChildren();
      $("plan-notes").replaceChildren();
    }
  }
}
function renderChartControls(t, prefixes) {
  const r = t.result;
  const ls = $("chart-label"), vs = $("chart-value");
  ls.replaceChildren(); vs.replaceChildren();
  if (!r || !r.bindings || !r.vars.length) {
    $("chart").replaceChildren(el("p", { className: "muted" }, "Run a SELECT (a GROUP BY with a count, say) to chart it."));
    return;
  }
  const numeric = r.vars.filter((v) => r.bindings.some((b) => isNumeric(b[v])));
  r.vars.forEach((v) => ls.appendChild(el("option", { value: v }, "?" + v)));
  numeric.forEach((v) => vs.appendChild(el("option", { value: v }, "?" + v)));
  const c = t.chart || {};
  ls.value = c.label && r.vars.includes(c.label) ? c.label : (r.vars.find((v) => !numeric.includes(v)) || r.vars[0]);
  vs.value = c.value && numeric.includes(c.value) ? c.value : (numeric[numeric.length - 1] || "");
  const draw = () => {
    t.chart = { label: ls.value, value: vs.value };
    if (!vs.value) { $("chart").replaceChildren(el("p", { className: "muted" }, "No numeric column to chart.")); return; }
    drawChart(r.vars, r.bindings, ls.value, vs.value, prefixes);
    save();
  };
  ls.onchange = draw; vs.onchange = draw;
  draw();
}

// --- downloads --------------------------------------------------------------
document.querySelectorAll("button.dl").forEach((btn) => {
  btn.addEventListener("click", async () => {
    try {
      const resp = await fetch("/sparql", {
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded", Accept: btn.dataset.accept },
        body: params("none"),
      });
      if (!resp.ok) { setStatus((await errorOf(resp)).message, true); return; }
      const blob = await resp.blob();
      const a = el("a", { href: URL.createObjectURL(blob), download: "results." + btn.dataset.ext });
      document.body.appendChild(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(a.href), 10000);
    } catch (e) { setStatus("Download failed: " + e.message, true); }
  });
});

// --- pages ------------------------------------------------------------------
function showPage(id) {
  document.querySelectorAll(".page-btn").forEach((b) => b.setAttribute("aria-pressed", b.dataset.page === id ? "true" : "false"));
  document.querySelectorAll(".page").forEach((p) => (p.hidden = p.id !== id));
  if (id === "page-store") showStore((q) => { showPage("page-query"); openTab(q, { run: true }); });
}
document.querySelectorAll(".page-btn").forEach((b) => b.addEventListener("click", () => showPage(b.dataset.page)));
initUpdateForm(() => showStore((q) => { showPage("page-query"); openTab(q, { run: true }); }));
initPlanKeys();

// --- start ------------------------------------------------------------------
if (!state.active || !state.tabs.some((t) => t.id === state.active)) state.active = state.tabs[0].id;
renderHistory();
if (!openShared()) switchTab(state.active);
window.addEventListener("beforeunload", saveNow);
// For tests and tools: the console's state.
window.wukongConsole = { state: () => state, editor };
