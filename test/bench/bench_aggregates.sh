#!/usr/bin/env bash
# Benchmark (not a test): dp_count/dp_sum/dp_avg vs count/sum/avg on one table,
# serial and parallel, in the same run. Prints a Markdown table of median
# execution times (EXPLAIN (ANALYZE, TIMING OFF, SUMMARY ON) "Execution Time").
# The last query is a private GROUP BY over one-row groups (bench_g), where the
# noise drawn per group dominates: dp_count, dp_sum and dp_avg in one query.
#
#   test/bench/bench_aggregates.sh [--rows N] [--groups N] [--runs N] [--only REGEX] [--ids LIST]
#                                  [--modes LIST] [--pairs FILE] [--jit]
#     --rows N    rows in bench_t (default 10000000; table rebuilt if its size differs)
#     --groups N  rows (= groups) in bench_g (default 1000000)
#     --runs N    timed runs per query (default 7), after 1 warm-up; baseline and dp interleaved
#     --only RE   only the queries whose "id: baseline tail" matches the extended regex RE
#     --ids LIST  only the queries with these ids (comma-separated; see the list below)
#     --modes L   serial, parallel or serial,parallel (default)
#     --pairs F   append one line per timed round to F: "agg/MODE/ID round baseline dp unit",
#                 tab-separated (test/bench/issue31.sh). Serial rounds give the backend's CPU
#                 time of the whole statement (log_statement_stats: user + system, ms), parallel
#                 ones the wall "Execution Time" (the leader's CPU time misses the workers')
#     --jit       keep the server's jit setting (default: SET jit = off, for steadier figures)
#   BENCH_BASELINE_ONLY=1  run only the built-in aggregates (plumbing check without dp_agg)
# Query ids: count_i count_f sum_i avg_i sum_f avg_f sum_n avg_n (dp_ vs built-in on bench_t),
#   mode median pctl (dp_select/dp_median/dp_percentile vs mode()/percentile_cont/_disc),
#   groups1row (bench_g), gauss_count gauss_sum gauss_avg (the (epsilon, delta) forms vs the
#   built-ins), distinct (dp_count(DISTINCT i) vs count(DISTINCT i)), interval1 and
#   interval1000 (dp_avg_interval vs dp_avg of f, no GROUP BY / 1,000 groups), interval_n
#   (the same on the numeric column), gauss_fixed (the three Gaussian forms vs the three
#   Laplace forms on the one-row table bench_one). The default runs all of them.
#
# Needs a running server: uses <repo root>/.cluster_env (test/scripts/cluster.sh start)
# if present, else the usual PG* environment variables.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
ROWS=10000000
NGROUPS=1000000
RUNS=7
ONLY=
IDS=
MODES_ARG=serial,parallel
PAIRS=
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
    --ids) IDS=${2:?--ids needs a value}; shift 2 ;;
    --modes) MODES_ARG=${2:?--modes needs a value}; shift 2 ;;
    --pairs) PAIRS=${2:?--pairs needs a file}; shift 2 ;;
    --jit) JIT=server; shift ;;
    -h|--help) sed -n '2,31p' "$0"; exit 0 ;;
    *) echo "bench_aggregates.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
[[ "$ROWS" =~ ^[1-9][0-9]*$ ]] || { echo "--rows must be a positive integer" >&2; exit 2; }
[[ "$RUNS" =~ ^[1-9][0-9]*$ ]] || { echo "--runs must be a positive integer" >&2; exit 2; }
[[ "$NGROUPS" =~ ^[1-9][0-9]*$ ]] || { echo "--groups must be a positive integer" >&2; exit 2; }
[[ "$MODES_ARG" =~ ^(serial|parallel)(,(serial|parallel))?$ ]] ||
  { echo "--modes takes serial, parallel or both, comma-separated" >&2; exit 2; }

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
# One row: what a query costs whatever the data (the Gaussian forms' calibration).
"${PSQL[@]}" <<'SQL'
SET client_min_messages = warning;
CREATE UNLOGGED TABLE IF NOT EXISTS bench_one AS SELECT 1::int4 AS i;
SQL

# --- the queries -------------------------------------------------------------
# id|baseline select list|dp select list|what follows
QUERIES=$(cat <<'Q'
count_i|count(i)|dp_count(i, 1.0)|FROM bench_t
count_f|count(f)|dp_count(f, 1.0)|FROM bench_t
sum_i|sum(i)|dp_sum(i, 0, 1000000, 1.0)|FROM bench_t
avg_i|avg(i)|dp_avg(i, 0, 1000000, 1.0)|FROM bench_t
sum_f|sum(f)|dp_sum(f, 0.0, 1.0, 1.0)|FROM bench_t
avg_f|avg(f)|dp_avg(f, 0.0, 1.0, 1.0)|FROM bench_t
sum_n|sum(n)|dp_sum(n, 0, 1000, 1.0)|FROM bench_t
avg_n|avg(n)|dp_avg(n, 0, 1000, 1.0)|FROM bench_t
mode|mode() WITHIN GROUP (ORDER BY i % 10)|dp_select(i % 10, ARRAY[0, 1, 2, 3, 4, 5, 6, 7, 8, 9], 1.0)|FROM bench_t
median|percentile_cont(0.5) WITHIN GROUP (ORDER BY f)|dp_median(f, 0.0, 1.0, 1.0)|FROM bench_t
pctl|percentile_disc(0.9) WITHIN GROUP (ORDER BY f)|dp_percentile(f, 0.9, 0.0, 1.0, 1.0)|FROM bench_t
groups1row|g, count(i), sum(i), avg(i)|g, dp_count(i, 1.0), dp_sum(i, 0, 1000000, 1.0), dp_avg(i, 0, 1000000, 1.0)|FROM bench_g GROUP BY g
gauss_count|count(i)|dp_count(i, 1.0, 1e-6)|FROM bench_t
gauss_sum|sum(i)|dp_sum(i, 0, 1000000, 1.0, 1e-6)|FROM bench_t
gauss_avg|avg(i)|dp_avg(i, 0, 1000000, 1.0, 1e-6)|FROM bench_t
distinct|count(DISTINCT i)|dp_count(DISTINCT i, 1.0)|FROM bench_t
interval1|dp_avg(f, 0.0, 1.0, 1.0)|dp_avg_interval(f, 0.0, 1.0, 1.0, 0.95)|FROM bench_t
interval1000|i % 1000, dp_avg(f, 0.0, 1.0, 1.0)|i % 1000, dp_avg_interval(f, 0.0, 1.0, 1.0, 0.95)|FROM bench_t GROUP BY i % 1000
interval_n|dp_avg(n, 0, 1000, 1.0)|dp_avg_interval(n, 0, 1000, 1.0, 0.95)|FROM bench_t
gauss_fixed|dp_count(i, 1.0), dp_sum(i, 0, 1000000, 1.0), dp_avg(i, 0, 1000000, 1.0)|dp_count(i, 1.0, 1e-6), dp_sum(i, 0, 1000000, 1.0, 1e-6), dp_avg(i, 0, 1000000, 1.0, 1e-6)|FROM bench_one
Q
)
ID=(); BASE=(); DP=(); TAIL=()
while IFS='|' read -r id base dp tail; do
  ID+=("$id"); BASE+=("$base"); DP+=("$dp"); TAIL+=("$tail")
done <<<"$QUERIES"
SELECTED=()
for q in "${!BASE[@]}"; do
  if [[ -n "$IDS" && ",$IDS," != *",${ID[$q]},"* ]]; then continue; fi
  if [[ -z "$ONLY" || "${ID[$q]}: ${BASE[$q]} ${TAIL[$q]}" =~ $ONLY ]]; then SELECTED+=("$q"); fi
done
[[ ${#SELECTED[@]} -gt 0 ]] || { echo "--only/--ids match no query" >&2; exit 2; }
IFS=, read -r -a MODES <<<"$MODES_ARG"
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
err=$(mktemp /tmp/dp_agg_bench.XXXXXX.err)
trap 'rm -f "$script" "$out" "$err"' EXIT
{
  echo "SET statement_timeout = 0;"
  # The backend's CPU time per statement, sent to psql's stderr after each one
  # (after a \warn naming it there).
  echo "SET log_statement_stats = on;"
  echo "SET client_min_messages = log;"
  [[ "$JIT" == off ]] && echo "SET jit = off;"
  for m in "${MODES[@]}"; do
    mode_sql "$m"
    for q in "${SELECTED[@]}"; do
      for r in $(seq 0 "$RUNS"); do          # run 0 = warm-up
        for k in "${kinds[@]}"; do
          if [[ $k == base ]]; then agg=${BASE[$q]}; else agg=${DP[$q]}; fi
          printf '\\echo @@ %s %s %s %s\n' "$m" "$q" "$k" "$r"
          printf '\\warn @@ %s %s %s %s\n' "$m" "$q" "$k" "$r"
          echo "EXPLAIN (ANALYZE, TIMING OFF, SUMMARY ON) SELECT $agg ${TAIL[$q]};"
        done
      done
    done
  done
} >"$script"

echo "running $(( ${#MODES[@]} * ${#SELECTED[@]} * (RUNS + 1) * ${#kinds[@]} )) queries ..." >&2
"${PSQL[@]}" -f "$script" >"$out" 2>"$err" || { cat "$err" >&2; exit 1; }

# --- report ------------------------------------------------------------------
# "key run ms workers" per timed run (warm-ups dropped).
results=$(awk '
  /^@@ / { key = $2 " " $3 " " $4; run = $5; workers = 0; next }
  /Workers Launched:/ { for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+$/) workers = $i }
  /Execution Time:/ {
    for (i = 1; i <= NF; i++) if ($i ~ /^[0-9.]+$/) ms = $i
    if (run > 0) print key, run, ms, workers
  }' "$out")

# "key run cpu_ms" per timed run: the statement's user + system CPU time.
cpu_results=$(awk '
  /^@@ / { key = $2 " " $3 " " $4; run = $5; want = 1; next }
  want && /s user, .* s system/ {
    line = $0; sub(/^!\t*/, "", line)
    if (line ~ /^\[/) next                       # the session totals
    split(line, a, " ")
    if (run > 0) printf "%s %s %.3f\n", key, run, (a[1] + a[4]) * 1000
    want = 0
  }' "$err")

if [[ -n "$PAIRS" && "$BASELINE_ONLY" != 1 ]]; then
  for m in "${MODES[@]}"; do
    for q in "${SELECTED[@]}"; do
      if [[ $m == serial ]]; then src=$cpu_results; unit=cpu_ms; col=5
      else src=$results; unit=wall_ms; col=5; fi
      awk -v m="$m" -v q="$q" -v id="${ID[$q]}" -v unit="$unit" -v col="$col" '
        $1 == m && $2 == q { v[$4, $3] = $col; runs[$4] = 1 }
        END { for (r in runs) printf "agg/%s/%s\t%s\t%s\t%s\t%s\n", m, id, r, v[r, "base"], v[r, "dp"], unit }' \
        <<<"$src" | sort -t$'\t' -k2,2n >>"$PAIRS"
    done
  done
fi

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
