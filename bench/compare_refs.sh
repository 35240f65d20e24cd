#!/usr/bin/env bash
# Two git refs, the same benches, one run: bench/overhead.py, bench/durable_overhead.py and bench/cli_start.py of
# each ref, each run with that ref's own src/ first on PYTHONPATH (the current venv's interpreter and libraries), the
# two refs taking turns bench by bench, so that a busy moment of the machine hits both. Each figure of REF_A is
# followed by REF_B's where they differ:  "median µs per executed step (whole run / steps):  519.1 [b 504.9]".
#
# Usage: bench/compare_refs.sh [--quick] REF_A REF_B [BENCH_ARGS...]
#   --quick      each bench in its --quick mode (seconds: proves the comparison runs, the figures mean little)
#   BENCH_ARGS   passed to every bench (e.g. --runs 20)
#   PYTHON=...   the interpreter (default: $VIRTUAL_ENV/bin/python, else this checkout's .venv/bin/python)
# The refs are exported with `git archive` (committed files only) into a temporary folder, removed at exit.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
QUICK=()
if [[ "${1:-}" == "--quick" ]]; then QUICK=(--quick); shift; fi
if [[ $# -lt 2 ]]; then
  sed -n '2,12p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
  exit 2
fi
REF_A=$1 REF_B=$2
shift 2
BENCHES=(overhead.py durable_overhead.py cli_start.py)
PYTHON=${PYTHON:-${VIRTUAL_ENV:+$VIRTUAL_ENV/bin/python}}
PYTHON=${PYTHON:-$ROOT/.venv/bin/python}
[[ -x "$PYTHON" ]] || { echo "compare_refs: no interpreter at $PYTHON (set PYTHON=...)" >&2; exit 2; }

WORK=$(mktemp -d "${TMPDIR:-/tmp}/aeon-compare.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
for side in a b; do
  ref=$REF_A; [[ $side == b ]] && ref=$REF_B
  mkdir "$WORK/$side"
  git -C "$ROOT" archive --format=tar "$ref" | tar -x -C "$WORK/$side"
  echo "$side: $ref = $(git -C "$ROOT" rev-parse --short "$ref^{commit}")"
done

# The benches see no AEON_* setting of this shell (as the test suite runs them).
while IFS= read -r name; do unset "$name"; done < <(compgen -e | grep '^AEON_' || true)

run_bench() {  # side bench → its stdout in $WORK/<side>.<bench>.out; fails loudly with its stderr
  local side=$1 bench=$2 tree=$WORK/$1
  shift 2
  if ! (cd "$tree" && PYTHONPATH="$tree/src" "$PYTHON" "bench/$bench" ${QUICK[@]+"${QUICK[@]}"} "$@") \
      >"$WORK/$side.$bench.out" 2>"$WORK/$side.$bench.err"; then
    echo "compare_refs: $side's bench/$bench failed:" >&2
    tail -20 "$WORK/$side.$bench.err" >&2
    return 1
  fi
}

for side in a b; do  # each side's Aeon is its own tree's, not the venv's installed one
  where=$(cd "$WORK/$side" && PYTHONPATH="$WORK/$side/src" "$PYTHON" -c 'import aeon; print(aeon.__file__)')
  [[ $where == "$WORK/$side/"* ]] || { echo "compare_refs: $side imports aeon from $where" >&2; exit 1; }
done

status=0
for bench in "${BENCHES[@]}"; do
  echo
  echo "== bench/$bench ${QUICK[*]-} $*"
  if [[ ! -f "$WORK/a/bench/$bench" || ! -f "$WORK/b/bench/$bench" ]]; then
    echo "   (not in both refs: skipped)"
    continue
  fi
  run_bench a "$bench" "$@" && run_bench b "$bench" "$@" || { status=1; continue; }
  "$PYTHON" - "$WORK/a.$bench.out" "$WORK/b.$bench.out" <<'PY'
import re, sys
from itertools import zip_longest

NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?")
a, b = (open(path, encoding="utf-8").read().splitlines() for path in sys.argv[1:3])


def skeleton(line: str) -> str:  # the words of a line, its figures and their padding aside
    return " ".join(NUMBER.sub("#", line).split())


for line_a, line_b in zip_longest(a, b, fillvalue=""):
    if skeleton(line_a) == skeleton(line_b):  # the same line but for its figures: b's beside a's
        figures_b = iter(NUMBER.findall(line_b))
        print(NUMBER.sub(lambda m: m[0] if m[0] == (fb := next(figures_b)) else f"{m[0]} [b {fb}]", line_a))
    else:
        print(f"a| {line_a}\nb| {line_b}")
PY
done
exit $status
