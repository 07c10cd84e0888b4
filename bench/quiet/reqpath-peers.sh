#!/usr/bin/env bash
# reqpath-peers.sh [REV]  — one `make bench-peers` run at LUBM-40 (issue 19's "done when" run).
#
# Builds wukongd at REV (default: main) in a detached worktree under
# /work/scratch/reqpath/peers-src, then runs `make bench-peers SCALE=40` there:
# wukongd, Virtuoso (Debian virtuoso-opensource, installed with apt-get if
# missing) and Oxigraph (npm, installed by the run). Ports 18700-18703
# (wukongd serve, Oxigraph, Virtuoso SQL, Virtuoso HTTP). Holds
# /work/notes/bigmem.lock (three servers at once: ~4-6 GB). Takes ~35-45 min
# (the first run also loads Virtuoso, a few minutes; later runs reuse its cached
# database under /work/scratch/reqpath/bench/virtuoso).
# Prints: uptime before/after, the report's Markdown, then the issue-19 checks
# (reqpath-check.py over report.json). Full log: $OUT/bench.log.
set -euo pipefail
REV=${1:-main}
S=/work/scratch/reqpath
SRC=$S/peers-src
WORK=$S/bench
mkdir -p "$S" "$WORK"
cd /work/main
if [ -d "$SRC" ]; then git -C "$SRC" checkout -q --detach "$REV"; else git worktree add -q --detach "$SRC" "$REV"; fi
cd "$SRC"
echo "rev: $(git rev-parse --short HEAD) ($REV)"
OUT=$WORK/runs/$(date -u +%Y%m%d-%H%M%S)
mkdir -p "$OUT"
echo "before: $(uptime)"
flock /work/notes/bigmem.lock make bench-peers SCALE=40 MACHINE=dev-2c \
	BENCH_FLAGS="--data /work/shared/datasets/lubm/lubm40.nt.gz --work $WORK --out $OUT --ports 18700" >"$OUT/bench.log" 2>&1 || { echo "bench failed:"; tail -30 "$OUT/bench.log"; exit 1; }
echo "after: $(uptime)"
cat "$OUT/report.md"
python3 "$(dirname "$0")/reqpath-check.py" "$OUT/report.json"
