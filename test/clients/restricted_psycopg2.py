"""psycopg2 and SQLAlchemy as a restricted dp_agg analyst.

Run by test/clients/run_clients.sh with Debian's /usr/bin/python3 (python3-psycopg2,
python3-sqlalchemy), after it set up the fixture. Connection and fixture come from
the environment: PGHOST, PGPORT (libpq), DP_CLIENTS_DB, DP_CLIENTS_ROLE,
DP_CLIENTS_SCHEMA, DP_CLIENTS_ROWS, DP_CLIENTS_REGIONS (comma-separated).

Output: one line per check, "ok - description" or "not ok - description", and
diagnostics starting with "#". The caller numbers the checks. Exit status 1 if
any check failed.
"""

import os
import sys
from decimal import Decimal

import psycopg2
import psycopg2.errors

import shapes

DB = os.environ.get("DP_CLIENTS_DB", "dp_agg_clients")
ROLE = os.environ.get("DP_CLIENTS_ROLE", "dp_clients_analyst")
SCHEMA = os.environ.get("DP_CLIENTS_SCHEMA", "clinic")
ROWS = int(os.environ.get("DP_CLIENTS_ROWS", "0"))
REGIONS = set(os.environ.get("DP_CLIENTS_REGIONS", "").split(","))
TABLE = f"{SCHEMA}.patients"
REFUSED = ("42501", "0A000")  # insufficient_privilege, feature_not_supported

failures = 0


def check(passed, description, diagnostic=""):
    global failures
    print(("ok - " if passed else "not ok - ") + "psycopg2: " + description)
    if not passed:
        failures += 1
        for line in str(diagnostic).splitlines():
            print("#   " + line)
    sys.stdout.flush()


def describe(exc):
    code = getattr(exc, "pgcode", None)
    return f"{type(exc).__name__} pgcode={code}: {str(exc).strip()}"


def run(conn, description, sql, params=None):
    """Runs sql (autocommit) and returns its rows, or None after a failed check."""
    try:
        with conn.cursor() as cur:
            cur.execute(sql, params)
            return cur.fetchall()
    except psycopg2.Error as exc:
        check(False, description, describe(exc))
        return None


def refused(conn, description, action):
    """action(cursor) must raise a psycopg2 error with a refusal SQLSTATE."""
    try:
        with conn.cursor() as cur:
            action(cur)
            rows = cur.fetchall() if cur.description else []
        check(False, description, f"no error; it returned {len(rows)} rows")
    except psycopg2.Error as exc:
        code = exc.pgcode
        check(code in REFUSED, f"{description} (pgcode {code})", describe(exc))


def psycopg2_checks():
    try:
        conn = psycopg2.connect(dbname=DB, user=ROLE, application_name="dp_agg_clients_psycopg2")
    except psycopg2.Error as exc:
        check(False, f"connect as {ROLE}", describe(exc))
        return
    conn.autocommit = True

    sql = f"SELECT dp_count(age, %s) FROM {TABLE}"
    rows = run(conn, f"{sql} with epsilon 1.0 as a parameter", sql, (1.0,))
    if rows is not None:
        check(len(rows) == 1 and isinstance(rows[0][0], int),
              f"{sql} with epsilon 1.0 as a parameter returns one integer", f"got {rows!r}")

    sql = f"SELECT dp_avg(age, %s, %s, %s::float8) FROM {TABLE}"
    rows = run(conn, f"{sql} with (0, 110, 0.5)", sql, (0, 110, 0.5))
    if rows is not None:
        ok = (len(rows) == 1 and isinstance(rows[0][0], Decimal)
              and Decimal(0) <= rows[0][0] <= Decimal(110))
        check(ok, f"{sql} with (0, 110, 0.5) returns one numeric in [0, 110]", f"got {rows!r}")

    # What a BI tool sends: the user's query wrapped in a subquery with a row limit.
    sql = (f"SELECT * FROM (SELECT region, dp_count(age, 1.0) AS n FROM {TABLE} "
           f"GROUP BY region) q LIMIT 2000")
    rows = run(conn, "BI-style wrapper " + sql, sql)
    if rows is not None:
        seen = {r[0] for r in rows}
        ok = seen == REGIONS and all(isinstance(r[1], int) for r in rows) and len(rows) == len(seen)
        check(ok, "BI-style wrapper " + sql + " returns every (large) region once",
              f"got {rows!r}, expected regions {sorted(REGIONS)}")

    refused(conn, f"SELECT * FROM {TABLE} raises a psycopg2 error with pgcode 42501 or 0A000",
            lambda cur: cur.execute(f"SELECT * FROM {TABLE}"))
    refused(conn, f"COPY {TABLE} TO STDOUT (copy_expert) is refused",
            lambda cur: cur.copy_expert(f"COPY {TABLE} TO STDOUT", sys.stderr))
    # information_schema lists the protected table's columns to the restricted
    # analyst, who holds no privilege on it (issue 27: dp_agg's listing views).
    rows = run(conn, "information_schema query", "SELECT count(*) FROM information_schema.columns "
               "WHERE table_schema = %s AND table_name = 'patients'", (SCHEMA,))
    if rows is not None:
        check(rows[0][0] == 6, f"information_schema.columns lists the 6 columns of {TABLE} to {ROLE}",
              f"it listed {rows[0][0]}")
    conn.close()


def sqlalchemy_checks():
    try:
        import sqlalchemy
        from sqlalchemy import create_engine, inspect, text
    except ImportError as exc:
        check(False, "import sqlalchemy (Debian python3-sqlalchemy; run test/scripts/ensure_deps.sh)", exc)
        return
    # Empty host: libpq takes PGHOST/PGPORT from the environment (the socket).
    engine = create_engine(f"postgresql+psycopg2://{ROLE}@/{DB}", poolclass=sqlalchemy.pool.NullPool)
    label = f"SQLAlchemy {sqlalchemy.__version__}"
    try:
        inspector = inspect(engine)
        schemas = inspector.get_schema_names()
        check(SCHEMA in schemas, f"{label} inspector.get_schema_names() lists {SCHEMA}", f"got {schemas}")
        tables = inspector.get_table_names(schema=SCHEMA)
        check("patients" in tables, f"{label} inspector.get_table_names(schema={SCHEMA!r}) lists patients",
              f"got {tables}")
        columns = [(c["name"], str(c["type"])) for c in inspector.get_columns("patients", schema=SCHEMA)]
        expected = [("id", "INTEGER"), ("region", "TEXT"), ("age", "INTEGER"), ("income", "NUMERIC(10, 2)"),
                    ("admitted", "DATE"), ("last_visit", "TIMESTAMP")]
        check(columns == expected, f"{label} inspector.get_columns('patients') lists its six columns",
              f"got {columns}, expected {expected}")
        pk = inspector.get_pk_constraint("patients", schema=SCHEMA)
        check(pk.get("constrained_columns") == ["id"], f"{label} inspector.get_pk_constraint is (id)",
              f"got {pk}")
    except sqlalchemy.exc.SQLAlchemyError as exc:
        check(False, f"{label} inspector on {TABLE}", exc)

    sql = f"SELECT region, dp_sum(age, 0, 110, CAST(:eps AS float8)) AS s FROM {TABLE} GROUP BY region"
    try:
        with engine.connect() as conn:
            rows = conn.execute(text(sql), {"eps": 0.5}).fetchall()
        check({r[0] for r in rows} == REGIONS, f"{label} text() query {sql} with :eps bound",
              f"got {rows!r}")
    except sqlalchemy.exc.SQLAlchemyError as exc:
        check(False, f"{label} text() query {sql} with :eps bound", exc)
    engine.dispose()


def advice_outside_hint(diag):
    """True when the refusal's advice reaches clients that drop the HINT (psqlODBC):
    there is no HINT, or its text is also in the message or DETAIL."""
    hint = (diag.message_hint or "").strip()
    shown = (diag.message_primary or "") + "\n" + (diag.message_detail or "")
    return not hint or hint in shown


def shape_checks():
    """Every SQL shape of shapes.sql, and where each refusal puts its advice."""
    global failures
    try:
        conn = psycopg2.connect(dbname=DB, user=ROLE, application_name="dp_agg_clients_psycopg2")
    except psycopg2.Error as exc:
        check(False, f"connect as {ROLE} for the shapes", describe(exc))
        return
    conn.autocommit = True
    for shape in shapes.parse(schema=SCHEMA):
        if not shape.runs_on("psycopg2"):
            continue
        try:
            with conn.cursor() as cur:
                cur.execute(shape.sql)
                passed, why = shapes.judge(shape, rows=cur.fetchall())
        except psycopg2.Error as exc:
            passed, why = shapes.judge(shape, sqlstate=exc.pgcode, error=describe(exc))
            if shape.expect == "refused" and exc.pgcode == shape.sqlstate:
                # psqlODBC shows message and DETAIL only: the advice belongs there.
                outside = advice_outside_hint(exc.diag)
                detail = exc.diag.message_detail or ""
                check(outside != shape.hint_only, f"shape {shape.name}: refusal has "
                      + ("its advice only in the HINT [TODO issue 13: move it into the message or DETAIL]"
                         if shape.hint_only else "its advice in the message or DETAIL"),
                      f"DETAIL {detail!r}, HINT {exc.diag.message_hint!r}")
        failures += not shapes.check_line(passed, "psycopg2", shape, why)
    conn.close()


def main():
    print(f"# psycopg2 {psycopg2.__version__.split()[0]}, libpq {psycopg2.extensions.libpq_version()}")
    psycopg2_checks()
    shape_checks()
    sqlalchemy_checks()
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
