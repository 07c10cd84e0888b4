// wukongd console. Everything that comes from data or the server is put
// into the page with textContent, never as HTML.
"use strict";
(function () {
  const $ = (id) => document.getElementById(id);
  const queryEl = $("query"), hl = $("highlight"), statusEl = $("status");
  const table = $("results"), graphEl = $("graph"), pager = $("pager");
  const PAGE = 100;
  let current = null;      // {controller, id} of the running request
  let rows = [], vars = [], page = 0;

  // --- highlighting -------------------------------------------------------
  const KEYWORDS = new Set(("select construct describe ask where from named prefix base distinct reduced " +
    "optional union minus filter graph service silent bind values as order by asc desc limit offset group " +
    "having count sum min max avg sample group_concat separator not exists in a true false undef load clear " +
    "drop create add move copy insert delete data with using default all to into").split(" "));
  const TOKEN = /(#[^\n]*)|("""[\s\S]*?(?:"""|$)|'''[\s\S]*?(?:'''|$)|"(?:[^"\\\n]|\\.)*"?|'(?:[^'\\\n]|\\.)*'?)|(<[^<>"{}|^`\\\s]*>)|([?$][A-Za-z0-9_\u00B7-\uFFFF]+)|([A-Za-z_][\w.-]*)?:([\w.-]*)|([+-]?(?:\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?))|([A-Za-z_]\w*)/g;

  function highlight() {
    const text = queryEl.value;
    const frag = document.createDocumentFragment();
    let last = 0, m;
    TOKEN.lastIndex = 0;
    const span = (cls, s) => { const e = document.createElement("span"); e.className = cls; e.textContent = s; frag.appendChild(e); };
    while ((m = TOKEN.exec(text)) !== null) {
      if (m[0] === "") { TOKEN.lastIndex++; continue; }
      if (m.index > last) frag.appendChild(document.createTextNode(text.slice(last, m.index)));
      let cls = null;
      if (m[1]) cls = "tok-comment";
      else if (m[2]) cls = "tok-str";
      else if (m[3]) cls = "tok-iri";
      else if (m[4]) cls = "tok-var";
      else if (m[6] !== undefined) cls = "tok-pname";
      else if (m[7]) cls = "tok-num";
      else if (m[8] && KEYWORDS.has(m[8].toLowerCase())) cls = "tok-kw";
      if (cls) span(cls, m[0]); else frag.appendChild(document.createTextNode(m[0]));
      last = m.index + m[0].length;
    }
    frag.appendChild(document.createTextNode(text.slice(last) + "\n"));
    hl.replaceChildren(frag);
    syncScroll();
  }
  function syncScroll() { hl.scrollTop = queryEl.scrollTop; hl.scrollLeft = queryEl.scrollLeft; }
  queryEl.addEventListener("input", highlight);
  queryEl.addEventListener("scroll", syncScroll);
  queryEl.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) { e.preventDefault(); run("none"); }
    if (e.key === "Tab") {
      e.preventDefault();
      const s = queryEl.selectionStart;
      queryEl.setRangeText("  ", s, queryEl.selectionEnd, "end");
      highlight();
    }
  });

  // --- examples -----------------------------------------------------------
  let examples = [];
  fetch("/api/examples", { headers: { Accept: "application/json" } })
    .then((r) => (r.ok ? r.json() : []))
    .then((list) => {
      examples = Array.isArray(list) ? list : [];
      const sel = $("examples");
      examples.forEach((ex, i) => {
        const o = document.createElement("option");
        o.value = String(i);
        o.textContent = ex.name + (ex.description ? " — " + ex.description : "");
        sel.appendChild(o);
      });
    })
    .catch(() => {});
  $("examples").addEventListener("change", (e) => {
    const ex = examples[Number(e.target.value)];
    if (ex) { queryEl.value = ex.query; highlight(); }
  });

  // --- running ------------------------------------------------------------
  function newID() {
    const b = new Uint8Array(8);
    crypto.getRandomValues(b);
    return "c" + Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
  }
  function setStatus(text, isError) {
    statusEl.textContent = text;
    statusEl.className = isError ? "status error" : "status";
  }
  function setRunning(on) {
    $("run").disabled = on; $("explain").disabled = on; $("analyze").disabled = on;
    $("cancel").disabled = !on;
  }
  function params(explain) {
    const p = new URLSearchParams();
    p.set("query", queryEl.value);
    const t = Number($("timeout").value);
    if (t > 0) p.set("timeout", String(t));
    const mode = $("mode").value;
    if (mode && mode !== "auto") p.set("mode", mode);
    if (!$("infer").checked) p.set("infer", "false");
    if (explain !== "none") p.set("explain", explain);
    return p;
  }
  async function errorText(resp) {
    let msg = "HTTP " + resp.status;
    try {
      const e = await resp.json();
      msg += " " + (e.error || "") + ": " + (e.message || "");
      if (e.line) msg += " (line " + e.line + ", column " + e.col + ")";
      if (e.queryId) msg += " [query " + e.queryId + "]";
    } catch (_) { /* not JSON */ }
    return msg;
  }

  async function run(explain) {
    if (current) return;
    const id = newID();
    const controller = new AbortController();
    current = { controller, id };
    setRunning(true);
    setStatus("Running…");
    const t0 = performance.now();
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
      if (!resp.ok) { setStatus(await errorText(resp), true); return; }
      const ct = resp.headers.get("Content-Type") || "";
      const body = await resp.text();
      const ms = (performance.now() - t0).toFixed(1);
      const truncated = resp.headers.get("Wukong-Truncated") === "true" ? " (cut at the server's row cap)" : "";
      if (explain !== "none") {
        showPlan(JSON.parse(body).plan);
        setStatus("Plan in " + ms + " ms [query " + id + "]");
      } else if (ct.startsWith("application/sparql-results+json")) {
        const doc = JSON.parse(body);
        if (typeof doc.boolean === "boolean") {
          showBoolean(doc.boolean);
          setStatus("ASK in " + ms + " ms: " + doc.boolean);
        } else {
          showSolutions(doc.head.vars || [], doc.results.bindings || []);
          setStatus(rows.length + " row" + (rows.length === 1 ? "" : "s") + " in " + ms + " ms" + truncated + " [query " + id + "]");
        }
      } else {
        showGraph(body);
        const n = body.split("\n").filter((l) => l.trim() !== "").length;
        setStatus(n + " triple" + (n === 1 ? "" : "s") + " in " + ms + " ms" + truncated);
      }
    } catch (e) {
      if (e.name === "AbortError") setStatus("Cancelled after " + (performance.now() - t0).toFixed(0) + " ms", true);
      else setStatus("Failed: " + e.message, true);
    } finally {
      current = null;
      setRunning(false);
    }
  }
  function cancel() {
    if (!current) return;
    const id = current.id;
    // Tell the server first (it stops the work at once), then drop the request.
    fetch("/api/cancel?id=" + encodeURIComponent(id), { method: "POST" }).catch(() => {});
    current.controller.abort();
  }
  $("run").addEventListener("click", () => run("none"));
  $("explain").addEventListener("click", () => run("true"));
  $("analyze").addEventListener("click", () => run("analyze"));
  $("cancel").addEventListener("click", cancel);

  // --- results ------------------------------------------------------------
  function termCell(td, t) {
    if (!t) return;
    if (t.type === "uri") { td.className = "iri"; td.textContent = "<" + t.value + ">"; return; }
    if (t.type === "bnode") { td.className = "bnode"; td.textContent = "_:" + t.value; return; }
    td.className = "lit";
    td.textContent = t.value;
    const suffix = t["xml:lang"] ? "@" + t["xml:lang"] : t.datatype ? "^^<" + t.datatype + ">" : "";
    if (suffix) { const s = document.createElement("span"); s.className = "dt"; s.textContent = " " + suffix; td.appendChild(s); }
  }
  function showSolutions(v, bindings) {
    vars = v; rows = bindings; page = 0;
    graphEl.hidden = true; table.hidden = false;
    $("plan-view").hidden = true;
    renderPage();
  }
  function renderPage() {
    table.replaceChildren();
    const thead = table.createTHead(), hr = thead.insertRow();
    vars.forEach((name) => { const th = document.createElement("th"); th.textContent = "?" + name; hr.appendChild(th); });
    const tbody = table.createTBody();
    rows.slice(page * PAGE, (page + 1) * PAGE).forEach((b) => {
      const tr = tbody.insertRow();
      vars.forEach((name) => termCell(tr.insertCell(), b[name]));
    });
    const pages = Math.max(1, Math.ceil(rows.length / PAGE));
    pager.hidden = pages <= 1;
    $("page-info").textContent = "page " + (page + 1) + " of " + pages;
    $("prev").disabled = page === 0;
    $("next").disabled = page >= pages - 1;
  }
  $("prev").addEventListener("click", () => { if (page > 0) { page--; renderPage(); } });
  $("next").addEventListener("click", () => { if ((page + 1) * PAGE < rows.length) { page++; renderPage(); } });
  function showBoolean(b) {
    vars = ["ASK"]; rows = [{ ASK: { type: "literal", value: String(b) } }]; page = 0;
    graphEl.hidden = true; table.hidden = false; $("plan-view").hidden = true;
    renderPage();
  }
  function showGraph(text) {
    rows = []; table.replaceChildren(); pager.hidden = true;
    table.hidden = true; $("plan-view").hidden = true;
    graphEl.hidden = false; graphEl.textContent = text;
  }

  // --- plan ---------------------------------------------------------------
  function fmtBytes(n) {
    if (n == null) return "";
    if (n < 1024) return n + " B";
    if (n < 1 << 20) return (n / 1024).toFixed(1) + " KiB";
    return (n / (1 << 20)).toFixed(1) + " MiB";
  }
  function showPlan(plan) {
    $("plan-view").hidden = false;
    const cols = ["#", "op", "pattern", "start", "dir", "mode", "est. rows"];
    if (plan.analyzed) cols.push("rows", "time (ms)", "reads", "messages", "bytes");
    const summary = [];
    summary.push("form " + plan.form);
    if (plan.shards) summary.push(plan.shards + " shards");
    if (plan.analyzed) {
      summary.push(plan.rows + " rows", plan.elapsedMs + " ms");
      if (plan.fabric) summary.push(plan.fabric.reads + " reads, " + plan.fabric.messages + " messages, " + fmtBytes(plan.fabric.readBytes + plan.fabric.messageBytes));
    }
    (plan.notes || []).forEach((n) => summary.push(n));
    $("plan-summary").textContent = summary.join(" · ");
    const pt = $("plan");
    pt.replaceChildren();
    const hr = pt.createTHead().insertRow();
    cols.forEach((c) => { const th = document.createElement("th"); th.textContent = c; hr.appendChild(th); });
    const tbody = pt.createTBody();
    const add = (step, label, depth) => {
      const tr = tbody.insertRow();
      const cell = (v, cls) => { const td = tr.insertCell(); td.textContent = v == null ? "" : String(v); if (cls) td.className = cls; return td; };
      cell(label);
      cell("\u00A0".repeat(depth * 2) + (step.op || ""));
      cell(step.pattern);
      cell(step.start);
      cell(step.direction);
      cell(step.mode, step.mode ? "mode-" + step.mode : "");
      cell(step.estRows);
      if (plan.analyzed) {
        const f = step.fabric || {};
        cell(step.actualRows);
        cell(step.elapsedMs);
        cell(f.reads);
        cell(f.messages);
        cell(step.fabric ? fmtBytes((f.readBytes || 0) + (f.messageBytes || 0)) : "");
      }
      (step.children || []).forEach((ch, i) => add(ch, label + "." + (i + 1), depth + 1));
    };
    (plan.steps || []).forEach((s, i) => add(s, String(i + 1), 0));
  }

  // --- downloads ----------------------------------------------------------
  document.querySelectorAll("button.dl").forEach((btn) => {
    btn.addEventListener("click", async () => {
      try {
        const resp = await fetch("/sparql", {
          method: "POST",
          headers: { "Content-Type": "application/x-www-form-urlencoded", Accept: btn.dataset.accept },
          body: params("none"),
        });
        if (!resp.ok) { setStatus(await errorText(resp), true); return; }
        const blob = await resp.blob();
        const a = document.createElement("a");
        a.href = URL.createObjectURL(blob);
        a.download = "results." + btn.dataset.ext;
        document.body.appendChild(a);
        a.click();
        a.remove();
        setTimeout(() => URL.revokeObjectURL(a.href), 10000);
      } catch (e) { setStatus("Download failed: " + e.message, true); }
    });
  });

  highlight();
})();
