#!/usr/bin/env bash
# Benchmark (not a test) of what the restricted-analyst rules cost per
# statement: the planner hook judges every query, the utility and executor
# hooks look at every statement, and protected tables are found through
# their security labels. pgbench, one client, simple protocol (every
# statement is parsed and planned), against
#   0  a second throwaway cluster WITHOUT dp_agg preloaded (the baseline),
#   A  the test cluster, with dp_agg, in a database without any label,
#   B  the same with a protected table and a restricted role in the database
#      (the unrestricted superuser's queries now look up labels),
#   C  the restricted role's private query on the protected table, against
#   D  the superuser's same query (same charge, no judging for restricted roles);
# and what public estimates cost (issue 26): the superuser's private queries
# over a protected 2,000,000-row table planned from its statistics (E) and as
# a restricted analyst's are, from public estimates (F,
# dp_agg.plan_as_restricted): a GROUP BY and a selective indexed filter.
#   test/bench/bench_restriction.sh [--seconds N]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SECONDS_PER_RUN=10
while [[ $# -gt 0 ]]; do
  case "$1" in
    --seconds) SECONDS_PER_RUN=${2:?}; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
# The pgbench of the server under test (PG_BINDIR, else $PG_CONFIG --bindir, as for make install).
PGBENCH=${PG_BINDIR:-$("${PG_CONFIG:-pg_config}" --bindir)}/pgbench
work=$(mktemp -d /tmp/dp_agg_bench_restriction.XXXXXX)
chmod 755 "$work"
mkdir -p "$work/baseline/test"
cp -r "$ROOT/test/scripts" "$work/baseline/test/"
cleanup() {
  DP_AGG_TEST_PORT=54398 bash "$work/baseline/test/scripts/cluster.sh" stop >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

cat >"$work/lookup.sql" <<'SQL'
\set k random(1, 1000)
SELECT name FROM lookup WHERE k = :k;
SQL
cat >"$work/private.sql" <<'SQL'
SELECT dp_count(id, 0.000001) FROM protected_rows;
SQL
setup_sql="CREATE TABLE lookup (k int PRIMARY KEY, name text);
INSERT INTO lookup SELECT g, 'name ' || g FROM generate_series(1, 1000) g;"

tps() {  # database script [pgbench options...]
  local db=$1 script=$2; shift 2
  "$PGBENCH" -n -M simple -c 1 -T "$SECONDS_PER_RUN" -f "$script" "$@" "$db" 2>/dev/null |
    sed -n 's/^tps = \([0-9.]*\) .*/\1/p'
}

# 0: the baseline cluster, no library.
(
  DP_AGG_TEST_PORT=54398 bash "$work/baseline/test/scripts/cluster.sh" start --preload '' >/dev/null
  eval "$(DP_AGG_TEST_PORT=54398 bash "$work/baseline/test/scripts/cluster.sh" env)"
  psql -X -q -d postgres -c "CREATE DATABASE bench"
  psql -X -q -d bench -c "$setup_sql"
  tps bench "$work/lookup.sql" >"$work/tps0"
)

# A-D: the test cluster with dp_agg.
# shellcheck disable=SC1091
. "$ROOT/.cluster_env"
DB=dp_agg_bench_restriction
psql -X -q -d postgres -c "SET client_min_messages = warning" \
  -c "SET dp_agg.allow_drop_extension = on" -c "DROP DATABASE IF EXISTS $DB" -c "CREATE DATABASE $DB"
psql -X -q -d "$DB" -c "CREATE EXTENSION dp_agg" -c "$setup_sql"
tps_a=$(tps "$DB" "$work/lookup.sql")
psql -X -q -o /dev/null -d "$DB" <<'SQL'
SET client_min_messages = warning;
DROP ROLE IF EXISTS dp_bench_analyst;
CREATE ROLE dp_bench_analyst LOGIN;
CREATE TABLE protected_rows AS SELECT g AS id FROM generate_series(1, 100) g;
GRANT SELECT ON lookup TO dp_bench_analyst;
SELECT dp_agg.protect_table('protected_rows');
SELECT dp_agg.restrict_role('dp_bench_analyst');
SELECT dp_agg.set_budget('dp_bench_analyst', 1e9, 0);
SELECT dp_agg.set_budget(session_user::regrole, 1e9, 0);
SQL
tps_b=$(tps "$DB" "$work/lookup.sql")
tps_c=$(tps "$DB" "$work/private.sql" -U dp_bench_analyst)
tps_d=$(tps "$DB" "$work/private.sql")
cat >"$work/grouped.sql" <<'SQL'
SELECT region, dp_count(id, 0.000001) FROM protected_big GROUP BY region;
SQL
cat >"$work/filtered.sql" <<'SQL'
SELECT dp_count(id, 0.000001) FROM protected_big WHERE age = 42;
SQL
psql -X -q -o /dev/null -d "$DB" <<'SQL'
CREATE TABLE protected_big AS
SELECT g AS id, g % 1000 AS age, 'region ' || (g % 8) AS region FROM generate_series(1, 2000000) g;
CREATE INDEX ON protected_big (age);
ANALYZE protected_big;
SELECT dp_agg.protect_table('protected_big');
SQL
tps_eg=$(tps "$DB" "$work/grouped.sql")
tps_fg=$(PGOPTIONS='-c dp_agg.plan_as_restricted=on' tps "$DB" "$work/grouped.sql")
tps_ef=$(tps "$DB" "$work/filtered.sql")
tps_ff=$(PGOPTIONS='-c dp_agg.plan_as_restricted=on' tps "$DB" "$work/filtered.sql")
tps_0=$(cat "$work/tps0")
psql -X -q -d postgres -c "SET dp_agg.allow_drop_extension = on" -c "DROP DATABASE $DB" \
  -c "DROP ROLE dp_bench_analyst"

awk -v t0="$tps_0" -v a="$tps_a" -v b="$tps_b" -v c="$tps_c" -v d="$tps_d" \
    -v eg="$tps_eg" -v fg="$tps_fg" -v ef="$tps_ef" -v ff="$tps_ff" 'BEGIN {
  printf "primary-key lookup, 1 client, simple protocol (%s)\n", "statements per second";
  printf "  0 without dp_agg                     %9.0f  latency %.1f us\n", t0, 1e6 / t0;
  printf "  A dp_agg, no labels                  %9.0f  latency %.1f us  (+%.1f us)\n", a, 1e6 / a, 1e6 / a - 1e6 / t0;
  printf "  B dp_agg, labels present             %9.0f  latency %.1f us  (+%.1f us)\n", b, 1e6 / b, 1e6 / b - 1e6 / t0;
  printf "private dp_count on a protected 100-row table (charged durably)\n";
  printf "  D unrestricted superuser             %9.0f  latency %.1f us\n", d, 1e6 / d;
  printf "  C restricted analyst (judged)        %9.0f  latency %.1f us  (ratio C/D %.2f)\n", c, 1e6 / c, d / c;
  printf "public estimates on a protected 2,000,000-row table (statements per second)\n";
  printf "  GROUP BY region: E statistics %7.2f  F public estimates %7.2f  (ratio E/F %.2f)\n", eg, fg, eg / fg;
  printf "  WHERE age = 42:  E statistics %7.2f  F public estimates %7.2f  (ratio E/F %.2f)\n", ef, ff, ef / ff;
}'
