#!/usr/bin/env bash
# Benchmark (not a test): private aggregates vs the built-in ones over the same
# Citus distributed table, on the 3-node loopback cluster of test/citus/cluster.sh
# (coordinator + 2 workers, TLS, 32 shards), with and without GROUP BY, in the
# same run. Prints a Markdown table of median query times (psql \timing on the
# coordinator's Unix socket, which includes the workers' tasks) and the ratio
# dp / built-in, for dp_agg as shipped (the workers run each private
# aggregate's partial step directly: src/pg/shard_partials.cpp) and, as a
# baseline, with the workers' dp_agg.citus_direct_partials off (Citus's
# generic worker_partial_agg wrapper). The nodes share this machine's cores:
# compare ratios, not absolute times.
#
#   test/bench/bench_citus.sh [--rows N] [--runs N] [--groups N] [--no-wrapper] [--pairs FILE]
#     --rows N  rows in the distributed table (default 5000000)
#     --runs N  timed runs per query (default 5), after 1 warm-up; the built-in,
#               dp_agg and the wrapper baseline run in turn within each round
#     --groups N  groups of the GROUP BY id query (default 100000)
#     --no-wrapper  skip the wrapper baseline and the one-shard split (issue31.sh)
#     --pairs F append "citus/QUERY round built-in_ms dp_agg_ms wall_ms" per round to F,
#               tab-separated (test/bench/issue31.sh); QUERY is count, sum, avg,
#               count_grp, sum_grp, avg_grp or count_id
# Needs Citus installed for $PG_CONFIG; starts and stops its own cluster
# (CITUS_PORT_BASE, default 55620).
# A second table splits a worker's share: the task Citus sends for one shard,
# run on the worker over the coordinator's certificate (minimum of
# 5 x --runs interleaved runs), for the built-in sum, the built-in sum through
# Citus's generic wrapper worker_partial_agg, a built-in 2-argument aggregate
# through it (Citus packs the arguments of a multi-argument aggregate into a
# ROW per row), dp_sum's task as the worker runs it (the direct partial step),
# and dp_sum's task through the wrapper (dp_agg.citus_direct_partials off).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
ROWS=5000000
RUNS=5
GROUPS_BY_ID=100000
WRAPPER=1
PAIRS=
while [[ $# -gt 0 ]]; do
  case "$1" in
    --rows) ROWS=${2:?}; shift 2 ;;
    --runs) RUNS=${2:?}; shift 2 ;;
    --groups) GROUPS_BY_ID=${2:?}; shift 2 ;;
    --no-wrapper) WRAPPER=0; shift ;;
    --pairs) PAIRS=${2:?}; shift 2 ;;
    -h|--help) sed -n '2,21p' "$0"; exit 0 ;;
    *) echo "bench_citus.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
[ -f "$(${PG_CONFIG:-pg_config} --pkglibdir)/citus.so" ] || { echo "bench_citus.sh: Citus not installed" >&2; exit 1; }
cluster="$here/../citus/cluster.sh"
PG_BINDIR=${PG_BINDIR:-$(${PG_CONFIG:-pg_config} --bindir)}
base=${CITUS_PORT_BASE:-55620}
q() { bash "$cluster" psql "$base" -At -c "$1"; }
bash "$cluster" start
trap 'bash "$cluster" stop' EXIT
trap 'exit 1' INT TERM
q "CREATE TABLE bench_t(id bigint, grp int, v int);
SELECT create_distributed_table('bench_t', 'id');
INSERT INTO bench_t SELECT g, g % 10, (g::bigint * 7919) % 1000 FROM generate_series(1, $ROWS) g;
SELECT dp_agg.set_budget('postgres', 1e9, 0.5);" >/dev/null
q "VACUUM ANALYZE bench_t" >/dev/null

query_ms() {  # client-side time (psql \timing) of one run of query $1
  bash "$cluster" psql "$base" -At -c 'SET jit = off' -c '\timing on' -c "$1" |
    sed -n 's/^Time: \([0-9.]*\) ms.*$/\1/p' | tail -1
}
set_direct() {  # dp_agg.citus_direct_partials on both workers
  for port in $((base + 1)) $((base + 2)); do
    bash "$cluster" psql "$port" -At -c "ALTER SYSTEM SET dp_agg.citus_direct_partials = $1" \
      -c "SELECT pg_reload_conf()" >/dev/null
  done
}
median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
ratio() { awk -v p="$1" -v b="$2" 'BEGIN { printf "%.2f", p / b }'; }

echo "| query ($ROWS rows, 32 shards, 2 workers) | built-in ms | dp_agg ms | **ratio** | dp_agg through worker_partial_agg ms | ratio |"
echo "|---|---|---|---|---|---|"
while IFS='|' read -r key name builtin private; do
  # (EXPLAIN ANALYZE cannot be used: Citus's remote EXPLAIN ANALYZE refuses
  # the cstring columns of the partial states.) One warm-up each, then
  # rounds of built-in, dp_agg, dp_agg through the wrapper.
  query_ms "$builtin" >/dev/null; query_ms "$private" >/dev/null
  b=(); p=(); g=()
  for r in $(seq "$RUNS"); do
    b+=("$(query_ms "$builtin")"); p+=("$(query_ms "$private")")
    [[ -z "$PAIRS" ]] || printf 'citus/%s\t%s\t%s\t%s\twall_ms\n' "$key" "$r" "${b[-1]}" "${p[-1]}" >>"$PAIRS"
    if [[ $WRAPPER == 1 ]]; then set_direct off; g+=("$(query_ms "$private")"); set_direct on; fi
  done
  bm=$(printf '%s\n' "${b[@]}" | median); pm=$(printf '%s\n' "${p[@]}" | median)
  if [[ $WRAPPER == 1 ]]; then
    gm=$(printf '%s\n' "${g[@]}" | median); gr=$(ratio "$gm" "$bm")
  else gm=-; gr=-; fi
  echo "| $name | $bm | $pm | **$(ratio "$pm" "$bm")** | $gm | $gr |"
done <<QUERIES
count|count, no GROUP BY|SELECT count(v) FROM bench_t|SELECT dp_count(v, 1.0) FROM bench_t
sum|sum, no GROUP BY|SELECT sum(v) FROM bench_t|SELECT dp_sum(v, 0, 1000, 1.0) FROM bench_t
avg|avg, no GROUP BY|SELECT avg(v) FROM bench_t|SELECT dp_avg(v, 0, 1000, 1.0) FROM bench_t
count_grp|count, GROUP BY grp (10 groups)|SELECT grp, count(v) FROM bench_t GROUP BY grp|SELECT grp, dp_count(v, 1.0) FROM bench_t GROUP BY grp
sum_grp|sum, GROUP BY grp (10 groups)|SELECT grp, sum(v) FROM bench_t GROUP BY grp|SELECT grp, dp_sum(v, 0, 1000, 1.0) FROM bench_t GROUP BY grp
avg_grp|avg, GROUP BY grp (10 groups)|SELECT grp, avg(v) FROM bench_t GROUP BY grp|SELECT grp, dp_avg(v, 0, 1000, 1.0) FROM bench_t GROUP BY grp
count_id|count, GROUP BY id (the distribution column), id <= $GROUPS_BY_ID: $GROUPS_BY_ID groups|SELECT id, count(v) FROM bench_t WHERE id <= $GROUPS_BY_ID GROUP BY id|SELECT id, dp_count(v, 1.0) FROM bench_t WHERE id <= $GROUPS_BY_ID GROUP BY id
QUERIES
[[ $WRAPPER == 1 ]] || exit 0

# One shard's task on its worker, as Citus sends it (the coordinator's client
# certificate: test/citus/cluster.sh). Minimum of interleaved runs.
root=/tmp/dp_agg_citus_$base
shard=$(bash "$cluster" psql $((base + 1)) -At -c "SET citus.override_table_visibility TO off; SELECT relname FROM pg_class WHERE relname LIKE 'bench\_t\_1%' AND relkind = 'r' ORDER BY relname LIMIT 1")
shard_rows=$(q "SELECT count(*) FROM bench_t WHERE get_shard_id_for_distribution_column('bench_t', id) = ${shard#bench_t_}")
conn="host=127.0.0.1 port=$((base + 1)) user=postgres dbname=postgres sslmode=require sslcert=$root/tls/dp_agg_coordinator.crt sslkey=$root/tls/dp_agg_coordinator.key"
{ echo "SET jit = off;"; echo '\timing on'
  for _ in $(seq $((RUNS * 5))); do
    # Each task exactly as Citus sends it (a worker takes the direct partial
    # step only for that shape: every output an aggregate or a group key),
    # after a line naming it for the parser below.
    echo '\echo builtin|'; echo "SELECT sum(v) FROM public.$shard;"
    echo '\echo wrapped|'; echo "SELECT pg_catalog.worker_partial_agg('pg_catalog.sum(integer)'::regprocedure, v) FROM public.$shard;"
    echo '\echo row|'; echo "SELECT pg_catalog.worker_partial_agg('pg_catalog.regr_count(double precision,double precision)'::regprocedure, ROW(v::float8, 0::float8)) FROM public.$shard;"
    echo '\echo dp|'; echo "SELECT pg_catalog.worker_partial_agg('dp_sum(integer,integer,integer,double precision)'::regprocedure, ROW(v, 0, 1000, '1'::double precision)) FROM public.$shard;"
    echo "SET dp_agg.citus_direct_partials = off;"
    echo '\echo dpwrapped|'; echo "SELECT pg_catalog.worker_partial_agg('dp_sum(integer,integer,integer,double precision)'::regprocedure, ROW(v, 0, 1000, '1'::double precision)) FROM public.$shard;"
    echo "SET dp_agg.citus_direct_partials = on;"
  done; } >"$root/fragments.sql"
chmod a+r "$root/fragments.sql"
runuser -u postgres -- "$PG_BINDIR/psql" -X -At "$conn" -f "$root/fragments.sql" | awk -F'|' -v rows="$shard_rows" '
  /\|/ { k = $1; next }
  /^Time:/ { sub(/^Time: /, "", $0); split($0, a, " "); if (k != "" && (!(k in m) || a[1] < m[k])) m[k] = a[1]; k = "" }
  END {
    printf "\n| one shard'"'"'s task on its worker (%d rows), minimum | ms | ns per row | vs built-in |\n|---|---|---|---|\n", rows
    printf "| sum(v) (Citus'"'"'s own split of the built-in) | %.2f | %.0f | 1.00 |\n", m["builtin"], m["builtin"] * 1e6 / rows, 1
    printf "| worker_partial_agg(sum, v): built-in sum through Citus'"'"'s generic wrapper | %.2f | %.0f | %.2f |\n", m["wrapped"], m["wrapped"] * 1e6 / rows, m["wrapped"] / m["builtin"]
    printf "| worker_partial_agg(regr_count, ROW(v, 0)): a built-in 2-argument aggregate, one ROW per row | %.2f | %.0f | %.2f |\n", m["row"], m["row"] * 1e6 / rows, m["row"] / m["builtin"]
    printf "| dp_agg'"'"'s task for dp_sum(v, 0, 1000, 1.0), as the worker runs it (direct partial step) | %.2f | %.0f | %.2f |\n", m["dp"], m["dp"] * 1e6 / rows, m["dp"] / m["builtin"]
    printf "| the same task through worker_partial_agg(dp_sum, ROW(v, 0, 1000, 1.0)) (citus_direct_partials off) | %.2f | %.0f | %.2f |\n", m["dpwrapped"], m["dpwrapped"] * 1e6 / rows, m["dpwrapped"] / m["builtin"]
  }'
