#!/usr/bin/env python3
"""writers-trace.py PORT — reads a `go tool trace -http=127.0.0.1:PORT` server and prints, for the
server's "query" regions (web.runQuery: one SPARQL query each), the duration percentiles and the
mean breakdown (execution, scheduler wait, block kinds, syscall) of the fastest half, p95-p99 and
the slowest 1%; then the same breakdown summed over the busiest net/http connections (the readers'
keep-alive connections: scheduler wait, network wait and the sync.Cond wait of net/http's
background read happen there, outside the region). Used by writers-trace.sh."""
import html, re, sys, urllib.request

base = "http://127.0.0.1:%s" % sys.argv[1]

def get(path):
    return urllib.request.urlopen(base + path).read().decode()

def ms(x):
    m = re.match(r"([\d.]+)(ns|µs|ms|s)$", x.strip())
    return float(m.group(1)) * {"ns": 1e-6, "µs": 1e-3, "ms": 1, "s": 1e3}[m.group(2)] if m else 0.0

def table(page):
    """The first goroutine table of a page: its header and rows (cells as text)."""
    hdr, rows = None, []
    for row in re.findall(r"<tr[^>]*>(.*?)</tr>", page, re.S):
        cells = [html.unescape(re.sub(r"<[^>]*>", "", c)).strip() for c in re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", row, re.S)]
        if cells and cells[0] == "Goroutine":
            if hdr is not None:
                break
            hdr = cells
        elif hdr and len(cells) == len(hdr):
            rows.append(cells)
    return hdr, rows

def show(label, names, sub):
    avg = [sum(r[i] for r in sub) / len(sub) for i in range(len(names))]
    parts = ["%s %.3f" % (names[i], avg[i]) for i in range(len(names)) if names[i] and avg[i] >= 0.0005]
    print("  %-12s (%d) mean ms: %s" % (label, len(sub), ", ".join(parts)))

links = re.findall(r'href="(/userregion\?type=query&[^"]*)"', get("/userregions"))
if not links:
    sys.exit("no query regions in the trace (a binary without web's trace regions?)")
hdr, rows = table(get(html.unescape(links[0])))
names = hdr[2:]
data = sorted(([ms(c) for c in r[2:]] for r in rows), key=lambda r: r[0])
n = len(data)
print("query regions: %d, p50 %.3f ms, p99 %.3f ms, max %.3f ms" % (n, data[n // 2][0], data[int(n * .99)][0], data[-1][0]))
show("fastest half", names, data[: n // 2])
show("p95-p99", names, data[int(n * .95): int(n * .99)])
show("slowest 1%", names, data[int(n * .99):])

hdr, rows = table(get("/goroutine?name=net%2fhttp.%28%2aconn%29.serve"))
conns = sorted(([ms(c) for c in r[1:]] for r in rows), key=lambda r: -r[0])
names = hdr[1:]
print("busiest 2 connections (the readers' when the run had 2 readers), summed ms:")
for c in conns[:2]:
    print("  " + ", ".join("%s %.0f" % (names[i], c[i]) for i in range(len(names)) if names[i] and c[i] >= 0.5))
