#!/bin/sh
# bigplan-l17.sh — L1–L7 in process over the big snapshots (issue 15), A/B:
# BASE (default a2d10ad~1, main before the in-place split) vs NEW (default
# main), interleaved A B A B, each round one `wukongd bench-scale --reuse`
# process per build and scale (a warm engine over the mapped snapshot,
# --warmup 2 untimed runs, then timed runs for --budget 3s, at least 5).
# Prints per build, round and query: rows, counted / decoded median (ms),
# and the load average before and after. Counts to compare with Wukong's
# LUBM-2560: L1 2,528; L2 2,765,067; L3 0; L4 10; L5 10; L6 125; L7 112,559.
#
#   sh bench/quiet/bigplan-l17.sh            # 640, then 2560 if its snapshot exists
#   SCALES=640 ROUNDS=3 BASE=<rev> NEW=<rev> sh bigplan-l17.sh
#
# Snapshots: SNAP640 (default /work/scratch/big/snap640), SNAP2560
# (/work/scratch/big/snap2560). The 2560 rounds run under
# flock /work/notes/bigmem.lock (its pages and L1's rows take ~7 GB).
# Time: ~1 min per build and round at 640; ~3-5 min at 2560.
set -eu
REPO=${REPO:-/work/main}
BASE=${BASE:-a2d10ad~1}
NEW=${NEW:-main}
ROUNDS=${ROUNDS:-2}
SCALES=${SCALES:-"640 2560"}
SNAP640=${SNAP640:-/work/scratch/big/snap640}
SNAP2560=${SNAP2560:-/work/scratch/big/snap2560}
OUT=${OUT:-/work/scratch/bigplan/l17}
mkdir -p "$OUT"

build() { # rev -> binary path
	rev=$(git -C "$REPO" rev-parse --short "$1")
	bin="$OUT/wk-$rev"
	if [ ! -x "$bin" ]; then
		dir="$OUT/src-$rev"
		rm -rf "$dir"
		git -C "$REPO" worktree add --detach "$dir" "$rev" >/dev/null 2>&1
		(cd "$dir" && go build -o "$bin" ./cmd/wukongd)
		git -C "$REPO" worktree remove --force "$dir"
	fi
	echo "$bin"
}
A=$(build "$BASE")
B=$(build "$NEW")
echo "A = $BASE ($A)  B = $NEW ($B)"

run() { # label bin scale snap
	work="$OUT/work-$1-$3"
	mkdir -p "$work"
	ln -sfn "$4" "$work/snap$3"
	"$2" bench-scale --scales "$3" --work "$work" --reuse --keep \
		--only L1,L2,L3,L4,L5,L6,L7 --warmup 2 --min-runs 5 --budget 3s 2>&1 |
		sed -n "s/^[0-9:]* LUBM-$3: \(L[1-7]\): /$1 LUBM-$3 \1: /p"
}

for scale in $SCALES; do
	case $scale in
	640) snap=$SNAP640 lock= ;;
	2560) snap=$SNAP2560 lock=yes ;;
	*) echo "scale $scale: no snapshot known"; continue ;;
	esac
	if [ ! -d "$snap" ]; then
		echo "LUBM-$scale: no snapshot at $snap, skipped"
		continue
	fi
	r=1
	while [ "$r" -le "$ROUNDS" ]; do
		echo "# LUBM-$scale round $r, load before: $(uptime | sed 's/.*average: //')"
		if [ -n "$lock" ]; then # held for this round's two runs only
			exec 9>/work/notes/bigmem.lock
			flock 9
		fi
		run A "$A" "$scale" "$snap"
		run B "$B" "$scale" "$snap"
		if [ -n "$lock" ]; then
			flock -u 9
			exec 9>&-
		fi
		echo "# load after: $(uptime | sed 's/.*average: //')"
		r=$((r + 1))
	done
done
