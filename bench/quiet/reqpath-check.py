#!/usr/bin/env python3
"""reqpath-check.py REPORT.json — issue 19's "done when" figures from one `wukongd bench --peers` report.

Prints, per client count, the mix q/s of every system over HTTP (merged rounds) and whether
wukongd is ahead of both peers; the peak ratio against Virtuoso; server CPU per query
(at each count and at the peaks) against Virtuoso's; L1-L7 over HTTP medians and
speed-ups against Virtuoso, their geometric mean; L4-L6 medians/p99; the in-process mix.
"""
import json, math, sys

r = json.load(open(sys.argv[1]))
sys_ = {s["name"]: s for s in r["systems"]}
wk = sys_.get("wukongd") or r["systems"][0]
vi, ox = sys_.get("virtuoso"), sys_.get("oxigraph")
print(f"# {r['dataset']['name']} ({r['dataset']['source']}), commit {r['commit']}, {r['date']}")

def ok(b):
    return "MET" if b else "not met"

def tput(s):
    return {p["clients"]: p for p in (s or {}).get("throughput") or []}

tw, tv, to = tput(wk), tput(vi), tput(ox)
print("\nmix over HTTP (q/s; server CPU us/query; client CPU us/query):")
print("clients | wukongd | virtuoso | oxigraph | wk/virt | wk/oxi | wk cpu | virt cpu | cpu ratio")
ahead = True
for n in sorted(tw):
    w, v, o = tw[n], tv.get(n), to.get(n)
    rv = w["qps"] / v["qps"] if v else float("nan")
    ro = w["qps"] / o["qps"] if o else float("nan")
    ahead &= (rv > 1) and (ro > 1)
    wc = w.get("server_cpu_us_per_query", float("nan"))
    vc = v.get("server_cpu_us_per_query", float("nan")) if v else float("nan")
    print(f"{n:7d} | {w['qps']:7.0f} | {v['qps'] if v else float('nan'):8.0f} | {o['qps'] if o else float('nan'):8.0f} | "
          f"{rv:6.2f}x | {ro:5.2f}x | {wc:6.1f} | {vc:8.1f} | 1/{vc / wc:.1f}  (wk client {w.get('client_cpu_us_per_query', float('nan')):.1f})")
print(f"ahead of both peers at every client count: {ok(ahead)}")
if tv:
    pw = max(tw.values(), key=lambda p: p["qps"])
    pv = max(tv.values(), key=lambda p: p["qps"])
    ratio = pw["qps"] / pv["qps"]
    print(f"peak: wukongd {pw['qps']:.0f} ({pw['clients']} clients) vs Virtuoso {pv['qps']:.0f} ({pv['clients']}): {ratio:.2f}x (>= 10x: {ok(ratio >= 10)})")
    cw, cv = pw.get("server_cpu_us_per_query"), pv.get("server_cpu_us_per_query")
    if cw and cv:
        print(f"server CPU/query at the peaks: {cw:.1f} vs {cv:.1f} us = 1/{cv / cw:.1f} (<= 1/10: {ok(cv / cw >= 10)})")

def http_lat(s):
    runs = [l for l in (s or {}).get("latency") or [] if l["path"] == "http"]
    if not runs:
        return {}
    return {q.get("label") or q["name"]: q for q in runs[-1]["queries"]}

lw, lv = http_lat(wk), http_lat(vi)
print("\nL1-L7 over HTTP (JSON), merged rounds, ms:")
logs, every = [], True
for L in ["L1", "L2", "L3", "L4", "L5", "L6", "L7"]:
    w = lw.get(L)
    if not w:
        continue
    ws = w["summary"]
    line = f"{L}: wukongd median {ws['median_ms']:.3f} p99 {ws['p99_ms']:.3f}"
    v = lv.get(L)
    if v and not v.get("error"):
        sp = v["summary"]["median_ms"] / ws["median_ms"]
        logs.append(math.log(sp))
        every &= sp >= 3
        line += f" | virtuoso {v['summary']['median_ms']:.3f}: {sp:.2f}x"
    print(line)
if logs:
    gm = math.exp(sum(logs) / len(logs))
    print(f"every L >= 3x Virtuoso: {ok(every)}; geometric mean {gm:.2f}x (>= 10x: {ok(gm >= 10)})")
light = [lw[L]["summary"] for L in ("L4", "L5", "L6") if L in lw]
if light:
    m = all(s["median_ms"] <= 0.2 for s in light)
    p = all(s["p99_ms"] <= 1.0 for s in light)
    print(f"L4-L6 medians <= 0.2 ms: {ok(m)}; p99 <= 1 ms: {ok(p)}")

ip = wk.get("throughput_in_process") or []
if ip:
    best = max(ip, key=lambda p: p["qps"])
    print("\nmix in process (q/s by clients): " + ", ".join(f"{p['clients']}: {p['qps']:.0f}" for p in ip))
    print(f"peak {best['qps']:.0f} (>= 50,000: {ok(best['qps'] >= 50000)})")
inproc = [l for l in wk.get("latency") or [] if l["path"] != "http" and l.get("mode") == "planned"]
if inproc:
    qs = {q.get("label") or q["name"]: q for q in inproc[0]["queries"]}
    print("in process, planned, median ms: " + ", ".join(
        f"{k} {qs[k]['summary']['median_ms']:.3f}" for k in ("L1", "L2", "L7", "Q14") if k in qs))
