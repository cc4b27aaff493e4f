#!/usr/bin/env bash
# Benchmark (not a test): private aggregates vs the built-in ones over the same
# Citus distributed table, on the 3-node loopback cluster of test/citus/cluster.sh
# (coordinator + 2 workers, TLS, 32 shards), with and without GROUP BY, in the
# same run. Prints a Markdown table of median query times (psql \timing on the
# coordinator's Unix socket, which includes the workers' tasks) and the ratio
# dp / built-in. The nodes share this machine's
# cores: compare ratios, not absolute times.
#
#   test/bench/bench_citus.sh [--rows N] [--runs N]
#     --rows N  rows in the distributed table (default 5000000)
#     --runs N  timed runs per query (default 5), after 1 warm-up (built-in first, then dp_agg)
# Needs Citus installed for $PG_CONFIG; starts and stops its own cluster
# (CITUS_PORT_BASE, default 55620).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
ROWS=5000000
RUNS=5
while [[ $# -gt 0 ]]; do
  case "$1" in
    --rows) ROWS=${2:?}; shift 2 ;;
    --runs) RUNS=${2:?}; shift 2 ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    *) echo "bench_citus.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
[ -f "$(${PG_CONFIG:-pg_config} --pkglibdir)/citus.so" ] || { echo "bench_citus.sh: Citus not installed" >&2; exit 1; }
cluster="$here/../citus/cluster.sh"
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

exec_ms() {  # median of $RUNS client-side times (psql \timing) of query $1, after one warm-up
  # (EXPLAIN ANALYZE cannot be used: Citus's remote EXPLAIN ANALYZE refuses the
  # cstring columns of worker_partial_agg.)
  local query=$1 times=()
  q "SET jit = off; $query" >/dev/null
  for _ in $(seq "$RUNS"); do
    times+=("$(bash "$cluster" psql "$base" -At -c 'SET jit = off' -c '\timing on' -c "$query" |
      sed -n 's/^Time: \([0-9.]*\) ms.*$/\1/p' | tail -1)")
  done
  printf '%s\n' "${times[@]}" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'
}

echo "| query ($ROWS rows, 32 shards, 2 workers) | built-in ms | dp_agg ms | ratio |"
echo "|---|---|---|---|"
while IFS='|' read -r name builtin private; do
  b=$(exec_ms "$builtin")
  p=$(exec_ms "$private")
  ratio=$(awk -v p="$p" -v b="$b" 'BEGIN { printf "%.2f", p / b }')
  echo "| $name | $b | $p | $ratio |"
done <<'QUERIES'
count, no GROUP BY|SELECT count(v) FROM bench_t|SELECT dp_count(v, 1.0) FROM bench_t
sum, no GROUP BY|SELECT sum(v) FROM bench_t|SELECT dp_sum(v, 0, 1000, 1.0) FROM bench_t
avg, no GROUP BY|SELECT avg(v) FROM bench_t|SELECT dp_avg(v, 0, 1000, 1.0) FROM bench_t
count, GROUP BY grp (10 groups)|SELECT grp, count(v) FROM bench_t GROUP BY grp|SELECT grp, dp_count(v, 1.0) FROM bench_t GROUP BY grp
sum, GROUP BY grp (10 groups)|SELECT grp, sum(v) FROM bench_t GROUP BY grp|SELECT grp, dp_sum(v, 0, 1000, 1.0) FROM bench_t GROUP BY grp
avg, GROUP BY grp (10 groups)|SELECT grp, avg(v) FROM bench_t GROUP BY grp|SELECT grp, dp_avg(v, 0, 1000, 1.0) FROM bench_t GROUP BY grp
QUERIES
