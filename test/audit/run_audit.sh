#!/usr/bin/env bash
# Black-box privacy audit of dp_agg through SQL (project issue 6).
#
#   test/audit/run_audit.sh [--long] [--report] [--self-check] [--samples N] [--jobs N]
#
#   (no option)   CI pass, under a minute on 2 cores (about 45 s): every audit (count, sum,
#                 mean; dp_select; dp_median/dp_percentile; the (epsilon, delta) Gaussian
#                 forms), the exact-distribution, calibration and float checks, the accountant
#                 (10 Gaussian counts sharing (1, 1e-6) audited as a whole), and a small
#                 self-check under the test faults
#   --long        500,000 releases per table (150,000 for quantiles), every fault self-check,
#                 releases at 1.25 and 1.1 x the claimed epsilon (1.5 x for the Gaussian
#                 forms), replicated CI self-checks (about 9 minutes)
#   --self-check  only the self-check: every audit under each fault it must catch
#   --report      also write test/audit/REPORT.md and test/audit/privacy_loss.png
#
# Needs a running server with dp_agg in shared_preload_libraries and PG* variables for
# a superuser connection, e.g. eval "$(bash test/scripts/cluster.sh env)". Runs in the
# database $DP_AGG_AUDIT_DB (default dp_agg_audit), which is reserved for it: created at
# the start (one left over by an interrupted run is dropped first), given the extension
# and a privacy budget for the session user, and dropped at the end.
# Prints one line per audit and ends with "audit: N passed, M failed"; exit status 1 on
# any failure, 2 on a usage or connection error.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
PYTHON=/usr/bin/python3   # Debian's, with python3-psycopg2, -scipy, -numpy, -matplotlib
exec "$PYTHON" "$HERE/audit.py" --command-label "test/audit/run_audit.sh $*" "$@"
