# lib.sh — what the quiet-run scripts share (sourced by bash scripts beside it).

# build_revs REPO WORK REV... builds cmd/wukongd at each git REV of REPO into
# WORK/wk-REV, once (an existing binary is kept): from `git archive`, so a
# worktree's uncommitted edits never leak into a measured build.
build_revs() {
  local repo=$1 work=$2 r d
  shift 2
  for r in "$@"; do
    [ -x "$work/wk-$r" ] && continue
    d=$(mktemp -d "$work/src.XXXX")
    git -C "$repo" archive "$r" | tar -x -C "$d"
    (cd "$d" && go build -o "$work/wk-$r.tmp" ./cmd/wukongd) && mv "$work/wk-$r.tmp" "$work/wk-$r"
    rm -rf "$d"
  done
}

# cpu PID prints the process's user + system CPU seconds (/proc).
cpu() { awk '{print ($14+$15)/100}' "/proc/$1/stat"; }
