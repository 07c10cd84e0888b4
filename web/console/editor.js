// The query editor: a textarea over a highlighted copy, with syntax
// errors marked at their line and column (the server's /api/parse),
// completion of keywords, prefixes and store terms (/api/complete), and
// PREFIX lines added for the prefixed names used.
import { $, el, known, declaredPrefixes, stripStringsAndComments, shorten } from "./util.js";

const KEYWORD_LIST = ("SELECT CONSTRUCT DESCRIBE ASK WHERE FROM NAMED PREFIX BASE DISTINCT REDUCED OPTIONAL UNION MINUS " +
  "FILTER GRAPH SERVICE SILENT BIND VALUES AS ORDER BY ASC DESC LIMIT OFFSET GROUP HAVING COUNT SUM MIN MAX AVG SAMPLE " +
  "GROUP_CONCAT SEPARATOR NOT EXISTS IN UNDEF true false REGEX STR LANG LANGMATCHES DATATYPE BOUND IRI URI BNODE " +
  "STRLEN SUBSTR UCASE LCASE STRSTARTS STRENDS CONTAINS STRBEFORE STRAFTER ENCODE_FOR_URI CONCAT REPLACE ABS ROUND " +
  "CEIL FLOOR RAND NOW YEAR MONTH DAY HOURS MINUTES SECONDS COALESCE IF ISIRI ISURI ISBLANK ISLITERAL ISNUMERIC " +
  "INSERT DELETE DATA WITH USING DEFAULT ALL LOAD CLEAR DROP CREATE ADD MOVE COPY TO INTO").split(" ");
const KEYWORDS = new Set(KEYWORD_LIST.map((k) => k.toLowerCase()).concat(["a"]));

const TOKEN = /(#[^\n]*)|("""[\s\S]*?(?:"""|$)|'''[\s\S]*?(?:'''|$)|"(?:[^"\\\n]|\\.)*"?|'(?:[^'\\\n]|\\.)*'?)|(<[^<>"{}|^`\\\s]*>)|([?$][A-Za-z0-9_\u00B7-\uFFFF]+)|([A-Za-z_][\w.-]*)?:([\w.-]*)|([+-]?(?:\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?))|([A-Za-z_]\w*)/g;

export class Editor {
  constructor(onRun, onChange) {
    this.ta = $("query");
    this.hl = $("highlight");
    this.popup = $("completions");
    this.lintEl = $("lint");
    this.onRun = onRun;
    this.onChange = onChange;
    this.error = null; // {line, col, message} of the last check
    this.items = [];
    this.active = -1;
    this.seq = 0; // completion requests: only the newest is shown
    this.lintSeq = 0;
    this.lintTimer = 0;
    this.completeTimer = 0;
    this.ta.addEventListener("input", (e) => this.input(e));
    this.ta.addEventListener("scroll", () => { this.syncScroll(); this.close(); });
    this.ta.addEventListener("keydown", (e) => this.keydown(e));
    this.ta.addEventListener("blur", () => setTimeout(() => { if (document.activeElement !== this.ta) this.close(); }, 150));
    this.popup.addEventListener("mousedown", (e) => {
      const li = e.target.closest("li");
      if (li) { e.preventDefault(); this.accept(Number(li.dataset.i)); }
    });
    this.highlight();
  }

  get value() { return this.ta.value; }
  set value(v) { this.ta.value = v; this.close(); this.error = null; this.highlight(); this.scheduleLint(); }

  input(e) {
    this.error = null;
    this.highlight();
    this.scheduleLint();
    if (this.onChange) this.onChange();
    // Complete while typing a term (not on deletions).
    if (e && e.inputType && e.inputType.startsWith("insert") && e.data && /[\w:<?$]/.test(e.data)) {
      if (e.data === ":") this.addPrefixesFor(this.ta.value);
      clearTimeout(this.completeTimer);
      this.completeTimer = setTimeout(() => this.complete(false), 120);
    } else if (!this.popup.hidden) {
      clearTimeout(this.completeTimer);
      this.completeTimer = setTimeout(() => this.complete(false), 120);
    }
  }

  keydown(e) {
    if (!this.popup.hidden) {
      if (e.key === "ArrowDown" || e.key === "ArrowUp") {
        e.preventDefault();
        const n = this.items.length;
        this.select((this.active + (e.key === "ArrowDown" ? 1 : n - 1)) % n);
        return;
      }
      if (e.key === "Enter" && !(e.ctrlKey || e.metaKey) || e.key === "Tab") {
        if (this.active >= 0) { e.preventDefault(); this.accept(this.active); return; }
      }
      if (e.key === "Escape") { e.preventDefault(); this.close(); return; }
    }
    if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) { e.preventDefault(); this.close(); this.onRun(); return; }
    if (e.key === " " && e.ctrlKey) { e.preventDefault(); this.complete(true); return; }
    if (e.key === "Tab" && !e.shiftKey && !e.altKey) {
      e.preventDefault();
      this.ta.setRangeText("  ", this.ta.selectionStart, this.ta.selectionEnd, "end");
      this.input(null);
    }
  }

  // --- highlighting and the error marker ---------------------------------
  highlight() {
    const text = this.ta.value;
    const frag = document.createDocumentFragment();
    // The error's offset in UTF-16 units (the server counts code points).
    let errAt = -1;
    if (this.error) errAt = offsetOf(text, this.error.line, this.error.col);
    let last = 0, m;
    TOKEN.lastIndex = 0;
    const put = (s, cls, start) => {
      if (errAt >= start && errAt < start + s.length) {
        const k = errAt - start;
        if (k > 0) put1(s.slice(0, k), cls);
        const mark = el("span", { className: "err-mark" + (cls ? " " + cls : "") }, s.slice(k, k + 1));
        frag.appendChild(mark);
        if (k + 1 < s.length) put1(s.slice(k + 1), cls);
        return;
      }
      put1(s, cls);
    };
    const put1 = (s, cls) => frag.appendChild(cls ? el("span", { className: cls }, s) : document.createTextNode(s));
    while ((m = TOKEN.exec(text)) !== null) {
      if (m[0] === "") { TOKEN.lastIndex++; continue; }
      if (m.index > last) put(text.slice(last, m.index), null, last);
      let cls = null;
      if (m[1]) cls = "tok-comment";
      else if (m[2]) cls = "tok-str";
      else if (m[3]) cls = "tok-iri";
      else if (m[4]) cls = "tok-var";
      else if (m[6] !== undefined) cls = "tok-pname";
      else if (m[7]) cls = "tok-num";
      else if (m[8] && KEYWORDS.has(m[8].toLowerCase())) cls = "tok-kw";
      put(m[0], cls, m.index);
      last = m.index + m[0].length;
    }
    if (last < text.length) put(text.slice(last), null, last);
    if (errAt >= text.length) frag.appendChild(el("span", { className: "err-mark" }, " "));
    frag.appendChild(document.createTextNode("\n"));
    this.hl.replaceChildren(frag);
    this.syncScroll();
  }

  syncScroll() { this.hl.scrollTop = this.ta.scrollTop; this.hl.scrollLeft = this.ta.scrollLeft; }

  // --- syntax check --------------------------------------------------------
  scheduleLint() {
    clearTimeout(this.lintTimer);
    this.lintTimer = setTimeout(() => this.lint(), 350);
  }

  async lint() {
    const text = this.ta.value;
    const seq = ++this.lintSeq;
    if (text.trim() === "") { this.showError(null); return; }
    const isUpdate = /^\s*(?:(?:PREFIX\s+\S*:\s*<[^>]*>|BASE\s+<[^>]*>|#[^\n]*)\s*)*(?:INSERT|DELETE|LOAD|CLEAR|DROP|CREATE|ADD|MOVE|COPY|WITH)\b/i.test(text);
    try {
      const resp = await fetch("/api/parse", {
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams([[isUpdate ? "update" : "query", text]]),
      });
      if (!resp.ok || seq !== this.lintSeq || text !== this.ta.value) return;
      const ans = await resp.json();
      this.showError(ans.ok ? null : ans);
    } catch (_) { /* the check is advisory */ }
  }

  // showError marks err ({line, col, message}) or clears the mark.
  showError(err) {
    this.error = err && err.line ? err : null;
    this.lintEl.replaceChildren();
    if (err) {
      this.lintEl.className = "lint error";
      this.lintEl.appendChild(el("span", { className: "lint-pos" }, err.line ? "Line " + err.line + ", column " + err.col + ": " : "Syntax error: "));
      this.lintEl.appendChild(document.createTextNode(err.message || ""));
    } else {
      this.lintEl.className = "lint";
    }
    this.highlight();
  }

  // --- completion ----------------------------------------------------------
  close() {
    this.popup.hidden = true;
    this.popup.replaceChildren();
    this.items = [];
    this.active = -1;
    this.ta.setAttribute("aria-expanded", "false");
    this.ta.removeAttribute("aria-activedescendant");
  }

  select(i) {
    const lis = this.popup.querySelectorAll("li");
    lis.forEach((li, k) => li.setAttribute("aria-selected", k === i ? "true" : "false"));
    this.active = i;
    if (lis[i]) {
      this.ta.setAttribute("aria-activedescendant", lis[i].id);
      lis[i].scrollIntoView({ block: "nearest" });
    }
  }

  // complete proposes completions for the word at the cursor; explicit
  // (Ctrl+Space) also opens on an empty word.
  async complete(explicit) {
    const text = this.ta.value, pos = this.ta.selectionStart;
    if (pos !== this.ta.selectionEnd) return;
    const ctx = contextAt(text, pos);
    if (!ctx || (!explicit && ctx.word === "")) { this.close(); return; }
    const seq = ++this.seq;
    const items = await proposals(ctx, text);
    if (seq !== this.seq || this.ta.value !== text || this.ta.selectionStart !== pos) return;
    if (items.length === 0) { this.close(); return; }
    this.show(items, ctx);
  }

  show(items, ctx) {
    this.items = items;
    this.ctx = ctx;
    this.popup.replaceChildren();
    items.forEach((it, i) => {
      const li = el("li", { id: "completion-" + i, role: "option", dataset: { i: String(i) }, "aria-selected": "false" },
        el("span", { className: "c-text" }, it.text),
        it.detail ? el("span", { className: "c-detail" }, it.detail) : null,
        el("span", { className: "c-kind" }, it.kind));
      this.popup.appendChild(li);
    });
    const p = caretXY(this.ta, ctx.start);
    this.popup.style.left = p.x + "px";
    this.popup.style.top = p.y + "px";
    this.popup.hidden = false;
    this.ta.setAttribute("aria-expanded", "true");
    this.select(0);
  }

  accept(i) {
    const it = this.items[i], ctx = this.ctx;
    if (!it || !ctx) return;
    this.ta.setSelectionRange(ctx.start, this.ta.selectionStart);
    this.ta.setRangeText(it.insert, ctx.start, this.ta.selectionEnd, "end");
    this.close();
    this.addPrefixesFor(this.ta.value);
    this.input(null);
    this.ta.focus();
    // A prefix completed: go on to its names.
    if (it.kind === "prefix") this.complete(true);
  }

  // addPrefixesFor adds a PREFIX line for every known prefix used in
  // text and not declared, keeping the cursor where it was.
  addPrefixesFor(text) {
    const declared = declaredPrefixes(text);
    const body = stripStringsAndComments(text).replace(/<[^<>\s]*>/g, (m) => " ".repeat(m.length));
    const used = new Set();
    const re = /(^|[\s({,;.\/^|!])([A-Za-z][\w.-]*)?:(?=[A-Za-z_\d]|\s|$)/g;
    let m;
    while ((m = re.exec(body)) !== null) {
      const p = m[2] || "";
      // The name of a PREFIX declaration being typed does not count.
      if (/PREFIX\s*$/i.test(body.slice(0, m.index + m[1].length))) continue;
      if (!(p in declared) && p in known.prefixes) used.add(p);
    }
    if (used.size === 0) return;
    const lines = [...used].sort().map((p) => "PREFIX " + p + ": <" + known.prefixes[p] + ">\n").join("");
    // After the existing PREFIX/BASE lines.
    const head = /^(?:\s*(?:PREFIX\s+[\w.-]*:\s*<[^>]*>|BASE\s+<[^>]*>|#[^\n]*)[^\S\n]*\n)*/i.exec(text)[0].length;
    const s = this.ta.selectionStart, e = this.ta.selectionEnd;
    this.ta.value = text.slice(0, head) + lines + text.slice(head);
    const shift = s >= head ? lines.length : 0;
    this.ta.setSelectionRange(s + shift, e + shift);
    this.highlight();
  }
}

// offsetOf converts a 1-based line and column in code points to a UTF-16
// offset of text.
function offsetOf(text, line, col) {
  let off = 0;
  for (let l = 1; l < line; l++) {
    const nl = text.indexOf("\n", off);
    if (nl < 0) return text.length;
    off = nl + 1;
  }
  let c = 1;
  while (c < col && off < text.length && text[off] !== "\n") {
    off += text.codePointAt(off) > 0xffff ? 2 : 1;
    c++;
  }
  return off;
}

// caretXY is the pixel position (in the editor box) below offset off.
function caretXY(ta, off) {
  const before = ta.value.slice(0, off);
  const line = before.split("\n").length - 1;
  const col = before.length - before.lastIndexOf("\n") - 1;
  const cs = getComputedStyle(ta);
  const lh = parseFloat(cs.lineHeight) || 18;
  const cw = charWidth(cs.font);
  const pad = parseFloat(cs.paddingLeft) || 8;
  return {
    x: Math.max(0, Math.min(ta.clientWidth - 260, pad + col * cw - ta.scrollLeft)),
    y: Math.min(ta.clientHeight, (parseFloat(cs.paddingTop) || 8) + (line + 1) * lh - ta.scrollTop),
  };
}

let cwCache = { font: "", w: 8 };
function charWidth(font) {
  if (cwCache.font !== font) {
    const c = document.createElement("canvas").getContext("2d");
    c.font = font;
    cwCache = { font, w: c.measureText("MMMMMMMMMM").width / 10 };
  }
  return cwCache.w;
}

// contextAt describes the word at pos and its place in the query:
//   word   the text typed so far (a keyword, prefix:local, <iri, ?var)
//   start  its offset
//   place  "prologue" (before the first '{'), "subject", "predicate",
//          "object", "class" (object of a/rdf:type) or "other"
//   subject the term of the triple's subject (predicate/object places)
export function contextAt(text, pos) {
  const before = text.slice(0, pos);
  const m = /(<[^<>"{}|^`\\\s]*|[?$][\w]*|(?:[A-Za-z_][\w.-]*)?:[\w.-]*|[A-Za-z_][\w-]*)$/.exec(before);
  const word = m ? m[0] : "";
  const start = pos - word.length;
  // Inside a string or comment: nothing.
  const full = stripStringsAndComments(before);
  if (full.slice(start) !== word) return null;
  const struct = full.slice(0, start);
  const brace = struct.lastIndexOf("{");
  if (brace < 0) return { word, start, place: "prologue" };
  // The triple so far: tokens after the last '{', '}' or '.'.
  const group = struct.slice(Math.max(brace, struct.lastIndexOf("}"), lastDot(struct)) + 1);
  const toks = group.match(/<[^<>\s]*>|"[^"]*"|'[^']*'|[?$][\w]+|(?:[A-Za-z_][\w.-]*)?:[\w.-]*|[A-Za-z_][\w-]*|[;,()\[\]]|\S/g) || [];
  // Keywords and filters make "other".
  if (toks.length && /^(FILTER|BIND|VALUES|OPTIONAL|MINUS|UNION|GRAPH|SERVICE)$/i.test(toks[0]) && !toks.includes(";")) {
    if (/^(OPTIONAL|MINUS|UNION|GRAPH|SERVICE)$/i.test(toks[0]) && toks.length === 1) return { word, start, place: "subject" };
    return { word, start, place: "other" };
  }
  let subject = null, pred = null, n = 0;
  for (const t of toks) {
    if (t === ";") { n = 1; pred = null; continue; }
    if (t === ",") { n = 2; continue; }
    if (n === 0) { subject = t; n = 1; } else if (n === 1) { pred = t; n = 2; } else { n = 3; }
  }
  const isType = pred === "a" || pred === "rdf:type" || pred === "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>";
  const place = n === 0 ? "subject" : n === 1 ? "predicate" : n === 2 ? (isType ? "class" : "object") : "other";
  return { word, start, place, subject };
}

// lastDot is the offset of the last '.' that ends a triple (not one in a
// number or a prefixed name).
function lastDot(s) {
  for (let i = s.length - 1; i >= 0; i--) {
    if (s[i] === "." && !/[\w:]/.test(s[i + 1] || " ") && !/\d/.test(s[i - 1] || " ")) return i;
  }
  return -1;
}

// proposals returns the completions for ctx: {text, insert, kind, detail}.
async function proposals(ctx, text) {
  const word = ctx.word;
  const declared = declaredPrefixes(text);
  const prefixes = Object.assign({}, known.prefixes, declared);
  const out = [];
  const lw = word.toLowerCase();
  // Variables of the query.
  if (word.startsWith("?") || word.startsWith("$")) {
    const vars = new Set(stripStringsAndComments(text).match(/[?$][A-Za-z_]\w*/g) || []);
    for (const v of [...vars].sort()) if (v !== word && v.slice(1).toLowerCase().startsWith(lw.slice(1))) out.push({ text: v, insert: v, kind: "variable" });
    return out.slice(0, 30);
  }
  // After PREFIX: propose "p: <ns>".
  if (/PREFIX\s+$/i.test(stripStringsAndComments(text.slice(0, ctx.start)))) {
    for (const [p, ns] of Object.entries(known.prefixes).sort()) {
      if (p.toLowerCase().startsWith(lw.replace(/:.*/, ""))) out.push({ text: p + ": <" + ns + ">", insert: p + ": <" + ns + ">", kind: "prefix" });
    }
    return out.slice(0, 30).map((it) => Object.assign(it, { kind: "namespace" }));
  }
  const colon = word.indexOf(":");
  const store = ctx.place === "subject" || ctx.place === "predicate" || ctx.place === "object" || ctx.place === "class";
  if (colon < 0 && !word.startsWith("<")) {
    if (ctx.place === "predicate" && "a".startsWith(lw)) out.push({ text: "a", insert: "a", kind: "rdf:type" });
    for (const k of KEYWORD_LIST) if (lw && k.toLowerCase().startsWith(lw) && k.toLowerCase() !== lw) out.push({ text: k, insert: k, kind: "keyword" });
    for (const p of Object.keys(prefixes).sort()) if (p && p.toLowerCase().startsWith(lw)) out.push({ text: p + ":", insert: p + ":", kind: "prefix", detail: prefixes[p] });
  }
  if (!store) return out.slice(0, 30);
  // Store terms.
  const req = new URLSearchParams();
  req.set("kind", ctx.place === "predicate" ? "predicate" : ctx.place === "class" ? "class" : "entity");
  if (word.startsWith("<")) {
    req.set("ns", word.slice(1));
  } else if (colon >= 0) {
    const ns = prefixes[word.slice(0, colon)];
    if (ns == null) return out;
    req.set("ns", ns);
    req.set("q", word.slice(colon + 1));
  } else {
    if (word === "" && req.get("kind") === "entity") return out;
    req.set("q", word);
  }
  if (ctx.place === "predicate" && ctx.subject) {
    const s = resolve(ctx.subject, prefixes);
    if (s) req.set("subject", s);
    else if (/^[?$]/.test(ctx.subject)) for (const c of classesOf(ctx.subject, text, prefixes)) req.append("class", c);
  }
  req.set("limit", "20");
  try {
    const resp = await fetch("/api/complete?" + req.toString(), { headers: { Accept: "application/json" } });
    if (resp.ok) {
      const ans = await resp.json();
      for (const it of ans.items || []) {
        const short = shorten(it.iri, prefixes);
        const detail = [it.label, it.count ? it.count.toLocaleString("en-US") : null].filter(Boolean).join(" · ");
        out.push({ text: short, insert: short, kind: req.get("kind"), detail, iri: it.iri });
      }
      if (ans.indexing) out.push({ text: "(indexing the store's terms…)", insert: word, kind: "" });
    }
  } catch (_) { /* offline: keywords only */ }
  // Store terms first when the user typed a namespace.
  if (colon >= 0 || word.startsWith("<")) return out.slice(0, 40);
  return out.slice(0, 40);
}

// resolve returns the IRI of a constant term (<iri> or prefix:local).
function resolve(t, prefixes) {
  if (t.startsWith("<") && t.endsWith(">")) return t.slice(1, -1);
  const i = t.indexOf(":");
  if (i >= 0 && !/^[?$]/.test(t) && prefixes[t.slice(0, i)] != null) return prefixes[t.slice(0, i)] + t.slice(i + 1);
  return null;
}

// classesOf finds the classes v has in the query (v a C / v rdf:type C).
function classesOf(v, text, prefixes) {
  const esc = v.replace(/[$?]/g, "\\$&");
  const re = new RegExp(esc + "\\s+(?:a|rdf:type|<http://www\\.w3\\.org/1999/02/22-rdf-syntax-ns#type>)\\s+(<[^<>\\s]*>|[A-Za-z_][\\w.-]*:[\\w.-]*|:[\\w.-]*)", "g");
  const out = [];
  let m;
  const body = stripStringsAndComments(text);
  while ((m = re.exec(body)) !== null) {
    const c = resolve(m[1], prefixes);
    if (c) out.push(c);
  }
  return out.slice(0, 8);
}
