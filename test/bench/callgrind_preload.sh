#!/usr/bin/env bash
# Benchmark (not a test): instructions per pgbench -S statement with dp_agg in
# shared_preload_libraries and without it (issue 31, row 13), counted by
# valgrind's callgrind, which the machine's load does not change. The test
# cluster's postmaster (test/scripts/cluster.sh; stopped here, restarted with its
# preload setting at the end) runs under callgrind, once with each preload
# setting; one pgbench client runs N1 then N2 statements per protocol (simple,
# prepared), after a warm-up run, each in a backend of its own; per statement:
# (instructions of the N2 backend - those of the N1 backend) / (N2 - N1), so
# that connection start-up cancels out. The statements touch no protected table
# and no dp_ function. With --diff, also the per-function differences
# (callgrind_annotate, exclusive counts) above 40 instructions per statement.
#   test/bench/callgrind_preload.sh [--n1 N] [--n2 N] [--scale N] [--diff] [--keep DIR]
#     defaults: 1000, 3000, scale 1; the callgrind files go to DIR (default: a
#     temporary directory, removed)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
N1=1000
N2=3000
SCALE=1
DIFF=0
KEEP=
while [[ $# -gt 0 ]]; do
  case "$1" in
    --n1) N1=${2:?}; shift 2 ;;
    --n2) N2=${2:?}; shift 2 ;;
    --scale) SCALE=${2:?}; shift 2 ;;
    --diff) DIFF=1; shift ;;
    --keep) KEEP=${2:?}; shift 2 ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    *) echo "callgrind_preload.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
for n in "$N1" "$N2" "$SCALE"; do
  [[ "$n" =~ ^[1-9][0-9]*$ ]] || { echo "options take positive integers" >&2; exit 2; }
done
(( N2 > N1 )) || { echo "--n2 must exceed --n1" >&2; exit 2; }
command -v valgrind >/dev/null && command -v callgrind_annotate >/dev/null ||
  { echo "callgrind_preload.sh: needs valgrind (callgrind)" >&2; exit 1; }
[[ -f "$ROOT/.cluster_env" ]] || { echo "callgrind_preload.sh: no test cluster (test/scripts/cluster.sh start)" >&2; exit 1; }
# shellcheck disable=SC1091
. "$ROOT/.cluster_env"
BINDIR=${PG_BINDIR:-$("${PG_CONFIG:-pg_config}" --bindir)}
DATA=$DP_AGG_CLUSTER_DIR/data
DB=dp_agg_bench_callgrind
as_pg() { if [[ $(id -u) -eq 0 ]]; then runuser -u postgres -- "$@"; else "$@"; fi; }
OUT=${KEEP:-$(mktemp -d)}
mkdir -p "$OUT"
chmod 777 "$OUT"
ORIGINAL=$(psql -X -At -d postgres -c 'SHOW shared_preload_libraries')
[[ ",$ORIGINAL," == *,dp_agg,* ]] || { echo "callgrind_preload.sh: the cluster does not preload dp_agg" >&2; exit 1; }
psql -X -q -d postgres -c "SET client_min_messages = warning" \
  -c "SET dp_agg.allow_drop_extension = on" -c "DROP DATABASE IF EXISTS $DB" -c "CREATE DATABASE $DB"
psql -X -q -d "$DB" -c "CREATE EXTENSION dp_agg"
"$BINDIR/pgbench" -q -i -s "$SCALE" "$DB" >/dev/null 2>&1

stop() { (cd / && as_pg "$BINDIR/pg_ctl" -D "$DATA" -m fast -w -t 300 stop >/dev/null); }
restore() {
  (cd / && as_pg "$BINDIR/pg_ctl" -D "$DATA" -l "$DP_AGG_CLUSTER_DIR/server.log" -w -t 60 start >/dev/null)
  [[ -n "$KEEP" ]] || rm -rf "$OUT"
}
stop
trap restore EXIT

# The backend of the run: the biggest callgrind file with PostgresMain among the new ones.
backend_ir() {
  local best=0 t f
  for f in "$@"; do
    grep -q 'PostgresMain' "$f" 2>/dev/null || continue
    t=$(awk '/^summary:/ { print $2; exit }' "$f")
    (( t > best )) && best=$t
  done
  echo "$best"
}
run_config() {  # preload tag
  local dir=$OUT/$2 before new n mode
  mkdir -p "$dir"; chmod 777 "$dir"
  (cd / && as_pg valgrind --tool=callgrind --callgrind-out-file="$dir/cg.%p" \
     "$BINDIR/postgres" -D "$DATA" -c shared_preload_libraries="$1" >"$dir/server.log" 2>&1) &
  for _ in $(seq 1 300); do "$BINDIR/pg_isready" -q && break; sleep 1; done
  for mode in simple prepared; do
    "$BINDIR/pgbench" -n -S -M "$mode" -t 200 -c 1 "$DB" >/dev/null 2>&1
    for n in "$N1" "$N2"; do
      before=$(ls "$dir")
      "$BINDIR/pgbench" -n -S -M "$mode" -t "$n" -c 1 "$DB" >/dev/null 2>&1
      new=
      for _ in $(seq 1 60); do
        sleep 1
        new=$(comm -13 <(echo "$before") <(ls "$dir") | grep '^cg\.' || true)
        [[ -n "$new" ]] && grep -q PostgresMain $(printf "$dir/%s " $new) 2>/dev/null && break
      done
      echo "$mode $n $(backend_ir $(printf "$dir/%s " $new)) $(printf "%s " $new)" >>"$dir/index"
    done
  done
  stop
  wait
}
run_config "" none
run_config "$ORIGINAL" dp_agg

echo "pgbench -S, scale $SCALE, one client; instructions per statement (callgrind), ($N2 - $N1) statements"
echo
echo "| protocol | without dp_agg | dp_agg preloaded | ratio |"
echo "|---|---:|---:|---:|"
for mode in simple prepared; do
  per() { awk -v m="$mode" -v n1="$N1" -v n2="$N2" '$1 == m && $2 == n1 { a = $3 } $1 == m && $2 == n2 { b = $3 }
          END { printf "%.0f", (b - a) / (n2 - n1) }' "$OUT/$1/index"; }
  a=$(per none); b=$(per dp_agg)
  echo "| $mode | $a | $b | $(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.3f", b / a }') |"
done

if [[ $DIFF == 1 ]]; then
  for mode in simple prepared; do
    echo
    echo "$mode: per-function difference, instructions per statement (dp_agg preloaded - without)"
    /usr/bin/python3 - "$OUT" "$mode" "$N1" "$N2" <<'PY'
import collections, re, subprocess, sys
out, mode, n1, n2 = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
def backend(tag, n):
    for line in open(f"{out}/{tag}/index"):
        p = line.split()
        if p[0] == mode and int(p[1]) == n:
            files = [f"{out}/{tag}/{f}" for f in p[3:] if "PostgresMain" in open(f"{out}/{tag}/{f}", errors="replace").read()]
            return max(files, key=lambda f: int(re.search(r"^summary: (\d+)", open(f, errors="replace").read(), re.M).group(1)))
def load(path):
    text = subprocess.run(["callgrind_annotate", "--threshold=100", "--auto=no", path], capture_output=True, text=True).stdout
    counts = collections.Counter()
    for line in text.splitlines():
        m = re.match(r"\s*([\d,]+) \([^)]*\)\s+(.*?)(?: \[(.*)\])?$", line)
        if not m or "PROGRAM TOTALS" in line: continue
        name = m.group(2) if m.group(2).startswith("???") else m.group(2).split(":", 1)[-1]
        counts[re.sub(r"'\d+$", "", name) + " [" + (m.group(3) or "").split("/")[-1] + "]"] += int(m.group(1).replace(",", ""))
    return counts
def per(tag):
    a, b = load(backend(tag, n2)), load(backend(tag, n1))
    return {k: (a[k] - b[k]) / (n2 - n1) for k in set(a) | set(b)}
base, dp = per("none"), per("dp_agg")
for d, k in sorted(((dp.get(k, 0) - base.get(k, 0), k) for k in set(base) | set(dp)), key=lambda x: -abs(x[0])):
    if abs(d) < 40: break
    print(f"{d:9.1f}  {k}")
PY
  done
fi
