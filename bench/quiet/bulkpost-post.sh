#!/bin/bash
# bulkpost-post.sh [ROUNDS] [REV...] — issue 12 streaming item, quiet figure.
# For each git rev (default: main's HEAD in $REPO, default /work/main), builds wukongd, then per round
# and rev (interleaved A B A B): fresh copy of a `wk load --shards 4` LUBM-40 snapshot, `serve --data
# COPY --update-token T --max-body 1073741824` (durable, its log in COPY/wal), then
#   1. the POST of LUBM-10 renamed (sed s/University/Univ/g: 1,272,953 triples, all new) with no reader
#   2. the same POST with 1 reader of L4-L6 (bench-writes --readers 1 --quiet 10s: quiet p50/p99, then during)
#   3. the POST of LUBM-10 as is (1,272,953 triples, all already in LUBM-40) with 1 reader
# Prints triples/s, server CPU-s (utime+stime of the serve process, /proc), peak RSS, and per query
# p50/p99 quiet -> during and the ratio during/quiet p99. Records `uptime` before and after each run.
# Takes ~1.5 min per rev per round once built (first run also makes the data, ~30 s).
# Env: REPO (git repo, default /work/main), WORK (default /work/scratch/bulkpost/q), PORT (default 18480),
#      FILES (default "new0 new1 old1": which of the three runs).
set -u
ROUNDS=${1:-1}; shift || true
REPO=${REPO:-/work/main}
WORK=${WORK:-/work/scratch/bulkpost/q}
PORT=${PORT:-18480}
FILES=${FILES:-"new0 new1 old1"}
LUBM=/work/shared/datasets/lubm
REVS=("$@"); [ ${#REVS[@]} -eq 0 ] && REVS=($(git -C "$REPO" rev-parse --short HEAD))
mkdir -p "$WORK"
. "$(dirname "$0")/lib.sh"
build_revs "$REPO" "$WORK" "${REVS[@]}"
W0="$WORK/wk-${REVS[0]}"
[ -d "$WORK/l40" ] || { "$W0" load --shards 4 --out "$WORK/l40.tmp" $LUBM/lubm40.nt.gz >/dev/null 2>&1 && mv "$WORK/l40.tmp" "$WORK/l40"; }
[ -f "$WORK/l10.nt" ] || { zcat $LUBM/lubm10.nt.gz > "$WORK/l10.tmp" && mv "$WORK/l10.tmp" "$WORK/l10.nt"; }
[ -f "$WORK/l10new.nt" ] || { sed s/University/Univ/g "$WORK/l10.nt" > "$WORK/l10new.tmp" && mv "$WORK/l10new.tmp" "$WORK/l10new.nt"; }
run() { # rev file readers
  local W="$WORK/wk-$1" F=$2 R=$3 run="$WORK/run"
  rm -rf "$run"; cp -rL "$WORK/l40" "$run"; chmod -R u+w "$run"
  "$W" serve --data "$run" --update-token T --addr 127.0.0.1:$PORT --max-body 1073741824 --log-level warn > "$WORK/serve.log" 2>&1 &
  local pid=$!
  for i in $(seq 1 200); do curl -sf http://127.0.0.1:$PORT/readyz >/dev/null && break; sleep 0.1; done
  local c0; c0=$(cpu $pid)
  echo "== rev $1 file $(basename $F) readers $R  load: $(uptime | sed 's/.*average: //')"
  "$W" bench-writes --url http://127.0.0.1:$PORT --token T --mode post --file "$F" --readers "$R" --quiet 10s 2>&1 | sed 's/^/   /'
  local c1; c1=$(cpu $pid)
  echo "   server CPU-s (whole run, readers' queries included): $(echo "$c1 - $c0" | bc)  peak RSS: $(awk '/VmHWM/{print $2/1024 " MB"}' /proc/$pid/status)"
  kill $pid; wait $pid 2>/dev/null
  echo "   load after: $(uptime | sed 's/.*average: //')"
}
for round in $(seq 1 "$ROUNDS"); do
  for r in "${REVS[@]}"; do
    for f in $FILES; do
      case $f in
        new0) run "$r" "$WORK/l10new.nt" 0 ;;
        new1) run "$r" "$WORK/l10new.nt" 1 ;;
        old1) run "$r" "$WORK/l10.nt" 1 ;;
      esac
    done
  done
done
