#!/usr/bin/env bash
# Fuzzers for dp_agg (make test runs the bounded passes).
#
#   test/fuzz/run_fuzz.sh                 bounded passes: neighbour --quick, neighbour
#                                         --self-check, crash --quick (about 5 minutes;
#                                         crash --quick includes 45 s of direct calls of
#                                         every dp_agg function under statement_timeout)
#   test/fuzz/run_fuzz.sh --long N        N statements of each fuzzer, random seeds
#   test/fuzz/run_fuzz.sh --seed S ...    fixed seed for the --long passes
#
# Uses the running cluster named by PG* variables if there is one (as in make test,
# eval "$(bash test/scripts/cluster.sh env)"); otherwise starts a throwaway cluster
# with test/scripts/cluster.sh and stops it at the end. Creates and drops its own
# databases (dp_fuzz_nb_without, dp_fuzz_nb_with, dp_fuzz_crash) and roles
# (dp_fuzz_*). Findings: /tmp/dp_agg_neighbour_findings.txt (and
# /tmp/dp_agg_neighbour_selfcheck_findings.txt), /tmp/dp_agg_crash_findings.txt.
# The crash fuzzer also fails on an uncharged release (a result carrying a private
# aggregate's answer with no new charge in dp_agg.ledger_entry), and first proves
# that check fires (its self-check lines count as checks here), and on a call of
# any dp_agg function that is not cancelled by statement_timeout (self-checked with
# the test fault uncancellable_spin).
# Ends with "fuzz: N passed, M failed" (N = checks passed); exit status 1 on any failure.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
PYTHON=/usr/bin/python3   # Debian's, with python3-psycopg2
long=""
seed=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --long) long=$2; shift 2 ;;
    --seed) seed=(--seed "$2"); shift 2 ;;
    *) echo "usage: $0 [--long N] [--seed S]" >&2; exit 2 ;;
  esac
done

started=0
if [[ -z "${PGHOST:-}" ]] || ! "$PYTHON" -c 'import psycopg2; psycopg2.connect(dbname="postgres").close()' 2>/dev/null; then
  bash "$ROOT/test/scripts/cluster.sh" start || { echo "fuzz: 0 passed, 1 failed"; exit 1; }
  eval "$(bash "$ROOT/test/scripts/cluster.sh" env)"
  started=1
fi
passed=0
failed=0
log=$(mktemp /tmp/dp_agg_fuzz.XXXXXX)

run() {  # label, command...
  local label=$1; shift
  echo "== $label"
  "$@" 2>&1 | tee "$log"
  local status=${PIPESTATUS[0]}
  local p f
  p=$(grep -c '^ok ' "$log")
  f=$(grep -c '^not ok ' "$log")
  passed=$((passed + p))
  failed=$((failed + f))
  # a run that failed without naming a failing check still counts once
  if [[ $status -ne 0 && $f -eq 0 ]]; then failed=$((failed + 1)); fi
}

if [[ -n "$long" ]]; then
  run "neighbour-differential fuzzer, $long statements" "$PYTHON" "$HERE/neighbour_fuzz.py" --long "$long" "${seed[@]}"
  run "crash fuzzer, $long statements" "$PYTHON" "$HERE/crash_fuzz.py" --long "$long" "${seed[@]}"
else
  run "neighbour-differential fuzzer (quick, fixed seed)" "$PYTHON" "$HERE/neighbour_fuzz.py" --quick
  run "neighbour-differential fuzzer self-check (test faults)" "$PYTHON" "$HERE/neighbour_fuzz.py" --self-check \
    --findings /tmp/dp_agg_neighbour_selfcheck_findings.txt
  run "crash fuzzer (quick, fixed seed)" "$PYTHON" "$HERE/crash_fuzz.py" --quick
fi
rm -f "$log"
if [[ $started -eq 1 ]]; then bash "$ROOT/test/scripts/cluster.sh" stop; fi
echo "fuzz: $passed passed, $failed failed"
[[ $failed -eq 0 ]]
