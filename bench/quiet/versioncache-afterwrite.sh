#!/bin/bash
# versioncache-afterwrite.sh [ROUNDS] REV_A REV_B — issue 12 reader item, quiet figure (branch versioncache).
# For each git rev builds the service test binary (go test -c ./service), then per round runs
# BenchmarkQueryAfterWrite (-benchtime 2000x; LUBM-1, 4 shards, in memory) for A then B
# (interleaved A B A B ...), and prints per sub-benchmark (q4/q5/q6, write=false/true) the
# median query-ns/op per rev: the query's own time alone and right after a one-triple INSERT DATA
# published a new version. Records `uptime` before each run. ~40 s per run (LUBM-1 load ~5 s).
# Env: REPO (default /work/main), WORK (default /work/scratch/versioncache/q).
set -u
ROUNDS=${1:-3}; shift || true
REPO=${REPO:-/work/main}
WORK=${WORK:-/work/scratch/versioncache/q}
[ $# -ge 2 ] || { echo "usage: $0 [ROUNDS] REV_A REV_B" >&2; exit 2; }
REVS=("$@")
mkdir -p "$WORK"
for r in "${REVS[@]}"; do
  if [ ! -x "$WORK/svc-$r.test" ]; then
    d=$(mktemp -d "$WORK/src.XXXX")
    git -C "$REPO" archive "$r" | tar -x -C "$d"
    (cd "$d" && go test -c -o "$WORK/svc-$r.test.tmp" ./service) && mv "$WORK/svc-$r.test.tmp" "$WORK/svc-$r.test"
    rm -rf "$d"
  fi
done
# Run from the repo's service directory, as go test would (the test finds LUBM-1 through
# internal shareddata).
cd "$REPO/service" || exit 1
out="$WORK/results.txt"; : > "$out"
for round in $(seq 1 "$ROUNDS"); do
  for r in "${REVS[@]}"; do
    echo "round $round rev $r $(uptime | sed 's/.*load/load/')"
    "$WORK/svc-$r.test" -test.run XXX -test.bench QueryAfterWrite -test.benchtime 2000x 2>&1 |
      awk -v r="$r" '/^BenchmarkQueryAfterWrite\//{n=$1; sub(/-[0-9]+$/,"",n); sub(/^BenchmarkQueryAfterWrite\//,"",n); print r, n, $(NF-1)}' | tee -a "$out"
  done
done
echo "== median query-us/op (rounds: $ROUNDS)"
for n in $(awk '{print $2}' "$out" | sort -u); do
  line="$n"
  for r in "${REVS[@]}"; do
    m=$(awk -v r="$r" -v n="$n" '$1==r && $2==n {print $3}' "$out" | sort -n | awk '{a[NR]=$1} END{print (NR%2? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)/1000}')
    line="$line  $r=${m}"
  done
  echo "$line"
done
