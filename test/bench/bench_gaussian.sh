#!/usr/bin/env bash
# Benchmark (not a test): the fixed cost of the Gaussian (epsilon, delta) forms of
# dp_count/dp_sum/dp_avg against their Laplace forms and the built-ins, without GROUP BY,
# on a one-row table and on a large one (issue 31). Measures the backend's CPU time
# (user + system, log_statement_stats) per query, serial plans, the three kinds
# interleaved; prints medians, the spread (min-max) and the ratios, with the load.
# "cold" Gaussian runs use a different epsilon each run (1 + k * 2^-20), so that every
# one calibrates afresh (a miss of the per-process calibration memo, calibration_cache.h);
# "warm" runs repeat one epsilon (hits after the first).
#
#   test/bench/bench_gaussian.sh [--rows N] [--runs N] [--parallel]
#     --rows N    rows of the large table bench_gauss (default 2000000)
#     --runs N    timed runs per query and kind (default 7), after 1 warm-up
#     --parallel  parallel plans (2 workers) and elapsed time instead of the leader's CPU
#                 time (the workers' CPU time is not the leader's)
#
# Needs a running server: uses <repo root>/.cluster_env (test/scripts/cluster.sh start)
# if present, else the usual PG* environment variables.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
ROWS=2000000
RUNS=7
PARALLEL=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --rows) ROWS=${2:?--rows needs a value}; shift 2 ;;
    --rows=*) ROWS=${1#*=}; shift ;;
    --runs) RUNS=${2:?--runs needs a value}; shift 2 ;;
    --runs=*) RUNS=${1#*=}; shift ;;
    --parallel) PARALLEL=1; shift ;;
    -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
    *) echo "bench_gaussian.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
[[ "$ROWS" =~ ^[1-9][0-9]*$ ]] || { echo "--rows must be a positive integer" >&2; exit 2; }
[[ "$RUNS" =~ ^[1-9][0-9]*$ ]] || { echo "--runs must be a positive integer" >&2; exit 2; }

if [[ -f "$ROOT/.cluster_env" ]]; then
  db=${PGDATABASE:-}
  # shellcheck disable=SC1091
  . "$ROOT/.cluster_env"
  if [[ -n "$db" ]]; then export PGDATABASE=$db; fi
fi
PSQL=(psql -X -q -At -v ON_ERROR_STOP=1)
"${PSQL[@]}" -c 'SELECT 1' >/dev/null ||
  { echo "bench_gaussian.sh: cannot connect (start one: test/scripts/cluster.sh start)" >&2; exit 1; }
if [[ $("${PSQL[@]}" -c "SELECT count(*) FROM pg_proc WHERE proname = 'dp_count'") == 0 ]]; then
  "${PSQL[@]}" -c 'CREATE EXTENSION dp_agg'
fi
"${PSQL[@]}" -c 'SELECT dp_agg.set_budget(current_user::regrole, 1e12, 0.5)' >/dev/null

make_table() {  # $1 = name, $2 = rows
  local tag="dp_agg gaussian bench rows=$2"
  local have
  have=$("${PSQL[@]}" -c "SELECT coalesce(obj_description(to_regclass('$1'), 'pg_class'), '')")
  [[ "$have" == "$tag" ]] && return 0
  echo "creating $1 with $2 rows ..." >&2
  "${PSQL[@]}" <<SQL
SET client_min_messages = warning;
DROP TABLE IF EXISTS $1;
CREATE UNLOGGED TABLE $1 (i int4, f float8);
SELECT setseed(0.5) \\g /dev/null
INSERT INTO $1 SELECT (random() * 1000000)::int4, random() FROM generate_series(1, $2);
VACUUM ANALYZE $1;
COMMENT ON TABLE $1 IS '$tag';
SQL
}
make_table bench_one 1
make_table bench_gauss "$ROWS"

# Per query: the built-in, the Laplace form, the Gaussian form with EPS in place of epsilon.
NAMES=(count sum avg)
BASE=("count(i)" "sum(i)" "avg(f)")
LAPLACE=("dp_count(i, 1.0)" "dp_sum(i, 0, 1000000, 1.0)" "dp_avg(f, 0.0, 1.0, 1.0)")
GAUSS=("dp_count(i, EPS, 1e-9)" "dp_sum(i, 0, 1000000, EPS, 1e-9)" "dp_avg(f, 0.0, 1.0, EPS, 1e-9)")
KINDS=(base laplace warm cold)
TABLES=(bench_one bench_gauss)

script=$(mktemp /tmp/dp_agg_gbench.XXXXXX.sql)
labels=$(mktemp /tmp/dp_agg_gbench.XXXXXX.lab)
err=$(mktemp /tmp/dp_agg_gbench.XXXXXX.err)
trap 'rm -f "$script" "$labels" "$err"' EXIT
cold=0
{
  echo "SET statement_timeout = 0; SET jit = off;"
  if [[ $PARALLEL == 1 ]]; then
    echo "SET max_parallel_workers_per_gather = 2; SET parallel_setup_cost = 0;"
    echo "SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0;"
  else
    echo "SET max_parallel_workers_per_gather = 0;"
  fi
  echo "SET client_min_messages = log; SET log_statement_stats = on;"
} >"$script"
: >"$labels"  # (the SET log_statement_stats statement itself logs no statistics)
for t in "${TABLES[@]}"; do
  for q in "${!NAMES[@]}"; do
    for r in $(seq 0 "$RUNS"); do  # run 0 = warm-up
      for k in "${KINDS[@]}"; do
        case $k in
          base) sql=${BASE[$q]} ;;
          laplace) sql=${LAPLACE[$q]} ;;
          warm) sql=${GAUSS[$q]//EPS/1.0} ;;
          cold) cold=$((cold + 1)); sql=${GAUSS[$q]//EPS/$(awk -v c=$cold 'BEGIN { printf "%.17g", 1 + c / 1048576 }')} ;;
        esac
        echo "SELECT $sql FROM $t;" >>"$script"
        echo "$t ${NAMES[$q]} $k $r" >>"$labels"
      done
    done
  done
done

echo "running $(wc -l <"$labels") queries ..." >&2
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
"${PSQL[@]}" -f "$script" >/dev/null 2>"$err"
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

# One "s user, s system" line per statement, in order (the "[... total]" lines excluded).
results=$(awk -v p="$PARALLEL" '/ s user, .* s system, .* s elapsed/ {
    printf "%.3f\n", (p == 1 ? $8 : $2 + $5) * 1000 }' "$err" |
  paste -d' ' "$labels" - | awk 'NF == 5 && $4 > 0')
n=$(wc -l <<<"$results")
expected=$(( ${#TABLES[@]} * ${#NAMES[@]} * RUNS * ${#KINDS[@]} ))
[[ "$n" == "$expected" ]] ||
  { echo "bench_gaussian.sh: parsed $n timings, expected $expected" >&2; exit 1; }

stat() {  # $1 = "table name kind": "median min max"
  awk -v k="$1" '$1 " " $2 " " $3 == k { print $5 }' <<<"$results" | sort -g |
    awk '{ v[NR] = $1 } END { m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2;
           printf "%.2f %.2f %.2f", m, v[1], v[NR] }'
}
cpu=$(awk -F': *' '/^model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null || true)
echo
echo "machine: $(nproc) CPUs, ${cpu:-unknown CPU}; load average before $load_before, after $load_after"
echo "server:  $("${PSQL[@]}" -c 'SELECT version()')"
if [[ $PARALLEL == 1 ]]; then what="elapsed ms per query, parallel plans (2 workers)"
else what="backend CPU ms (user + system) per query, serial plans"; fi
echo "$what, median of $RUNS [min-max]; bench_gauss: $ROWS rows"
echo "gauss warm: epsilon 1.0 every run (memo hit); gauss cold: a new epsilon every run (fresh calibration)"
echo
echo "| table | query | built-in | laplace | gauss warm | gauss cold | warm/laplace | warm/built-in | cold/laplace |"
echo "|---|---|---:|---:|---:|---:|---:|---:|---:|"
for t in "${TABLES[@]}"; do
  for q in "${!NAMES[@]}"; do
    read -r b bmin bmax <<<"$(stat "$t ${NAMES[$q]} base")"
    read -r l lmin lmax <<<"$(stat "$t ${NAMES[$q]} laplace")"
    read -r w wmin wmax <<<"$(stat "$t ${NAMES[$q]} warm")"
    read -r c cmin cmax <<<"$(stat "$t ${NAMES[$q]} cold")"
    ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }'; }
    echo "| $t | ${NAMES[$q]} | $b [$bmin-$bmax] | $l [$lmin-$lmax] | $w [$wmin-$wmax] | $c [$cmin-$cmax] | $(ratio "$w" "$l") | $(ratio "$w" "$b") | $(ratio "$c" "$l") |"
  done
done
