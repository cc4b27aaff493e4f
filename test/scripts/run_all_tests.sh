#!/usr/bin/env bash
# make test: build and install dp_agg, then run every suite against a
# throwaway cluster. Prints one closing line
#   dp_agg tests: N passed, M failed[, K suite(s) skipped (NAME: why; ...)]
# counting individual tests of all suites, and exits non-zero on any failure.
# A suite that cannot run here (exit status 77: Citus not installed) is reported
# as skipped, never counted as passed; where it must run (CI sets
# DP_AGG_REQUIRE_CITUS=1), it fails instead.
#
# DP_AGG_TEST_STAGES="boundary regress citus ..." runs only those stages (build and
# the cluster always): boundary unit regress docs settings_doc demo adaptive_certificates
# kind_switch gaussian_dp upgrade protocol clients audit fuzz citus tap.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"

passed=0
failed=0
failed_suites=()
skipped_suites=()
log_dir=$(mktemp -d /tmp/dp_agg_test_logs.XXXXXX)

wanted() {  # stage name: selected by DP_AGG_TEST_STAGES (all when unset)
  [[ -z "${DP_AGG_TEST_STAGES:-}" || " $DP_AGG_TEST_STAGES " == *" $1 "* ]]
}

note_suite() {  # name status passed_count failed_count [why skipped]
  if [[ $2 -eq 77 ]]; then
    skipped_suites+=("$1: ${5:-skipped}")
    return
  fi
  passed=$((passed + $3))
  failed=$((failed + $4))
  if [[ $2 -ne 0 ]]; then
    failed_suites+=("$1")
    # A suite that failed without naming a failing test still counts once.
    [[ $4 -gt 0 ]] || failed=$((failed + 1))
  fi
}

finish() {
  bash test/scripts/cluster.sh stop >/dev/null 2>&1 || true
  echo
  if [[ ${#failed_suites[@]} -gt 0 ]]; then
    echo "failed suites: ${failed_suites[*]} (logs in $log_dir)"
  fi
  local skipped="" joined
  if [[ ${#skipped_suites[@]} -gt 0 ]]; then
    joined=$(printf '%s; ' "${skipped_suites[@]}")
    local noun=suites
    [[ ${#skipped_suites[@]} -eq 1 ]] && noun=suite
    skipped=", ${#skipped_suites[@]} $noun skipped (${joined%; })"
  fi
  echo "dp_agg tests: $passed passed, $failed failed$skipped"
  [[ $failed -eq 0 && ${#failed_suites[@]} -eq 0 ]]
}

echo "== build and install"
if ! make --no-print-directory -j2 all >"$log_dir/build.log" 2>&1 ||
   ! make --no-print-directory install >>"$log_dir/build.log" 2>&1; then
  tail -40 "$log_dir/build.log"
  note_suite build 1 0 1
  finish
  exit 1
fi

if wanted boundary; then
  echo "== boundary check (static: CallCore bodies, noexcept, core includes; with self-test)"
  boundary_status=0
  /usr/bin/python3 test/scripts/check_boundary.py --self-test >"$log_dir/boundary.log" 2>&1 || boundary_status=1
  /usr/bin/python3 test/scripts/check_boundary.py 2>&1 | tee -a "$log_dir/boundary.log" || boundary_status=1
  [[ ${PIPESTATUS[0]} -eq 0 ]] || boundary_status=1
  tail -1 "$log_dir/boundary.log"
  if [[ $boundary_status -eq 0 ]]; then note_suite boundary 0 2 0; else note_suite boundary 1 0 1; fi
fi

if wanted docs; then
  echo "== docs and release records (architecture map, released versions, upgrade privilege tail)"
  : >"$log_dir/docs.log"
  docs_failed=0
  for check in "check_architecture_doc.py --self-test" check_architecture_doc.py check_release.py privilege_tail.py; do
    # shellcheck disable=SC2086  # the check and its option
    /usr/bin/python3 test/scripts/$check >>"$log_dir/docs.log" 2>&1 || docs_failed=$((docs_failed + 1))
  done
  grep -E '^not ok|finding|^ok|self-test' "$log_dir/docs.log"
  note_suite docs $((docs_failed > 0)) $((4 - docs_failed)) "$docs_failed"
fi

if wanted unit; then
  echo "== unit tests (GoogleTest, pure C++ core)"
  make --no-print-directory -C test/unit run 2>&1 | tee "$log_dir/unit.log"
  status=${PIPESTATUS[0]}
  unit_passed=$(sed -n 's/.*\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$log_dir/unit.log" | tail -1)
  unit_failed=$(sed -n 's/.*\[  FAILED  \] \([0-9]*\) test.*/\1/p' "$log_dir/unit.log" | tail -1)
  note_suite unit "$status" "${unit_passed:-0}" "${unit_failed:-0}"
fi

echo "== start a throwaway cluster with dp_agg preloaded"
if ! bash test/scripts/cluster.sh start; then
  note_suite cluster 1 0 1
  finish
  exit 1
fi
eval "$(bash test/scripts/cluster.sh env)"

if wanted regress; then
  echo "== pg_regress suites"
  make --no-print-directory installcheck 2>&1 | tee "$log_dir/regress.log"
  status=${PIPESTATUS[0]}
  regress_total=$(grep -cE '^(test|     ) .* \.\.\. ' "$log_dir/regress.log" || true)
  regress_failed=$(grep -cE '^(test|     ) .* \.\.\. FAILED' "$log_dir/regress.log" || true)
  if [[ $status -ne 0 && -f regression.diffs ]]; then
    head -200 regression.diffs
    cp regression.diffs "$log_dir/"
  fi
  note_suite regress "$status" $((regress_total - regress_failed)) "$regress_failed"
fi

if wanted settings_doc; then
  echo "== settings reference (docs/settings.md against pg_settings)"
  /usr/bin/python3 test/scripts/check_settings_doc.py 2>&1 | tee "$log_dir/settings_doc.log"
  status=${PIPESTATUS[0]}
  note_suite settings_doc "$status" "$(grep -c '^ok ' "$log_dir/settings_doc.log")" \
    "$(grep -c '^not ok ' "$log_dir/settings_doc.log")"
fi

if wanted demo; then
  echo "== demo and quick starts (issue 28: README's quick starts run on the demo's data; its refusals say why)"
  bash test/demo/check_demo.sh 2>&1 | tee "$log_dir/demo.log"
  status=${PIPESTATUS[0]}
  note_suite demo "$status" "$(grep -c '^ok ' "$log_dir/demo.log")" \
    "$(grep -c '^not ok ' "$log_dir/demo.log")"
fi

if wanted adaptive_certificates; then
  echo "== adaptive certificates (one certificate per budget kind)"
  /usr/bin/python3 test/accountant/adaptive_certificates.py 2>&1 | tee "$log_dir/adaptive_certificates.log"
  status=${PIPESTATUS[0]}
  note_suite adaptive_certificates "$status" "$(grep -c '^ok ' "$log_dir/adaptive_certificates.log")" \
    "$(grep -c '^not ok ' "$log_dir/adaptive_certificates.log")"
fi

if wanted kind_switch; then
  echo "== kind switch (a change of budget kind after spending)"
  /usr/bin/python3 test/accountant/kind_switch.py 2>&1 | tee "$log_dir/kind_switch.log"
  status=${PIPESTATUS[0]}
  note_suite kind_switch "$status" "$(grep -c '^ok ' "$log_dir/kind_switch.log")" \
    "$(grep -c '^not ok ' "$log_dir/kind_switch.log")"
fi

if wanted gaussian_dp; then
  echo "== Gaussian DP (why there is no mu-GDP budget kind yet; which kind to pick)"
  /usr/bin/python3 test/accountant/gaussian_dp.py 2>&1 | tee "$log_dir/gaussian_dp.log"
  status=${PIPESTATUS[0]}
  note_suite gaussian_dp "$status" "$(grep -c '^ok ' "$log_dir/gaussian_dp.log")" \
    "$(grep -c '^not ok ' "$log_dir/gaussian_dp.log")"
fi

if wanted upgrade; then
  echo "== upgrade from the previous release (ALTER EXTENSION dp_agg UPDATE keeps budgets, ledger, labels; equals a fresh install)"
  bash test/upgrade/run_upgrade_test.sh 2>&1 | tee "$log_dir/upgrade.log"
  status=${PIPESTATUS[0]}
  note_suite upgrade "$status" "$(grep -c '^ok ' "$log_dir/upgrade.log")" \
    "$(grep -c '^not ok ' "$log_dir/upgrade.log")"
fi

if wanted protocol; then
  echo "== extended-protocol client (libpq bind parameters)"
  protocol_bin="$log_dir/extended_protocol"
  if gcc -O2 -Wall -Wextra -Werror -o "$protocol_bin" test/protocol/extended_protocol.c \
       -I"$("${PG_CONFIG:-pg_config}" --includedir)" -lpq >"$log_dir/protocol_build.log" 2>&1; then
    "$protocol_bin" 2>&1 | tee "$log_dir/protocol.log"
    status=${PIPESTATUS[0]}
    note_suite protocol "$status" "$(grep -c '^ok ' "$log_dir/protocol.log")" \
      "$(grep -c '^not ok ' "$log_dir/protocol.log")"
  else
    cat "$log_dir/protocol_build.log"
    note_suite protocol 1 0 1
  fi
fi

if wanted clients; then
  echo "== real clients as a restricted analyst (psql, JDBC, psycopg2/SQLAlchemy, psqlODBC; BI query shapes)"
  bash test/clients/run_clients.sh 2>&1 | tee "$log_dir/clients.log"
  status=${PIPESTATUS[0]}
  note_suite clients "$status" "$(grep -c '^ok ' "$log_dir/clients.log")" \
    "$(grep -c '^not ok ' "$log_dir/clients.log")"
fi

if wanted audit; then
  echo "== privacy audit (black box through SQL; false-failure probability <= 1e-6)"
  bash test/audit/run_audit.sh 2>&1 | tee "$log_dir/audit.log"
  status=${PIPESTATUS[0]}
  audit_passed=$(sed -n 's/^audit: \([0-9]*\) passed, [0-9]* failed$/\1/p' "$log_dir/audit.log" | tail -1)
  audit_failed=$(sed -n 's/^audit: [0-9]* passed, \([0-9]*\) failed$/\1/p' "$log_dir/audit.log" | tail -1)
  note_suite audit "$status" "${audit_passed:-0}" "${audit_failed:-0}"
fi

if wanted fuzz; then
  echo "== fuzzers (neighbour-differential with self-check, crash; bounded, fixed seeds)"
  bash test/fuzz/run_fuzz.sh 2>&1 | tee "$log_dir/fuzz.log"
  status=${PIPESTATUS[0]}
  fuzz_passed=$(sed -n 's/^fuzz: \([0-9]*\) passed, [0-9]* failed$/\1/p' "$log_dir/fuzz.log" | tail -1)
  fuzz_failed=$(sed -n 's/^fuzz: [0-9]* passed, \([0-9]*\) failed$/\1/p' "$log_dir/fuzz.log" | tail -1)
  note_suite fuzz "$status" "${fuzz_passed:-0}" "${fuzz_failed:-0}"
fi

if wanted citus; then
  echo "== Citus (3-node loopback cluster with TLS; skipped when citus.so is not installed, failed then if DP_AGG_REQUIRE_CITUS=1)"
  bash test/citus/run_citus_tests.sh 2>&1 | tee "$log_dir/citus.log"
  status=${PIPESTATUS[0]}
  note_suite citus "$status" "$(grep -c '^ok: ' "$log_dir/citus.log")" \
    "$(grep -c '^FAILED: ' "$log_dir/citus.log")" "$(sed -n 's/^skipped: //p' "$log_dir/citus.log" | head -1)"
fi

if wanted tap; then
  echo "== TAP tests (crash, restart, races, standby, cancellation, restricted roles without the library)"
  bash test/tap/run_tap.sh 2>&1 | tee "$log_dir/tap.log"
  status=${PIPESTATUS[0]}
  tap_total=$(sed -n 's/^Files=[0-9]*, Tests=\([0-9]*\),.*/\1/p' "$log_dir/tap.log" | tail -1)
  tap_failed=$(sed -n 's/.*Failed \([0-9]*\)\/[0-9]* subtests.*/\1/p' "$log_dir/tap.log" |
    awk '{ sum += $1 } END { print sum + 0 }')
  note_suite tap "$status" $(( ${tap_total:-0} - tap_failed )) "$tap_failed"
fi

finish
