#!/bin/sh
# typemap2-ab.sh [ROUNDS] [REV_A] [REV_B] [REV_C] — A/B/C of L1/L3/L7 at LUBM-40 in process
# (exec's BenchmarkLUBM40, planned mode, 4 shards and 1 shard, 30 runs a query a round),
# interleaved A B C A B C ... Defaults: 6 rounds;
#   A = 662ac06^ (before the node-wide type bitmaps),
#   B = 4ac97ce~2 (main before typemap2's fix: fresh Lookup buffers per fetch),
#   C = 4ac97ce (typemap2's fix: the fetches' list buffers pooled).
# Prints `uptime` before and after, then per rev and query the median over the rounds of
# cpu-us/op (rusage CPU a run, the figure of record on this 2-core machine), median-us,
# ns/op and B/op, and the GCs a round (GODEBUG=gctrace=1; all 6 queries, 31 runs each).
# Needs /work/shared (LUBM-40); its snapshots are built once under $WUKONGD_BENCH_DIR.
set -eu
ROUNDS=${1:-6}; A=${2:-662ac06^}; B=${3:-4ac97ce~2}; C=${4:-4ac97ce}
REPO=/work/main
OUT=${OUT:-/work/scratch/typemap2/ab-$(date -u +%H%M%S)}
BENCH=${WUKONGD_BENCH_DIR:-/work/scratch/typemap2/bench}
mkdir -p "$OUT" "$BENCH"
export WUKONGD_SHARED=${WUKONGD_SHARED:-/work/shared} WUKONGD_BENCH_DIR=$BENCH
for v in A B C; do
  eval rev=\$$v
  wt=$OUT/wt$v
  git -C $REPO worktree add --detach "$wt" "$rev" >/dev/null 2>&1
  (cd "$wt" && go test -c -o "$OUT/exec.$v" ./exec)
  git -C $REPO worktree remove --force "$wt"
  echo "$v = $rev ($(git -C $REPO rev-parse --short "$rev"))"
done
# Build the snapshots once (not timed).
"$OUT/exec.A" -test.run '^$' -test.bench 'LUBM40$/shards=[14]/L1/planned$' -test.benchtime 1x >/dev/null 2>&1 || true
echo "load before: $(uptime)"
PAT='LUBM40$/shards=[14]/L[137]/planned$'
i=0
while [ $i -lt "$ROUNDS" ]; do
  for v in A B C; do
    GODEBUG=gctrace=1 "$OUT/exec.$v" -test.run '^$' -test.bench "$PAT" -test.benchtime 30x \
      -test.benchmem -test.count 1 >"$OUT/run.$v.$i" 2>"$OUT/gc.$v.$i"
    grep '^Bench' "$OUT/run.$v.$i" >>"$OUT/all.$v"
    echo "$(grep -c '^gc ' "$OUT/gc.$v.$i")" >>"$OUT/gcs.$v"
  done
  i=$((i+1))
done
echo "load after: $(uptime)"
for v in A B C; do
  eval rev=\$$v
  echo "== $v ($rev)"
  for q in shards=1/L1 shards=1/L3 shards=1/L7 shards=4/L1 shards=4/L3 shards=4/L7; do
    grep "/$q/" "$OUT/all.$v" | awk -v q=$q '
      { ns[NR]=$3; cpu[NR]=$5; med[NR]=$7; for (k=1;k<=NF;k++) if ($k=="B/op") bop[NR]=$(k-1) }
      function m(a, n,   i,j,t) { for(i=1;i<=n;i++) for(j=i+1;j<=n;j++) if (a[j]<a[i]) {t=a[i];a[i]=a[j];a[j]=t}; return a[int((n+1)/2)] }
      END { printf "%-12s cpu-us/op %8.0f  median-us %8.0f  ns/op %10.0f  B/op %9.0f  (%d rounds)\n", q, m(cpu,NR), m(med,NR), m(ns,NR), m(bop,NR), NR }'
  done
  awk '{s+=$1} END {printf "GCs per round: %.0f\n", s/NR}' "$OUT/gcs.$v"
done
echo "raw: $OUT"
