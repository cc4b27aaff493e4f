#!/usr/bin/env bash
# Randomized response (local DP) against central DP at the same epsilon: the
# RMSE of dp_rr_proportion over answers randomized by dp_agg.randomized_response
# and the RMSE of dp_avg(answer::int, 0, 1, epsilon) over the true answers
# (central model, Laplace), on n respondents of whom 30% answer yes.
#
#   eval "$(bash test/scripts/cluster.sh env)"; bash test/bench/bench_randomized_response.sh
#
# Prints one line per (n, epsilon): both RMSEs and their ratio. Charges the
# session user's budget for the central releases (one call site per line).
set -euo pipefail
PSQL=${PSQL:-psql}
run() { "$PSQL" -X -At -v ON_ERROR_STOP=1 -c "$1"; }
drop() {  # a database holding a dp_agg ledger is dropped only with a superuser's confirmation
  PGDATABASE=postgres "$PSQL" -X -q -c 'SET client_min_messages = warning' \
    -c 'SET dp_agg.allow_drop_extension = on' -c 'DROP DATABASE IF EXISTS dp_agg_rr_bench'
}
drop
run "CREATE DATABASE dp_agg_rr_bench" >/dev/null
trap drop EXIT
export PGDATABASE=dp_agg_rr_bench
run "CREATE EXTENSION dp_agg" >/dev/null
run "SELECT dp_agg.set_budget(session_user::regrole, 1e9, 0.5)" >/dev/null
printf '%-8s %-8s %-6s %-14s %-14s %s\n' n epsilon reps rmse_local rmse_central local/central
for config in "1000 1.0 400" "10000 1.0 100" "10000 0.5 100" "100000 1.0 20"; do
  read -r n eps reps <<<"$config"
  sql="CREATE TEMP TABLE d AS SELECT r, i % 10 < 3 AS truth FROM generate_series(1, $reps) r, generate_series(1, $n) i;
SELECT sqrt(avg((l - 0.3)^2)), sqrt(avg((c - 0.3)^2))
FROM (SELECT r, dp_rr_proportion(dp_agg.randomized_response(truth, $eps), $eps) AS l
      FROM d GROUP BY r) lo
JOIN (SELECT r, dp_avg(truth::int, 0, 1, $eps)::float8 AS c FROM d GROUP BY r) ce USING (r);"
  out=$(run "$sql" | tail -1)
  local_rmse=${out%|*}; central_rmse=${out#*|}
  ratio=$(/usr/bin/python3 -c "print(f'{$local_rmse / $central_rmse:.1f}')")
  printf '%-8s %-8s %-6s %-14.6f %-14.6f %s\n' "$n" "$eps" "$reps" "$local_rmse" "$central_rmse" "$ratio"
done
