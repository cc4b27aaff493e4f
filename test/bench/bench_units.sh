#!/usr/bin/env bash
# Benchmark (not a test): a unit-level private query (docs/analyst_guide.md "Privacy units")
# against the hand-written non-private two-level SQL that does the same work,
#   SELECT g, sum(s) FROM (SELECT g, unit, least(greatest(sum(v), L), U) s
#                          FROM t GROUP BY g, unit) x GROUP BY g
# serial and with 2 workers, in the same run. Prints a Markdown table of
# median execution times (EXPLAIN (ANALYZE, TIMING OFF, SUMMARY ON)) and the
# ratio private / hand-written.
#
#   test/bench/bench_units.sh [--rows N] [--units N] [--groups N] [--spread N] [--runs N]
#                             [--statistics] [--workers LIST] [--pairs FILE]
#     defaults: 10000000 rows, 1000000 units, 100 groups, each unit's rows spread over
#     up to 10 groups, 5 timed runs (after 1 warm-up), private and hand-written
#     interleaved. work_mem stays at the server's setting. --spread 1: all of a unit's
#     rows in one group. --statistics: CREATE STATISTICS (ndistinct) ON unit, g first,
#     so that the planner knows the number of (unit, group) combinations (README
#     "Privacy units"); without it the table has none. --workers: the plans to time,
#     comma-separated max_parallel_workers_per_gather values (default 0,2).
#     --pairs F: append one line per timed round to F, "units/W round hand private unit",
#     tab-separated (test/bench/issue31.sh): the backend's CPU time of the statement
#     (log_statement_stats, user + system ms) for serial plans, the wall "Execution Time"
#     with workers (the leader's CPU time misses theirs).
#
# Needs a running server: uses <repo root>/.cluster_env (test/scripts/cluster.sh start)
# if present, else the usual PG* environment variables.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
ROWS=10000000
UNITS=1000000
GROUP_COUNT=100
SPREAD=10
RUNS=5
STATISTICS=0
WORKERS=0,2
PAIRS=
while [[ $# -gt 0 ]]; do
  case "$1" in
    --rows) ROWS=${2:?}; shift 2 ;;
    --units) UNITS=${2:?}; shift 2 ;;
    --groups) GROUP_COUNT=${2:?}; shift 2 ;;
    --spread) SPREAD=${2:?}; shift 2 ;;
    --runs) RUNS=${2:?}; shift 2 ;;
    --statistics) STATISTICS=1; shift ;;
    --workers) WORKERS=${2:?}; shift 2 ;;
    --pairs) PAIRS=${2:?}; shift 2 ;;
    -h|--help) sed -n '2,25p' "$0"; exit 0 ;;
    *) echo "bench_units.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
for n in "$ROWS" "$UNITS" "$GROUP_COUNT" "$SPREAD" "$RUNS"; do
  [[ "$n" =~ ^[1-9][0-9]*$ ]] || { echo "options take positive integers" >&2; exit 2; }
done
[[ "$WORKERS" =~ ^[0-9]+(,[0-9]+)*$ ]] || { echo "--workers takes numbers, comma-separated" >&2; exit 2; }
if [[ -f "$ROOT/.cluster_env" ]]; then
  # shellcheck disable=SC1091
  . "$ROOT/.cluster_env"
fi
export PGDATABASE=${PGDATABASE:-postgres}
q() { psql -X -q -At -v ON_ERROR_STOP=1 "$@"; }

q -c "CREATE EXTENSION IF NOT EXISTS dp_agg" >/dev/null
q -c "SELECT dp_agg.set_budget(session_user::regrole, 1e9)" >/dev/null
existing=""
if [[ $(q -c "SELECT to_regclass('bench_units') IS NOT NULL") == t ]]; then
  existing=$(q -c "SELECT obj_description('bench_units'::regclass)")
fi
shape="$ROWS/$UNITS/$GROUP_COUNT/$SPREAD"
if [[ "$existing" != "$shape" ]]; then
  echo "building bench_units: $ROWS rows, $UNITS units, $GROUP_COUNT groups ..." >&2
  q <<SQL
DROP TABLE IF EXISTS bench_units;
CREATE TABLE bench_units AS
  -- unit u has rows i = u + k * units; row k of a unit goes to group
  -- (37 (k mod spread) + u) mod groups, so each unit's rows spread over up to
  -- spread groups.
  SELECT (i % $UNITS)::int AS unit,
         ((i / $UNITS % $SPREAD * 37 + i % $UNITS) % $GROUP_COUNT)::int AS g,
         (i % 13)::int AS v
  FROM generate_series(0::bigint, $ROWS - 1) i;
SECURITY LABEL FOR dp_agg ON COLUMN bench_units.unit IS 'privacy_unit';
COMMENT ON TABLE bench_units IS '$shape';
VACUUM ANALYZE bench_units;
SQL
fi

q -c "DROP STATISTICS IF EXISTS bench_units_unit_g" >/dev/null
if [[ $STATISTICS == 1 ]]; then
  q -c "CREATE STATISTICS bench_units_unit_g (ndistinct) ON unit, g FROM bench_units" >/dev/null
fi
q -c "ANALYZE bench_units" >/dev/null

private="SELECT g, dp_sum(v, 0, 50, 1.0) FROM bench_units GROUP BY g"
hand="SELECT g, sum(s) FROM (SELECT g, unit, least(greatest(sum(v), 0), 50) s
      FROM bench_units GROUP BY g, unit) x GROUP BY g"

time_of() {  # workers query -> "wall_ms cpu_ms" (Execution Time; user + system of the statement)
  local err
  err=$(mktemp /tmp/bench_units_err.XXXXXX)
  q -c "SET jit = off" -c "SET max_parallel_workers_per_gather = $1" \
    -c "SET log_statement_stats = on" -c "SET client_min_messages = log" \
    -c "EXPLAIN (ANALYZE, TIMING OFF, SUMMARY ON) $2" 2>"$err" |
    sed -n 's/^Execution Time: \([0-9.]*\) ms$/\1/p' | tr '\n' ' '
  # The last statement's statistics are the EXPLAIN's.
  awk '/s user, .* s system/ && !/\[/ { sub(/^!\t*/, ""); split($0, a, " "); cpu = (a[1] + a[4]) * 1000 }
       END { printf "%.3f\n", cpu }' "$err"
  rm -f "$err"
}
median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

echo "| plan | hand-written two-level SQL (ms) | unit-level dp_sum (ms) | ratio |"
echo "|---|---|---|---|"
IFS=, read -r -a WORKER_LIST <<<"$WORKERS"
for workers in "${WORKER_LIST[@]}"; do
  time_of "$workers" "$hand" >/dev/null
  time_of "$workers" "$private" >/dev/null
  : >/tmp/bench_units_hand.$$
  : >/tmp/bench_units_private.$$
  for r in $(seq "$RUNS"); do
    read -r hw hc < <(time_of "$workers" "$hand")
    read -r pw pc < <(time_of "$workers" "$private")
    echo "$hw" >>/tmp/bench_units_hand.$$
    echo "$pw" >>/tmp/bench_units_private.$$
    if [[ -n "$PAIRS" ]]; then
      if [[ $workers == 0 ]]; then
        printf 'units/%s\t%s\t%s\t%s\tcpu_ms\n' "$workers" "$r" "$hc" "$pc" >>"$PAIRS"
      else
        printf 'units/%s\t%s\t%s\t%s\twall_ms\n' "$workers" "$r" "$hw" "$pw" >>"$PAIRS"
      fi
    fi
  done
  h=$(median </tmp/bench_units_hand.$$)
  p=$(median </tmp/bench_units_private.$$)
  label=$([[ $workers == 0 ]] && echo serial || echo "$workers workers")
  echo "| $label | $h | $p | $(awk -v p="$p" -v h="$h" 'BEGIN {printf "%.2f", p / h}') |"
done
rm -f /tmp/bench_units_hand.$$ /tmp/bench_units_private.$$
echo "($ROWS rows, $UNITS units, $GROUP_COUNT groups, each unit's rows over up to $SPREAD"\
     "groups, ndistinct statistics on (unit, g): $([[ $STATISTICS == 1 ]] && echo yes || echo no),"\
     "median of $RUNS runs, work_mem $(q -c 'SHOW work_mem'))"
