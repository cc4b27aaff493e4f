"""The query shapes of shapes.sql: parser and judge shared by the Python clients, and
the psql client itself.

  /usr/bin/python3 shapes.py psql     runs every SQL shape through psql(1) as the
                                      restricted analyst (PGHOST/PGPORT, DP_CLIENTS_*)

The psycopg2 and ODBC clients import parse() and judge(). RestrictedAnalystJdbc.java
reads the same file with its own small parser (same format, see shapes.sql).
Output lines: "ok - ...", "not ok - ..." and "#" diagnostics; the caller numbers them.
"""

import os
import re
import subprocess
import sys
from decimal import Decimal, InvalidOperation

HERE = os.path.dirname(os.path.abspath(__file__))
# One file or several, separated by ':' (run_clients.sh passes shapes.sql and
# bi_statements.sql, the statements BI tools generate).
SHAPES_FILE = os.environ.get("DP_CLIENTS_SHAPES") or ":".join(
    os.path.join(HERE, name) for name in ("shapes.sql", "bi_statements.sql"))


class Shape:
    def __init__(self, name):
        self.name = name
        self.expect = None        # "works" or "refused"
        self.sqlstate = None      # for "refused"
        self.todo = ""            # the TODO note of the expect line, if any
        self.rows = None          # (min, max)
        self.values = None        # (lo, hi) or None
        self.only = None          # None (SQL for every client), "jdbc" or "odbc"
        self.hint_only = False    # refusal's advice only in the HINT today
        self.escape = ()          # clients that translate its {fn ...} escapes ("odbc", "jdbc")
        self.plain = None         # the same question with the built-in aggregates (one line)
        self.sql = ""

    def runs_on(self, client):
        """Whether `client` runs this SQL shape: not a driver-only metadata call, and
        escapes only through the drivers that translate them."""
        return self.only is None and (not self.escape or client in self.escape)

    def describe(self):
        if self.expect == "works":
            what = f"works ({self.rows[0]}..{self.rows[1]} rows"
            if self.values:
                what += f", values in [{self.values[0]}, {self.values[1]}]"
            return what + ")"
        return f"refused with SQLSTATE {self.sqlstate}" + (" [TODO issue 13]" if self.todo else "")


def parse(path=SHAPES_FILE, schema="clinic"):
    """Returns the shapes of path (files separated by ':'), @TABLE@ and @SCHEMA@
    replaced. A block's "-- plain: SQL" line adds the shape NAME_plain, that SQL with
    the block's expectations."""
    shapes = []
    for one in path.split(":"):
        shapes.extend(parse_file(one))
    table = f"{schema}.patients"
    plain = []
    for s in shapes:
        if s.plain:
            twin = Shape(s.name + "_plain")
            twin.__dict__.update({k: v for k, v in s.__dict__.items() if k not in ("name", "plain", "sql")})
            twin.sql = s.plain
            plain.append(twin)
    shapes.extend(plain)
    for s in shapes:
        s.sql = s.sql.strip().rstrip(";").replace("@TABLE@", table).replace("@SCHEMA@", schema)
        if s.expect not in ("works", "refused") or s.rows is None or \
                (s.expect == "refused" and not re.fullmatch(r"[0-9A-Z]{5}", s.sqlstate or "")):
            raise ValueError(f"shapes: shape {s.name} lacks a valid expect/rows line")
    return shapes


def parse_file(path):
    shapes = []
    current = None
    with open(path, encoding="utf-8") as f:
        for raw in f:
            line = raw.rstrip("\n")
            m = re.match(r"^-- shape: (\S+)\s*$", line)
            if m:
                current = Shape(m.group(1))
                shapes.append(current)
                continue
            if current is None:
                continue
            m = re.match(r"^-- (expect|rows|values|only|guidance|escape|plain): *(.*)$", line)
            if m:
                key, rest = m.group(1), m.group(2)
                if key == "plain":
                    current.plain = rest.strip()
                    continue
                value, _, note = rest.partition("--")
                words = value.split()
                if key == "expect":
                    current.expect = words[0]
                    current.sqlstate = words[1] if words[0] == "refused" else None
                    current.todo = note.strip() if "TODO" in note else ""
                elif key == "rows":
                    current.rows = (int(words[0]), int(words[1]))
                elif key == "values":
                    current.values = (Decimal(words[0]), Decimal(words[1]))
                elif key == "only":
                    current.only = words[0]
                elif key == "guidance":
                    current.hint_only = words[0] == "hint-only"
                elif key == "escape":
                    current.escape = tuple(words)
                continue
            if line.startswith("--"):
                continue
            if line.strip():
                current.sql += ("\n" if current.sql else "") + line
    return shapes


def as_number(cell):
    try:
        return Decimal(str(cell).strip())
    except (InvalidOperation, ValueError):
        return None


def judge(shape, rows=None, sqlstate=None, error=""):
    """(passed, diagnostic) for one run: rows (a list of row tuples) when the shape
    answered, or sqlstate and error text when it was refused."""
    if shape.expect == "refused":
        if sqlstate is None:
            return False, f"expected a refusal with SQLSTATE {shape.sqlstate}, got {len(rows)} rows: {rows[:5]!r}"
        if sqlstate != shape.sqlstate:
            return False, f"expected SQLSTATE {shape.sqlstate}, got {sqlstate}: {error}"
        return True, ""
    if sqlstate is not None:
        return False, f"expected it to work, got SQLSTATE {sqlstate}: {error}"
    low, high = shape.rows
    if not low <= len(rows) <= high:
        return False, f"expected {low}..{high} rows, got {len(rows)}: {rows[:5]!r}"
    if shape.values:
        for row in rows:
            value = as_number(row[-1]) if row else None
            if value is None or not shape.values[0] <= value <= shape.values[1]:
                return False, f"row {row!r}: last column not a number in [{shape.values[0]}, {shape.values[1]}]"
    return True, ""


def check_line(passed, client, shape, diagnostic=""):
    print(("ok - " if passed else "not ok - ") + f"{client}: shape {shape.name} {shape.describe()}")
    if not passed:
        for line in str(diagnostic).splitlines():
            print("#   " + line)
    sys.stdout.flush()
    return passed


def run_psql():
    """Each SQL shape through psql as the restricted analyst (unaligned output, verbose
    errors). Returns the number of failed checks."""
    schema = os.environ.get("DP_CLIENTS_SCHEMA", "clinic")
    db = os.environ.get("DP_CLIENTS_DB", "dp_agg_clients")
    role = os.environ.get("DP_CLIENTS_ROLE", "dp_clients_analyst")
    failures = 0
    for shape in parse(schema=schema):
        if not shape.runs_on("psql"):
            continue
        try:
            done = subprocess.run(
                ["psql", "-X", "-At", "-F", "\t", "-v", "ON_ERROR_STOP=1", "-v", "VERBOSITY=verbose",
                 "-P", "pager=off", "-U", role, "-d", db, "-c", shape.sql],
                capture_output=True, text=True, timeout=60)
        except subprocess.TimeoutExpired:
            failures += not check_line(False, "psql", shape, "timed out after 60 s")
            continue
        code = re.search(r"^ERROR: +([0-9A-Z]{5}):", done.stderr, re.M)
        if done.returncode != 0:
            passed, why = judge(shape, sqlstate=code.group(1) if code else "?????", error=done.stderr)
        else:
            rows = [tuple(line.split("\t")) for line in done.stdout.splitlines()]
            passed, why = judge(shape, rows=rows)
        failures += not check_line(passed, "psql", shape, why)
    return failures


if __name__ == "__main__":
    if sys.argv[1:] == ["psql"]:
        sys.exit(1 if run_psql() else 0)
    print(__doc__, file=sys.stderr)
    sys.exit(2)
