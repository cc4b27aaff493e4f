"""What the two fuzzers share: connections, logging, and the throwaway
databases and login roles each one makes afresh and drops at the end."""
import os

import psycopg2


def log(*a):
    print(*a, flush=True)


def connect(db, user=None, port=None):
    """An autocommit connection to `db` as `user` (default: the libpq user), on
    `port` of the libpq host (default: the libpq port; another node of a Citus
    cluster whose nodes share one socket directory)."""
    kw = {"dbname": db}
    if user:
        kw["user"] = user
    if port:
        kw["port"] = port
    c = psycopg2.connect(**kw)
    c.autocommit = True
    return c


def _admin():
    return connect(os.environ.get("PGDATABASE", "postgres"))


def _drop(cur, databases, roles):
    # Databases that hold a dp_agg ledger are dropped only with the
    # confirmation (docs/administrator_guide.md "Removing dp_agg").
    cur.execute("SET dp_agg.allow_drop_extension = on")
    for db in databases:
        cur.execute(f"DROP DATABASE IF EXISTS {db} WITH (FORCE)")
    cur.execute("RESET dp_agg.allow_drop_extension")
    cur.execute("SET client_min_messages = warning")
    for r in roles:
        cur.execute(f"DROP ROLE IF EXISTS {r}")


def recreate(databases, roles):
    """Drops and creates `databases` (UTF8, from template0) and the LOGIN `roles`."""
    admin = _admin()
    with admin.cursor() as cur:
        _drop(cur, databases, roles)
        for r in roles:
            cur.execute(f"CREATE ROLE {r} LOGIN")
        for db in databases:
            cur.execute(f"CREATE DATABASE {db} TEMPLATE template0 ENCODING 'UTF8'")
    admin.close()


def drop(databases, roles):
    admin = _admin()
    with admin.cursor() as cur:
        _drop(cur, databases, roles)
    admin.close()


def close_all(connections):
    """Closes every connection of a {key: connection} pool, ignoring errors."""
    for c in connections.values():
        try:
            c.close()
        except Exception:
            pass
