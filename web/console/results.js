// Result views: a sortable, filterable table with IRIs shortened and
// linked to a DESCRIBE; the raw response; a bar chart of a column; a
// node-link drawing of a graph result. All drawn from data as text.
import { $, el, svg, shorten, termText, fmtInt, shareURL } from "./util.js";

const PAGE = 100;

// Table is the table view of one result.
export class Table {
  constructor(onDescribe) {
    this.table = $("results");
    this.onDescribe = onDescribe;
    this.vars = [];
    this.rows = [];
    this.view = []; // rows after filter and sort
    this.page = 0;
    this.sort = null; // {col, dir: 1|-1}
    this.filter = "";
    this.prefixes = {};
    $("filter").addEventListener("input", (e) => { this.filter = e.target.value; this.page = 0; this.refresh(); });
    $("prev").addEventListener("click", () => { if (this.page > 0) { this.page--; this.render(); } });
    $("next").addEventListener("click", () => { if ((this.page + 1) * PAGE < this.view.length) { this.page++; this.render(); } });
    this.table.addEventListener("click", (e) => {
      const a = e.target.closest("a.describe");
      if (a && !(e.ctrlKey || e.metaKey || e.shiftKey || e.button === 1)) { e.preventDefault(); this.onDescribe(a.dataset.iri); }
      const b = e.target.closest("button.sort");
      if (b) this.sortBy(Number(b.dataset.col));
    });
  }

  // set shows vars and SPARQL JSON bindings.
  set(vars, rows, prefixes, state) {
    this.vars = vars;
    this.rows = rows;
    this.prefixes = prefixes;
    this.page = 0;
    this.sort = state && state.sort ? state.sort : null;
    this.filter = state && state.filter ? state.filter : "";
    $("filter").value = this.filter;
    this.refresh();
  }

  state() { return { sort: this.sort, filter: this.filter }; }

  sortBy(col) {
    if (this.sort && this.sort.col === col) this.sort = { col, dir: -this.sort.dir };
    else this.sort = { col, dir: 1 };
    this.page = 0;
    this.refresh();
  }

  refresh() {
    const f = this.filter.trim().toLowerCase();
    let view = this.rows;
    if (f) {
      view = view.filter((b) => this.vars.some((v) => {
        const t = b[v];
        return t && (termText(t, this.prefixes).toLowerCase().includes(f) || t.value.toLowerCase().includes(f));
      }));
    }
    if (this.sort) {
      const v = this.vars[this.sort.col], dir = this.sort.dir;
      view = view.slice().sort((a, b) => dir * compareTerms(a[v], b[v]));
    }
    this.view = view;
    $("filter-info").textContent = f ? fmtInt(view.length) + " of " + fmtInt(this.rows.length) + " rows match" : "";
    this.render();
  }

  render() {
    const t = this.table;
    t.replaceChildren();
    const hr = t.createTHead().insertRow();
    this.vars.forEach((name, i) => {
      const sorted = this.sort && this.sort.col === i;
      const th = el("th", { scope: "col", "aria-sort": sorted ? (this.sort.dir > 0 ? "ascending" : "descending") : "none" },
        el("button", { className: "sort", type: "button", dataset: { col: String(i) }, title: "Sort by ?" + name },
          "?" + name, el("span", { className: "sort-ind", "aria-hidden": "true" }, sorted ? (this.sort.dir > 0 ? " ▲" : " ▼") : "")));
      hr.appendChild(th);
    });
    const tbody = t.createTBody();
    for (const b of this.view.slice(this.page * PAGE, (this.page + 1) * PAGE)) {
      const tr = tbody.insertRow();
      for (const name of this.vars) this.cell(tr.insertCell(), b[name]);
    }
    const pages = Math.max(1, Math.ceil(this.view.length / PAGE));
    $("pager").hidden = pages <= 1;
    $("page-info").textContent = "page " + (this.page + 1) + " of " + pages;
    $("prev").disabled = this.page === 0;
    $("next").disabled = this.page >= pages - 1;
  }

  cell(td, t) {
    if (!t) return;
    if (t.type === "uri") {
      td.className = "iri";
      td.appendChild(el("a", { className: "describe", href: shareURL("DESCRIBE <" + t.value + ">"), title: "DESCRIBE " + t.value, dataset: { iri: t.value } },
        shorten(t.value, this.prefixes)));
      return;
    }
    if (t.type === "bnode") { td.className = "bnode"; td.textContent = "_:" + t.value; return; }
    td.className = "lit";
    td.textContent = t.value;
    const dt = t.datatype;
    const suffix = t["xml:lang"] ? "@" + t["xml:lang"] : dt && !NUMERIC.has(dt) && dt !== XSD + "string" ? "^^" + shorten(dt, this.prefixes) : "";
    if (suffix) td.appendChild(el("span", { className: "dt" }, " " + suffix));
    if (dt && NUMERIC.has(dt)) td.classList.add("num");
  }
}

const XSD = "http://www.w3.org/2001/XMLSchema#";
const NUMERIC = new Set(["integer", "decimal", "double", "float", "long", "int", "short", "byte", "nonNegativeInteger",
  "positiveInteger", "negativeInteger", "nonPositiveInteger", "unsignedLong", "unsignedInt", "unsignedShort", "unsignedByte"].map((t) => XSD + t));

export function isNumeric(t) { return !!t && t.type === "literal" && NUMERIC.has(t.datatype) && !isNaN(Number(t.value)); }

// compareTerms orders unbound first, then numbers by value, then text.
function compareTerms(a, b) {
  if (!a || !b) return (a ? 1 : 0) - (b ? 1 : 0);
  if (isNumeric(a) && isNumeric(b)) return Number(a.value) - Number(b.value);
  return a.value < b.value ? -1 : a.value > b.value ? 1 : 0;
}

// --- chart ---------------------------------------------------------------

// drawChart draws horizontal bars of the value column per label (the
// first 60 rows), into #chart.
export function drawChart(vars, rows, labelVar, valueVar, prefixes) {
  const box = $("chart");
  box.replaceChildren();
  const data = [];
  for (const b of rows) {
    if (!isNumeric(b[valueVar])) continue;
    data.push({ label: termText(b[labelVar], prefixes) || "(unbound)", value: Number(b[valueVar].value) });
    if (data.length === 60) break;
  }
  if (data.length === 0) {
    box.appendChild(el("p", { className: "muted" }, "No numeric values in ?" + valueVar + " to chart."));
    return;
  }
  const max = Math.max(...data.map((d) => Math.abs(d.value)), 1e-12);
  const labelW = Math.min(320, 12 + 7.6 * Math.max(...data.map((d) => d.label.length)));
  const W = 900, rowH = 22, plotW = W - labelW - 90;
  const H = data.length * rowH + 30;
  const s = svg("svg", { width: W, height: H, viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": `Bar chart of ?${valueVar} by ?${labelVar}` });
  s.appendChild(svg("title", {}, `?${valueVar} by ?${labelVar}`));
  data.forEach((d, i) => {
    const y = 10 + i * rowH;
    const w = Math.max(1, (plotW * Math.abs(d.value)) / max);
    const g = svg("g", { class: "chart-row" });
    const label = svg("text", { x: labelW - 6, y: y + 14, "text-anchor": "end", class: "chart-label" }, d.label.length > 40 ? d.label.slice(0, 39) + "…" : d.label);
    g.appendChild(label);
    const r = svg("rect", { x: labelW, y: y + 2, width: w, height: rowH - 6, class: d.value < 0 ? "chart-bar neg" : "chart-bar" });
    r.appendChild(svg("title", {}, d.label + ": " + d.value));
    g.appendChild(r);
    g.appendChild(svg("text", { x: labelW + w + 6, y: y + 14, class: "chart-value" }, d.value.toLocaleString("en-US")));
    s.appendChild(g);
  });
  box.appendChild(s);
}

// --- graph ---------------------------------------------------------------

// parseNTriples reads N-Triples lines into {s, p, o} of {type, value}.
export function parseNTriples(text) {
  const out = [];
  const term = /\s*(<([^>]*)>|_:(\S+)|"((?:[^"\\]|\\.)*)"(?:@([\w-]+)|\^\^<([^>]*)>)?)/y;
  for (const line of text.split("\n")) {
    if (!line.trim() || line.trim().startsWith("#")) continue;
    term.lastIndex = 0;
    const t = [];
    for (let k = 0; k < 3; k++) {
      const m = term.exec(line);
      if (!m) break;
      if (m[2] !== undefined) t.push({ type: "uri", value: m[2] });
      else if (m[3] !== undefined) t.push({ type: "bnode", value: m[3] });
      else t.push({ type: "literal", value: unescapeNT(m[4]), lang: m[5], datatype: m[6] });
    }
    if (t.length === 3) out.push({ s: t[0], p: t[1], o: t[2] });
  }
  return out;
}

function unescapeNT(s) {
  return s.replace(/\\(u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|.)/g, (_, e) => {
    if (e[0] === "u" || e[0] === "U") return String.fromCodePoint(parseInt(e.slice(1), 16));
    return { t: "\t", n: "\n", r: "\r", b: "\b", f: "\f", '"': '"', "'": "'", "\\": "\\" }[e] ?? e;
  });
}

// drawGraph draws the triples as nodes and labelled edges (at most 150
// nodes), laid out by a few hundred rounds of a spring model.
export function drawGraph(triples, prefixes, onDescribe) {
  const box = $("graph");
  box.replaceChildren();
  if (triples.length === 0) { box.appendChild(el("p", { className: "muted" }, "No triples to draw.")); return; }
  const nodes = new Map(), edges = [];
  const key = (t) => (t.type === "literal" ? "L" + edges.length + ":" + t.value : t.type[0] + ":" + t.value);
  const node = (t) => {
    const k = key(t);
    if (!nodes.has(k)) {
      if (nodes.size >= 150) return null;
      const label = t.type === "uri" ? shorten(t.value, prefixes) : t.type === "bnode" ? "_:" + t.value : '"' + t.value + '"';
      nodes.set(k, { t, label: label.length > 32 ? label.slice(0, 31) + "…" : label, x: 300 + 250 * Math.cos(nodes.size * 2.39996), y: 200 + 180 * Math.sin(nodes.size * 2.39996) + nodes.size, vx: 0, vy: 0 });
    }
    return nodes.get(k);
  };
  for (const tr of triples) {
    const a = node(tr.s), b = node(tr.o);
    if (a && b) edges.push({ a, b, label: shorten(tr.p.value, prefixes) });
  }
  const ns = [...nodes.values()];
  layout(ns, edges);
  const xs = ns.map((n) => n.x), ys = ns.map((n) => n.y);
  const minX = Math.min(...xs) - 120, minY = Math.min(...ys) - 30;
  const W = Math.max(...xs) - minX + 120, H = Math.max(...ys) - minY + 30;
  const s = svg("svg", { width: Math.min(1100, W), viewBox: `${minX} ${minY} ${W} ${H}`, role: "img", "aria-label": `Graph of ${edges.length} triples and ${ns.length} nodes` });
  s.appendChild(svg("title", {}, `${edges.length} triples`));
  const defs = svg("defs");
  const marker = svg("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 18, refY: 5, markerWidth: 6, markerHeight: 6, orient: "auto-start-reverse" });
  marker.appendChild(svg("path", { d: "M 0 0 L 10 5 L 0 10 z", class: "edge-head" }));
  defs.appendChild(marker);
  s.appendChild(defs);
  for (const e of edges) {
    s.appendChild(svg("line", { x1: e.a.x, y1: e.a.y, x2: e.b.x, y2: e.b.y, class: "edge", "marker-end": "url(#arrow)" }));
    s.appendChild(svg("text", { x: (e.a.x + e.b.x) / 2, y: (e.a.y + e.b.y) / 2 - 3, class: "edge-label", "text-anchor": "middle" }, e.label));
  }
  for (const n of ns) {
    const g = svg("g", { class: "node node-" + n.t.type, transform: `translate(${n.x},${n.y})` });
    if (n.t.type === "literal") g.appendChild(svg("rect", { x: -4, y: -9, width: 8 + 6.5 * n.label.length, height: 18, rx: 3 }));
    else g.appendChild(svg("circle", { r: 8 }));
    const label = svg("text", { x: n.t.type === "literal" ? 0 : 11, y: 4 }, n.label);
    g.appendChild(label);
    g.appendChild(svg("title", {}, n.t.value));
    if (n.t.type === "uri") {
      g.setAttribute("tabindex", "0");
      g.setAttribute("role", "link");
      g.setAttribute("aria-label", "DESCRIBE " + n.t.value);
      g.addEventListener("click", () => onDescribe(n.t.value));
      g.addEventListener("keydown", (e) => { if (e.key === "Enter") onDescribe(n.t.value); });
    }
    s.appendChild(g);
  }
  box.appendChild(s);
  if (nodes.size >= 150) box.appendChild(el("p", { className: "muted" }, "Only the first 150 nodes are drawn."));
}

function layout(ns, edges) {
  const k = 90;
  for (let it = 0; it < 300; it++) {
    const t = 1 - it / 300;
    for (const a of ns) { a.fx = 0; a.fy = 0; }
    for (let i = 0; i < ns.length; i++) {
      for (let j = i + 1; j < ns.length; j++) {
        const a = ns[i], b = ns[j];
        let dx = a.x - b.x, dy = a.y - b.y;
        const d2 = Math.max(dx * dx + dy * dy, 1);
        const f = (k * k) / d2;
        dx *= f; dy *= f;
        a.fx += dx; a.fy += dy; b.fx -= dx; b.fy -= dy;
      }
    }
    for (const e of edges) {
      const dx = e.b.x - e.a.x, dy = e.b.y - e.a.y;
      const d = Math.max(Math.sqrt(dx * dx + dy * dy), 1);
      const f = (d - k) / d * 0.5;
      e.a.fx += dx * f; e.a.fy += dy * f; e.b.fx -= dx * f; e.b.fy -= dy * f;
    }
    for (const a of ns) {
      const m = Math.sqrt(a.fx * a.fx + a.fy * a.fy) || 1;
      const step = Math.min(m, 20 * t + 1);
      a.x += (a.fx / m) * step;
      a.y += (a.fy / m) * step;
    }
  }
}
