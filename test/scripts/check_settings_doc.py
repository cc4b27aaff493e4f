#!/usr/bin/python3
"""docs/settings.md must describe exactly the dp_agg.* settings the server defines.

Compares the table of docs/settings.md with pg_settings (name, boot_val, unit, context,
min_val/max_val or enumvals) of a server that has dp_agg loaded, so the page cannot drift
from src/pg/settings.cpp. Needs PG* variables for a superuser connection (superuser-only
settings are hidden from others). Prints "ok N - ..." / "not ok N - ..." lines (TAP style)
and exits 1 on any difference.
"""

import os
import re
import sys

import psycopg2

DOC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs", "settings.md")
ROW = re.compile(r"^\| `(dp_agg\.[a-z_]+)` \| `([^`]*)` \| ([^|]*)\| ([^|]*)\| ([^|]*)\|")


def documented_settings(path):
    """{name: (default, unit, context, range)} from the page's table rows."""
    rows = {}
    with open(path, encoding="utf-8") as page:
        for line in page:
            match = ROW.match(line)
            if match:
                name, default, unit, context, value_range = (g.strip() for g in match.groups())
                if name in rows:
                    raise SystemExit(f"check_settings_doc: {name} documented twice")
                rows[name] = ("" if default == "''" else default, unit, context,
                              value_range.replace("`", ""))
    return rows


def server_settings(connection):
    with connection.cursor() as cursor:
        cursor.execute("LOAD 'dp_agg'")  # defines the settings even if not preloaded
        cursor.execute("SELECT name, boot_val, coalesce(unit, ''), context, vartype, min_val,"
                       " max_val, enumvals FROM pg_settings WHERE name LIKE 'dp_agg.%'"
                       " ORDER BY name")
        settings = {}
        for name, default, unit, context, vartype, low, high, choices in cursor.fetchall():
            if vartype == "enum":
                value_range = ", ".join(choices)
            elif low is not None:
                value_range = f"{low} .. {high}"
            else:
                value_range = ""
            settings[name] = (default or "", unit, context, value_range)
        return settings


def main():
    documented = documented_settings(DOC)
    with psycopg2.connect("") as connection:
        actual = server_settings(connection)
    failures = 0
    fields = ("default", "unit", "context", "range")
    for number, name in enumerate(sorted(set(documented) | set(actual)), start=1):
        if name not in documented:
            problem = "defined by the server but missing from docs/settings.md"
        elif name not in actual:
            problem = "documented but not defined by the server"
        else:
            problem = "; ".join(f"{field}: page says {mine!r}, server says {theirs!r}"
                                for field, mine, theirs in zip(fields, documented[name],
                                                               actual[name])
                                if mine != theirs)
        if problem:
            failures += 1
            print(f"not ok {number} - {name}: {problem}")
        else:
            print(f"ok {number} - {name} documented as defined")
    if not actual:
        print("not ok 0 - the server defines no dp_agg.* settings (is dp_agg installed?)")
        failures += 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
