#!/usr/bin/env bash
# Real clients as a restricted dp_agg analyst: psql, JDBC (pgjdbc),
# psycopg2/SQLAlchemy and psqlODBC (through unixODBC and pyodbc), against the
# running throwaway cluster:
#
#   eval "$(bash test/scripts/cluster.sh env)"   # PGHOST, PGPORT, PGUSER (superuser)
#   bash test/clients/run_clients.sh
#
# As the superuser it creates a fresh database (dropped first) with the
# extension, a protected table clinic.patients and a restricted LOGIN role that
# holds USAGE on the schema and a budget, but no privilege on the table. Each
# client then connects as that role and also runs every query shape of
# shapes.sql (what BI tools send first), each expected to work or to be refused
# with a given SQLSTATE. Prints one line per check, "ok N - ..." or
# "not ok N - ...", diagnostics as "# ...", and a closing
# "clients: N passed, M failed"; exits 1 if any check failed.
#
# Env: DP_CLIENTS_JDBC_TRANSPORT = auto (default) | tcp | relay (see
# RestrictedAnalystJdbc.java), DP_CLIENTS_KEEP=1 keeps the database and role,
# DP_CLIENTS_SHAPES other shapes files, separated by ':' (default: shapes.sql and
# bi_statements.sql next to this script: the query shapes BI tools send first, and the
# statements Metabase, Superset, Tableau and psqlODBC generate for everyday questions).
# Every client runs under timeout(1), so a hanging server fails the check.
# Needs psql, javac/java, /usr/share/java/postgresql.jar, Debian's python3 with
# psycopg2, SQLAlchemy and pyodbc, and odbc-postgresql (test/scripts/ensure_deps.sh
# installs them).
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)

: "${PGHOST:?PGHOST not set: eval \"\$(bash test/scripts/cluster.sh env)\" first}"
: "${PGPORT:?PGPORT not set}"
SUPERUSER=${PGUSER:-postgres}
DB=dp_agg_clients
ROLE=dp_clients_analyst
SCHEMA=clinic
ROWS=600
REGIONS=east,north,south
JDBC_JAR=${DP_CLIENTS_JDBC_JAR:-/usr/share/java/postgresql.jar}
PYTHON=/usr/bin/python3
export PGHOST PGPORT

work=$(mktemp -d /tmp/dp_agg_clients.XXXXXX)
trap 'rm -rf -- "$work"' EXIT

count=0
failures=0

# report STATUS DESCRIPTION [DIAGNOSTIC]; STATUS 0 = ok.
report() {
  count=$((count + 1))
  if [[ $1 -eq 0 ]]; then
    echo "ok $count - $2"
  else
    failures=$((failures + 1))
    echo "not ok $count - $2"
    if [[ -n "${3:-}" ]]; then sed 's/^/#   /' <<<"$3"; fi
  fi
}

# Numbers the "ok - " / "not ok - " lines of a client's output file; other
# lines become diagnostics. A client that failed without a failing check
# (crash, compile error) counts as one failed check.
number_output() {  # file client_status client_name
  local line before=$failures
  while IFS= read -r line; do
    case "$line" in
      "ok - "*) count=$((count + 1)); echo "ok $count - ${line#ok - }" ;;
      "not ok - "*) count=$((count + 1)); failures=$((failures + 1))
                    echo "not ok $count - ${line#not ok - }" ;;
      "#"*) echo "$line" ;;
      *) echo "#   $line" ;;
    esac
  done <"$1"
  if [[ $2 -ne 0 && $failures -eq $before ]]; then
    report 1 "$3 exited with status $2"
  fi
}

su_psql() {  # database, psql arguments...
  local db=$1; shift
  timeout 120 psql -X -q -v ON_ERROR_STOP=1 -U "$SUPERUSER" -d "$db" "$@"
}
analyst_psql() {
  timeout 60 psql -X -v ON_ERROR_STOP=1 -v VERBOSITY=verbose -P pager=off -U "$ROLE" -d "$DB" "$@"
}

started=$SECONDS
echo "# clients: cluster PGHOST=$PGHOST PGPORT=$PGPORT, restricted role $ROLE, database $DB"

# ---- fixture (superuser) ---------------------------------------------------
if ! out=$(su_psql postgres 2>&1 <<SQL
SET dp_agg.allow_drop_extension = on;  -- it holds a dp_agg ledger
DROP DATABASE IF EXISTS $DB WITH (FORCE);
RESET dp_agg.allow_drop_extension;
DROP ROLE IF EXISTS $ROLE;
CREATE ROLE $ROLE LOGIN;
CREATE DATABASE $DB;
SQL
) || ! out=$(su_psql "$DB" 2>&1 <<SQL
CREATE EXTENSION dp_agg;
CREATE SCHEMA $SCHEMA;
CREATE TABLE $SCHEMA.patients (id int PRIMARY KEY, region text NOT NULL, age int NOT NULL,
  income numeric(10,2), admitted date NOT NULL, last_visit timestamptz NOT NULL);
-- Dates count back from now, so that the shapes of shapes.sql ("the last year") find rows.
INSERT INTO $SCHEMA.patients
  SELECT g, (ARRAY['north', 'south', 'east'])[1 + g % 3], 18 + (g * 37) % 70,
         CASE WHEN g % 50 = 0 THEN NULL ELSE 20000 + (g * 7919) % 80000 + 0.5 END,
         current_date - (g * 13) % 1500,
         now() - ((g * 29) % 730) * interval '1 day' - (g % 24) * interval '1 hour'
  FROM generate_series(1, $ROWS) g;
GRANT USAGE ON SCHEMA $SCHEMA TO $ROLE;
SELECT dp_agg.set_budget('$ROLE', 1000, 0.01);
-- plain count/sum/avg as BI tools write them (issue 27): answered as dp_ aggregates
-- at epsilon 1.0, age within its declared bounds (bi_statements.sql "-- plain:")
ALTER ROLE $ROLE SET dp_agg.plain_aggregate_epsilon = 1.0;
SELECT dp_agg.set_column_bounds('$SCHEMA.patients', 'age', 0, 120);
SQL
); then
  report 1 "fixture: database $DB, table $SCHEMA.patients, role $ROLE, budget" "$out"
  echo "Bail out! no fixture"
  echo "clients: 0 passed, $failures failed"
  exit 1
fi
report 0 "fixture: database $DB, table $SCHEMA.patients ($ROWS rows), LOGIN role $ROLE with USAGE and a budget"

out=$(su_psql "$DB" 2>&1 <<SQL
SECURITY LABEL FOR dp_agg ON TABLE $SCHEMA.patients IS 'protected';
SECURITY LABEL FOR dp_agg ON ROLE $ROLE IS 'restricted';
SQL
)
report $? "fixture: SECURITY LABEL FOR dp_agg marks $SCHEMA.patients 'protected' and $ROLE 'restricted'" "$out"

out=$(su_psql "$DB" -At -c "
  SELECT has_table_privilege('$ROLE', '$SCHEMA.patients', 'SELECT'),
         has_any_column_privilege('$ROLE', '$SCHEMA.patients', 'SELECT')" 2>&1)
[[ $out == "f|f" ]]
report $? "fixture: $ROLE holds no SELECT privilege on $SCHEMA.patients (table or column)" "$out"

start_time=$(su_psql "$DB" -At -c "SELECT extract(epoch FROM pg_postmaster_start_time())::text" 2>/dev/null)

# ---- psql --------------------------------------------------------------------
out=$(analyst_psql -c "\\dt $SCHEMA.*" 2>&1)
grep -Eq "^ *$SCHEMA +\| +patients +\| +table +\|" <<<"$out"
report $? "psql: \\dt $SCHEMA.* lists patients" "$out"

out=$(analyst_psql -c "\\d $SCHEMA.patients" 2>&1)
grep -Eq '^ *id +\| +integer +\|' <<<"$out" && grep -Eq '^ *region +\| +text +\|' <<<"$out" &&
  grep -Eq '^ *age +\| +integer +\|' <<<"$out" && grep -q 'patients_pkey' <<<"$out"
report $? "psql: \\d $SCHEMA.patients shows id, region, age and the primary key" "$out"

sql="SELECT dp_avg(age, 0, 110, 0.5::float8) FROM $SCHEMA.patients"
out=$(analyst_psql -At -c "$sql" 2>&1)
[[ $out =~ ^-?[0-9]+(\.[0-9]+)?$ ]]
report $? "psql: $sql returns one number" "$out"

sql="SELECT region, dp_count(age, 1.0) FROM $SCHEMA.patients GROUP BY region ORDER BY region"
out=$(analyst_psql -At -c "$sql" 2>&1)
[[ $(cut -d'|' -f1 <<<"$out" | paste -sd, -) == "$REGIONS" ]] &&
  ! grep -Evq '^[a-z]+\|-?[0-9]+$' <<<"$out"
report $? "psql: $sql returns every (large) region" "$out"

# Each refused statement: psql fails, prints an ERROR with SQLSTATE 42501
# (insufficient privilege) or 0A000 (not supported), and no data on stdout.
expect_refused() {  # description, psql arguments...
  local description=$1 stdout stderr status
  shift
  stdout=$(analyst_psql "$@" 2>"$work/stderr")
  status=$?
  stderr=$(cat "$work/stderr")
  [[ $status -ne 0 && -z $stdout ]] && grep -Eq '^ERROR: +(42501|0A000):' <<<"$stderr"
  report $? "psql: $description is refused ($(grep -Eo '^ERROR: +[0-9A-Z]{5}' <<<"$stderr" |
    head -1 | sed 's/ERROR: */SQLSTATE /'))" "exit $status; stdout: ${stdout:0:300}
stderr: $stderr"
}
expect_refused "SELECT * FROM $SCHEMA.patients" -At -c "SELECT * FROM $SCHEMA.patients"
expect_refused "SELECT max(age) FROM $SCHEMA.patients (min/max have no private form)" -At \
  -c "SELECT max(age) FROM $SCHEMA.patients"
expect_refused "SELECT sum(income) FROM $SCHEMA.patients (no declared bounds)" -At \
  -c "SELECT sum(income) FROM $SCHEMA.patients"
# A plain count(*) is answered as dp_count at epsilon 1.0: P(|noise| >= 22) = 2 e^-22 /
# (1 + e^-1) < 2.1e-10.
n=$(analyst_psql -At -c "SELECT count(*) FROM $SCHEMA.patients" 2>&1)
[[ $n =~ ^-?[0-9]+$ ]] && (( n - ROWS < 22 && ROWS - n < 22 ))
report $? "psql: plain SELECT count(*) FROM $SCHEMA.patients answered privately, within 22 of $ROWS" "$n"
expect_refused "a DP aggregate next to a plain one (dp_count(age, 1.0), max(age))" -At \
  -c "SELECT dp_count(age, 1.0), max(age) FROM $SCHEMA.patients"
expect_refused "EXPLAIN of a DP query on $SCHEMA.patients" -At \
  -c "EXPLAIN SELECT dp_count(age, 1.0) FROM $SCHEMA.patients"
expect_refused "COPY $SCHEMA.patients TO STDOUT" -At -c "COPY $SCHEMA.patients TO STDOUT"
expect_refused "\\copy (SELECT age FROM $SCHEMA.patients) TO STDOUT" -At \
  -c "\\copy (SELECT age FROM $SCHEMA.patients) TO STDOUT"

export DP_CLIENTS_DB=$DB DP_CLIENTS_ROLE=$ROLE DP_CLIENTS_SUPERUSER=$SUPERUSER \
  DP_CLIENTS_SCHEMA=$SCHEMA DP_CLIENTS_ROWS=$ROWS DP_CLIENTS_REGIONS=$REGIONS \
  DP_CLIENTS_SHAPES=${DP_CLIENTS_SHAPES:-$HERE/shapes.sql:$HERE/bi_statements.sql}
timeout 600 "$PYTHON" "$HERE/shapes.py" psql >"$work/psql_shapes.out" 2>&1
number_output "$work/psql_shapes.out" $? "psql shapes (shapes.py psql)"

# ---- JDBC --------------------------------------------------------------------
export DP_CLIENTS_START_TIME=$start_time
if ! command -v javac >/dev/null 2>&1 || [[ ! -r $JDBC_JAR ]]; then
  report 1 "jdbc: javac and $JDBC_JAR present" \
    "install default-jdk-headless and libpostgresql-jdbc-java (test/scripts/ensure_deps.sh)"
elif ! out=$(timeout 300 javac -nowarn -d "$work/classes" -cp "$JDBC_JAR" "$HERE/RestrictedAnalystJdbc.java" 2>&1); then
  report 1 "jdbc: compile RestrictedAnalystJdbc.java" "$out"
else
  timeout 300 java -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -cp "$work/classes:$JDBC_JAR" RestrictedAnalystJdbc \
    >"$work/jdbc.out" 2>&1
  number_output "$work/jdbc.out" $? "jdbc client"
fi

# ---- psycopg2 / SQLAlchemy ---------------------------------------------------
timeout 300 "$PYTHON" "$HERE/restricted_psycopg2.py" >"$work/psycopg2.out" 2>&1
number_output "$work/psycopg2.out" $? "psycopg2 client"

# ---- a dashboard refreshed 20 times: one charge per tile (release cache) -------
timeout 300 "$PYTHON" "$HERE/dashboard_refresh.py" >"$work/dashboard.out" 2>&1
number_output "$work/dashboard.out" $? "dashboard refresh"

# ---- psqlODBC (unixODBC, pyodbc) ---------------------------------------------
timeout 300 "$PYTHON" "$HERE/restricted_odbc.py" >"$work/odbc.out" 2>&1
number_output "$work/odbc.out" $? "odbc client"

# ---- unrestricted control and budget -------------------------------------------
out=$(su_psql "$DB" -At -c "SELECT id, region, age FROM $SCHEMA.patients" 2>&1)
[[ $(wc -l <<<"$out") -eq $ROWS && $(head -1 <<<"$out") =~ ^[0-9]+\|[a-z]+\|[0-9]+$ ]]
report $? "psql: unrestricted $SUPERUSER still reads SELECT id, region, age FROM $SCHEMA.patients ($ROWS rows)" \
  "${out:0:500}"

out=$(su_psql "$DB" -At -c "SELECT epsilon_spent FROM dp_agg.role_budget WHERE role_name = '$ROLE'" 2>&1)
[[ $out =~ ^[0-9.]+$ ]] && awk -v s="$out" 'BEGIN { exit !(s > 0) }'
report $? "budget: the analyst's DP queries were charged to $ROLE (epsilon spent $out)" "$out"

if [[ ${DP_CLIENTS_KEEP:-0} != 1 ]]; then
  su_psql postgres -c "SET dp_agg.allow_drop_extension = on" \
    -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" -c "DROP ROLE IF EXISTS $ROLE" \
    >/dev/null 2>&1 || echo "# clients: could not drop $DB / $ROLE"
fi

echo "1..$count"
echo "# clients: $((SECONDS - started)) s"
echo "clients: $((count - failures)) passed, $failures failed"
[[ $failures -eq 0 ]]
