#!/usr/bin/env bash
# make demo: a throwaway cluster with dp_agg preloaded, the sample patients
# table, and a tour of true vs private answers. The cluster keeps running
# afterwards so that you can try your own queries; `make stop` removes it.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"

bash test/scripts/cluster.sh start
eval "$(bash test/scripts/cluster.sh env)"
psql -X -q -v ON_ERROR_STOP=1 -f test/demo/demo.sql

cat <<EOT

The demo cluster is still running. Try your own queries:
  psql -h $PGHOST -p $PGPORT -U $PGUSER $PGDATABASE
  e.g. SELECT sex, dp_avg(height_cm, 120, 220, 0.5) FROM patients GROUP BY sex;
Stop and delete it with: make stop
EOT
