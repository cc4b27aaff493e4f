#!/usr/bin/python3
"""First-group CPU cost (review of issue 29 second review): the executor CPU
time (log_executor_stats, which excludes ExecutorStart) of the same query with
0, 1 and 2 groups, fresh parameters every run, in random order; first-group
extra = (t1 - t0) - (t2 - t1). WRAP=1 wraps it in count(x) (no output rows).
Run as a superuser against a database with dp_agg (PG* environment);
usage: bench_first_group_cpu.py [REPS] [QUERY NAME...]."""
import statistics, sys, time, random, re
import psycopg2
REPS = int(sys.argv[1]) if len(sys.argv) > 1 else 41
Q = {
 "plain count": "SELECT k, count(v) FROM bfg.t WHERE k <= {g} GROUP BY k",
 "plain sum numeric": "SELECT k, sum(n) FROM bfg.t WHERE k <= {g} GROUP BY k",
 "dp_count": "SELECT k, dp_count(v, {e}) FROM bfg.t WHERE k <= {g} GROUP BY k",
 "dp_avg gauss": "SELECT k, dp_avg(v, 0, 100, {e}, 1e-7) FROM bfg.t WHERE k <= {g} GROUP BY k",
 "dp_avg_interval": "SELECT k, dp_avg_interval(v, 0, 100, {e}, 0.95) FROM bfg.t WHERE k <= {g} GROUP BY k",
 "dp_variance": "SELECT k, dp_variance(v, 0, 100, {e}) FROM bfg.t WHERE k <= {g} GROUP BY k",
 "dp_select": "SELECT k, dp_select(s, ARRAY['a','b','c','d'], {e}) FROM bfg.t WHERE k <= {g} GROUP BY k",
 "dp_median": "SELECT k, dp_median(v, 0, 100, {e}) FROM bfg.t WHERE k <= {g} GROUP BY k",
 "dp_sum numeric": "SELECT k, dp_sum(n, 0, 100, {e}) FROM bfg.t WHERE k <= {g} GROUP BY k",
 "dp_rr": "SELECT k, dp_rr_proportion(v > 3, {e}) FROM bfg.t WHERE k <= {g} GROUP BY k",
 "dp_count_interval": "SELECT k, dp_count_interval(v, {e}, 0.9) FROM bfg.t WHERE k <= {g} GROUP BY k",
}
import os
WRAP = os.environ.get("WRAP") == "1"
only = sys.argv[2:] or list(Q)
c = psycopg2.connect(""); c.autocommit = True; cur = c.cursor()
cur.execute("SET client_min_messages = warning"); cur.execute("SELECT dp_agg.set_budget(current_user::regrole, 1e12, 0.9)")
cur.execute("DROP SCHEMA IF EXISTS bfg CASCADE"); cur.execute("CREATE SCHEMA bfg")
cur.execute("CREATE TABLE bfg.t AS SELECT k, 7 AS v, 7.5::numeric AS n, 'a'::text AS s FROM generate_series(1,2) k")
cur.execute("DROP ROLE IF EXISTS bfg_analyst"); cur.execute("CREATE ROLE bfg_analyst")
cur.execute("SELECT dp_agg.restrict_role('bfg_analyst')")
cur.execute("SELECT dp_agg.set_budget('bfg_analyst', 1e12, 0.9)")
cur.execute("GRANT USAGE ON SCHEMA bfg TO bfg_analyst")
cur.execute("SELECT 1")
cur.execute("SELECT current_setting('dp_agg.insecure_test_late_plans')"); print("late before", cur.fetchone()); cur.execute("SET log_executor_stats = on"); cur.execute("SET client_min_messages = log")
n = [0]
def timed(sql, g):
    n[0] += 1
    eps = 0.3 + n[0] * 1e-6
    cur.execute(f"SET dp_agg.group_selection_epsilon = {eps}")
    q = sql.format(e=eps, g=g)
    if WRAP: q = "SELECT count(x) FROM (" + q + ") s(k, x)"
    del c.notices[:]; cur.execute(q); cur.fetchall()
    tot = None
    for note in c.notices:
        if 'EXECUTOR STATISTICS' in note:
            mm = re.search(r'([0-9.]+) s user, ([0-9.]+) s system', note)
            tot = (float(mm.group(1)) + float(mm.group(2))) * 1e3
    if tot is None: raise RuntimeError('no stats: ' + repr(c.notices[:2]))
    return tot
for name in only:
    sql = Q[name]
    try: timed(sql, 1)
    except Exception as ex: print(name, "ERR", str(ex).splitlines()[0]); c.rollback() if not c.autocommit else None; continue
    r = {0: [], 1: [], 2: []}
    for rep in range(REPS):
        order = [0, 1, 2]; random.shuffle(order)
        for g in order: r[g].append(timed(sql, g))
    m = {g: statistics.median(v) for g, v in r.items()}
    q = {g: (statistics.quantiles(v, n=4)[0], statistics.quantiles(v, n=4)[2]) for g, v in r.items()}
    print(f"{name:16s} 0g {m[0]:7.3f} 1g {m[1]:7.3f} 2g {m[2]:7.3f}  d01 {m[1]-m[0]:+.3f} d12 {m[2]-m[1]:+.3f}  first-extra {(m[1]-m[0])-(m[2]-m[1]):+.3f} ms  IQR0 {q[0][1]-q[0][0]:.3f}", flush=True)
cur.execute("RESET client_min_messages"); cur.execute("SELECT current_setting('dp_agg.insecure_test_late_plans')"); print("late after", cur.fetchone())
cur.execute("SET client_min_messages = warning")
cur.execute("DROP SCHEMA bfg CASCADE")
cur.execute("DROP OWNED BY bfg_analyst")
cur.execute("DROP ROLE bfg_analyst")
