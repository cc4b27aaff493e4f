#!/usr/bin/python3
"""The privacy audit's count and sum noise checks (test/audit/dp_audit), run once
against a Citus distributed table: the released noise of dp_count and dp_sum over
a distributed table must follow the exact discrete Laplace law of a single node
(Pearson's chi-square against the exact pmf, and a sign test), which fails if the
noise were drawn on the workers (a sum of per-shard noises), twice, or not at all.

Each dataset of the audit (ExactNoiseAudit "count_noise" and "sum_int_noise") is
stored once in each of GROUPS groups, its rows spread over the shards (the table
is distributed by a row number, not by the group), so one GROUP BY statement gives
GROUPS independent releases, each combined from several workers' partial states.
False-failure probability: at most 1e-9 per test (4 tests).
Usage: audit_citus.py PORT (a coordinator of test/citus/cluster.sh, PG* for the rest).
"""
import os
import sys

import numpy as np
import psycopg2
from scipy import stats

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "audit"))
from dp_audit.suites import EXACT_NOISE_AUDITS  # noqa: E402

GROUPS = 20_000
ALPHA = 1e-9  # per test


def releases(cur, audit, table):
    cur.execute(f"SELECT {audit.mechanism.call(audit.epsilon)} FROM {table} GROUP BY g")
    return np.array([float(r[0]) for r in cur.fetchall()])


def main():
    port = sys.argv[1]
    connection = psycopg2.connect(host=os.environ.get("PGHOST"), port=port, dbname="postgres",
                                  user="postgres")
    connection.autocommit = True
    cur = connection.cursor()
    cur.execute("SELECT dp_agg.set_budget('postgres', 1e9, 0.5)")
    failures = 0
    for audit in (a for a in EXACT_NOISE_AUDITS if a.key in ("count_noise", "sum_int_noise")):
        table = f"citus_audit_{audit.key}"
        column_type = audit.mechanism.column_type
        cur.execute(f"DROP TABLE IF EXISTS {table}")
        cur.execute(f"CREATE TABLE {table} (id bigserial, g int, x {column_type})")
        cur.execute(f"SELECT create_distributed_table('{table}', 'id')")
        values = ", ".join(f"({v})" for v in audit.rows)
        cur.execute(f"INSERT INTO {table} (g, x) SELECT g, v.x FROM generate_series(1, {GROUPS}) g,"
                    f" (VALUES {values}) AS v(x)")
        answers = releases(cur, audit, table)
        noise = audit.noise_in_steps(answers)
        bins = audit.bins(len(noise))
        observed = bins.histogram(noise)
        statistic, p_value = stats.chisquare(observed, bins.probabilities * len(noise))
        off_integer = int(np.count_nonzero(noise != np.round(noise)))
        ok = p_value >= ALPHA and off_integer == 0 and len(noise) == GROUPS
        failures += 0 if ok else 1
        print(f"{'ok' if ok else 'FAILED'}: citus audit {audit.key}: {len(noise)} releases, "
              f"{audit.describe_law()}, chi2 {statistic:.1f} p = {p_value:.3g}, "
              f"{off_integer} off the grid")
        positive, negative = int(np.count_nonzero(noise > 0)), int(np.count_nonzero(noise < 0))
        sign_p = stats.binomtest(positive, positive + negative, 0.5).pvalue
        ok = sign_p >= ALPHA
        failures += 0 if ok else 1
        print(f"{'ok' if ok else 'FAILED'}: citus audit {audit.key}: sign test p = {sign_p:.3g} "
              f"({positive} positive, {negative} negative)")
        cur.execute(f"DROP TABLE {table}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
