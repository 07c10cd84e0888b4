#!/bin/bash
# clusterw-tput.sh [ROUNDS] [REV...] — issue 14: cluster write throughput and reads (branch clusterw).
# For each git rev (default: HEAD of $REPO, default /work/main) builds wukongd; per round and rev
# (interleaved A B A B):
#   1. a 3-process cluster (serve --node I --peers ..., R = 2, --update-token, raft logs wiped)
#      over a LUBM-1 6-shard snapshot; writebench --writers 16 --duration 15s (single-triple
#      INSERT DATA) spread over the three nodes: updates/s, p50/p99, and every node's CPU
#      (utime+stime from /proc) per update, and summed;
#   2. the same with one durable process (serve --data, no --peers) for the single-process figure;
#   3. (unless L17=0) L1-L7 through the 3-process cluster with an empty
#      delta: wukongd cluster-bench --data1 LUBM-40/1 shard --dataN LUBM-40/3 shards --nodes 3
#      --runs 5 --warmup 1 (the processes run the replicated log, no write applied).
# Records `uptime` before and after each run. Ports PORTBASE+10..+30 (PORTBASE default 18600).
# Env: PORTBASE, SINGLE (1; 0 skips part 2), REPO, WORK (default /work/scratch/clusterw/q), DUR (15s), L17 (1; 0 skips part 3).
set -u
ROUNDS=${1:-1}; shift || true
REPO=${REPO:-/work/main}
WORK=${WORK:-/work/scratch/clusterw/q}
DUR=${DUR:-15s}
L17=${L17:-1}
SINGLE=${SINGLE:-1}
LUBM=/work/shared/datasets/lubm
PB=${PORTBASE:-18600} # HTTP ports PB+10..12, fabric PB+20..22, single process PB+30
HP=$((PB + 10))
REVS=("$@"); [ ${#REVS[@]} -eq 0 ] && REVS=($(git -C "$REPO" rev-parse --short HEAD))
mkdir -p "$WORK"
. "$(dirname "$0")/lib.sh"
build_revs "$REPO" "$WORK" "${REVS[@]}"
W0="$WORK/wk-${REVS[0]}"
[ -d "$WORK/l1s6" ] || { "$W0" load --shards 6 --out "$WORK/l1s6.tmp" $LUBM/lubm1.nt.gz >/dev/null 2>&1 && mv "$WORK/l1s6.tmp" "$WORK/l1s6"; }
load() { uptime | sed 's/.*average: //'; }
PEERS=127.0.0.1:$((PB + 20)),127.0.0.1:$((PB + 21)),127.0.0.1:$((PB + 22))
URLS=http://127.0.0.1:$HP,http://127.0.0.1:$((HP + 1)),http://127.0.0.1:$((HP + 2))
wait_ready() { # url...
  for u in "$@"; do
    for i in $(seq 1 600); do curl -sf "$u/readyz" >/dev/null && break; sleep 0.1; done
  done
}
cluster_round() { # rev
  rm -rf "$WORK/c"; cp -r "$WORK/l1s6" "$WORK/c"
  PIDS=()
  for i in 0 1 2; do
    "$WORK/wk-$1" serve --data "$WORK/c" --node $i --peers $PEERS --replicas 2 --update-token T \
      --addr 127.0.0.1:$((HP + i)) --log-level warn > "$WORK/node$i.log" 2>&1 &
    PIDS+=($!)
  done
  wait_ready http://127.0.0.1:$HP http://127.0.0.1:$((HP + 1)) http://127.0.0.1:$((HP + 2))
  local c0=() c1=() tot=0
  for p in "${PIDS[@]}"; do c0+=($(cpu $p)); done
  out=$("$WORK/wk-$1" writebench --url $URLS --token T --writers 16 --duration "$DUR" 2>&1)
  for p in "${PIDS[@]}"; do c1+=($(cpu $p)); done
  n=$(echo "$out" | sed -n 's/.*INSERT DATA: \([0-9]*\) ok.*/\1/p')
  echo "$out" | sed 's/^/   /'
  line="   CPU per update:"
  for i in 0 1 2; do
    us=$(echo "(${c1[$i]} - ${c0[$i]}) * 1000000 / $n" | bc)
    tot=$((tot + us)); line="$line node$i $us us,"
  done
  echo "$line summed $tot us"
  # Requests per entry of the replicated log (node 0's count of applied requests over its version).
  m=$(curl -s http://127.0.0.1:$HP/metrics)
  ver=$(echo "$m" | sed -n 's/^wukongd_cluster_version \([0-9.e+]*\)$/\1/p')
  req=$(echo "$m" | sed -n 's/^wukongd_cluster_requests_applied \([0-9.e+]*\)$/\1/p')
  [ -n "$ver" ] && [ -n "$req" ] && echo "   node0: version $ver, requests applied $req: $(echo "scale=2; $req / $ver" | bc) requests per version"
  for p in "${PIDS[@]}"; do kill $p; done
  for p in "${PIDS[@]}"; do wait $p 2>/dev/null; done
}
single_round() { # rev
  rm -rf "$WORK/s"; cp -r "$WORK/l1s6" "$WORK/s"
  "$WORK/wk-$1" serve --data "$WORK/s" --update-token T --addr 127.0.0.1:$((PB + 30)) --log-level warn > "$WORK/single.log" 2>&1 &
  local p=$!
  wait_ready http://127.0.0.1:$((PB + 30))
  c0=$(cpu $p)
  out=$("$WORK/wk-$1" writebench --url http://127.0.0.1:$((PB + 30)) --token T --writers 16 --duration "$DUR" 2>&1)
  c1=$(cpu $p)
  n=$(echo "$out" | sed -n 's/.*INSERT DATA: \([0-9]*\) ok.*/\1/p')
  echo "$out" | sed 's/^/   /'
  echo "   CPU per update: $(echo "($c1 - $c0) * 1000000 / $n" | bc) us"
  kill $p; wait $p 2>/dev/null
}
for round in $(seq 1 "$ROUNDS"); do
  for REV in "${REVS[@]}"; do
    echo "== round $round rev $REV: 3-process cluster, R = 2, 16 writers over 3 nodes, $DUR  load: $(load)"
    cluster_round "$REV"
    if [ "$SINGLE" = 1 ]; then
      echo "== round $round rev $REV: one durable process, 16 writers, $DUR  load: $(load)"
      single_round "$REV"
    fi
    echo "   load after: $(load)"
  done
done
if [ "$L17" = 1 ]; then
  [ -d "$WORK/l40s1" ] || { "$W0" load --shards 1 --out "$WORK/l40s1.tmp" $LUBM/lubm40.nt.gz >/dev/null 2>&1 && mv "$WORK/l40s1.tmp" "$WORK/l40s1"; }
  [ -d "$WORK/l40s3" ] || { "$W0" load --shards 3 --out "$WORK/l40s3.tmp" $LUBM/lubm40.nt.gz >/dev/null 2>&1 && mv "$WORK/l40s3.tmp" "$WORK/l40s3"; }
  for REV in "${REVS[@]}"; do
    echo "== rev $REV: L1-L7 through the 3-process cluster, empty delta (cluster-bench, 5 runs)  load: $(load)"
    rm -rf "$WORK/l40s3/raft"
    "$WORK/wk-$REV" cluster-bench --data1 "$WORK/l40s1" --dataN "$WORK/l40s3" --nodes 3 --runs 5 --warmup 1 2>&1 | sed 's/^/   /'
    echo "   load after: $(load)"
  done
fi
