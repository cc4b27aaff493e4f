#!/usr/bin/env bash
# Benchmark (not a test) of the cost of charging the privacy budget, with
# pgbench in one run against the running test cluster (test/scripts/cluster.sh):
#   A  plain count(x) on a 100-row table
#   B  dp_count(x, 0.001) on the same table: one durable charge per query
#   C  the naive ledger: an autocommitted
#        UPDATE budget SET spent = spent + e WHERE role = ... AND spent + e <= total
#      followed by the count, per query
# at 1 client (latency) and 16 clients (throughput), extended protocol.
#   test/bench/bench_ledger.sh [--seconds N]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SECONDS_PER_RUN=10
while [[ $# -gt 0 ]]; do
  case "$1" in
    --seconds) SECONDS_PER_RUN=${2:?}; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
if [[ -f "$ROOT/.cluster_env" ]]; then
  # shellcheck disable=SC1091
  . "$ROOT/.cluster_env"
fi
DB=dp_agg_bench_ledger
# The pgbench of the server under test (PG_BINDIR, else $PG_CONFIG --bindir, as for make install).
PGBENCH=${PG_BINDIR:-$("${PG_CONFIG:-pg_config}" --bindir)}/pgbench
# (a database that holds a dp_agg ledger is dropped only with the confirmation)
psql -X -q -d postgres -c "SET client_min_messages = warning" \
  -c "SET dp_agg.allow_drop_extension = on" -c "DROP DATABASE IF EXISTS $DB" -c "CREATE DATABASE $DB"
psql -X -q -d "$DB" <<'SQL'
CREATE EXTENSION dp_agg;
CREATE TABLE small AS SELECT g AS x FROM generate_series(1, 100) g;
CREATE TABLE naive_budget (role text PRIMARY KEY, spent numeric NOT NULL, total numeric NOT NULL);
INSERT INTO naive_budget VALUES (current_user, 0, 1e12);
SELECT dp_agg.set_budget(current_user::regrole, 1e12) \gset
VACUUM ANALYZE;
SQL
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo 'SELECT count(x) FROM small;' > "$work/A.sql"
echo 'SELECT dp_count(x, 0.001) FROM small;' > "$work/B.sql"
cat > "$work/C.sql" <<'SQL'
UPDATE naive_budget SET spent = spent + 0.001 WHERE role = current_user AND spent + 0.001 <= total;
SELECT count(x) FROM small;
SQL

run() {  # script clients -> "tps latency_ms"
  local out
  out=$("$PGBENCH" -n -M prepared -f "$work/$1.sql" -c "$2" -j "$(( $2 < 2 ? 1 : 2 ))" \
        -T "$SECONDS_PER_RUN" "$DB" 2>&1)
  local tps latency
  tps=$(sed -n 's/^tps = \([0-9.]*\).*/\1/p' <<<"$out")
  latency=$(sed -n 's/^latency average = \([0-9.]*\) ms/\1/p' <<<"$out")
  echo "$tps $latency"
}

echo "machine: $(nproc) CPUs, $(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1)"
echo "server:  $(psql -X -At -d "$DB" -c 'SELECT version()')"
echo "fsync=$(psql -X -At -d "$DB" -c 'SHOW fsync'), synchronous_commit=$(psql -X -At -d "$DB" -c 'SHOW synchronous_commit'), ${SECONDS_PER_RUN}s per run, pgbench -M prepared"
echo
echo "| clients | A: count latency ms | B: dp_count latency ms | C: naive ledger latency ms | A tps | B tps | C tps |"
echo "|---:|---:|---:|---:|---:|---:|---:|"
for clients in 1 16; do
  read -r a_tps a_lat < <(run A "$clients")
  read -r b_tps b_lat < <(run B "$clients")
  read -r c_tps c_lat < <(run C "$clients")
  echo "| $clients | $a_lat | $b_lat | $c_lat | $a_tps | $b_tps | $c_tps |"
  if [[ $clients -eq 1 ]]; then
    b_minus_a=$(awk -v a="$a_lat" -v b="$b_lat" 'BEGIN { printf "%.3f", b - a }')
  else
    b_over_c=$(awk -v b="$b_tps" -v c="$c_tps" 'BEGIN { printf "%.2f", b / c }')
  fi
done
echo
echo "B latency - A latency at 1 client: ${b_minus_a} ms (target <= 0.5 ms)"
echo "B throughput / C throughput at 16 clients: ${b_over_c} (target >= 1)"
charges=$(psql -X -At -d "$DB" -c "SELECT count(*) FROM dp_agg.ledger_entry WHERE kind = 'charge'")
echo "charges recorded in the ledger during the run: $charges"
psql -X -q -d postgres -c "SET dp_agg.allow_drop_extension = on" -c "DROP DATABASE $DB" \
  >/dev/null 2>&1 || true
