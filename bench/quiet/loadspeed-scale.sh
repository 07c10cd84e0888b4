#!/bin/sh
# loadspeed-scale.sh [SCALES] — issue 15's load scale table: loads LUBM-640, 1280, 2560 with
# main's binary (/work/main/bin/wukongd, or $BIN) and prints, per scale: triples, wall, CPU,
# triples/s, peak RSS, snapshot bytes/triple and every phase's wall / CPU / cores busy (from the
# loader's own "phase done" log lines). Run on a quiet machine; takes the big-memory lock per load.
# Inputs: /work/scratch/big/lubmN.nt (or .nt.gz); LUBM-1280 is generated if missing
# (~1-2 min). Default SCALES="640 1280 2560". Snapshots go to /work/scratch/loadspeed/scaleN
# (deleted after measuring unless KEEP=1). Time: ~2-4 min (640), ~5 (1280), ~10 (2560) quiet.
# Also prints the host's CPU ticks over each load from /proc/stat (all processes: user, sys,
# iowait, steal), so that a run whose CPU grows from one run to the next (session 10: 504 vs
# 909 CPU-s for the same code and file) shows whether the machine or the loader changed.
set -eu
BIN=${BIN:-/work/main/bin/wukongd}
BIG=${BIG:-/work/scratch/big}
WORK=${WORK:-/work/scratch/loadspeed}
SCALES=${1:-"640 1280 2560"}
MEM=${MEM:-2G}
SHARDS=${SHARDS:-16}
mkdir -p "$WORK"
echo "bin: $BIN (built from $(go version -m "$BIN" 2>/dev/null | awk '$2=="vcs.revision"{print substr($3,1,7)}'), main HEAD $(cd /work/main && git rev-parse --short HEAD))  memory $MEM shards $SHARDS"
for n in $SCALES; do
  in=""
  for c in "$BIG/lubm$n.nt" "$BIG/lubm$n.nt.gz"; do [ -f "$c" ] && in=$c && break; done
  if [ -z "$in" ]; then
    echo "generating LUBM-$n"
    flock /work/notes/bigmem.lock "$BIN" gen lubm --univ "$n" --out "$BIG/tmp$n.nt.gz"
    mv "$BIG/tmp$n.nt.gz" "$BIG/lubm$n.nt.gz"; in="$BIG/lubm$n.nt.gz"
  fi
  out="$WORK/scale$n"; rm -rf "$out"
  log="$WORK/scale$n.log"; tv="$WORK/scale$n.time"
  echo "== LUBM-$n ($in) start $(date -u +%T)  uptime: $(uptime)"
  # GOMEMLIMIT 7GiB as in the recorded 2560 runs (the 8 GB RSS goal).
  flock /work/notes/bigmem.lock sh -c 'head -1 /proc/stat > "$0"; exec "$@"' "$WORK/scale$n.stat0" env GOMEMLIMIT=${GOMEMLIMIT:-7GiB} /usr/bin/time -v -o "$tv" \
    "$BIN" load --memory "$MEM" --shards "$SHARDS" --out "$out" "$in" >"$log" 2>&1 || {
      echo "load failed:"; tail -20 "$log"; continue; }
  echo "   end $(date -u +%T)  uptime: $(uptime)"
  head -1 /proc/stat | paste "$WORK/scale$n.stat0" - | awk '{n=NF/2; printf "   host CPU over the load (all processes, s at 100 ticks/s): user %.1f sys %.1f iowait %.1f steal %.1f idle %.1f\n", ($(n+2)+$(n+3)-$2-$3)/100, ($(n+4)+$(n+7)+$(n+8)-$4-$7-$8)/100, ($(n+6)-$6)/100, ($(n+9)-$9)/100, ($(n+5)-$5)/100}'
  triples=$(sed -n 's/.*"triples": *\([0-9]*\).*/\1/p' "$out/manifest.json" | head -1)
  terms=$(sed -n 's/.*"terms": *\([0-9]*\).*/\1/p' "$out/manifest.json" | head -1)
  bytes=$(du -sb "$out" | cut -f1)
  wall=$(awk -F': ' '/Elapsed \(wall clock\)/{n=split($2,a,":"); s=0; for(i=1;i<=n;i++) s=s*60+a[i]; print s}' "$tv")
  usr=$(awk -F': ' '/User time/{print $2}' "$tv"); sys=$(awk -F': ' '/System time/{print $2}' "$tv")
  rss=$(awk -F': ' '/Maximum resident/{print $2}' "$tv")
  awk -v t="$triples" -v terms="$terms" -v b="$bytes" -v w="$wall" -v u="$usr" -v s="$sys" -v r="$rss" -v n="$n" 'BEGIN{
    printf "LUBM-%s: %d triples, %d terms; wall %.1f s, CPU %.1f s (%.1f user + %.1f sys); %.0f k triples/s (goal >= 1000 k); peak RSS %.2f GiB (%d KB; goal <= 8 GB); snapshot %.1f B/triple (goal <= 32)\n",
      n, t, terms, w, u+s, u, s, t/w/1000, r/1048576, r, b/t }'
  # phase lines: the loader logs {"phase":..,"wall_s":..,"cpu_s":..,"cores_busy":..,"msg":"phase done"}
  grep 'phase done' "$log" | sed -n 's/.*"phase":"\([a-z]*\)","wall_s":\([0-9.e+-]*\),"cpu_s":\([0-9.e+-]*\),"cores_busy":\([0-9.e+-]*\).*/\1 \2 \3 \4/p' |
    awk '{printf "   phase %-11s wall %7.1f s  CPU %7.1f s  cores busy %.2f\n", $1, $2, $3, $4}'
  grep -q 'phase done' "$log" || echo "   (no phase lines in $log)"
  if [ "${KEEP:-0}" != 1 ]; then rm -rf "$out"; fi
done
