// The store page: the figures of `wukongd info` (GET /api/info) and,
// when the server takes writes, an update form that asks for the token.
import { $, el, bar, fmtInt, fmtBytes, shorten, known } from "./util.js";

export async function showStore(openQuery) {
  const fig = $("store-figures");
  fig.replaceChildren(el("p", { className: "muted" }, "Loading…"));
  let info;
  try {
    const resp = await fetch("/api/info", { headers: { Accept: "application/json" } });
    if (!resp.ok) {
      const e = await resp.json().catch(() => ({}));
      fig.replaceChildren(el("p", { className: "error" }, "HTTP " + resp.status + " " + (e.message || "")));
      return;
    }
    info = await resp.json();
  } catch (e) {
    fig.replaceChildren(el("p", { className: "error" }, "Failed: " + e.message));
    return;
  }
  const card = (label, value, detail) => el("div", { className: "figure" },
    el("div", { className: "fig-value" }, value), el("div", { className: "fig-label" }, label), detail ? el("div", { className: "fig-detail" }, detail) : null);
  const total = info.parts.reduce((a, p) => a + p.bytes, 0);
  fig.replaceChildren(
    card("triples", fmtInt(info.triples), info.inferredTriples ? fmtInt(info.inferredTriples) + " inferred (" + info.reasoning + ")" : "explicit only"),
    card("terms", fmtInt(info.terms), fmtInt(info.predicatesAndClasses) + " predicates and classes"),
    card("shards", fmtInt(info.shards), info.graphs ? fmtInt(info.graphs) + " named graphs" : "default graph only"),
    card("subjects / objects", fmtInt(info.subjects) + " / " + fmtInt(info.objects)),
    card("bytes", fmtBytes(total), info.triples ? (total / info.triples).toFixed(1) + " B/triple" : ""),
    card("version", fmtInt(info.version), info.writes ? "writes enabled" : "read-only"));

  const shards = $("store-shards");
  shards.replaceChildren();
  const maxS = Math.max(1, ...info.shardTriples);
  info.shardTriples.forEach((n, i) => shards.appendChild(el("div", { className: "bar-row" },
    el("span", { className: "bar-name" }, "shard " + i), bar(n, maxS, "act", fmtInt(n) + " triples on shard " + i), el("span", { className: "fig" }, fmtInt(n)))));
  const parts = $("store-parts");
  parts.replaceChildren();
  const maxP = Math.max(1, ...info.parts.map((p) => p.bytes));
  info.parts.forEach((p) => parts.appendChild(el("div", { className: "bar-row" },
    el("span", { className: "bar-name" }, p.name), bar(p.bytes, maxP, "bytes", fmtBytes(p.bytes) + " of " + p.name),
    el("span", { className: "fig" }, fmtBytes(p.bytes) + (info.triples ? " (" + (p.bytes / info.triples).toFixed(1) + " B/triple)" : "")))));

  const link = (iri, query) => el("a", { href: "#", className: "describe", title: iri, dataset: { query } }, shorten(iri, known.prefixes));
  const table = (t, cols, rows) => {
    t.replaceChildren();
    const hr = t.createTHead().insertRow();
    cols.forEach((c) => hr.appendChild(el("th", { scope: "col" }, c)));
    const tb = t.createTBody();
    rows.forEach((r) => { const tr = tb.insertRow(); r.forEach((c) => { const td = tr.insertCell(); if (c instanceof Node) td.appendChild(c); else { td.textContent = c; td.className = "num"; } }); });
    t.onclick = (e) => { const a = e.target.closest("a[data-query]"); if (a) { e.preventDefault(); openQuery(a.dataset.query); } };
  };
  const maxT = Math.max(1, ...info.topPredicates.map((p) => p.triples));
  table($("store-preds"), ["predicate", "triples", "subjects", "objects", ""], info.topPredicates.map((p) => [
    link(p.iri, "SELECT ?s ?o WHERE {\n  ?s <" + p.iri + "> ?o\n}\nLIMIT 100"), fmtInt(p.triples), fmtInt(p.subjects), fmtInt(p.objects), bar(p.triples, maxT, "act", fmtInt(p.triples) + " triples")]));
  const maxC = Math.max(1, ...info.topClasses.map((c) => c.instances));
  table($("store-classes"), ["class", "instances", ""], info.topClasses.map((c) => [
    link(c.iri, "SELECT ?x WHERE {\n  ?x a <" + c.iri + ">\n}\nLIMIT 100"), fmtInt(c.instances), bar(c.instances, maxC, "act", fmtInt(c.instances) + " instances")]));
  $("update-form").hidden = !info.writes;
}

export function initUpdateForm(onDone) {
  $("update").addEventListener("submit", async (e) => {
    e.preventDefault();
    const st = $("update-status");
    const token = $("update-token").value.trim();
    if (!token) { st.textContent = "The update needs the server's update token."; st.className = "status error"; return; }
    st.textContent = "Running…";
    st.className = "status";
    $("update-run").disabled = true;
    const t0 = performance.now();
    try {
      const resp = await fetch("/update", {
        method: "POST",
        headers: { "Content-Type": "application/sparql-update", Authorization: "Bearer " + token },
        body: $("update-text").value,
      });
      if (!resp.ok) {
        const err = await resp.json().catch(() => ({}));
        st.textContent = "HTTP " + resp.status + " " + (err.error || "") + ": " + (err.message || "") + (err.line ? " (line " + err.line + ", column " + err.col + ")" : "");
        st.className = "status error";
        return;
      }
      st.textContent = "Update done in " + (performance.now() - t0).toFixed(1) + " ms";
      onDone();
    } catch (err) {
      st.textContent = "Failed: " + err.message;
      st.className = "status error";
    } finally {
      $("update-run").disabled = false;
    }
  });
}
