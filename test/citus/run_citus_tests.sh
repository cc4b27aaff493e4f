#!/usr/bin/env bash
# dp_agg on Citus: 3-node loopback cluster (cluster.sh), then checks of the
# properties of issue 15. Prints "skipped: Citus not installed" without Citus.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# Commands run as user postgres (runuser) inherit the working directory, which
# may be a clone under a root-only directory: work from /tmp instead.
cd /tmp
PG_BINDIR=${PG_BINDIR:-$(${PG_CONFIG:-pg_config} --bindir)}
if [ ! -f "$(${PG_CONFIG:-pg_config} --pkglibdir)/citus.so" ]; then echo "skipped: Citus not installed"; exit 0; fi
export PG_BINDIR
base=${CITUS_PORT_BASE:-55620}; root=/tmp/dp_agg_citus_$base; tls=$root/tls
pass=0; fail=0
ok() { pass=$((pass+1)); echo "ok: $1"; }
ko() { fail=$((fail+1)); echo "FAILED: $1"; }
# A hang fails the test instead of stalling the suite.
export PGOPTIONS="-c statement_timeout=120s"
q() { bash "$here/cluster.sh" psql "$1" -At -c "$2" 2>&1; }
expect_error() { local out; out=$(q "$1" "$2"); if grep -q "$3" <<<"$out"; then ok "$4"; else ko "$4: $out"; fi; }
bash "$here/cluster.sh" start || { echo "FAILED: cluster start"; exit 1; }
trap 'bash "$here/cluster.sh" stop' EXIT
trap 'exit 1' INT TERM
q $base "CREATE TABLE t(id bigint primary key, region text, age int, income float8);
SELECT create_distributed_table('t','id');
INSERT INTO t SELECT g, 'r'||(g%5), (g*7)%100, (g%1000)*1.5 FROM generate_series(1,3000) g;
SELECT dp_agg.set_budget('postgres', 10000, 0.001);" >/dev/null
spent() { q $base "SELECT epsilon_spent FROM dp_agg.budgets WHERE role='postgres'"; }
# every aggregate, three shapes; each query must be charged exactly its epsilon once
aggs="dp_count(id,1.0) dp_count(id,1.0,1e-6) dp_sum(age,0,100,1.0) dp_sum(age,0,100,1.0,1e-6) dp_avg(age,0,100,1.0) dp_avg(age,0,100,1.0,1e-6) dp_count_interval(id,1.0,0.95) dp_sum_interval(income,0,2000,1.0,0.95) dp_avg_interval(income,0,2000,1.0,0.95) dp_median(age::float8,0,100,1.0) dp_percentile(age::float8,0.9,0,100,1.0)"
for a in $aggs; do
  for shape in "" "GROUP BY region" "GROUP BY age" "GROUP BY id"; do
    before=$(spent)
    out=$(q $base "SELECT count(*) FROM (SELECT $a FROM t $shape) s")
    after=$(spent)
    diff=$(/usr/bin/python3 -c "print(float('$after')-float('$before'))" 2>/dev/null || echo x)
    if [[ "$out" =~ ^[0-9]+$ ]] && [ "$diff" = "1.0" ]; then ok "$a $shape (charged 1 on the coordinator)"; else ko "$a $shape: $out (charged $diff)"; fi
  done
done
# noise is on the coordinator, at the documented scale: exact count 3000;
# P(|Laplace(1)| > 30) < 1e-12
n=$(q $base "SELECT dp_count(id, 1.0) FROM t")
if [ "${n:-0}" -ge 2970 ] && [ "${n:-0}" -le 3030 ]; then ok "dp_count within 30 of 3000"; else ko "dp_count $n"; fi
for p in $((base+1)) $((base+2)); do
  c=$(q $p "SELECT count(*) FROM dp_agg.ledger")
  [ "$c" = 0 ] && ok "worker $p ledger unused" || ko "worker $p ledger has $c rows"
done
expect_error $base "SELECT dp_sum(age,0,100,-1.0) FROM t" "epsilon" "bad epsilon refused on the coordinator"
expect_error $base "SELECT coord_combine_agg('dp_sum(integer,integer,integer,float8)'::regprocedure, 'uninitialized'::cstring, null::bigint)" "wrappers cannot be called" "hand-written coord_combine_agg refused"
shard=$(q $((base+1)) "SET citus.override_table_visibility TO off; SELECT relname FROM pg_class WHERE relname LIKE 't\_1%' AND relkind='r' LIMIT 1")
expect_error $((base+1)) "SELECT dp_sum(age,0,100,1.0) FROM $shard" "cannot run on a Citus worker" "direct private query on a worker shard refused"
expect_error $((base+1)) "SELECT worker_partial_agg('dp_sum(integer,integer,integer,float8)'::regprocedure, row(age,0,100,1.0::float8)) FROM $shard" "wrappers cannot be called" "worker_partial_agg without the coordinator certificate refused"
forged=$(runuser -u postgres -- "$PG_BINDIR/psql" -X -At "host=127.0.0.1 port=$((base+1)) user=postgres dbname=postgres sslmode=require sslcert=$tls/forged.crt sslkey=$tls/forged.key" -c "SELECT 1" 2>&1)
if [ "$forged" != 1 ]; then ok "self-signed certificate with the coordinator CN rejected by TLS"; else ko "forged certificate accepted"; fi
# what is not supported on distributed tables is refused before anything is charged
before=$(spent)
expect_error $base "SELECT dp_select(region, array['r1','r2'], 1.0) FROM t" "dp_select is not supported on Citus distributed tables" "dp_select on a distributed table refused"
after=$(spent)
[ "$before" = "$after" ] && ok "refused dp_select charged nothing" || ko "refused dp_select charged: $before -> $after"
# analysts connect as themselves (charges go to the session user)
qa() { bash "$here/cluster.sh" psql "$1" -U "$2" -At -c "$3" 2>&1; }
q $base "CREATE ROLE analyst LOGIN; CREATE ROLE trusted_analyst LOGIN;
CREATE TABLE u(id bigint, v int); SELECT create_distributed_table('u','id');
INSERT INTO u SELECT g, g%10 FROM generate_series(1,1000) g;
GRANT SELECT ON u, t TO trusted_analyst; GRANT SELECT ON u TO analyst;
SELECT dp_agg.set_budget('analyst', 100, 0.001); SELECT dp_agg.set_budget('trusted_analyst', 100, 0.001);
SELECT dp_agg.protect_table('t'); SELECT dp_agg.restrict_role('analyst');" >/dev/null
a_spent() { q $base "SELECT epsilon_spent FROM dp_agg.budgets WHERE role='$1'"; }
expect_error $base "SET ROLE analyst; SELECT dp_count(id, 1.0) FROM t" "does not support restricted roles on protected Citus" "restricted analyst on a protected distributed table refused"
out=$(qa $base analyst "SELECT dp_count(id, 1.0) FROM t")
grep -q "does not support restricted roles on protected Citus" <<<"$out" && ok "restricted analyst (own session) on a protected distributed table refused" || ko "restricted analyst on t: $out"
out=$(qa $base analyst "SELECT id FROM t LIMIT 1")
grep -q "does not support restricted roles\|may not read rows" <<<"$out" && ok "restricted analyst reads no rows of a protected distributed table" || ko "restricted analyst raw read: $out"
# Who may query: an ordinary analyst (SELECT on u and a budget, no other
# grant) runs private aggregates on a distributed table. Exact sum of v: 4500;
# noise Laplace(10/1.0): P(|noise| > 250) = exp(-25) < 1.4e-11.
out=$(qa $base analyst "SELECT dp_sum(v, 0, 10, 1.0) FROM u")
if [[ "$out" =~ ^-?[0-9]+$ ]] && [ "$out" -ge 4250 ] && [ "$out" -le 4750 ]; then ok "ordinary analyst: dp_sum on a distributed table within 250 of 4500"; else ko "analyst on u: $out"; fi
[ "$(a_spent analyst)" = 1 ] && ok "ordinary analyst charged once on the coordinator" || ko "analyst charged $(a_spent analyst)"
# ... but cannot obtain exact partial states with the support functions
# Citus needs them to hold, on the coordinator or on a worker
for p in $base $((base+1)); do
  out=$(qa $p analyst "CREATE AGGREGATE pg_temp.leak(integer, integer, integer, float8) (SFUNC = dp_agg.int4_transfn, STYPE = dp_agg.aggregate_state, INITCOND = 'uninitialized')")
  grep -q "cannot be built on dp_agg's support functions" <<<"$out" && ok "node $p: analyst's aggregate over dp_agg's transition function refused" || ko "node $p: CREATE AGGREGATE: $out"
  out=$(qa $p analyst "CREATE FUNCTION pg_temp.made_up(s dp_agg.aggregate_state, v integer) RETURNS dp_agg.aggregate_state LANGUAGE sql AS \$\$ SELECT s \$\$; CREATE AGGREGATE pg_temp.fake(integer) (SFUNC = pg_temp.made_up, STYPE = dp_agg.aggregate_state, COMBINEFUNC = dp_agg.combine, FINALFUNC = dp_agg.sum_final_int8)")
  grep -q "cannot be built on dp_agg's support functions" <<<"$out" && ok "node $p: analyst's aggregate over dp_agg's combine and final functions refused" || ko "node $p: CREATE AGGREGATE fake: $out"
  out=$(qa $p analyst "SELECT dp_agg.sum_final_int8('uninitialized')")
  grep -q "can only be called as part of a private aggregate" <<<"$out" && ok "node $p: direct call of a final function refused" || ko "node $p: direct final: $out"
done
out=$(qa $base analyst "SELECT coord_combine_agg('dp_sum(integer,integer,integer,float8)'::regprocedure, 'v1 kind=1 count=1 sum=1 epsilon=0x1p+0 lower=0x0p+0 upper=0x1p+0 lower_units=0 upper_units=1 unit_exponent=0 delta=0x0p+0 confidence=0x0p+0'::cstring, null::bigint)")
grep -q "wrappers cannot be called" <<<"$out" && ok "analyst's hand-made state through coord_combine_agg refused" || ko "analyst coord_combine_agg: $out"
ushard=$(q $((base+1)) "SET citus.override_table_visibility TO off; SELECT relname FROM pg_class WHERE relname LIKE 'u\_1%' AND relkind='r' LIMIT 1")
out=$(qa $((base+1)) analyst "SELECT worker_partial_agg('dp_sum(integer,integer,integer,float8)'::regprocedure, row(v,0,10,1.0::float8)) FROM $ushard")
grep -q "wrappers cannot be called" <<<"$out" && ok "analyst's worker_partial_agg on a worker shard refused" || ko "analyst worker_partial_agg: $out"
[ "$(a_spent analyst)" = 1 ] && ok "refusals charged nothing" || ko "analyst charged $(a_spent analyst) after refusals"
out=$(qa $base trusted_analyst "SELECT count(*) FROM (SELECT dp_sum(v, 0, 10, 1.0) FROM u GROUP BY v) s")
[ "$out" = 10 ] && ok "non-superuser analyst, GROUP BY on a distributed table" || ko "trusted analyst on u: $out"
out=$(qa $base trusted_analyst "SELECT count(*) FROM (SELECT dp_count(id, 1.0) FROM t GROUP BY id) s")
[ "$out" = 3000 ] && ok "non-superuser analyst on a protected distributed table (not restricted)" || ko "trusted analyst on t: $out"
[ "$(a_spent trusted_analyst)" = 2 ] && ok "non-superuser analyst charged once per query (2 x 1.0)" || ko "trusted analyst charged $(a_spent trusted_analyst)"
for p in $((base+1)) $((base+2)); do
  c=$(q $p "SELECT count(*) FROM dp_agg.ledger")
  [ "$c" = 0 ] && ok "worker $p ledger still unused" || ko "worker $p ledger has $c rows"
done
# the privacy audit's count and sum noise checks against a distributed table
audit_out=$(PGHOST=$root /usr/bin/python3 "$here/audit_citus.py" "$base" 2>&1)
echo "$audit_out"
pass=$((pass + $(grep -c '^ok: ' <<<"$audit_out")))
audit_failed=$(grep -c '^FAILED: ' <<<"$audit_out")
[ "$(grep -c '^ok: ' <<<"$audit_out")" = 4 ] || audit_failed=$((audit_failed + 1))
fail=$((fail + audit_failed))
echo "dp_agg citus tests: $pass passed, $fail failed"
[ $fail = 0 ]
