#!/usr/bin/env bash
# Benchmark (not a test): dp_count/dp_sum/dp_avg vs count/sum/avg on one table,
# serial and parallel, in the same run. Prints a Markdown table of median
# execution times (EXPLAIN (ANALYZE, TIMING OFF, SUMMARY ON) "Execution Time").
# The last query is a private GROUP BY over one-row groups (bench_g), where the
# noise drawn per group dominates: dp_count, dp_sum and dp_avg in one query.
#
#   test/bench/bench_aggregates.sh [--rows N] [--groups N] [--runs N] [--only REGEX] [--jit]
#     --rows N    rows in bench_t (default 10000000; table rebuilt if its size differs)
#     --groups N  rows (= groups) in bench_g (default 1000000)
#     --runs N    timed runs per query (default 7), after 1 warm-up; baseline and dp interleaved
#     --only RE   only the queries whose baseline matches the extended regex RE (e.g. 'sum|avg')
#     --jit       keep the server's jit setting (default: SET jit = off, for steadier figures)
#   BENCH_BASELINE_ONLY=1  run only the built-in aggregates (plumbing check without dp_agg)
#
# Needs a running server: uses <repo root>/.cluster_env (test/scripts/cluster.sh start)
# if present, else the usual PG* environment variables.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
ROWS=10000000
NGROUPS=1000000
RUNS=7
ONLY=
JIT=off
BASELINE_ONLY=${BENCH_BASELINE_ONLY:-0}

while [[ $# -gt 0 ]]; do
  case "$1" in
    --rows) ROWS=${2:?--rows needs a value}; shift 2 ;;
    --rows=*) ROWS=${1#*=}; shift ;;
    --runs) RUNS=${2:?--runs needs a value}; shift 2 ;;
    --groups) NGROUPS=${2:?--groups needs a value}; shift 2 ;;
    --groups=*) NGROUPS=${1#*=}; shift ;;
    --only) ONLY=${2:?--only needs a value}; shift 2 ;;
    --only=*) ONLY=${1#*=}; shift ;;
    --runs=*) RUNS=${1#*=}; shift ;;
    --jit) JIT=server; shift ;;
    -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
    *) echo "bench_aggregates.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
[[ "$ROWS" =~ ^[1-9][0-9]*$ ]] || { echo "--rows must be a positive integer" >&2; exit 2; }
[[ "$RUNS" =~ ^[1-9][0-9]*$ ]] || { echo "--runs must be a positive integer" >&2; exit 2; }
[[ "$NGROUPS" =~ ^[1-9][0-9]*$ ]] || { echo "--groups must be a positive integer" >&2; exit 2; }

if [[ -f "$ROOT/.cluster_env" ]]; then
  db=${PGDATABASE:-}        # an explicitly chosen database wins
  # shellcheck disable=SC1091
  . "$ROOT/.cluster_env"
  if [[ -n "$db" ]]; then export PGDATABASE=$db; fi
fi

PSQL=(psql -X -q -At -v ON_ERROR_STOP=1)
"${PSQL[@]}" -c 'SELECT 1' >/dev/null ||
  { echo "bench_aggregates.sh: cannot connect (start one: test/scripts/cluster.sh start)" >&2; exit 1; }

if [[ "$BASELINE_ONLY" != 1 ]]; then
  if [[ $("${PSQL[@]}" -c "SELECT count(*) FROM pg_proc WHERE proname = 'dp_count'") == 0 ]]; then
    "${PSQL[@]}" -c 'CREATE EXTENSION dp_agg'
  fi
  # Every private query is charged: give the benchmarking superuser a budget.
  "${PSQL[@]}" -c 'SELECT dp_agg.set_budget(current_user::regrole, 1e12, 0.5)' >/dev/null
fi

# --- the table ---------------------------------------------------------------
tag="dp_agg bench rows=$ROWS"
have=$("${PSQL[@]}" -c "SELECT coalesce(obj_description(to_regclass('bench_t'), 'pg_class'), '')")
if [[ "$have" != "$tag" ]]; then
  echo "creating bench_t with $ROWS rows ..." >&2
  t0=$SECONDS
  "${PSQL[@]}" <<SQL
SET client_min_messages = warning;
DROP TABLE IF EXISTS bench_t;
CREATE UNLOGGED TABLE bench_t (i int4, f float8, n numeric);
SELECT setseed(0.5) \\g /dev/null
INSERT INTO bench_t
  SELECT (random() * 1000000)::int4, random(), round((random() * 1000)::numeric, 2)
  FROM generate_series(1, $ROWS);
VACUUM ANALYZE bench_t;
COMMENT ON TABLE bench_t IS '$tag';
SQL
  echo "  done in $((SECONDS - t0)) s" >&2
fi

gtag="dp_agg bench groups=$NGROUPS"
have=$("${PSQL[@]}" -c "SELECT coalesce(obj_description(to_regclass('bench_g'), 'pg_class'), '')")
if [[ "$have" != "$gtag" ]]; then
  echo "creating bench_g with $NGROUPS rows ..." >&2
  "${PSQL[@]}" <<SQL
SET client_min_messages = warning;
DROP TABLE IF EXISTS bench_g;
CREATE UNLOGGED TABLE bench_g (g int4, i int4);
SELECT setseed(0.25) \\g /dev/null
INSERT INTO bench_g SELECT g, (random() * 1000000)::int4 FROM generate_series(1, $NGROUPS) g;
VACUUM ANALYZE bench_g;
COMMENT ON TABLE bench_g IS '$gtag';
SQL
fi

# --- the queries -------------------------------------------------------------
BASE=("count(i)" "sum(i)" "avg(i)" "sum(f)" "avg(f)" "sum(n)" "avg(n)"
      "mode() WITHIN GROUP (ORDER BY i % 10)" "percentile_cont(0.5) WITHIN GROUP (ORDER BY f)")
DP=("dp_count(i, 1.0)" "dp_sum(i, 0, 1000000, 1.0)" "dp_avg(i, 0, 1000000, 1.0)"
    "dp_sum(f, 0.0, 1.0, 1.0)" "dp_avg(f, 0.0, 1.0, 1.0)"
    "dp_sum(n, 0, 1000, 1.0)" "dp_avg(n, 0, 1000, 1.0)"
    "dp_select(i % 10, ARRAY[0, 1, 2, 3, 4, 5, 6, 7, 8, 9], 1.0)"
    "dp_median(f, 0.0, 1.0, 1.0)")
# What follows the select list: bench_t for all but the one-row-groups query.
TAIL=()
for q in "${!BASE[@]}"; do TAIL+=("FROM bench_t"); done
BASE+=("g, count(i), sum(i), avg(i)")
DP+=("g, dp_count(i, 1.0), dp_sum(i, 0, 1000000, 1.0), dp_avg(i, 0, 1000000, 1.0)")
TAIL+=("FROM bench_g GROUP BY g")
SELECTED=()
for q in "${!BASE[@]}"; do
  if [[ -z "$ONLY" || "${BASE[$q]} ${TAIL[$q]}" =~ $ONLY ]]; then SELECTED+=("$q"); fi
done
[[ ${#SELECTED[@]} -gt 0 ]] || { echo "--only matches no query" >&2; exit 2; }
MODES=(serial parallel)
mode_sql() {
  case "$1" in
    serial) echo "SET max_parallel_workers_per_gather = 0;" ;;
    parallel) echo "SET max_parallel_workers_per_gather = 2; SET parallel_setup_cost = 0;" \
                   "SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0;" ;;
  esac
}
kinds=(base)
[[ "$BASELINE_ONLY" == 1 ]] || kinds+=(dp)

script=$(mktemp /tmp/dp_agg_bench.XXXXXX.sql)
out=$(mktemp /tmp/dp_agg_bench.XXXXXX.out)
trap 'rm -f "$script" "$out"' EXIT
{
  echo "SET statement_timeout = 0;"
  [[ "$JIT" == off ]] && echo "SET jit = off;"
  for m in "${MODES[@]}"; do
    mode_sql "$m"
    for q in "${SELECTED[@]}"; do
      for r in $(seq 0 "$RUNS"); do          # run 0 = warm-up
        for k in "${kinds[@]}"; do
          if [[ $k == base ]]; then agg=${BASE[$q]}; else agg=${DP[$q]}; fi
          printf '\\echo @@ %s %s %s %s\n' "$m" "$q" "$k" "$r"
          echo "EXPLAIN (ANALYZE, TIMING OFF, SUMMARY ON) SELECT $agg ${TAIL[$q]};"
        done
      done
    done
  done
} >"$script"

echo "running $(( ${#MODES[@]} * ${#SELECTED[@]} * (RUNS + 1) * ${#kinds[@]} )) queries ..." >&2
"${PSQL[@]}" -f "$script" >"$out"

# --- report ------------------------------------------------------------------
# "key run ms workers" per timed run (warm-ups dropped).
results=$(awk '
  /^@@ / { key = $2 " " $3 " " $4; run = $5; workers = 0; next }
  /Workers Launched:/ { for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+$/) workers = $i }
  /Execution Time:/ {
    for (i = 1; i <= NF; i++) if ($i ~ /^[0-9.]+$/) ms = $i
    if (run > 0) print key, run, ms, workers
  }' "$out")

median() {  # $1 = "mode q kind"
  awk -v k="$1" '$1 " " $2 " " $3 == k { print $5 }' <<<"$results" | sort -g |
    awk '{ v[NR] = $1 } END { if (NR == 0) print "nan";
           else if (NR % 2) printf "%.1f", v[(NR + 1) / 2];
           else printf "%.1f", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
max_workers() {
  awk -v k="$1" '$1 " " $2 " " $3 == k && $6 > m { m = $6 } END { print m + 0 }' <<<"$results"
}

cpu=$(awk -F': *' '/^model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null || true)
echo
echo "machine: $(nproc) CPUs, ${cpu:-unknown CPU}"
echo "server:  $("${PSQL[@]}" -c 'SELECT version()')"
echo "tables:  bench_t, $ROWS rows; bench_g, $NGROUPS one-row groups; $RUNS timed runs per query (median), jit=$JIT"
echo
echo "| mode | query | baseline ms | dp ms | ratio |"
echo "|---|---|---:|---:|---:|"
notes=()
for m in "${MODES[@]}"; do
  for q in "${SELECTED[@]}"; do
    b=$(median "$m $q base")
    if [[ "$BASELINE_ONLY" == 1 ]]; then
      echo "| $m | ${BASE[$q]} | $b | - | - |"
      continue
    fi
    d=$(median "$m $q dp")
    ratio=$(awk -v b="$b" -v d="$d" 'BEGIN { if (b > 0) printf "%.2f", d / b; else print "-" }')
    suffix=""
    [[ "${TAIL[$q]}" == "FROM bench_t" ]] || suffix=" (${TAIL[$q]})"
    echo "| $m | ${BASE[$q]} vs ${DP[$q]}$suffix | $b | $d | $ratio |"
    if [[ $m == parallel ]]; then
      wb=$(max_workers "$m $q base"); wd=$(max_workers "$m $q dp")
      [[ "$wb" == "$wd" ]] || notes+=("parallel ${DP[$q]}: workers launched baseline $wb, dp $wd")
    fi
  done
done
if [[ "$BASELINE_ONLY" == 1 ]]; then
  echo
  echo "(BENCH_BASELINE_ONLY=1: dp_ queries skipped)"
fi
for n in "${notes[@]+"${notes[@]}"}"; do echo "note: $n"; done
