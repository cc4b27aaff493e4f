#!/usr/bin/env bash
# Accuracy of the core mechanisms next to the reference algorithms (issue 14):
# Gaussian accounting, quantile RMSE, mean-interval coverage and width,
# Gaussian mean calibration, group selection's 0.5-release point next to the
# optimum of Desfontaines et al. (issue 29; --group-selection: only that).
# Pure C++ (no PostgreSQL needed).
#   test/bench/bench_accuracy.sh [--quick]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
CXX=${CXX:-g++}
"$CXX" -std=c++17 -O2 -Wall -I"$root/src/core" -o "$work/accuracy_bench" \
  "$here/accuracy_bench.cpp" "$root"/src/core/*.cpp -lssl -lcrypto -lmpfr -lgmp
"$work/accuracy_bench" "$@"

# End to end, when a cluster is reachable (PGHOST set, e.g. after
# eval "$(bash test/scripts/cluster.sh env)"): a role that must be
# (1, 1e-6)-DP, i.e. a zCDP budget of dp_agg.zcdp_rho(1, 1e-6), runs 100
# Gaussian counts at dp_agg.gaussian_count_epsilon(zcdp_rho / 100),
# each over 1,000 groups of one row (one release per group), so the measured
# sigma comes from 100,000 releases; all 100 must be admitted, the 101st not.
if [[ -n "${PGHOST:-}" && "${1:-}" != "--quick" ]]; then
  db=dp_agg_bench_accountant
  PGOPTIONS="-c client_min_messages=warning" psql -X -q -d postgres \
    -c "SET dp_agg.allow_drop_extension = on" -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db"
  psql -X -q -A -t -d "$db" -v ON_ERROR_STOP=1 <<'SQL'
CREATE EXTENSION dp_agg;
CREATE TABLE one_row_groups AS SELECT g FROM generate_series(1, 1000) g;
SET client_min_messages = warning;
DROP ROLE IF EXISTS dp_bench_zcdp;
RESET client_min_messages;
CREATE ROLE dp_bench_zcdp;
GRANT SELECT ON one_row_groups TO dp_bench_zcdp;
SELECT dp_agg.set_budget_zcdp('dp_bench_zcdp', dp_agg.zcdp_rho(1, 1e-6));
CREATE TABLE answers (c bigint);
GRANT INSERT ON answers TO dp_bench_zcdp;
SET SESSION AUTHORIZATION dp_bench_zcdp;
DO $$
DECLARE
  share float8 := dp_agg.gaussian_count_epsilon(dp_agg.zcdp_rho(1, 1e-6) / 100, 1e-6);
  admitted int := 0;
BEGIN
  FOR i IN 1..101 LOOP
    BEGIN
      EXECUTE format('INSERT INTO answers SELECT dp_count(g, %s, 1e-6) FROM one_row_groups '
                     'GROUP BY g', share);
      admitted := admitted + 1;
    EXCEPTION WHEN SQLSTATE 'ZP001' THEN
      NULL;
    END;
  END LOOP;
  RAISE NOTICE 'admitted % of 101', admitted;
END $$;
RESET SESSION AUTHORIZATION;
SELECT format('  SQL end to end, zCDP budget zcdp_rho(1, 1e-6) = %s: %s of 101 counts admitted, '
              '%s releases, sigma measured %s vs zCDP optimum %s '
              '(ratio %s; target <= 1.10); an (epsilon, delta) budget (1, 1e-6) would give %s',
              dp_agg.zcdp_rho(1, 1e-6), count(*) / 1000, count(*), round(sqrt(avg((c - 1)^2))::numeric, 2),
              round(sqrt(100 / (2 * dp_agg.zcdp_rho(1, 1e-6)))::numeric, 2),
              round((sqrt(avg((c - 1)^2)) / sqrt(100 / (2 * dp_agg.zcdp_rho(1, 1e-6))))::numeric, 3),
              '412.4')
FROM answers;
DROP OWNED BY dp_bench_zcdp;
SQL
  psql -X -q -d postgres -c "SET dp_agg.allow_drop_extension = on" -c "DROP DATABASE $db" \
    -c "DROP ROLE dp_bench_zcdp"
fi
