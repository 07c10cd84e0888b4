// Oxigraph (npm package "oxigraph", in process in Node) for wukongd's
// benchmark. Driven by `wukongd bench --peers oxigraph`:
//
//   node oxigraph.mjs --data DATA.nt[.gz] --queries Q.json --out R.json
//        [--warmup N] [--repeat N] [--budget SECONDS] [--serve PORT]
//
// It loads DATA into an in-memory Store, then runs each query of Q.json
// ([{name, text}]) in process — warmup runs, then up to --repeat timed runs
// within --budget seconds per query — with the results serialized to SPARQL
// JSON (as an endpoint would send them), and writes the raw samples to R.json.
// With --serve it then answers the SPARQL 1.1 Protocol (GET and POST,
// JSON results) on 127.0.0.1:PORT/sparql with keep-alive, so the same HTTP
// driver measures it like the other systems, and prints "ready" on stdout.
import { readFileSync, writeFileSync } from "node:fs";
import { gunzipSync } from "node:zlib";
import { createServer } from "node:http";
import { performance } from "node:perf_hooks";
import oxigraph from "oxigraph";

function parseArgs(argv) {
  const a = { warmup: 3, repeat: 100, budget: 10 };
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i];
    if (!k.startsWith("--")) throw new Error(`unexpected argument ${k}`);
    a[k.slice(2)] = argv[++i];
  }
  for (const k of ["warmup", "repeat", "budget"]) a[k] = Number(a[k]);
  if (!a.data || !a.queries || !a.out) throw new Error("need --data, --queries and --out");
  return a;
}

const JSON_RESULTS = "application/sparql-results+json";

function countRows(json) {
  // Parse the JSON as a client would, and count the solutions.
  const r = JSON.parse(json);
  return r.results ? r.results.bindings.length : r.boolean ? 1 : 0;
}

function runQuery(store, text) {
  const out = store.query(text, { results_format: JSON_RESULTS });
  return out;
}

function main() {
  const args = parseArgs(process.argv.slice(2));
  const queries = JSON.parse(readFileSync(args.queries, "utf8"));

  const store = new oxigraph.Store();
  const t0 = performance.now();
  let raw = readFileSync(args.data);
  if (args.data.endsWith(".gz")) raw = gunzipSync(raw);
  // Feed the N-Triples in chunks cut at line ends (one string of the whole
  // file would exceed V8's string limit).
  const chunks = function* () {
    const step = 16 << 20;
    for (let off = 0; off < raw.length; ) {
      let end = Math.min(off + step, raw.length);
      while (end < raw.length && raw[end - 1] !== 0x0a) end++;
      yield raw.subarray(off, end);
      off = end;
    }
  };
  store.load(chunks(), { format: "application/n-triples", no_transaction: true });
  const loadSeconds = (performance.now() - t0) / 1000;
  raw = null;
  const size = store.size;
  const rssAfterLoad = process.memoryUsage().rss;

  const results = [];
  for (const q of queries) {
    const rec = { name: q.name, rows: -1, samples_ms: [], error: "" };
    try {
      for (let i = 0; i < args.warmup; i++) rec.rows = countRows(runQuery(store, q.text));
      const start = performance.now();
      for (let i = 0; i < args.repeat; i++) {
        const s = performance.now();
        const out = runQuery(store, q.text);
        rec.samples_ms.push(performance.now() - s);
        rec.rows = countRows(out);
        if ((performance.now() - start) / 1000 > args.budget && rec.samples_ms.length >= 3) break;
      }
    } catch (e) {
      rec.error = String(e && e.message ? e.message : e);
    }
    results.push(rec);
    process.stderr.write(`oxigraph: ${q.name}: ${rec.rows} rows, ${rec.samples_ms.length} runs${rec.error ? ", error " + rec.error : ""}\n`);
  }
  writeFileSync(
    args.out,
    JSON.stringify({
      system: "oxigraph",
      version: JSON.parse(readFileSync(new URL("./node_modules/oxigraph/package.json", import.meta.url), "utf8")).version,
      node: process.version,
      load_seconds: loadSeconds,
      triples: size,
      rss_after_load_bytes: rssAfterLoad,
      peak_rss_bytes: process.resourceUsage().maxRSS * 1024,
      queries: results,
    }),
  );
  if (!args.serve) return;

  const server = createServer((req, res) => {
    const url = new URL(req.url, "http://x");
    if (url.pathname !== "/sparql") {
      res.writeHead(404).end();
      return;
    }
    const answer = (text) => {
      if (!text) {
        res.writeHead(400, { "content-type": "text/plain" }).end("missing query");
        return;
      }
      let out;
      try {
        out = runQuery(store, text);
      } catch (e) {
        res.writeHead(400, { "content-type": "text/plain" }).end(String(e));
        return;
      }
      res.writeHead(200, { "content-type": JSON_RESULTS }).end(out);
    };
    if (req.method === "GET") {
      answer(url.searchParams.get("query"));
      return;
    }
    const parts = [];
    req.on("data", (c) => parts.push(c));
    req.on("end", () => {
      const body = Buffer.concat(parts).toString("utf8");
      const ct = (req.headers["content-type"] || "").split(";")[0].trim();
      if (ct === "application/sparql-query") answer(body);
      else answer(new URLSearchParams(body).get("query"));
    });
  });
  server.keepAliveTimeout = 60000;
  server.listen(Number(args.serve), "127.0.0.1", () => process.stdout.write("ready\n"));
}

main();
