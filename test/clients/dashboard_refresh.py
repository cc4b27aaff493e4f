#!/usr/bin/env python3
"""A BI dashboard refreshed 20 times (issue 27): ten of the plain statements BI
tools send (the "-- plain:" twins of bi_statements.sql that run everywhere), run
20 times each by the restricted analyst with the release cache on, through
psycopg2. Each is charged exactly once: the other 19 runs reuse its release
(dp_agg.ledger kind 'reused', epsilon 0) and return the very same rows.

The cache's period is aligned to the Unix epoch (README "Reusing released
answers"); the test uses the longest period (366 days) and, should a period
boundary fall inside the test all the same, runs it once more (it takes
seconds, so a second boundary cannot fall inside it). Ends with
"dashboard: N passed, M failed"."""
import os
import sys
import time

import psycopg2

import shapes

DB = os.environ.get("DP_CLIENTS_DB", "dp_agg_clients")
ROLE = os.environ.get("DP_CLIENTS_ROLE", "dp_clients_analyst")
SCHEMA = os.environ.get("DP_CLIENTS_SCHEMA", "clinic")
SUPERUSER = os.environ.get("DP_CLIENTS_SUPERUSER", "postgres")
PERIOD = 31622400  # dp_agg.release_cache_period's maximum, in seconds
TILES = 10
REFRESHES = 20

passed = failed = 0


def check(ok, description, diagnostic=""):
    global passed, failed
    print(("ok - " if ok else "not ok - ") + "dashboard: " + description)
    if ok:
        passed += 1
    else:
        failed += 1
        for line in str(diagnostic).splitlines():
            print("#   " + line)
    sys.stdout.flush()


def ledger_counts(cur):
    cur.execute("SELECT count(*) FILTER (WHERE kind = 'charge'), "
                "       count(*) FILTER (WHERE kind = 'reused'), "
                "       coalesce(sum(epsilon) FILTER (WHERE kind = 'reused'), 0) "
                "FROM dp_agg.ledger")
    return cur.fetchone()


def period_index():
    return int(time.time()) // PERIOD


def refresh_dashboard(cur, tiles):
    """Returns (first rows of each tile, list of tiles whose later rows differed)."""
    first = {}
    differed = []
    for refresh in range(REFRESHES):
        for tile in tiles:
            cur.execute(tile.sql)
            rows = cur.fetchall()
            if refresh == 0:
                first[tile.name] = rows
            elif rows != first[tile.name] and tile.name not in differed:
                differed.append(tile.name)
    return first, differed


def main():
    tiles = [s for s in shapes.parse(schema=SCHEMA)
             if s.name.endswith("_plain") and s.expect == "works" and s.runs_on("psql")][:TILES]
    check(len(tiles) == TILES, f"{TILES} plain BI statements in the corpus",
          [t.name for t in tiles])
    admin = psycopg2.connect(dbname=DB, user=SUPERUSER)
    admin.autocommit = True
    conn = psycopg2.connect(dbname=DB, user=ROLE)
    conn.autocommit = True
    cur = conn.cursor()
    cur.execute(f"SET dp_agg.release_cache_period = {PERIOD}")
    for attempt in (1, 2):
        # questions asked before this attempt (an earlier run of the suite,
        # the shapes) must not count: clear this role's stored releases
        admin.cursor().execute("SELECT dp_agg.clear_release_cache(%s::regrole)", (ROLE,))
        start = period_index()
        charges0, reused0, _ = ledger_counts(cur)
        first, differed = refresh_dashboard(cur, tiles)
        charges1, reused1, reused_epsilon = ledger_counts(cur)
        if period_index() == start:
            break
        print(f"# a cache period ended during attempt {attempt}: once more")
    check(charges1 - charges0 == TILES,
          f"{TILES} tiles x {REFRESHES} refreshes: exactly one charge per tile",
          f"{charges1 - charges0} charges")
    check(reused1 - reused0 == TILES * (REFRESHES - 1),
          f"the other {TILES * (REFRESHES - 1)} runs reused a release (ledger kind 'reused')",
          f"{reused1 - reused0} reuses")
    check(reused_epsilon == 0, "reuses cost epsilon 0", reused_epsilon)
    check(not differed, "every refresh returned the rows of the first", differed)
    check(all(first[t.name] for t in tiles if t.rows[0] > 0),
          "tiles that must have rows have them", {t.name: first[t.name] for t in tiles})
    conn.close()
    admin.close()
    print(f"dashboard: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
