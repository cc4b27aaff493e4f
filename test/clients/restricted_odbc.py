"""psqlODBC (Debian's odbc-postgresql, the driver behind Excel, Power BI and Tableau)
as a restricted dp_agg analyst, through unixODBC and pyodbc (python3-pyodbc).

Run by test/clients/run_clients.sh with Debian's /usr/bin/python3 after it set up the
fixture: PGHOST (socket directory or host), PGPORT, DP_CLIENTS_DB, DP_CLIENTS_ROLE,
DP_CLIENTS_SCHEMA, DP_CLIENTS_REGIONS. It connects through the Unicode driver with a
DSN-less connection string, the way a BI tool does. psqlODBC passes the server's
message and DETAIL on to the application but drops the HINT, so refusals must say
what to do in the message or DETAIL.

The driver is registered in a private odbcinst.ini (ODBCSYSINI, a temporary
directory) copied from Debian's /etc/odbcinst.ini entry with CommLog off, so the
tests leave no psqlodbc_*.log files in /tmp.

Output: "ok - ...", "not ok - ..." and "#" diagnostics; exit status 1 if any check failed.
"""

import configparser
import os
import sys
import tempfile
from decimal import Decimal

import shapes

DB = os.environ.get("DP_CLIENTS_DB", "dp_agg_clients")
ROLE = os.environ.get("DP_CLIENTS_ROLE", "dp_clients_analyst")
SCHEMA = os.environ.get("DP_CLIENTS_SCHEMA", "clinic")
REGIONS = set(os.environ.get("DP_CLIENTS_REGIONS", "").split(","))
TABLE = f"{SCHEMA}.patients"
DRIVER = "PostgreSQL Unicode"

failures = 0


def check(passed, description, diagnostic=""):
    global failures
    print(("ok - " if passed else "not ok - ") + "odbc: " + description)
    if not passed:
        failures += 1
        for line in str(diagnostic).splitlines():
            print("#   " + line)
    sys.stdout.flush()
    return passed


def private_odbcinst(directory):
    """Registers Debian's Unicode driver in directory/odbcinst.ini, without CommLog."""
    system = configparser.ConfigParser(interpolation=None)
    system.read("/etc/odbcinst.ini")
    if DRIVER not in system:
        raise RuntimeError(f"/etc/odbcinst.ini has no [{DRIVER}] (install odbc-postgresql)")
    with open(os.path.join(directory, "odbcinst.ini"), "w", encoding="utf-8") as f:
        f.write(f"[{DRIVER}]\nDriver={system[DRIVER]['Driver']}\nCommLog=0\nDebug=0\n")
    os.environ["ODBCSYSINI"] = directory


def connection_string():
    # Server may be a Unix socket directory: psqlODBC hands it to libpq as host.
    return (f"Driver={{{DRIVER}}};Server={os.environ.get('PGHOST', '/tmp')};"
            f"Port={os.environ.get('PGPORT', '5432')};Database={DB};Uid={ROLE};"
            "ApplicationName=dp_agg_clients_odbc")


def state_of(exc):
    return exc.args[0] if exc.args else None


def text_of(exc):
    return exc.args[1] if len(exc.args) > 1 else str(exc)


def basic_checks(conn, pyodbc):
    cur = conn.cursor()
    sql = f"SELECT dp_count(id, ?) FROM {TABLE}"
    try:
        rows = cur.execute(sql, 1.0).fetchall()
        check(len(rows) == 1 and isinstance(rows[0][0], int) and 575 <= rows[0][0] <= 625,
              f"{sql} with epsilon 1.0 bound as a parameter returns one integer in [575, 625]"
              " (failure probability < 1e-10)", f"got {rows!r}")
    except pyodbc.Error as exc:
        check(False, f"{sql} with a bound epsilon", text_of(exc))

    sql = f"SELECT dp_avg(age, 0, 110, 0.5::float8) FROM {TABLE}"
    try:
        rows = cur.execute(sql).fetchall()
        check(len(rows) == 1 and isinstance(rows[0][0], Decimal) and 0 <= rows[0][0] <= 110,
              f"{sql} returns one Decimal in [0, 110]", f"got {rows!r}")
    except pyodbc.Error as exc:
        check(False, sql, text_of(exc))

    sql = (f"SELECT * FROM (SELECT region, dp_count(id, 1.0) AS n FROM {TABLE} GROUP BY region) q "
           "ORDER BY region")
    try:
        rows = cur.execute(sql).fetchall()
        check({r[0] for r in rows} == REGIONS and len(rows) == len(REGIONS),
              f"{sql} returns every (large) region once", f"got {rows!r}")
    except pyodbc.Error as exc:
        check(False, sql, text_of(exc))

    sql = f"SELECT * FROM {TABLE}"
    try:
        rows = cur.execute(sql).fetchall()
        check(False, f"{sql} is refused", f"it returned {len(rows)} rows")
    except pyodbc.Error as exc:
        # The DETAIL says why; psqlODBC keeps it (and drops the HINT).
        text = text_of(exc)
        check(state_of(exc) == "42501" and "DETAIL:" in text,
              f"{sql} is refused with SQLSTATE 42501 and the DETAIL reaches the application", text)
    try:
        check(cur.execute("SELECT 1").fetchone()[0] == 1, "the connection is usable after the refusal")
    except pyodbc.Error as exc:
        check(False, "the connection is usable after the refusal", text_of(exc))


def run_shape(conn, pyodbc, shape):
    cur = conn.cursor()
    try:
        if shape.only == "odbc" and shape.sql.startswith("SQLTables("):
            # How Excel, Power BI and Tableau list tables and columns over ODBC.
            rows = [tuple(r) for r in cur.tables(table="patients", schema=SCHEMA)]
        elif shape.only == "odbc" and shape.sql.startswith("SQLColumns("):
            rows = [tuple(r) for r in cur.columns(table="patients", schema=SCHEMA)]
        elif shape.only == "odbc":
            # What BI tools call for indexes (SQLStatistics), like JDBC's getIndexInfo.
            rows = [tuple(r) for r in cur.statistics("patients", schema=SCHEMA)]
        else:
            rows = [tuple(r) for r in cur.execute(shape.sql).fetchall()]
        return shapes.judge(shape, rows=rows)
    except pyodbc.Error as exc:
        text = text_of(exc)
        passed, why = shapes.judge(shape, sqlstate=state_of(exc), error=text)
        if passed and "dp_agg:" in text:
            check("DETAIL:" in text, f"shape {shape.name}: the refusal's DETAIL reaches the application", text)
        return passed, why


def main():
    global failures
    try:
        import pyodbc
    except ImportError as exc:
        check(False, "import pyodbc (Debian python3-pyodbc; run test/scripts/ensure_deps.sh)", exc)
        return 1
    with tempfile.TemporaryDirectory(prefix="dp_agg_odbc.") as directory:
        try:
            private_odbcinst(directory)
            conn = pyodbc.connect(connection_string(), autocommit=True, timeout=10)
        except (pyodbc.Error, RuntimeError, KeyError) as exc:
            check(False, f"connect through [{DRIVER}] as {ROLE}: {connection_string()}", exc)
            return 1
        print(f"# odbc: {conn.getinfo(pyodbc.SQL_DRIVER_NAME)} {conn.getinfo(pyodbc.SQL_DRIVER_VER)}, "
              f"unixODBC, pyodbc {pyodbc.version}")
        check(True, f"connect through [{DRIVER}] with a DSN-less connection string as {ROLE}")
        basic_checks(conn, pyodbc)
        for shape in shapes.parse(schema=SCHEMA):
            if shape.only == "odbc" or shape.runs_on("odbc"):
                passed, why = run_shape(conn, pyodbc, shape)
                if not shapes.check_line(passed, "odbc", shape, why):
                    failures += 1
        conn.close()
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
