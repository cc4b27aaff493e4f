"""Public key sets (issue 29, item 2; README "Public key sets"), audited on
neighbouring datasets through SQL as a restricted analyst sees them.

The table audit.public_keys_{d,d_prime} has a column k with the public keys
1..KEYS declared (dp_agg.set_public_keys). D holds no row of any key (only
rows of an undeclared key, 0, which must count for nothing); D' holds the
same plus one row of every declared key. A restricted session (SET ROLE to a
restricted role: it stays restricted for the connection) runs

    SELECT k, dp_count(EPSILON) FROM t GROUP BY k

which releases one independent noisy count per key (each key's group is a
separate release). The audit certifies, on D against D':

  answer-set    the released keys are exactly 1..KEYS, in key order, on both
                (deterministic: a key whose presence depends on the rows
                would show here, and so would the undeclared key 0);
  privacy-loss  the counts of a key on D and on D', two directions, with the
                suite's event certification: a public-key release is the
                dp_count release and nothing more, epsilon with no delta
                (no group selection);
  delta         the event {key released}: its certified delta (D' over D and
                D over D', Clopper-Pearson at the run's level) must be 0.

Self-check: under the fault public_keys_without_join (the data's own keys
released without selection) D releases no key at all: the answer-set and
delta checks must FAIL.
"""

import math
from typing import List

import numpy as np
import psycopg2

from .statistics import certify_privacy_loss, clopper_pearson_lower, clopper_pearson_upper

KEYS = 50_000
STATEMENTS = 4  # 200,000 releases per dataset, the size of the exact-noise audits
EPSILON = 1.0
ROLE = "dp_audit_public_keys_analyst"
LABEL = f"dp_count, public keys ({KEYS:,} keys)"
# Tests counted in the run's Bonferroni budget, two directions each: the
# declared keys' delta and count loss (4), the public LEFT JOIN's delta,
# count loss and sum loss (6).
STATISTICAL_TESTS = 10


class PublicKeyAudit:
    LABEL = LABEL
    SHORT = "public keys"
    SELF_CHECK_STATEMENTS = 1  # one statement a dataset shows it
    TABLES = ("audit.public_keys_d", "audit.public_keys_d_prime")
    PAIR = "D (no row) vs D' (1 row a key)"
    VALUES = ("count of a key",)  # the released value columns after the key
    FAULT = "public_keys_without_join"

    def __init__(self, auditor):
        self.auditor = auditor
        self.database = auditor.db.database

    def _prepare(self):
        """The restricted analyst and the datasets (_create_tables)."""
        connection = psycopg2.connect(dbname=self.database)
        connection.autocommit = True
        with connection.cursor() as cur:
            cur.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (ROLE,))
            if cur.fetchone() is None:
                cur.execute(f"CREATE ROLE {ROLE}")
            cur.execute(f"GRANT USAGE ON SCHEMA audit TO {ROLE}")
            self._create_tables(cur)
            cur.execute(f"SELECT dp_agg.restrict_role('{ROLE}')")
        connection.close()

    def _create_tables(self, cur):
        for name, extra in (("d", ""), ("d_prime",
                                       f" UNION ALL SELECT k FROM generate_series(1, {KEYS}) k")):
            table = f"audit.public_keys_{name}"
            cur.execute(f"DROP TABLE IF EXISTS {table}")
            cur.execute(f"CREATE TABLE {table} AS SELECT 0 AS k FROM generate_series(1, 100)"
                        + extra)
            cur.execute("SELECT dp_agg.protect_table(%s)", (table,))
            cur.execute("SELECT dp_agg.set_public_keys(%s, 'k', "
                        "(SELECT array_agg(k) FROM generate_series(1, %s) k))", (table, KEYS))
            cur.execute(f"ANALYZE {table}")

    def _query(self, table: str) -> str:
        return f"SELECT k, dp_count({EPSILON}) FROM {table} GROUP BY k"

    def _draw(self, table: str, fault: str, statements: int):
        """`statements` statements: (keys released per statement, for each
        released value column the values by key)."""
        keys, values = [], [[] for _ in self.VALUES]
        connection = psycopg2.connect(dbname=self.database)
        try:
            with connection, connection.cursor() as cur:
                cur.execute("SET dp_agg.insecure_test_seed = 0")
                cur.execute("SET dp_agg.insecure_test_fault = %s", (fault,))
                cur.execute("SET dp_agg.release_cache_period = 0")
                cur.execute("SET max_parallel_workers_per_gather = 0")
                cur.execute("SET work_mem = '128MB'")
                cur.execute(f"SET ROLE {ROLE}")  # the session is restricted from here on
                for _ in range(statements):
                    cur.execute(self._query(table))
                    rows = cur.fetchall()
                    keys.append([row[0] for row in rows])
                    for column in range(len(self.VALUES)):
                        values[column].append([row[1 + column] for row in rows])
        finally:
            connection.close()
        return keys, values

    def _outcomes(self, fault: str, statements: int) -> List:
        from .auditor import Outcome, format_bound, format_delta
        alpha = self.auditor.alpha_per_test
        label = self.LABEL
        expected = list(range(1, KEYS + 1))
        d_keys, d_values = self._draw(self.TABLES[0], fault, statements)
        dp_keys, dp_values = self._draw(self.TABLES[1], fault, statements)
        n = statements * KEYS
        exact = all(k == expected for k in d_keys + dp_keys)
        wrong = sum(k != expected for k in d_keys + dp_keys)
        outcomes = [Outcome("answer-set", label, self.PAIR, EPSILON,
                            "keys = the declared ones", 2 * n, exact,
                            f"[{wrong} of {2 * statements} statements released other keys or "
                            f"order; D released {len(d_keys[0])}, D' {len(dp_keys[0])} keys]")]
        # {key released}: delta certified in both directions.
        hits_d = sum(len(k) for k in d_keys)
        hits_dp = sum(len(k) for k in dp_keys)
        e = math.exp(EPSILON)
        certified = max(
            float(clopper_pearson_lower(a, n, alpha)) - e * float(clopper_pearson_upper(b, n, alpha))
            for a, b in ((hits_dp, hits_d), (hits_d, hits_dp)))
        outcomes.append(Outcome("delta", label, "key released, D vs D'", EPSILON,
                                f"certified delta >= {format_delta(max(certified, 0.0))}", 2 * n,
                                not certified > 0.0,
                                f"[released: D {hits_d / n:.4f}, D' {hits_dp / n:.4f}]",
                                certified=max(certified, 0.0), claimed_delta=0.0))
        if hits_d and hits_dp and exact:
            for name, d_column, dp_column in zip(self.VALUES, d_values, dp_values):
                d = np.asarray([float(c) for cs in d_column for c in cs], float)
                d_prime = np.asarray([float(c) for cs in dp_column for c in cs], float)
                bounds = certify_privacy_loss(d, d_prime, alpha, None, False)
                worst = max(bounds, key=lambda b: b.certified)
                outcomes.append(Outcome(
                    "privacy-loss", label, f"{name}, D vs D'", EPSILON,
                    f"certified lower bound {format_bound(worst.certified)}", 2 * n,
                    not worst.certified > EPSILON,
                    f"[{worst.event}, {worst.direction}; empirical {worst.empirical:.3f}]",
                    certified=worst.certified, empirical=worst.empirical))
        return outcomes

    def run(self) -> List:
        self._prepare()
        return self._outcomes("none", STATEMENTS)

    def self_check(self) -> List:
        from .auditor import Outcome
        self._prepare()
        fault = self.FAULT
        outcomes = self._outcomes(fault, self.SELF_CHECK_STATEMENTS)
        failed = [o for o in outcomes if not o.passed]
        detected = bool(failed)
        return [Outcome("self-check", f"{self.SHORT} [{fault}]", self.PAIR,
                        EPSILON, f"{len(failed)} of {len(outcomes)} checks failed",
                        2 * KEYS * self.SELF_CHECK_STATEMENTS, detected,
                        f"[{fault}: {', '.join(o.section for o in failed) or 'none'}; "
                        f"{'detected' if detected else 'NOT detected'}]")]


class PublicLeftJoinAudit(PublicKeyAudit):
    """A public table LEFT JOINed to a protected one (review 29b: the
    protected aggregates read the matched rows only). The public table
    audit.public_join_keys holds the keys 1..KEYS (its primary key);
    audit.public_join_{d,d_prime} are protected: D holds rows of key 0 only
    (which no public key meets), D' the same plus one row of every key with
    v = -SUM_BOUND. A restricted session runs

        SELECT pub.k, dp_count(EPSILON), dp_sum(coalesce(p.v, SUM_BOUND),
                                                -SUM_BOUND, SUM_BOUND, EPSILON)
        FROM audit.public_join_keys pub LEFT JOIN t p ON p.k = pub.k GROUP BY pub.k

    Each key's count and sum are two releases on a group that differs by one
    row between D and D'. Certified as the declared keys are (answer-set,
    delta of {key released}) and the privacy loss of each value (epsilon,
    no delta). The NULL-extended row of a key without protected rows must
    aggregate nothing: counted, it would make D's count 1, and its
    coalesce(NULL, SUM_BOUND) would move the sum from SUM_BOUND (D) to
    -SUM_BOUND (D'), twice the sensitivity the noise is calibrated to.

    Self-check: under the fault unmatched_rows_aggregated (the aggregates of
    the rewrite read the NULL-extended rows too) the sum's privacy loss
    certifies above epsilon: the check must FAIL."""

    LABEL = f"dp_count+dp_sum, public LEFT JOIN protected ({KEYS:,} keys)"
    TABLES = ("audit.public_join_d", "audit.public_join_d_prime")
    PAIR = "D (no row of a key) vs D' (1 row a key)"
    VALUES = ("count of a key", "sum of a key")
    FAULT = "unmatched_rows_aggregated"
    SHORT = "public LEFT JOIN"
    SELF_CHECK_STATEMENTS = 1
    SUM_BOUND = 50

    def _query(self, table: str) -> str:
        bound = self.SUM_BOUND
        return (f"SELECT pub.k, dp_count({EPSILON}), "
                f"dp_sum(coalesce(p.v, {bound}), {-bound}, {bound}, {EPSILON}) "
                f"FROM audit.public_join_keys pub LEFT JOIN {table} p ON p.k = pub.k "
                f"GROUP BY pub.k")

    def _create_tables(self, cur):
        cur.execute("DROP TABLE IF EXISTS audit.public_join_keys")
        cur.execute("CREATE TABLE audit.public_join_keys (k int PRIMARY KEY)")
        cur.execute(f"INSERT INTO audit.public_join_keys SELECT generate_series(1, {KEYS})")
        cur.execute(f"GRANT SELECT ON audit.public_join_keys TO {ROLE}")
        cur.execute("ANALYZE audit.public_join_keys")
        for table, extra in ((self.TABLES[0], ""), (self.TABLES[1],
                             f" UNION ALL SELECT k, {-self.SUM_BOUND} "
                             f"FROM generate_series(1, {KEYS}) k")):
            cur.execute(f"DROP TABLE IF EXISTS {table}")
            cur.execute(f"CREATE TABLE {table} AS SELECT 0 AS k, 0 AS v "
                        f"FROM generate_series(1, 100)" + extra)
            cur.execute("SELECT dp_agg.protect_table(%s)", (table,))
            cur.execute(f"ANALYZE {table}")
