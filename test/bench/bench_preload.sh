#!/usr/bin/env bash
# Benchmark (not a test): what preloading dp_agg costs users who never call it
# (issue 31). pgbench -S (primary-key SELECTs on pgbench_accounts) against the
# running test cluster (test/scripts/cluster.sh), with shared_preload_libraries
# = dp_agg and with it empty, restarting the server between the two in every
# round (pg_ctl stop, then start with -c shared_preload_libraries=...; the order
# alternates from round to round, and a short unrecorded pgbench run warms each
# start up), simple and prepared protocol, at each client count. The database
# has the extension created, but the statements touch no protected table and no
# dp_ function. The server is left running with its original preload setting.
#   test/bench/bench_preload.sh [--seconds N] [--rounds N] [--clients LIST] [--scale N]
#                               [--pairs FILE]
#     --seconds N   length of each timed pgbench run (default 10)
#     --rounds N    rounds (default 5)
#     --clients L   client counts, comma-separated (default 1,8)
#     --scale N     pgbench -i scale (default 10)
#     --pairs F     append "preload/PROTOCOL/CLIENTS round without with cpu_us" per round to
#                   F, tab-separated (test/bench/issue31.sh): the server's CPU time per
#                   statement (its processes' user + system time over the run, the
#                   backends' included once reaped, / transactions), steadier than tps
#                   when other work shares the cores
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SECONDS_PER_RUN=10
ROUNDS=5
CLIENTS=1,8
SCALE=10
PAIRS=
while [[ $# -gt 0 ]]; do
  case "$1" in
    --seconds) SECONDS_PER_RUN=${2:?}; shift 2 ;;
    --rounds) ROUNDS=${2:?}; shift 2 ;;
    --clients) CLIENTS=${2:?}; shift 2 ;;
    --scale) SCALE=${2:?}; shift 2 ;;
    --pairs) PAIRS=${2:?}; shift 2 ;;
    -h|--help) sed -n '2,22p' "$0"; exit 0 ;;
    *) echo "bench_preload.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
[[ "$CLIENTS" =~ ^[1-9][0-9]*(,[1-9][0-9]*)*$ ]] || { echo "--clients takes numbers, comma-separated" >&2; exit 2; }
for n in "$SECONDS_PER_RUN" "$ROUNDS" "$SCALE"; do
  [[ "$n" =~ ^[1-9][0-9]*$ ]] || { echo "options take positive integers" >&2; exit 2; }
done
IFS=, read -r -a CLIENT_LIST <<<"$CLIENTS"
[[ -f "$ROOT/.cluster_env" ]] || { echo "bench_preload.sh: no test cluster (test/scripts/cluster.sh start)" >&2; exit 1; }
# shellcheck disable=SC1091
. "$ROOT/.cluster_env"
BINDIR=${PG_BINDIR:-$("${PG_CONFIG:-pg_config}" --bindir)}
DATA=$DP_AGG_CLUSTER_DIR/data
DB=dp_agg_bench_preload
as_pg() { if [[ $(id -u) -eq 0 ]]; then runuser -u postgres -- "$@"; else "$@"; fi; }

restart_with() {  # preload list ('' for none): a server option, over the configuration files
  (cd / && as_pg "$BINDIR/pg_ctl" -D "$DATA" -m fast -w -t 60 stop >/dev/null)
  (cd / && as_pg "$BINDIR/pg_ctl" -D "$DATA" -l "$DP_AGG_CLUSTER_DIR/server.log" -w -t 60 \
     -o "-c shared_preload_libraries=$1" start >/dev/null)
  local now
  now=$(psql -X -At -d postgres -c 'SHOW shared_preload_libraries')
  [[ "$now" == "$1" ]] || { echo "bench_preload.sh: shared_preload_libraries is '$now', not '$1'" >&2; exit 1; }
}
ORIGINAL=$(psql -X -At -d postgres -c 'SHOW shared_preload_libraries')
[[ ",$ORIGINAL," == *,dp_agg,* ]] || { echo "bench_preload.sh: the cluster does not preload dp_agg" >&2; exit 1; }
cleanup() { restart_with "$ORIGINAL" >/dev/null 2>&1 || true; }

psql -X -q -d postgres -c "SET client_min_messages = warning" \
  -c "SET dp_agg.allow_drop_extension = on" -c "DROP DATABASE IF EXISTS $DB" -c "CREATE DATABASE $DB"
psql -X -q -d "$DB" -c "CREATE EXTENSION dp_agg"
"$BINDIR/pgbench" -q -i -s "$SCALE" "$DB" >/dev/null 2>&1
trap cleanup EXIT

# CPU time of the server, in clock ticks: the postmaster's own and its reaped
# children's (cutime, cstime: the pgbench backends once they exited), plus that of
# its live children (the background processes).
TICK_US=$(( 1000000 / $(getconf CLK_TCK) ))
server_ticks() {
  local pm
  pm=$(head -1 "$DATA/postmaster.pid")
  { echo "$pm"; pgrep -P "$pm" || true; } | while read -r pid; do
    cat "/proc/$pid/stat" 2>/dev/null || true
  done | awk '{ sub(/^.*\) /, ""); t += $12 + $13 + $14 + $15 } END { print t + 0 }'
}
settle() {  # until no backend of $DB is left (an exited one is in cutime, or a zombie)
  local pm
  pm=$(head -1 "$DATA/postmaster.pid")
  for _ in $(seq 50); do
    pgrep -P "$pm" -f " $DB " >/dev/null || return 0
    sleep 0.1
  done
}
cell() {  # protocol clients seconds -> "tps cpu_us_per_transaction"
  local before out after
  settle; before=$(server_ticks)
  out=$("$BINDIR/pgbench" -n -S -M "$1" -c "$2" -j "$(( $2 < 2 ? 1 : 2 ))" -T "$3" "$DB" 2>/dev/null)
  settle; after=$(server_ticks)
  awk -v out="$out" -v t=$((after - before)) -v us="$TICK_US" 'BEGIN {
    n = split(out, l, "\n"); tps = ""; tx = 0
    for (i = 1; i <= n; i++) {
      if (l[i] ~ /^tps = /) { split(l[i], a, " "); tps = a[3] }
      if (l[i] ~ /^number of transactions actually processed:/) { split(l[i], a, ": "); tx = a[2] + 0 }
    }
    if (tx > 0) printf "%s %.2f\n", tps, t * us / tx; else print "- -"
  }'
}
results=$(mktemp /tmp/dp_agg_bench_preload.XXXXXX)
trap 'cleanup; rm -f "$results"' EXIT
for round in $(seq "$ROUNDS"); do
  if (( round % 2 )); then order=(none dp_agg); else order=(dp_agg none); fi
  for config in "${order[@]}"; do
    restart_with "$([[ $config == none ]] || echo "$ORIGINAL")"
    cell prepared 1 1 >/dev/null   # warm-up
    for protocol in simple prepared; do
      for clients in "${CLIENT_LIST[@]}"; do
        echo "$round $config $protocol $clients $(cell "$protocol" "$clients" "$SECONDS_PER_RUN")" >>"$results"
      done
    done
  done
done

median() { sort -g | awk '{ a[NR] = $1 } END { if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
med() {  # config protocol clients field (5 tps, 6 CPU us per transaction)
  awk -v c="$1" -v p="$2" -v n="$3" -v f="$4" '$2 == c && $3 == p && $4 == n && $f != "-" { print $f }' "$results" | median
}
echo "pgbench -S, scale $SCALE, ${SECONDS_PER_RUN}s per run, medians of $ROUNDS rounds (restarts alternate);"
echo "server CPU per statement: the server processes' user + system time over the run / transactions"
echo
echo "| protocol | clients | tps without dp_agg | tps with dp_agg preloaded | slowdown | server CPU us/statement without | with | ratio |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|"
for protocol in simple prepared; do
  for clients in "${CLIENT_LIST[@]}"; do
    a=$(med none "$protocol" "$clients" 5); b=$(med dp_agg "$protocol" "$clients" 5)
    ca=$(med none "$protocol" "$clients" 6); cb=$(med dp_agg "$protocol" "$clients" 6)
    echo "| $protocol | $clients | $a | $b | $(awk -v a="$a" -v b="$b" 'BEGIN { if (b > 0) printf "%.3f", a / b }') |" \
         "$ca | $cb | $(awk -v a="$ca" -v b="$cb" 'BEGIN { if (a > 0) printf "%.3f", b / a }') |"
    if [[ -n "$PAIRS" ]]; then
      awk -v p="$protocol" -v n="$clients" '
        $3 == p && $4 == n { v[$1, $2] = ($6 == "-" ? "" : $6); r[$1] = 1 }
        END { for (i in r) printf "preload/%s/%s\t%s\t%s\t%s\tcpu_us\n", p, n, i, v[i, "none"], v[i, "dp_agg"] }' \
        "$results" | sort -t$'\t' -k2,2n >>"$PAIRS"
    fi
  done
done
restart_with "$ORIGINAL"
psql -X -q -d postgres -c "SET dp_agg.allow_drop_extension = on" -c "DROP DATABASE $DB" >/dev/null 2>&1 || true
