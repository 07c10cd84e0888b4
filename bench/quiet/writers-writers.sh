#!/bin/bash
# writers-writers.sh [ROUNDS] [REV...] — issue 12 small-write items, quiet figure (branch writers).
# For each git rev (default: HEAD of $REPO, default /work/main), builds wukongd; per round and rev
# (interleaved A B A B): fresh copy of a `load --shards 4` LUBM-40 snapshot, `serve --data COPY
# --update-token T` (durable: log in COPY/wal, fdatasync per group commit), then
#   1. bench-writes --mode single --n 2000          (1 writer: one-triple INSERT DATA p50/p99)
#   2. bench-writes --mode writers --writers 1 --duration 10s   (1 writer: updates/s, p50/p99)
#   3. bench-writes --mode writers --writers 16 --duration 10s  (16 writers: updates/s, p50/p99)
#      with the server's CPU (utime+stime from /proc) per update of that run
#   4. bench-writes --mode writers --writers 16 --duration 10s --readers 2 --quiet 10s
#      (2 readers of L4-L6 alone for 10 s, then during the 16 writers: per query p50/p99 quiet ->
#      during, the ratio, and the readers' errors and 429 count)
#   5. the same with --readers-apart (on a third fresh copy): the readers in a process of their
#      own, so that their latencies do not count the writers' client (its 16 goroutines and GC
#      share the readers' Go runtime in 4.; the server is measured the same way)
#      (a rev older than --readers-apart prints a flag error there and goes on)
# Records `uptime` before and after each run. ~2 min per rev per round (first run builds ~1 min
# and loads the snapshot ~10 s). Env: REPO, WORK (default /work/scratch/writers/q), PORT (18580).
set -u
ROUNDS=${1:-1}; shift || true
REPO=${REPO:-/work/main}
WORK=${WORK:-/work/scratch/writers/q}
PORT=${PORT:-18580}
LUBM=/work/shared/datasets/lubm
REVS=("$@"); [ ${#REVS[@]} -eq 0 ] && REVS=($(git -C "$REPO" rev-parse --short HEAD))
mkdir -p "$WORK"
. "$(dirname "$0")/lib.sh"
build_revs "$REPO" "$WORK" "${REVS[@]}"
W0="$WORK/wk-${REVS[0]}"
[ -d "$WORK/l40" ] || { "$W0" load --shards 4 --out "$WORK/l40.tmp" $LUBM/lubm40.nt.gz >/dev/null 2>&1 && mv "$WORK/l40.tmp" "$WORK/l40"; }
start() { # rev
  rm -rf "$WORK/run"; cp -r "$WORK/l40" "$WORK/run"
  "$WORK/wk-$1" serve --data "$WORK/run" --update-token T --addr 127.0.0.1:$PORT --log-level warn > "$WORK/serve.log" 2>&1 &
  PID=$!
  for i in $(seq 1 300); do curl -sf http://127.0.0.1:$PORT/readyz >/dev/null && break; sleep 0.1; done
}
stop() { kill $PID; wait $PID 2>/dev/null; }
bw() { "$WORK/wk-$REV" bench-writes --url http://127.0.0.1:$PORT --token T "$@" 2>&1 | sed 's/^/   /'; }
for round in $(seq 1 "$ROUNDS"); do
  for REV in "${REVS[@]}"; do
    echo "== round $round rev $REV  load: $(uptime | sed 's/.*average: //')"
    start "$REV"
    bw --mode single --n 2000
    bw --mode writers --writers 1 --duration 10s
    c0=$(cpu $PID)
    out=$(bw --mode writers --writers 16 --duration 10s); echo "$out"
    c1=$(cpu $PID)
    n=$(echo "$out" | sed -n 's/.*writers, \([0-9]*\) updates in.*/\1/p')
    echo "   server CPU per update (16 writers): $(echo "($c1 - $c0) * 1000000 / $n" | bc) us"
    stop
    start "$REV"
    bw --mode writers --writers 16 --duration 10s --readers 2 --quiet 10s
    stop
    start "$REV"
    bw --mode writers --writers 16 --duration 10s --readers 2 --quiet 10s --readers-apart
    stop
    echo "   load after: $(uptime | sed 's/.*average: //')"
  done
done
