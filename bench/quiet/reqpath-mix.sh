#!/usr/bin/env bash
# reqpath-mix.sh [OLD_REV] [NEW_REV] [ROUNDS]  — issue 19: the light mix in process and L4-L6 over HTTP.
#
# Builds exec's test binary and wukongd at OLD (default 3e675de, main just before reqpath's
# Engine.Query change) and NEW (default main) in detached worktrees under
# /work/scratch/reqpath/mix-{old,new}, then ROUNDS (default 3) interleaved rounds
# OLD NEW OLD NEW of:
#   1. BenchmarkLUBM40Mix/shards=4/(query|exec) and LUBM40/shards=4/(L1|L2|L7) + Q14
#      (exec, in process, 2 cores): q/s and CPU-us per query;
#   2. `wukongd bench --only L4,L5,L6 --modes planned --rounds 1 --clients 1,2`
#      on a LUBM-40 snapshot (UBA reference data), ports 18720-18723: L4-L6 over
#      HTTP median/p99 and the mix over HTTP (q/s, server CPU/query).
# Prints medians per rev and the load (uptime) before/after. ~15 min for 3 rounds.
set -euo pipefail
OLD=${1:-3e675de}
NEW=${2:-main}
ROUNDS=${3:-3}
S=/work/scratch/reqpath
DATA=/work/shared/datasets/lubm/lubm40.nt.gz
mkdir -p "$S/mixrun"
build() { # rev dir
	cd /work/main
	if [ -d "$2" ]; then git -C "$2" checkout -q --detach "$1"; else git worktree add -q --detach "$2" "$1"; fi
	cd "$2" && go build -o bin/wukongd ./cmd/wukongd && go test -c -o bin/exec.test ./exec
	echo "$(basename "$2"): $(git rev-parse --short HEAD)"
}
build "$OLD" "$S/mix-old"
build "$NEW" "$S/mix-new"
echo "before: $(uptime)"
for r in $(seq 1 "$ROUNDS"); do
	for v in old new; do
		d=$S/mix-$v
		(cd "$d/exec" && WUKONGD_SHARED=/work/shared ../bin/exec.test -test.run '^$' \
			-test.bench 'LUBM40Mix/shards=4/(query|exec)$' -test.benchtime 20000x) >"$S/mixrun/$v.$r.mix" 2>&1
		(cd "$d/exec" && WUKONGD_SHARED=/work/shared ../bin/exec.test -test.run '^$' \
			-test.bench 'LUBM40$/shards=4/(L1|L2|L7|Q14)/' -test.benchtime 30x) >"$S/mixrun/$v.$r.heavy" 2>&1 || true
		(cd "$d" && bin/wukongd bench --data "$DATA" --work "$S/mixwork-$v" --reuse-snapshot --only L4,L5,L6 \
			--modes planned --rounds 1 --clients 1,2 --duration 8s --ports 18720 --out "$S/mixrun/$v.$r.http") \
			>/dev/null 2>"$S/mixrun/$v.$r.http.log"
	done
done
echo "after: $(uptime)"
python3 - "$S/mixrun" "$ROUNDS" <<'PY'
import json, re, statistics, sys, glob
d, rounds = sys.argv[1], int(sys.argv[2])
def med(xs): return statistics.median(xs) if xs else float('nan')
for v in ("old", "new"):
    bench = {}
    for f in glob.glob(f"{d}/{v}.*.mix") + glob.glob(f"{d}/{v}.*.heavy"):
        for line in open(f):
            m = re.match(r"Benchmark(\S+?)-\d+\s+\d+\s+(\d+) ns/op(.*)", line)
            if not m: continue
            cpu = re.search(r"([\d.]+) cpu-µs/op", m.group(3)); qps = re.search(r"([\d.]+) q/s", m.group(3))
            b = bench.setdefault(m.group(1), {"ns": [], "cpu": [], "qps": []})
            b["ns"].append(int(m.group(2)) / 1e3)
            if cpu: b["cpu"].append(float(cpu.group(1)))
            if qps: b["qps"].append(float(qps.group(1)))
    print(f"== {v}: exec benchmarks (median of {rounds} rounds): us/op, CPU-us/op, q/s")
    for k in sorted(bench):
        b = bench[k]
        print(f"  {k}: {med(b['ns']):.1f} us/op, cpu {med(b['cpu']):.1f}, q/s {med(b['qps']):.0f}")
    lat, tp = {}, {}
    for f in glob.glob(f"{d}/{v}.*.http/report.json"):
        r = json.load(open(f)); s = r["systems"][0]
        for l in s.get("latency", []):
            if l["path"] != "http": continue
            for q in l["queries"]:
                lat.setdefault(q.get("label") or q["name"], []).append((q["summary"]["median_ms"], q["summary"]["p99_ms"]))
        for p in s.get("throughput", []):
            tp.setdefault(p["clients"], []).append((p["qps"], p.get("server_cpu_us_per_query", 0)))
        for p in s.get("throughput_in_process", []):
            tp.setdefault(f"inproc {p['clients']}", []).append((p["qps"], 0))
    print(f"== {v}: over HTTP (median of rounds)")
    for k in sorted(lat):
        print(f"  {k}: median {med([x[0] for x in lat[k]]):.3f} ms, p99 {med([x[1] for x in lat[k]]):.3f} ms")
    for k in tp:
        print(f"  mix {k} clients: {med([x[0] for x in tp[k]]):.0f} q/s, server CPU {med([x[1] for x in tp[k]]):.1f} us/query")
PY
