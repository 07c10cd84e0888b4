#!/bin/bash
# clusterw-reads.sh [ROUNDS] [REV...] — issue 14 "reads do not get slower": L1-L7 at LUBM-40
# through 3 processes, A B A B, for the read-only cluster before the replicated log against now.
# REVs default: d7af3a0 (main just before 1c3a615, the first raftlog commit: a read-only cluster)
# and HEAD of $REPO (default /work/main). Each rev is built (lib.sh build_revs) and loads its own
# LUBM-40 snapshots with 1 and 3 shards (the formats may differ between revs; ~2 min a rev, once,
# kept in $WORK), then per round and rev: wukongd cluster-bench --data1 1-shard --dataN 3-shard
# --nodes 3 --runs 5 --warmup 1 (1 process over 1 shard, 1 process over 3 loopback shards, and 3
# `serve --node I --peers` processes; the new rev's processes run the replicated log, raft logs
# wiped first, no write applied: an empty delta). Compare the "3 processes (tcp)" column between
# revs (median engine / HTTP ms per query and mode). About 4 minutes a round and rev after the
# loads; ~3 GB RSS at most. Records `uptime` before and after each run.
# Env: REPO, WORK (default /work/scratch/clusterw/reads).
set -u
ROUNDS=${1:-2}; shift || true
REPO=${REPO:-/work/main}
WORK=${WORK:-/work/scratch/clusterw/reads}
LUBM=/work/shared/datasets/lubm
REVS=("$@"); [ ${#REVS[@]} -eq 0 ] && REVS=(d7af3a0 $(git -C "$REPO" rev-parse --short HEAD))
mkdir -p "$WORK"
. "$(dirname "$0")/lib.sh"
build_revs "$REPO" "$WORK" "${REVS[@]}"
load() { uptime | sed 's/.*average: //'; }
for REV in "${REVS[@]}"; do
  for s in 1 3; do
    d="$WORK/l40s$s-$REV"
    [ -d "$d" ] || { "$WORK/wk-$REV" load --shards $s --out "$d.tmp" $LUBM/lubm40.nt.gz >/dev/null 2>&1 && mv "$d.tmp" "$d"; }
  done
done
for round in $(seq 1 "$ROUNDS"); do
  for REV in "${REVS[@]}"; do
    echo "== round $round rev $REV: L1-L7 through 3 processes, empty delta (cluster-bench, 5 runs)  load: $(load)"
    rm -rf "$WORK/l40s3-$REV/raft"
    "$WORK/wk-$REV" cluster-bench --data1 "$WORK/l40s1-$REV" --dataN "$WORK/l40s3-$REV" --nodes 3 --runs 5 --warmup 1 2>&1 | sed 's/^/   /'
    echo "   load after: $(load)"
  done
done
