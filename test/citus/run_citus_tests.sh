#!/usr/bin/env bash
# dp_agg on Citus: 3-node loopback cluster (cluster.sh), then checks of the
# properties of issue 15. Prints "skipped: Citus not installed" without Citus.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
PG_BINDIR=${PG_BINDIR:-$(${PG_CONFIG:-pg_config} --bindir)}
if [ ! -f "$(${PG_CONFIG:-pg_config} --pkglibdir)/citus.so" ]; then echo "skipped: Citus not installed"; exit 0; fi
export PG_BINDIR
base=${CITUS_PORT_BASE:-55620}; root=/tmp/dp_agg_citus_$base; tls=$root/tls
pass=0; fail=0
ok() { pass=$((pass+1)); echo "ok: $1"; }
ko() { fail=$((fail+1)); echo "FAILED: $1"; }
q() { bash "$here/cluster.sh" psql "$1" -At -c "$2" 2>&1; }
expect_error() { local out; out=$(q "$1" "$2"); if grep -q "$3" <<<"$out"; then ok "$4"; else ko "$4: $out"; fi; }
bash "$here/cluster.sh" start || { echo "FAILED: cluster start"; exit 1; }
trap 'bash "$here/cluster.sh" stop' EXIT
q $base "CREATE TABLE t(id bigint primary key, region text, age int, income float8);
SELECT create_distributed_table('t','id');
INSERT INTO t SELECT g, 'r'||(g%5), (g*7)%100, (g%1000)*1.5 FROM generate_series(1,20000) g;
SELECT dp_agg.set_budget('postgres', 10000, 0.001);" >/dev/null
spent() { q $base "SELECT epsilon_spent FROM dp_agg.budgets WHERE role='postgres'"; }
# every aggregate, three shapes; each query must be charged exactly its epsilon once
aggs="dp_count(id,1.0) dp_count(id,1.0,1e-6) dp_sum(age,0,100,1.0) dp_sum(age,0,100,1.0,1e-6) dp_avg(age,0,100,1.0) dp_avg(age,0,100,1.0,1e-6) dp_count_interval(id,1.0,0.95) dp_sum_interval(income,0,2000,1.0,0.95) dp_avg_interval(income,0,2000,1.0,0.95) dp_median(age::float8,0,100,1.0) dp_percentile(age::float8,0.9,0,100,1.0)"
for a in $aggs; do
  for shape in "" "GROUP BY region" "GROUP BY id"; do
    before=$(spent)
    out=$(q $base "SELECT count(*) FROM (SELECT $a FROM t $shape) s")
    after=$(spent)
    diff=$(/usr/bin/python3 -c "print(float('$after')-float('$before'))" 2>/dev/null || echo x)
    if [[ "$out" =~ ^[0-9]+$ ]] && [ "$diff" = "1.0" ]; then ok "$a $shape (charged 1 on the coordinator)"; else ko "$a $shape: $out (charged $diff)"; fi
  done
done
# noise is on the coordinator, at the documented scale: exact count 20000;
# P(|Laplace(1)| > 30) < 1e-12
n=$(q $base "SELECT dp_count(id, 1.0) FROM t")
if [ "${n:-0}" -ge 19970 ] && [ "${n:-0}" -le 20030 ]; then ok "dp_count within 30 of 20000"; else ko "dp_count $n"; fi
for p in $((base+1)) $((base+2)); do
  c=$(q $p "SELECT count(*) FROM dp_agg.ledger")
  [ "$c" = 0 ] && ok "worker $p ledger unused" || ko "worker $p ledger has $c rows"
done
expect_error $base "SELECT dp_sum(age,0,100,-1.0) FROM t" "epsilon" "bad epsilon refused on the coordinator"
expect_error $base "SELECT coord_combine_agg('dp_sum(integer,integer,integer,float8)'::regprocedure, 'uninitialized'::cstring, null::bigint)" "wrappers cannot be called" "hand-written coord_combine_agg refused"
shard=$(q $((base+1)) "SELECT relname FROM pg_class WHERE relname LIKE 't\_1%' AND relkind='r' LIMIT 1")
expect_error $((base+1)) "SELECT dp_sum(age,0,100,1.0) FROM $shard" "cannot run on a Citus worker" "direct private query on a worker shard refused"
expect_error $((base+1)) "SELECT worker_partial_agg('dp_sum(integer,integer,integer,float8)'::regprocedure, row(age,0,100,1.0::float8)) FROM $shard" "wrappers cannot be called" "worker_partial_agg without the coordinator certificate refused"
forged=$(runuser -u postgres -- "$PG_BINDIR/psql" -X -At "host=127.0.0.1 port=$((base+1)) user=postgres dbname=postgres sslmode=require sslcert=$tls/forged.crt sslkey=$tls/forged.key" -c "SELECT 1" 2>&1)
if [ "$forged" != 1 ]; then ok "self-signed certificate with the coordinator CN rejected by TLS"; else ko "forged certificate accepted"; fi
echo "dp_agg citus tests: $pass passed, $fail failed"
[ $fail = 0 ]
