#!/usr/bin/env bash
# Benchmark (not a test): every row of issue 31's table ("At the speed of the
# built-ins") measured in one run, as a ratio of medians with its spread, the
# issue's target and whether it is met (`make bench`; `make bench-quick` checks
# the harness at 1/50 the sizes). It only runs the other scripts of test/bench
# with options, each writing its paired rounds (baseline, then dp_agg, within
# each round) to one file, and prints the table with test/bench/issue31_table.py.
#
#   test/bench/issue31.sh [--quick] [--out DIR]
#     --quick  1/50 the rows, 2-second pgbench runs, 5 rounds (a harness check, not figures)
#     --out D  keep the pairs file and each benchmark's own report in D
#              (default: a new directory under /tmp, printed at the end)
#
# Needs the running test cluster (test/scripts/cluster.sh start; bench_preload.sh
# restarts it, leaving it as it was) and, for the Citus rows, Citus installed for
# $PG_CONFIG (bench_citus.sh starts its own 3-node cluster at CITUS_PORT_BASE);
# without Citus those rows print "skipped: no Citus".
#
# What each row measures (medians of >= 5 alternating rounds):
#   serial plans: the backend's CPU time of the whole statement (log_statement_stats,
#   user + system), steadier than wall time on a shared machine; plans with 2
#   workers: the wall "Execution Time" of EXPLAIN ANALYZE (the leader's CPU time
#   misses the workers'); Citus: the client's wall time (three servers);
#   pgbench -S (preload): the server's CPU time per statement; the charge: pgbench's latency
#   and throughput (wall: the fsync dominates).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
QUICK=0
OUT=
while [[ $# -gt 0 ]]; do
  case "$1" in
    --quick) QUICK=1; shift ;;
    --out) OUT=${2:?--out needs a directory}; shift 2 ;;
    -h|--help) sed -n '2,24p' "$0"; exit 0 ;;
    *) echo "issue31.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
if [[ $QUICK == 1 ]]; then
  ROWS=100000 GROUPS_1ROW=20000 RUNS=5 UNIT_ROWS=200000 UNITS=20000
  CITUS_ROWS=100000 CITUS_GROUPS=2000 SECONDS_PER_RUN=2 SCALE=1
else
  ROWS=5000000 GROUPS_1ROW=1000000 RUNS=7 UNIT_ROWS=10000000 UNITS=1000000
  CITUS_ROWS=5000000 CITUS_GROUPS=100000 SECONDS_PER_RUN=10 SCALE=10
fi
OUT=${OUT:-$(mktemp -d /tmp/dp_agg_issue31.XXXXXX)}
mkdir -p "$OUT"
PAIRS=$OUT/pairs.tsv
: >"$PAIRS"
load() { cut -d' ' -f1-3 /proc/loadavg; }
load_start=$(load)
echo "issue 31 table$([[ $QUICK == 1 ]] && echo ' (quick: a harness check, not figures)'):" \
     "$(nproc) CPUs, $(uptime)" >&2

failed=()
step() {  # name command...: its own report goes to $OUT/name.txt
  local name=$1; shift
  echo "  $name ..." >&2
  local t0=$SECONDS
  if ! "$@" >"$OUT/$name.txt" 2>"$OUT/$name.err"; then
    failed+=("$name")
    echo "  $name failed (exit status in $OUT/$name.err):" >&2
    tail -5 "$OUT/$name.err" >&2
  fi
  echo "  $name: $((SECONDS - t0)) s" >&2
}

both=count_i,count_f,sum_i,avg_i,sum_f,avg_f,sum_n,avg_n,gauss_count,gauss_sum,gauss_avg
serial_only=groups1row,distinct,interval1,interval1000,interval_n,median,pctl,mode,gauss_fixed
step aggregates bash "$here/bench_aggregates.sh" --rows "$ROWS" --groups "$GROUPS_1ROW" \
  --runs "$RUNS" --ids "$both" --modes serial,parallel --pairs "$PAIRS"
step aggregates_serial bash "$here/bench_aggregates.sh" --rows "$ROWS" --groups "$GROUPS_1ROW" \
  --runs "$RUNS" --ids "$serial_only" --modes serial --pairs "$PAIRS"
step units bash "$here/bench_units.sh" --rows "$UNIT_ROWS" --units "$UNITS" --runs 5 \
  --workers 0 --pairs "$PAIRS"
step ledger bash "$here/bench_ledger.sh" --seconds "$SECONDS_PER_RUN" --rounds 5 \
  --clients 1,4,16 --pairs "$PAIRS"
step preload bash "$here/bench_preload.sh" --seconds "$SECONDS_PER_RUN" --rounds 5 \
  --clients 1,8 --scale "$SCALE" --pairs "$PAIRS"
citus=skipped
if [[ -f "$(${PG_CONFIG:-pg_config} --pkglibdir)/citus.so" ]]; then
  citus=run
  step citus bash "$here/bench_citus.sh" --rows "$CITUS_ROWS" --runs 5 \
    --groups "$CITUS_GROUPS" --no-wrapper --pairs "$PAIRS"
fi
load_end=$(load)

echo
/usr/bin/python3 "$here/issue31_table.py" --pairs "$PAIRS" --rows "$ROWS" --citus "$citus" \
  --load-start "$load_start" --load-end "$load_end" \
  ${failed[@]+--failed "${failed[@]}"}
# What the benchmarks themselves noted (e.g. a parallel plan that launched fewer workers).
cat "$OUT"/*.txt | grep '^note:' || true
echo "sizes: bench_t $ROWS rows, bench_g $GROUPS_1ROW one-row groups, $RUNS rounds;" \
     "units $UNIT_ROWS rows / $UNITS units, 5 rounds; pgbench ${SECONDS_PER_RUN}s x 5 rounds" \
     "(scale $SCALE for -S); Citus $CITUS_ROWS rows, $CITUS_GROUPS groups, 5 rounds"
uptime
echo "each benchmark's own report, and the pairs: $OUT"
[[ ${#failed[@]} -eq 0 ]]
