#!/usr/bin/env bash
# make demo: a throwaway cluster with dp_agg preloaded, the sample patients
# table, and a tour of true vs private answers. The cluster keeps running
# afterwards so that you can try your own queries; `make stop` removes it.
#
# It is the "demo" cluster of test/scripts/cluster.sh (own temp dir, port
# DP_AGG_DEMO_PORT, default 54330, and state file), so make test never stops it.
#
# Env: DEMO_TCP=1         also listen on 127.0.0.1:PORT for BI tools (JDBC, ODBC, ...);
#                         logins over TCP need a scram-sha-256 password
#      DEMO_PASSWORD      the analyst's password (default: a fresh random one)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
export DP_AGG_CLUSTER_NAME=demo
ANALYST=analyst

tcp_option=()
if [[ ${DEMO_TCP:-0} == 1 ]]; then tcp_option=(--tcp); fi
bash test/scripts/cluster.sh start "${tcp_option[@]}"
eval "$(bash test/scripts/cluster.sh env)"
psql -X -q -v ON_ERROR_STOP=1 -f test/demo/demo.sql

# A restricted analyst that logs in, the way a BI tool or a colleague would:
# README's quick start for an administrator, run as written
# (test/demo/check_demo.sh checks that the two are the same statements).
password=${DEMO_PASSWORD:-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')}
PGOPTIONS='-c client_min_messages=warning' psql -X -q -o /dev/null -v ON_ERROR_STOP=1 \
  -v password="$password" -f test/demo/admin_quickstart.sql

cat <<EOT

The demo cluster is still running. Try your own queries:
  as the superuser:            psql -h $PGHOST -p $PGPORT -U $PGUSER $PGDATABASE
  as the restricted analyst:   psql -h $PGHOST -p $PGPORT -U $ANALYST $PGDATABASE
  e.g. SELECT sex, dp_avg(height_cm, 120, 220, 0.5) FROM patients GROUP BY sex;
The analyst "$ANALYST" (budget: epsilon 50, delta 1e-3) sees patients only through dp_ aggregates.
EOT
if [[ ${DEMO_TCP:-0} == 1 ]]; then
  cat <<EOT

Listening on 127.0.0.1:$PGPORT for BI tools (user $ANALYST, password $password):
  psql URI:  postgresql://$ANALYST:$password@127.0.0.1:$PGPORT/$PGDATABASE
  JDBC URL:  jdbc:postgresql://127.0.0.1:$PGPORT/$PGDATABASE?user=$ANALYST&password=$password
  ODBC:      Driver={PostgreSQL Unicode};Server=127.0.0.1;Port=$PGPORT;Database=$PGDATABASE;Uid=$ANALYST;Pwd=$password
EOT
else
  echo "(make demo DEMO_TCP=1 also listens on 127.0.0.1 with a password, for BI tools.)"
fi
echo "Stop and delete it with: make stop"
