#!/usr/bin/env bash
# Benchmark of the foundation's numbers (issue 2), rerunnable: cold and full HTML build, rebuild after touching
# one page, the static part of the checks, the PDF. Prints each run and median / min / max in seconds.
#   zrunbook/bench_build.sh [RUNS]      (default 3; PYTHON defaults to the tox environment's python)
set -euo pipefail

cd "$(dirname "$0")/.."
runs=${1:-3}
python=${PYTHON:-.tox/check/bin/python}
if [[ ! -x $python ]]; then
  echo "No Python with the project's tools at $python: run 'make html' once, or set PYTHON." >&2
  exit 1
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

now() { date +%s.%N; }
timed() {
  local t0; t0=$(now)
  "$@" >/dev/null 2>&1 || { echo "failed: $*" >&2; exit 1; }
  awk -v a="$(now)" -v b="$t0" 'BEGIN { printf "%.2f", a - b }'
}
stats() {
  local label=$1 target=$2; shift 2
  printf '%-28s runs: %s\n' "$label" "$*"
  printf '%s\n' "$@" | sort -n | awk -v l="$label" -v t="$target" \
    '{a[NR]=$1} END {m=(NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2;
      printf "%-28s median %.2f s, min %.2f, max %.2f (target <= %s s)\n", l, m, a[1], a[NR], t}'
}

cold=() full=() rebuild=() static=() pdf=()
for _ in $(seq "$runs"); do
  # cold: no charts drawn yet and no checker map collected (a fresh checkout's first build)
  rm -rf "$out/cold" docs/_charts
  cold+=("$(timed "$python" -m sphinx -q -W -b html -c . docs "$out/cold")")
  rm -rf "$out/html"
  full+=("$(timed "$python" -m sphinx -q -W -b html -c . docs "$out/html")")
  touch docs/how-to/crypto/install-packages.md
  rebuild+=("$(timed "$python" -m sphinx -q -W -b html -c . docs "$out/html")")
  static+=("$(timed bash -c "$python -m ruff check -q conf.py docs/_ext checks && $python -m pytest -q -n 2 --zr-static checks")")
  rm -rf "$out/latex"
  pdf+=("$(timed bash -c "$python -m sphinx -q -W -b latex -c . docs $out/latex && make -C $out/latex LATEXMKOPTS=-interaction=nonstopmode all-pdf")")
done
stats "cold HTML build" 15 "${cold[@]}"
stats "full HTML build" 15 "${full[@]}"
stats "rebuild after one page" 3 "${rebuild[@]}"
stats "static checks (ruff+pytest)" 10 "${static[@]}"
stats "PDF build" 90 "${pdf[@]}"
