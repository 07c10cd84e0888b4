// Shared helpers of the console. Everything that comes from data or the
// server goes into the page as text (textContent, attribute values, SVG
// text nodes), never as HTML.

export const $ = (id) => document.getElementById(id);

// el("td", {className: "iri", title: x}, child, "text", …) builds an
// element; strings become text nodes.
export function el(tag, props, ...children) {
  const e = document.createElement(tag);
  if (props) {
    for (const [k, v] of Object.entries(props)) {
      if (v == null) continue;
      if (k === "dataset") Object.assign(e.dataset, v);
      else if (k.startsWith("aria-") || k === "role") e.setAttribute(k, v);
      else e[k] = v;
    }
  }
  for (const c of children) {
    if (c == null) continue;
    e.appendChild(typeof c === "string" || typeof c === "number" ? document.createTextNode(String(c)) : c);
  }
  return e;
}

const SVG = "http://www.w3.org/2000/svg";
export function svg(tag, attrs, text) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
  if (text != null) e.textContent = String(text);
  return e;
}

// Common prefixes, offered before the store's own.
export const COMMON_PREFIXES = {
  rdf: "http://www.w3.org/1999/02/22-rdf-syntax-ns#",
  rdfs: "http://www.w3.org/2000/01/rdf-schema#",
  owl: "http://www.w3.org/2002/07/owl#",
  xsd: "http://www.w3.org/2001/XMLSchema#",
  foaf: "http://xmlns.com/foaf/0.1/",
  dc: "http://purl.org/dc/elements/1.1/",
  dcterms: "http://purl.org/dc/terms/",
  skos: "http://www.w3.org/2004/02/skos/core#",
  schema: "http://schema.org/",
  geo: "http://www.opengis.net/ont/geosparql#",
  prov: "http://www.w3.org/ns/prov#",
  sh: "http://www.w3.org/ns/shacl#",
};

// The prefixes known to the console: common ones and the store's.
export const known = { prefixes: Object.assign({}, COMMON_PREFIXES) };

// declaredPrefixes returns the PREFIX declarations of a query text.
export function declaredPrefixes(text) {
  const out = {};
  const re = /(?:^|\s)PREFIX\s+([A-Za-z][\w.-]*)?:\s*<([^<>\s]*)>/gi;
  let m;
  while ((m = re.exec(stripStringsAndComments(text))) !== null) out[m[1] || ""] = m[2];
  return out;
}

// stripStringsAndComments blanks comments and string literals (keeping
// offsets), so that scanners of the query see only its structure.
export function stripStringsAndComments(text) {
  return text.replace(/#[^\n]*|"""[\s\S]*?(?:"""|$)|'''[\s\S]*?(?:'''|$)|"(?:[^"\\\n]|\\.)*"?|'(?:[^'\\\n]|\\.)*'?|<[^<>"{}|^`\\\s]*>/g, (m) => {
    if (m[0] === "<") return m; // an IRI
    if (m[0] === "#") return " ".repeat(m.length);
    const q = m[0];
    const closed = m.length > 1 && m[m.length - 1] === q;
    return q + " ".repeat(m.length - (closed ? 2 : 1)) + (closed ? q : "");
  });
}

// shorten writes an IRI as prefix:local with the longest namespace of
// prefixes that leaves a simple local name; else <iri>.
const LOCAL = /^[A-Za-z_][\w-]*$/;
export function shorten(iri, prefixes) {
  let best = null, bestNS = "";
  for (const [p, ns] of Object.entries(prefixes)) {
    if (ns.length > bestNS.length && iri.startsWith(ns) && LOCAL.test(iri.slice(ns.length))) { best = p; bestNS = ns; }
  }
  return best !== null ? best + ":" + iri.slice(bestNS.length) : "<" + iri + ">";
}

// termText is how a SPARQL JSON result term reads in the table.
export function termText(t, prefixes) {
  if (!t) return "";
  if (t.type === "uri") return shorten(t.value, prefixes);
  if (t.type === "bnode") return "_:" + t.value;
  return t.value;
}

export function fmtInt(n) {
  return n == null ? "" : Number(n).toLocaleString("en-US");
}

export function fmtBytes(n) {
  if (n == null) return "";
  if (n < 1024) return n + " B";
  if (n < 1 << 20) return (n / 1024).toFixed(1) + " KiB";
  if (n < 1 << 30) return (n / (1 << 20)).toFixed(1) + " MiB";
  return (n / (1 << 30)).toFixed(2) + " GiB";
}

export function fmtMs(ms) {
  if (ms == null) return "";
  return ms < 10 ? ms.toFixed(2) + " ms" : ms < 1000 ? ms.toFixed(1) + " ms" : (ms / 1000).toFixed(2) + " s";
}

// bar is a horizontal bar (a <span> inside a track) of value v of max,
// with an accessible label.
export function bar(v, max, cls, label) {
  const w = max > 0 ? Math.max(v > 0 ? 1 : 0, Math.round((100 * v) / max)) : 0;
  const track = el("span", { className: "bar-track", role: "img", "aria-label": label || String(v) });
  const b = el("span", { className: "bar " + (cls || "") });
  b.style.width = w + "%";
  track.appendChild(b);
  return track;
}

// shareURL is the console's URL opening query with its mode and timeout.
export function shareURL(query, mode, timeout) {
  const p = new URLSearchParams();
  p.set("query", query);
  if (mode && mode !== "auto") p.set("mode", mode);
  if (timeout) p.set("timeout", String(timeout));
  return location.origin + location.pathname + "#" + p.toString();
}
