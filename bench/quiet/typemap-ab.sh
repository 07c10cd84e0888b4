#!/bin/sh
# typemap-ab.sh [REV_A] [REV_B] [ROUNDS] — A/B of L1/L3/L7 at LUBM-40 in process
# (exec's BenchmarkLUBM40, 4 shards and 1 shard, planned mode), A B A B interleaved.
# Defaults: A = 662ac06^ (before the node-wide type bitmaps), B = main, 6 rounds.
# Prints per rev and query the median of the rounds' cpu-us/op, median-us, ns/op and
# the GCs per query (GODEBUG=gctrace=1), and `uptime` before and after.
# Needs /work/shared (LUBM-40); builds its snapshots once under $BENCH (default below).
set -eu
A=${1:-662ac06^}; B=${2:-main}; ROUNDS=${3:-6}
REPO=/work/main
OUT=${OUT:-/work/scratch/typemap/ab-$(date -u +%H%M%S)}
BENCH=${WUKONGD_BENCH_DIR:-/work/scratch/typemap/bench}
mkdir -p "$OUT" "$BENCH"
export WUKONGD_SHARED=${WUKONGD_SHARED:-/work/shared} WUKONGD_BENCH_DIR=$BENCH
for v in A B; do
  eval rev=\$$v
  wt=$OUT/wt$v
  git -C $REPO worktree add --detach "$wt" "$rev" >/dev/null 2>&1
  (cd "$wt" && go test -c -o "$OUT/exec.$v" ./exec)
  git -C $REPO worktree remove --force "$wt"
  echo "$v = $rev ($(git -C $REPO rev-parse --short "$rev"))"
done
echo "load before: $(uptime)"
PAT='LUBM40$/shards=[14]/L[137]/planned$'
i=0
while [ $i -lt "$ROUNDS" ]; do
  for v in A B; do
    GODEBUG=gctrace=1 "$OUT/exec.$v" -test.run '^$' -test.bench "$PAT" -test.benchtime 30x \
      -test.count 1 >"$OUT/run.$v.$i" 2>"$OUT/gc.$v.$i"
    grep '^Bench' "$OUT/run.$v.$i" >>"$OUT/all.$v"
    # GCs of the whole process: snapshot opens, 6 queries x (1 analyzed + 30) runs.
    echo "$(grep -c '^gc ' "$OUT/gc.$v.$i")" >>"$OUT/gcs.$v"
  done
  i=$((i+1))
done
echo "load after: $(uptime)"
for v in A B; do
  echo "== $v"
  for q in shards=1/L1 shards=1/L3 shards=1/L7 shards=4/L1 shards=4/L3 shards=4/L7; do
    grep "/$q/" "$OUT/all.$v" | awk -v q=$q '
      { ns[NR]=$3; cpu[NR]=$5; med[NR]=$7 }
      function m(a, n,   i,j,t) { for(i=1;i<=n;i++) for(j=i+1;j<=n;j++) if (a[j]<a[i]) {t=a[i];a[i]=a[j];a[j]=t}; return a[int((n+1)/2)] }
      END { printf "%-12s cpu-us/op %8.0f  median-us %8.0f  ns/op %10.0f  (%d rounds)\n", q, m(cpu,NR), m(med,NR), m(ns,NR), NR }'
  done
  awk '{s+=$1} END {printf "GCs per round (all 6 queries, 31 runs each): %.0f\n", s/NR}' "$OUT/gcs.$v"
done
echo "raw: $OUT"
