#!/bin/bash
# writers-trace.sh [REV] — issue 12, where a reader's query spends its time while 16 writers run
# (branch writers). Builds wukongd at REV (default: HEAD of $REPO, default /work/main), serves a
# fresh copy of a `load --shards 4` LUBM-40 snapshot durably (`serve --data COPY --update-token T
# --trace FILE`), runs `bench-writes --mode writers --writers 16 --duration 10s --readers 2 --quiet
# 1s` (1 s quiet only, so that nearly all the traced queries ran during the writers: the quiet
# p99 of record is writers-writers.sh's), stops the server and reads its execution trace with
# `go tool trace` (writers-trace.py): the server's query regions (one per SPARQL query: web.runQuery)
# — p50/p99 and the mean breakdown of the fastest half, p95-p99 and the slowest 1% (execution,
# scheduler wait, select/sync/syscall blocks) — and the readers' two connections summed (their
# scheduler wait, network wait, net/http's background-read sync.Cond wait, outside the region).
# Needs a REV with `serve --trace` (landed with this script). ~1 min (+1 min build, +10 s load
# of the snapshot on a first run); the trace is ~30 MB. Env: REPO, WORK (default
# /work/scratch/writers/q), PORT (default 18580; the trace viewer takes PORT+1).
set -u
REPO=${REPO:-/work/main}
WORK=${WORK:-/work/scratch/writers/q}
PORT=${PORT:-18580}
LUBM=/work/shared/datasets/lubm
REV=${1:-$(git -C "$REPO" rev-parse --short HEAD)}
mkdir -p "$WORK"
. "$(dirname "$0")/lib.sh"
build_revs "$REPO" "$WORK" "$REV"
W="$WORK/wk-$REV"
[ -d "$WORK/l40" ] || { "$W" load --shards 4 --out "$WORK/l40.tmp" $LUBM/lubm40.nt.gz >/dev/null 2>&1 && mv "$WORK/l40.tmp" "$WORK/l40"; }
rm -rf "$WORK/run" "$WORK/trace.out"; cp -r "$WORK/l40" "$WORK/run"
echo "== rev $REV  load: $(uptime | sed 's/.*average: //')"
"$W" serve --data "$WORK/run" --update-token T --addr 127.0.0.1:$PORT --log-level warn --trace "$WORK/trace.out" > "$WORK/serve.log" 2>&1 &
PID=$!
for i in $(seq 1 300); do curl -sf http://127.0.0.1:$PORT/readyz >/dev/null && break; sleep 0.1; done
"$W" bench-writes --url http://127.0.0.1:$PORT --token T --mode writers --writers 16 --duration 10s --readers 2 --quiet 1s 2>&1 | sed 's/^/   /'
kill -INT $PID; wait $PID 2>/dev/null
echo "   load after: $(uptime | sed 's/.*average: //')"
go tool trace -http=127.0.0.1:$((PORT + 1)) "$WORK/trace.out" > "$WORK/trace-tool.log" 2>&1 &
TP=$!
for i in $(seq 1 600); do curl -sf http://127.0.0.1:$((PORT + 1))/userregions >/dev/null && break; sleep 0.2; done
python3 "$(dirname "$0")/writers-trace.py" $((PORT + 1))
kill $TP; wait $TP 2>/dev/null
