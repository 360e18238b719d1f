#!/usr/bin/env bash
# The README's test command as a new user runs it: a fresh `git clone` of this repository's main, a new empty HOME
# (no pip cache, no .venv, no torch_extensions build cache), optionally with a CPU-heavy job beside it, timed.
#
#   benchmarks/fresh_clone.sh [--load N] [--runs K] [--keep] [-- pytest args]
#
# --load N   run N busy-loop processes beside the test command (the machine "under load"); default 1
# --runs K   run K times in a row, each from a new clone and a new HOME; default 1
# --parallel run the K runs at the same time instead (each its own clone, HOME and TMPDIR: each is load for the others)
# Prints one line per run: wall seconds, exit code, pytest's closing line. Clones live under a temp dir that is
# removed unless --keep.
set -uo pipefail
load=1 runs=1 keep=0 parallel=0
while [ $# -gt 0 ]; do
  case "$1" in
    --load) load=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    --parallel) parallel=1; shift ;;
    --) shift; break ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done
repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
burners=()
cleanup() {
  for p in "${burners[@]}"; do kill "$p" 2>/dev/null; done
  [ "$keep" = 1 ] || rm -rf "$work"
}
trap cleanup EXIT
for _ in $(seq 1 "$load"); do
  python3 -c 'while True: pass' &
  burners+=($!)
done
echo "load: $load busy process(es); $(nproc) cores; $(uptime)"
one_run() {  # $1: run number; prints its line, returns its exit code
  local i=$1 clone="$work/run$1" home="$work/home$1" tmp="$work/tmp$1" start rc wall summary
  shift  # the rest are pytest's arguments
  mkdir -p "$home" "$tmp"
  git clone -q --no-local "$repo" "$clone"
  start=$(date +%s)
  (cd "$clone" && env -u TORCH_EXTENSIONS_DIR -u VIRTUAL_ENV HOME="$home" TMPDIR="$tmp" ./scripts/test.sh -q "$@") \
    > "$work/run$i.log" 2>&1
  rc=$?
  wall=$(( $(date +%s) - start ))
  summary=$(grep -E '(passed|failed|error)' "$work/run$i.log" | tail -1)
  printf 'run %d (%s): %d s (%dm%02ds), exit %d: %s\n' "$i" "$(git -C "$clone" rev-parse --short HEAD)" "$wall" \
    $((wall / 60)) $((wall % 60)) "$rc" "$summary"
  [ "$rc" = 0 ] || tail -40 "$work/run$i.log"
  return "$rc"
}
fail=0
if [ "$parallel" = 1 ]; then
  pids=()
  for i in $(seq 1 "$runs"); do one_run "$i" "$@" & pids+=($!); done
  for p in "${pids[@]}"; do wait "$p" || fail=1; done
else
  for i in $(seq 1 "$runs"); do one_run "$i" "$@" || fail=1; done
fi
exit "$fail"
