#!/usr/bin/env bash
# Benchmark (not a test) of the cost of charging the privacy budget, with
# pgbench in one run against the running test cluster (test/scripts/cluster.sh):
#   A  plain count(x) on a 100-row table
#   B  dp_count(x, 0.001) on the same table: one durable charge per query
#   C  the naive durable ledger (issue 31): an autocommitted
#        INSERT INTO naive_ledger VALUES (current_user, 0.001)
#      into a logged table (synchronous_commit on), then the count, per query
# at each client count (latency and throughput), extended protocol (-M prepared).
# A, B and C run in turn within each round; the figures are medians over the
# rounds. One fsync of this machine, for scale: pg_test_fsync's time for the
# server's wal_sync_method on the cluster's file system.
#   test/bench/bench_ledger.sh [--seconds N] [--rounds N] [--clients LIST] [--pairs FILE]
#     --seconds N   length of each pgbench run (default 10)
#     --rounds N    rounds of A, B, C (default 5)
#     --clients L   client counts, comma-separated (default 1,4,16)
#     --pairs F     append to F, tab-separated (test/bench/issue31.sh): per round
#                   "ledger/latency round A_ms B_ms wall_ms" (1 client) and
#                   "ledger/tps/CLIENTS round C_tps B_tps tps"; and once
#                   "ref/fsync_ms 0 ms ms wall_ms"
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SECONDS_PER_RUN=10
ROUNDS=5
CLIENTS=1,4,16
PAIRS=
while [[ $# -gt 0 ]]; do
  case "$1" in
    --seconds) SECONDS_PER_RUN=${2:?}; shift 2 ;;
    --rounds) ROUNDS=${2:?}; shift 2 ;;
    --clients) CLIENTS=${2:?}; shift 2 ;;
    --pairs) PAIRS=${2:?}; shift 2 ;;
    -h|--help) sed -n '2,21p' "$0"; exit 0 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
[[ "$CLIENTS" =~ ^[1-9][0-9]*(,[1-9][0-9]*)*$ ]] || { echo "--clients takes numbers, comma-separated" >&2; exit 2; }
[[ "$ROUNDS" =~ ^[1-9][0-9]*$ && "$SECONDS_PER_RUN" =~ ^[1-9][0-9]*$ ]] ||
  { echo "--rounds and --seconds take positive integers" >&2; exit 2; }
IFS=, read -r -a CLIENT_LIST <<<"$CLIENTS"
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
CREATE TABLE naive_ledger (role text NOT NULL, epsilon numeric NOT NULL);
SELECT dp_agg.set_budget(current_user::regrole, 1e12) \gset
VACUUM ANALYZE;
SQL
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo 'SELECT count(x) FROM small;' > "$work/A.sql"
echo 'SELECT dp_count(x, 0.001) FROM small;' > "$work/B.sql"
cat > "$work/C.sql" <<'SQL'
INSERT INTO naive_ledger VALUES (current_user, 0.001);
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

median() { sort -g | awk '{ a[NR] = $1 } END { if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

# One fsync, for scale: the server's WAL sync method, on the cluster's file system.
method=$(psql -X -At -d "$DB" -c 'SHOW wal_sync_method')
datadir=$(psql -X -At -d "$DB" -c 'SHOW data_directory')
fsync_file="$(dirname "$datadir")/dp_agg_bench_fsync.tmp"
fsync_us=$("$(dirname "$PGBENCH")/pg_test_fsync" -s 1 -f "$fsync_file" 2>/dev/null |
  awk -v m="$method" '$1 == m && /usecs\/op/ { print $(NF - 1); exit }') || true
rm -f "$fsync_file"
fsync_ms=$(awk -v u="${fsync_us:-}" 'BEGIN { if (u == "") print "nan"; else printf "%.3f", u / 1000 }')
[[ -z "$PAIRS" ]] || printf 'ref/fsync_ms\t0\t%s\t%s\twall_ms\n' "$fsync_ms" "$fsync_ms" >>"$PAIRS"

for round in $(seq "$ROUNDS"); do
  for clients in "${CLIENT_LIST[@]}"; do
    for s in A B C; do
      read -r tps lat < <(run "$s" "$clients")
      echo "$round $clients $s $tps $lat" >>"$work/results"
    done
  done
done
pick() {  # round clients script field(4 tps, 5 latency)
  awk -v r="$1" -v c="$2" -v s="$3" -v f="$4" '$1 == r && $2 == c && $3 == s { print $f }' "$work/results"
}
med() {  # clients script field
  awk -v c="$1" -v s="$2" -v f="$3" '$2 == c && $3 == s { print $f }' "$work/results" | median
}
if [[ -n "$PAIRS" ]]; then
  for round in $(seq "$ROUNDS"); do
    for clients in "${CLIENT_LIST[@]}"; do
      if [[ $clients == 1 ]]; then
        printf 'ledger/latency\t%s\t%s\t%s\twall_ms\n' "$round" "$(pick "$round" 1 A 5)" \
          "$(pick "$round" 1 B 5)" >>"$PAIRS"
      fi
      printf 'ledger/tps/%s\t%s\t%s\t%s\ttps\n' "$clients" "$round" "$(pick "$round" "$clients" C 4)" \
        "$(pick "$round" "$clients" B 4)" >>"$PAIRS"
    done
  done
fi

echo "machine: $(nproc) CPUs, $(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1)"
echo "server:  $(psql -X -At -d "$DB" -c 'SELECT version()')"
echo "fsync=$(psql -X -At -d "$DB" -c 'SHOW fsync'), synchronous_commit=$(psql -X -At -d "$DB" -c 'SHOW synchronous_commit'), ${SECONDS_PER_RUN}s per run, pgbench -M prepared, medians of $ROUNDS rounds"
echo "one fsync ($method, pg_test_fsync): $fsync_ms ms"
echo
echo "| clients | A: count latency ms | B: dp_count latency ms | C: naive ledger latency ms | A tps | B tps | C tps |"
echo "|---:|---:|---:|---:|---:|---:|---:|"
for clients in "${CLIENT_LIST[@]}"; do
  echo "| $clients | $(med "$clients" A 5) | $(med "$clients" B 5) | $(med "$clients" C 5) |" \
       "$(med "$clients" A 4) | $(med "$clients" B 4) | $(med "$clients" C 4) |"
done
echo
for clients in "${CLIENT_LIST[@]}"; do
  if [[ $clients == 1 ]]; then
    echo "B latency - A latency at 1 client: $(awk -v a="$(med 1 A 5)" -v b="$(med 1 B 5)" 'BEGIN { printf "%.3f", b - a }') ms (target <= one fsync, $fsync_ms ms)"
  fi
  echo "B throughput / C throughput at $clients clients: $(awk -v b="$(med "$clients" B 4)" -v c="$(med "$clients" C 4)" 'BEGIN { printf "%.2f", b / c }') (target >= 1)"
done
charges=$(psql -X -At -d "$DB" -c "SELECT count(*) FROM dp_agg.ledger_entry WHERE kind = 'charge'")
echo "charges recorded in the ledger during the run: $charges"
psql -X -q -d postgres -c "SET dp_agg.allow_drop_extension = on" -c "DROP DATABASE $DB" \
  >/dev/null 2>&1 || true
