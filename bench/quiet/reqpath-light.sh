#!/usr/bin/env bash
# reqpath-light.sh [OLD_REV] [NEW_REV] [ROUNDS]  — issue 19: the server's own cost of L4-L6.
#
# Runs service BenchmarkLightLUBM40 (L4, L5, L6 on the LUBM-40 snapshot, 4 shards: backend,
# handler = the web layer over it, and loopback HTTP in one process with p50/p99/p999 and GC
# cycles per 1,000 queries) from test binaries of OLD (default 650bb91, main at the start of
# session 10: ParseForm, explorations handed to a node worker) and NEW (default main), in
# ROUNDS (default 3) interleaved rounds OLD NEW OLD NEW, 10,000 queries per point; then, on
# NEW, the HTTP points at GOGC 400 (serve's) against GOGC 8000 (a GC every ~250 MB of garbage
# over the ~3 MB live heap) twice, interleaved: whether the collector's stops make the tail.
# The benchmark file is NEW's, copied into OLD's tree (OLD has none). Builds from
# `git archive` under /work/scratch/reqpath/light; the snapshot is built once with
# `wukongd load --shards 4` into /work/scratch/reqpath/bd/lubm40-4 (~1 min, ~1.5 GB RSS).
# Needs /work/shared/datasets/lubm. Prints uptime before/after and the benchmark lines.
# ~8 min for 3 rounds.
set -euo pipefail
OLD=${1:-650bb91}
NEW=${2:-main}
ROUNDS=${3:-3}
S=/work/scratch/reqpath
W=$S/light
BD=$S/bd
mkdir -p "$W" "$BD"
build() { # rev name
	local d=$W/src-$2
	rm -rf "$d" && mkdir -p "$d"
	git -C /work/main archive "$1" | tar -x -C "$d"
	git -C /work/main show "$NEW:service/light_bench_test.go" >"$d/service/light_bench_test.go"
	(cd "$d" && go test -c -o "$W/$2.test" ./service)
	[ "$2" = new ] && (cd "$d" && go build -o "$W/wukongd" ./cmd/wukongd)
	echo "$2: $(git -C /work/main rev-parse --short "$1")"
}
build "$OLD" old
build "$NEW" new
if [ ! -d "$BD/lubm40-4" ]; then
	"$W/wukongd" load --shards 4 --out "$BD/lubm40-4" /work/shared/datasets/lubm/lubm40.nt.gz
fi
cd "$W/src-new/service"
export WUKONGD_BENCH_DIR=$BD
echo "before: $(uptime)"
for r in $(seq 1 "$ROUNDS"); do
	for v in old new; do
		"$W/$v.test" -test.run '^$' -test.bench 'LightLUBM40/(handler|http)/' -test.benchtime 10000x -test.benchmem 2>&1 |
			grep '^Benchmark' | sed "s/^/round $r $v /"
	done
done
for r in 1 2; do
	for g in 400 8000; do
		GOGC=$g "$W/new.test" -test.run '^$' -test.bench 'LightLUBM40/http/' -test.benchtime 10000x 2>&1 |
			grep '^Benchmark' | sed "s/^/tail $r GOGC=$g /"
	done
done
echo "after: $(uptime)"
