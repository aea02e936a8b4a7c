#!/usr/bin/env bash
# Benchmark of the container hosts (issue 3's numbers), rerunnable by anyone; run from anywhere.
#
#   checks/hosts/bench.sh [WHAT] [RUNS]
#     cold    cold image builds (debootstrap or pull, import, Containerfile) of both hosts, each under a
#             throw-away image prefix so the real cache is neither used nor deleted; targets
#             amd64 <= 180 s, s390x <= 360 s. Needs root (debootstrap). RUNS defaults to 1 here.
#     cached  the whole host suite of one host with its image and prepared states cached
#             (pytest -n 2 -k <host>; PYTEST_ARGS replaces -n 2): targets amd64 <= 60 s, s390x <= 150 s
#     one     one host test on amd64, container start included: target <= 5 s
#     whole   the whole `make check` (both hosts, guide, browser), warm: target <= 480 s (issue 30)
#     all     cached and one (the default); cold and whole only when asked for
#   RUNS defaults to 3. Prints each run and the median, min and max in seconds.
#
# Environment: PYTHON (default python3, with the check dependencies), PYTEST_ARGS (added to every
# pytest run, e.g. "-n 2"), HOSTS (default "debian13-amd64 debian13-s390x").
set -euo pipefail
shopt -s inherit_errexit  # a failing step inside $(...) stops the benchmark too

cd "$(dirname "$0")/../.."
what=${1:-all}
runs=${2:-}
python=${PYTHON:-python3}
hosts=${HOSTS:-debian13-amd64 debian13-s390x}
read -r -a extra <<<"${PYTEST_ARGS:--n 2}"  # two workers, as make check ran when the targets were set
one_test="checks/crypto/test_crypto_packages.py::test_pkcsslotd_runs_after_start[debian13-amd64]"

now() { date +%s.%N; }

# stats LABEL TARGET T1 T2 ...: one line per run, then median / min / max against the target.
stats() {
  local label=$1 target=$2
  shift 2
  printf '%s\n' "$@" | "$python" -c '
import statistics, sys
label, target = sys.argv[1], float(sys.argv[2])
times = [float(x) for x in sys.stdin.read().split()]
verdict = "ok" if statistics.median(times) <= target else "OVER TARGET"
print(f"{label}: runs " + " ".join(f"{t:.1f}" for t in times)
      + f" | median {statistics.median(times):.1f} s, min {min(times):.1f}, max {max(times):.1f}"
      + f" (target {target:.0f} s: {verdict})")
' "$label" "$target"
}

# timed CMD...: runs CMD quietly, prints its wall time; a failing CMD stops the benchmark.
timed() {
  local t0 log
  log=$(mktemp)
  t0=$(now)
  if ! "$@" >"$log" 2>&1; then
    tail -n 30 "$log" >&2
    rm -f "$log"
    echo "benchmark command failed: $*" >&2
    return 1
  fi
  rm -f "$log"
  "$python" -c 'import sys; print(float(sys.argv[2]) - float(sys.argv[1]))' "$t0" "$(now)"
}

# per_host LABEL AMD64_TARGET S390X_TARGET DEFAULT_RUNS FUNCTION: FUNCTION HOST RUN prints one time.
per_host() {
  local label=$1 amd64_target=$2 s390x_target=$3 default_runs=$4 fn=$5 host target times run t
  for host in $hosts; do
    times=()
    for ((run = 1; run <= ${runs:-$default_runs}; run++)); do
      t=$("$fn" "$host" "$run") || { echo "$label $host: run $run failed (see above); no figure for it." >&2; exit 1; }
      times+=("$t")
    done
    target=$amd64_target
    [[ $host == *s390x ]] && target=$s390x_target
    stats "$label $host" "$target" "${times[@]}"
  done
}

cold_build() {
  local prefix="zrbench$$-$2" t
  t=$(ZR_IMAGE_PREFIX=$prefix timed "$python" -m checks.hosts.engine build "$1") || { remove_prefix "$prefix"; return 1; }
  remove_prefix "$prefix"
  echo "$t"
}

remove_prefix() {  # through the engine the checks detect (Docker or Podman), not a fixed client
  "$python" -m checks.hosts.engine remove-prefix "$1" >/dev/null
}

cached_suite() {
  # Build first if needed, so that the timed run sees a cached image.
  "$python" -m checks.hosts.engine build "$1" >/dev/null
  ZR_HOSTS=$1 timed "$python" -m pytest -q -p checks.hosts.plugin -k "$1" "${extra[@]}" checks
}

bench_one() {
  local times run
  "$python" -m checks.hosts.engine build debian13-amd64 >/dev/null
  times=()
  for ((run = 1; run <= ${runs:-3}; run++)); do
    times+=("$(ZR_HOSTS=debian13-amd64 timed "$python" -m pytest -q -p checks.hosts.plugin "$one_test")")
  done
  stats "one test amd64" 5 "${times[@]}"
}

bench_whole() {  # the whole `make check` (both hosts, guide, browser, PDF checks), warm images and states
  local times run
  make check >/dev/null 2>&1 || { echo "make check failed before timing: run it and fix it first" >&2; exit 1; }
  times=()
  for ((run = 1; run <= ${runs:-3}; run++)); do
    times+=("$(timed make check)")
  done
  stats "whole make check" 480 "${times[@]}"
}

# Targets (issue "Fresh machine green"): a host suite with warm images and prepared states, two
# xdist workers (make check now runs one more than the CPUs): amd64 60 s, s390x 150 s; the whole make check,
# with make check's own workers, 480 s (issue 30: eight minutes).
case $what in
  cold) per_host "cold build" 180 360 1 cold_build ;;
  cached) per_host "cached suite" 60 150 3 cached_suite ;;
  one) bench_one ;;
  whole) bench_whole ;;
  all)
    per_host "cached suite" 60 150 3 cached_suite
    bench_one
    ;;
  *)
    echo "usage: $0 [cold|cached|one|whole|all] [RUNS]" >&2
    exit 2
    ;;
esac
