#!/usr/bin/python3
"""Whether a GROUP BY had a group, by timing (issue 29, second review): the
same private query over a WHERE that matches no row and over one that matches
one row, each with parameters no earlier query used (fresh epsilon), so that
every per-call-site plan is new. Prints the median wall time of each and
their difference, with the plans built when the query starts (the fix) and
with them left to the first group (fault late_site_plans, superuser only).
Run as a superuser against a database with dp_agg (PG* environment)."""
import statistics
import sys
import time

import psycopg2

REPS = int(sys.argv[1]) if len(sys.argv) > 1 else 41
QUERIES = {
    "group selection + dp_count (restricted)":
        "SELECT k, dp_count(v, {e}) FROM bfg.t WHERE v = {v} GROUP BY k",
    "Gaussian dp_avg": "SELECT k, dp_avg(v, 0, 100, {e}, 1e-7) FROM bfg.t WHERE v = {v} GROUP BY k",
    "dp_avg_interval": "SELECT k, dp_avg_interval(v, 0, 100, {e}, 0.95) FROM bfg.t WHERE v = {v} GROUP BY k",
}


def main():
    c = psycopg2.connect("")
    c.autocommit = True
    cur = c.cursor()
    cur.execute("SET client_min_messages = warning")
    cur.execute("DROP SCHEMA IF EXISTS bfg CASCADE")
    cur.execute("CREATE SCHEMA bfg")
    cur.execute("CREATE TABLE bfg.t AS SELECT 1 AS k, 7 AS v")
    cur.execute("SET dp_agg.release_cache_period = 0")
    cur.execute("DROP ROLE IF EXISTS bfg_analyst")
    cur.execute("CREATE ROLE bfg_analyst")
    cur.execute("SELECT dp_agg.restrict_role('bfg_analyst')")
    cur.execute("SELECT dp_agg.set_budget('bfg_analyst', 1e9, 0.5)")
    cur.execute("SELECT dp_agg.set_budget(current_user::regrole, 1e9, 0.5)")
    cur.execute("GRANT USAGE ON SCHEMA bfg TO bfg_analyst")
    cur.execute("SELECT dp_agg.protect_table('bfg.t')")
    counter = [0]

    def timed(sql, restricted):
        counter[0] += 1
        eps = 0.3 + counter[0] * 1e-6  # fresh parameters every time
        if restricted:  # group selection's plan depends on its (epsilon, delta)
            cur.execute("SET SESSION AUTHORIZATION bfg_analyst")
            cur.execute(f"SET dp_agg.group_selection_epsilon = {eps}")
        start = time.perf_counter()
        cur.execute(sql.format(e=eps, v=7 if timed.one else -1))
        cur.fetchall()
        elapsed = time.perf_counter() - start
        if restricted:
            cur.execute("RESET SESSION AUTHORIZATION")
        return elapsed * 1e3

    print(f"median wall ms of {REPS} runs each, interleaved, alternating which goes first (0 groups / 1 group)")
    for fault in ("none", "late_site_plans"):
        cur.execute(f"SET dp_agg.insecure_test_fault = {fault}")
        for name, sql in QUERIES.items():
            restricted = "restricted" in name
            zero, one = [], []
            for rep in range(REPS):
                for one_group in ((False, True) if rep % 2 == 0 else (True, False)):
                    timed.one = one_group
                    (one if one_group else zero).append(timed(sql, restricted))
            z, o = statistics.median(zero), statistics.median(one)
            print(f"{'plans at start' if fault == 'none' else 'plans on first group':22s} "
                  f"{name:42s} 0 groups {z:7.3f}  1 group {o:7.3f}  difference {o - z:+7.3f} ms")
    cur.execute("RESET dp_agg.insecure_test_fault")
    cur.execute("DROP SCHEMA bfg CASCADE")
    cur.execute("DROP OWNED BY bfg_analyst")
    cur.execute("DROP ROLE bfg_analyst")


main()
