#!/usr/bin/env bash
# Upgrade test: an installation of the previous release, in use, is brought
# to the current version by ALTER EXTENSION dp_agg UPDATE, against the running
# throwaway cluster (library of the current build preloaded):
#
#   eval "$(bash test/scripts/cluster.sh env)"
#   bash test/upgrade/run_upgrade_test.sh
#
# 1. installs dp_agg 0.1.0 (sql/dp_agg--0.1.0.sql, frozen as released) and
#    uses it: budgets set and added, private queries charged to an analyst,
#    a protected table, a restricted role that runs a private query;
# 2. ALTER EXTENSION dp_agg UPDATE; checks the version, that budgets, ledger
#    rows, the ledger's sequence and the security labels are exactly kept, and
#    that charging and the restricted role still work; that budgets and ledger
#    rows now carry role OIDs (a budget of a role dropped before the upgrade
#    is removed, audited, and never passes to a new role of its name; a
#    renamed role keeps its budget);
# 3. compares the upgraded database with a fresh install of the current
#    version: catalog_listing.sql (every member, definition, privilege, initial
#    privilege and comment) and pg_dump --binary-upgrade --schema-only (which
#    dumps each member object), both with OIDs and xids blanked. Any
#    difference is upgrade-script drift and is printed;
# 4. runs the pg_regress suites against a database upgraded from 0.1.0.
#
# Prints "ok N - ..." / "not ok N - ..." lines and "upgrade: N passed, M
# failed"; exits 1 if any check failed. DP_UPGRADE_KEEP=1 keeps the databases.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)

: "${PGHOST:?PGHOST not set: eval \"\$(bash test/scripts/cluster.sh env)\" first}"
: "${PGPORT:?PGPORT not set}"
export PGHOST PGPORT
SUPERUSER=${PGUSER:-postgres}
# The release to upgrade from: the latest one CHANGELOG.md records (not a git tag).
PREVIOUS=$(/usr/bin/python3 "$ROOT/test/scripts/check_release.py" --previous)
[[ -n "$PREVIOUS" ]] || { echo "run_upgrade_test: CHANGELOG.md records no release to upgrade from" >&2; exit 1; }
CURRENT=$(sed -n "s/^default_version = '\(.*\)'/\1/p" "$ROOT/dp_agg.control")
FRESH_DB=dp_agg_upgrade_fresh
OLD_DB=dp_agg_upgrade_old
# pg_regress suites expect their usual database (they name it, and their
# roles may own objects left in it by the main run, which this drops).
REGRESS_DB=contrib_regression
ANALYST=dp_upgrade_analyst
RESTRICTED=dp_upgrade_restricted
# A role with a 0.1.0 budget that is dropped before the upgrade: its budget
# must not pass to a new role of the same name (budgets follow role OIDs).
GONE=dp_upgrade_gone

work=$(mktemp -d /tmp/dp_agg_upgrade.XXXXXX)
chmod 755 "$work"
trap 'rm -rf -- "$work"' EXIT

count=0
failures=0
check() {  # description, then a command; ok if the command succeeds
  local description=$1
  shift
  count=$((count + 1))
  if "$@" >"$work/check.out" 2>&1; then
    echo "ok $count - $description"
  else
    failures=$((failures + 1))
    echo "not ok $count - $description"
    sed 's/^/# /' "$work/check.out" | head -60
  fi
}

sql() {  # database, then psql arguments; as the superuser
  local db=$1
  shift
  psql -X -q -v ON_ERROR_STOP=1 -U "$SUPERUSER" -d "$db" "$@"
}
value() {  # database, query: the single value it returns
  psql -X -q -A -t -v ON_ERROR_STOP=1 -U "$SUPERUSER" -d "$1" -c "$2"
}
as_role() {  # role, database, then psql arguments
  local role=$1 db=$2
  shift 2
  psql -X -q -v ON_ERROR_STOP=1 -U "$role" -d "$db" "$@"
}

drop_all() {
  # They hold dp_agg ledgers: dropped only with the confirmation.
  for db in "$FRESH_DB" "$OLD_DB" "$REGRESS_DB"; do
    sql postgres -c "SET dp_agg.allow_drop_extension = on" -c "DROP DATABASE IF EXISTS $db" \
      2>/dev/null
  done
  sql postgres -c "DROP ROLE IF EXISTS $ANALYST" -c "DROP ROLE IF EXISTS $RESTRICTED" \
    -c "DROP ROLE IF EXISTS $GONE" 2>/dev/null
}
drop_all
sql postgres -c "CREATE ROLE $ANALYST LOGIN" -c "CREATE ROLE $RESTRICTED LOGIN" || exit 1

# Budgets, ledger, sequence position and labels: what an upgrade must keep.
# (The dropped role's rows are checked on their own, after the upgrade.)
snapshot() {  # database, output file
  sql "$1" -A -t >"$2" <<EOF
SELECT 'budget', role_name, epsilon_total, epsilon_spent, delta_total, delta_spent, updated_at
FROM dp_agg.role_budget WHERE role_name <> '$GONE' ORDER BY role_name;
SELECT 'ledger', id, recorded_at, kind, role_name, session_user_name, current_user_name,
       epsilon, delta, query_id, aggregates, query
FROM dp_agg.ledger_entry WHERE role_name <> '$GONE' ORDER BY id;
-- (less the one row the upgrade writes: the removal of the dropped role's budget)
SELECT 'sequence', last_value - (SELECT count(*) FROM dp_agg.ledger_entry
                                  WHERE role_name = '$GONE' AND kind = 'revoke_budget'),
       is_called FROM dp_agg.ledger_entry_id_seq;
SELECT 'protected', table_name FROM dp_agg.protected_tables ORDER BY 2;
SELECT 'restricted', role_name FROM dp_agg.restricted_roles ORDER BY 2;
EOF
}

# Catalog state of the extension's objects, OIDs and xids blanked.
catalog_listing() {  # database, output file
  sql "$1" -f "$HERE/catalog_listing.sql" >"$2"
}
schema_dump() {  # database, output file
  pg_dump -U "$SUPERUSER" --binary-upgrade --schema-only -d "$1" |
    sed -E -e '/^\\(un)?restrict /d' -e '/^-- Dumped (from|by) /d' \
        -e '/binary_upgrade_set_next_/d' -e '/pg_catalog.setval\(/d' -e "s/'[0-9]+'/'N'/g" -e 's/\{[0-9,]+\}/{N}/g' >"$2"
}

# ---- 1. the previous release, in use
# Its install script must be the one released (frozen: the SHA-256 CHANGELOG.md records),
# and the upgrade script must end with the generated privilege tail.
check "sql/dp_agg--$PREVIOUS.sql is the script released (check_release.py)" \
  /usr/bin/python3 "$ROOT/test/scripts/check_release.py"
check "the upgrade script ends with src/sql/90_privileges.sql (privilege_tail.py)" \
  /usr/bin/python3 "$ROOT/test/scripts/privilege_tail.py"
sql postgres -c "CREATE DATABASE $OLD_DB" || exit 1
check "CREATE EXTENSION dp_agg VERSION '$PREVIOUS'" \
  sql "$OLD_DB" -c "CREATE EXTENSION dp_agg VERSION '$PREVIOUS'"
check "$PREVIOUS: budgets, a protected table and a restricted role" sql "$OLD_DB" <<EOF
CREATE SCHEMA clinic;
CREATE TABLE clinic.visits AS
  SELECT g AS id, (g % 90)::int AS age, 'ward ' || (g % 4) AS ward FROM generate_series(1, 400) g;
GRANT USAGE ON SCHEMA clinic TO $ANALYST, $RESTRICTED;
GRANT SELECT ON clinic.visits TO $ANALYST;
CREATE TABLE clinic.labelled AS SELECT g AS id, g % 7 AS score FROM generate_series(1, 300) g;
SELECT dp_agg.set_budget('$ANALYST', 5, 1e-6);
SELECT dp_agg.add_budget('$ANALYST', 2.5);
SELECT dp_agg.set_budget('$RESTRICTED', 3);
SELECT dp_agg.set_budget('$SUPERUSER', 1);
SELECT dp_agg.reset_spent('$SUPERUSER');
SELECT dp_agg.protect_table('clinic.labelled');
SELECT dp_agg.restrict_role('$RESTRICTED');
CREATE ROLE $GONE;
SELECT dp_agg.set_budget('$GONE', 2, 1e-5);
DROP ROLE $GONE;
EOF
check "$PREVIOUS: private queries are charged to the analyst" as_role "$ANALYST" "$OLD_DB" <<'EOF'
SELECT dp_count(id, 0.5) IS NOT NULL FROM clinic.visits;
SELECT dp_avg(age, 0, 90, 0.25) BETWEEN 0 AND 90 FROM clinic.visits;
SELECT ward, dp_sum(age, 0, 90, 0.1, 1e-7) IS NOT NULL FROM clinic.visits GROUP BY ward;
EOF
check "$PREVIOUS: the restricted role queries the protected table privately" \
  as_role "$RESTRICTED" "$OLD_DB" -c "SELECT dp_count(id, 0.5) IS NOT NULL FROM clinic.labelled"
check "$PREVIOUS: the ledger holds the charges" \
  test "$(value "$OLD_DB" "SELECT count(*) FROM dp_agg.ledger_entry WHERE kind = 'charge'")" -eq 4
snapshot "$OLD_DB" "$work/before.txt"

# ---- 2. the upgrade keeps everything
check "ALTER EXTENSION dp_agg UPDATE" sql "$OLD_DB" -c "ALTER EXTENSION dp_agg UPDATE"
check "the upgraded extension is version $CURRENT" \
  test "$(value "$OLD_DB" "SELECT extversion FROM pg_extension WHERE extname = 'dp_agg'")" = \
       "$CURRENT"
snapshot "$OLD_DB" "$work/after.txt"
check "budgets, ledger rows, the ledger sequence and the labels are kept exactly" \
  diff "$work/before.txt" "$work/after.txt"
kept="$(grep -c '^budget|' "$work/after.txt") $(grep -c '^ledger|' "$work/after.txt")"
kept+=" $(grep -c '^protected|clinic.labelled$' "$work/after.txt")"
kept+=" $(grep -c "^restricted|$RESTRICTED\$" "$work/after.txt")"
check "what was compared is all there: 3 budgets, 9 ledger rows (5 changes, 4 charges), the protected table, the restricted role (got $kept)" \
  test "$kept" = "3 9 1 1"
# 0.2.0's accountant: an upgraded budget is an (epsilon, delta) budget (0.1.0's
# rule) and its past spending counts in zCDP as rho epsilon_spent^2 / 2 (at
# least the sum of epsilon_i^2 / 2 of its charges) and delta delta_spent, so
# that a later switch to a zCDP budget counts it (README "Upgrading").
check "$CURRENT: upgraded budgets are (epsilon, delta) budgets with their spending in zCDP terms too" \
  test "$(value "$OLD_DB" "SELECT count(*) FILTER (WHERE budget_kind = 'epsilon_delta'
                                 AND rho_total IS NULL AND zcdp_delta_total IS NULL
                                 AND rho_spent = epsilon_spent * epsilon_spent * 0.5
                                 AND zcdp_delta_spent = delta_spent)
                               || ' ' || count(*) || ' ' ||
                               count(*) FILTER (WHERE rho_spent > 0)
                               FROM dp_agg.role_budget")" = "3 3 2"
check "$CURRENT: a private query is charged after the upgrade" as_role "$ANALYST" "$OLD_DB" \
  -c "SELECT dp_count(id, 0.5) IS NOT NULL FROM clinic.visits"
check "$CURRENT: the ledger grew by exactly that charge" \
  test "$(value "$OLD_DB" "SELECT count(*) FROM dp_agg.ledger_entry WHERE kind = 'charge'")" -eq 5
check "$CURRENT: the restricted role still reads the protected table only privately" \
  bash -c "psql -X -q -U $RESTRICTED -d $OLD_DB -c 'SELECT count(*) FROM clinic.labelled' 2>&1 |
           grep -q 'is not a differentially private aggregate' &&
           psql -X -q -v ON_ERROR_STOP=1 -U $RESTRICTED -d $OLD_DB \
             -c 'SELECT dp_count(id, 0.5) IS NOT NULL FROM clinic.labelled'"

check "$CURRENT: budget and ledger rows carry the OID of the role that has their name" \
  test "$(value "$OLD_DB" "SELECT (SELECT count(*) FROM dp_agg.role_budget b JOIN pg_roles r
                                 ON r.rolname = b.role_name WHERE b.role_oid = r.oid)
                               || ' ' ||
                               (SELECT count(*) FROM dp_agg.ledger_entry e JOIN pg_roles r
                                 ON r.rolname = e.role_name WHERE e.role_oid = r.oid)")" = "3 11"
check "$CURRENT: the dropped role's budget was removed (audited), its ledger rows kept without OID" \
  test "$(value "$OLD_DB" "SELECT (SELECT count(*) FROM dp_agg.role_budget
                                 WHERE role_name = '$GONE') || ' ' ||
                               (SELECT string_agg(kind || ':' || (role_oid IS NULL), ',' ORDER BY id)
                                  FROM dp_agg.ledger_entry WHERE role_name = '$GONE')")" = \
       "0 set_budget:true,revoke_budget:true"
sql postgres -c "CREATE ROLE $GONE LOGIN" >/dev/null
check "$CURRENT: a new role with the dropped role's name has no budget and sees none of its ledger rows" \
  test "$(psql -X -q -A -t -U "$GONE" -d "$OLD_DB" \
           -c "SELECT (SELECT count(*) FROM dp_agg.budgets) || ' ' ||
                      (SELECT count(*) FROM dp_agg.ledger) || ' ' ||
                      (SELECT epsilon IS NULL FROM dp_agg.remaining_budget())")" = "0 0 true"
check "$CURRENT: a renamed analyst keeps its budget and is charged" \
  bash -c "psql -X -q -v ON_ERROR_STOP=1 -U $SUPERUSER -d postgres \
             -c 'ALTER ROLE $ANALYST RENAME TO ${ANALYST}_renamed' &&
           psql -X -q -A -t -v ON_ERROR_STOP=1 -U ${ANALYST}_renamed -d $OLD_DB \
             -c 'SELECT dp_count(id, 0.5) IS NOT NULL FROM clinic.visits' \
             -c 'SELECT epsilon FROM dp_agg.remaining_budget()' | tail -1 | grep -qx '5.40' ;
           status=\$?;
           psql -X -q -U $SUPERUSER -d postgres -c 'ALTER ROLE ${ANALYST}_renamed RENAME TO $ANALYST';
           exit \$status"

# The ledger of 0.1.0 is chained by the upgrade (in id order) and, with the
# charges since, verifies: every budget agrees with its charges (0.1.0's in
# zCDP terms as the upgrade counted them); the database is labelled as
# holding a ledger (DROP DATABASE guard).
check "$CURRENT: the upgraded ledger is chained in id order, verifies, and its database is labelled" \
  test "$(value "$OLD_DB" "SELECT (v.ok AND v.entries = v.head_seq AND v.entries >= 11
                              AND (SELECT bool_and(seq = n) FROM (SELECT seq, row_number()
                                     OVER (ORDER BY id) AS n FROM dp_agg.ledger_entry) o)
                              AND (SELECT count(*) = 1 FROM pg_shseclabel
                                   WHERE provider = 'dp_agg' AND label = 'ledger'
                                     AND objoid = (SELECT oid FROM pg_database
                                                   WHERE datname = current_database())))
                              || ' ' || array_to_string(v.problems, '; ')
                            FROM dp_agg.verify_ledger() v")" = "true "
# Every budget has its state recorded in the ledger after the upgrade (the
# last 0.1.0 row of each records it), so that a total raised by hand is
# reported even for a budget untouched since (review 28).
check "$CURRENT: every upgraded budget is recorded; a total raised by hand is reported" \
  test "$(psql -X -q -A -t -v ON_ERROR_STOP=1 -U "$SUPERUSER" -d "$OLD_DB" \
           -c "BEGIN" \
           -c "SELECT count(*) FROM dp_agg.role_budget b
               WHERE NOT EXISTS (SELECT 1 FROM dp_agg.ledger_entry e
                                 WHERE e.role_oid = b.role_oid
                                   AND e.system_identifier = b.system_identifier
                                   AND e.budget_digest IS NOT NULL)" \
           -c "UPDATE dp_agg.role_budget SET epsilon_total = epsilon_total + 1" \
           -c "SELECT count(*) = (SELECT count(*) FROM dp_agg.role_budget)
               FROM dp_agg.verify_ledger() v, unnest(v.problems) p
               WHERE p LIKE '%changed outside dp_agg''s functions%'" \
           -c "ROLLBACK" | tr '\n' ' ')" = "0 t "

# A budget upgraded with 0.1.0's charges can be made to renew (issue 29):
# the first charge after the boundary records a renewal that forgets exactly
# what it had spent (0.1.0's charges in zCDP terms as the upgrade counted
# them), counts from 0, and the ledger verifies.
sql "$OLD_DB" -c "SELECT dp_agg.set_budget('$ANALYST', b.epsilon_total::float8, NULL,
                                           interval '2 seconds', now())
                  FROM dp_agg.budgets b WHERE b.role = '$ANALYST'" >/dev/null
spent_before=$(value "$OLD_DB" "SELECT epsilon_spent || '/' || rho_spent FROM dp_agg.role_budget
                                 WHERE role_name = '$ANALYST'")
sleep 2.2
check "$CURRENT: an upgraded budget renews: the renewal forgets its spending ($spent_before), the next charge counts from 0, the ledger verifies" \
  test "$(psql -X -q -A -t -v ON_ERROR_STOP=1 -U "$ANALYST" -d "$OLD_DB" \
            -c 'SELECT dp_count(id, 0.5) IS NOT NULL FROM clinic.visits' >/dev/null &&
          value "$OLD_DB" "SELECT (SELECT epsilon || '/' || rho FROM dp_agg.ledger_entry
                                   WHERE kind = 'renewal' AND role_name = '$ANALYST')
                                  || ' ' || b.epsilon_spent || ' ' || v.ok
                           FROM dp_agg.role_budget b, dp_agg.verify_ledger() v
                           WHERE b.role_name = '$ANALYST'")" = "$spent_before 0.5 true"

# ---- 3. upgraded == fresh
sql postgres -c "CREATE DATABASE $FRESH_DB" || exit 1
check "CREATE EXTENSION dp_agg (fresh $CURRENT)" sql "$FRESH_DB" -c "CREATE EXTENSION dp_agg"
catalog_listing "$FRESH_DB" "$work/fresh_catalog.txt"
catalog_listing "$OLD_DB" "$work/upgraded_catalog.txt"
check "catalog listing: upgraded $PREVIOUS equals fresh $CURRENT ($(wc -l <"$work/fresh_catalog.txt") facts)" \
  diff -u "$work/fresh_catalog.txt" "$work/upgraded_catalog.txt"
# The data the old database holds (tables in schema clinic) is not part of
# the extension; dump the fresh database with the same user tables removed.
schema_dump "$FRESH_DB" "$work/fresh_dump.sql"
sql "$OLD_DB" -c "DROP SCHEMA clinic CASCADE" 2>/dev/null
schema_dump "$OLD_DB" "$work/upgraded_dump.sql"
check "pg_dump --binary-upgrade --schema-only: upgraded $PREVIOUS equals fresh $CURRENT ($(grep -c '^ALTER EXTENSION dp_agg ADD' "$work/fresh_dump.sql") members)" \
  bash -c "[[ \$(grep -c '^ALTER EXTENSION dp_agg ADD' '$work/fresh_dump.sql') -gt 100 ]] &&
           diff -u '$work/fresh_dump.sql' '$work/upgraded_dump.sql'"

# ---- 4. the regression suites against an upgraded installation
sql postgres -c "CREATE DATABASE $REGRESS_DB" || exit 1
sql "$REGRESS_DB" -c "CREATE EXTENSION dp_agg VERSION '$PREVIOUS'" \
  -c "ALTER EXTENSION dp_agg UPDATE" || exit 1
regress_out="$work/regress"
mkdir -p "$regress_out"
chmod 777 "$regress_out"
make --no-print-directory -C "$ROOT" installcheck REGRESS_OPTS="--use-existing --dbname=$REGRESS_DB" \
  EXTRA_REGRESS_OPTS="--outputdir=$regress_out" >"$work/regress.log" 2>&1
regress_status=$?
check "pg_regress suites pass against dp_agg upgraded from $PREVIOUS" \
  bash -c "[[ $regress_status -eq 0 ]] || { grep -E '\\.\\.\\.|tests' '$work/regress.log';
           head -100 '$regress_out/regression.diffs' 2>/dev/null; exit 1; }"

if [[ ${DP_UPGRADE_KEEP:-0} != 1 ]]; then drop_all; fi
echo "upgrade: $((count - failures)) passed, $failures failed"
[[ $failures -eq 0 ]]
