"""The release cache (issue 27, item 3; docs/analyst_guide.md "Reusing released answers"),
seen from outside through SQL. A reused answer is post-processing of a past
release and costs nothing, so the audit checks that a reuse is exactly that,
on a statement of many releases (one per group, as the audits draw them):

  reuse  asked twice with dp_agg.release_cache_period on: the same answers,
         byte for byte, in every group;
  reuse  then a row is added to the table (D becomes its neighbour D') and
         the statement asked again inside the period: still the same answers
         (the neighbour's arrival is not visible), and free;
  reuse  the ledger: one charge of the statement's epsilon, then 'reused' rows
         of epsilon, delta and rho 0, and the budget charged once;
  fresh  with the period 0 (as every other audit draws): the statement asked
         twice gives fresh draws (its groups' answers are not all equal; with
         Laplace noise of scale 1 in 1,000 groups, all equal has probability
         below 0.5^1000).
The checks are deterministic (or fail with negligible probability): they are
not counted in the Bonferroni budget.
Self-check: under the fault cache_invalidated_by_writes (the cache keyed also
by the table's row versions) the added row makes a fresh, charged release,
and the D-then-D' check must FAIL.
"""

from typing import List

import psycopg2

GROUPS = 1000
EPSILON = 1.0
QUERY = (f"SELECT g, dp_count(x, {EPSILON}), dp_sum(x, 0, 10, {EPSILON}) "
         "FROM audit.reuse GROUP BY g ORDER BY g")
STATEMENT_EPSILON = 2 * EPSILON  # two aggregates (an unrestricted role: no group selection)
LABEL = f"dp_count + dp_sum ({GROUPS:,} groups)"


class ReuseAudit:
    def __init__(self, auditor):
        self.auditor = auditor
        self.database = auditor.db.database

    def _connect(self, fault: str):
        connection = psycopg2.connect(dbname=self.database)
        connection.autocommit = True
        with connection.cursor() as cur:
            cur.execute("SET dp_agg.insecure_test_seed = 0")
            cur.execute("SET dp_agg.insecure_test_fault = %s", (fault,))
            cur.execute("SET extra_float_digits = 3")
            # Two minutes left in the current 366-day period at least, so that
            # no period boundary falls between the statements compared.
            cur.execute("""DO $$ BEGIN
              WHILE 31622400 - (floor(extract(epoch FROM clock_timestamp()))::bigint % 31622400)
                    < 120 LOOP PERFORM pg_sleep(1); END LOOP; END $$""")
            cur.execute("SET dp_agg.release_cache_period = '366d'")
        return connection

    @staticmethod
    def _one(cur, query: str, arguments=()):
        cur.execute(query, arguments)
        return cur.fetchone()[0]

    def _prepare_table(self, cur):
        cur.execute("DROP TABLE IF EXISTS audit.reuse")
        cur.execute("CREATE TABLE audit.reuse AS SELECT g, x FROM generate_series(1, %s) g, "
                    "generate_series(1, 3) x", (GROUPS,))
        cur.execute("SELECT dp_agg.clear_release_cache()")

    def _spent(self, cur) -> float:
        return float(self._one(cur, "SELECT epsilon_spent FROM dp_agg.budgets "
                                    "WHERE role = session_user"))

    def _mark(self, cur) -> int:
        return self._one(cur, "SELECT coalesce(max(id), 0) FROM dp_agg.ledger")

    def _answers(self, cur):
        cur.execute(QUERY)
        return cur.fetchall()

    def _ask_around_a_write(self, cur):
        """The statement, again, then a row added (D -> D'), then again:
        (first, second, after the write, epsilon spent, ledger rows since)."""
        mark, spent = self._mark(cur), self._spent(cur)
        first = self._answers(cur)
        second = self._answers(cur)
        cur.execute("INSERT INTO audit.reuse VALUES (1, 4)")  # a neighbour in group 1
        after_write = self._answers(cur)
        cur.execute("SELECT kind, epsilon, delta, rho FROM dp_agg.ledger WHERE id > %s "
                    "AND kind IN ('charge', 'reused') ORDER BY id", (mark,))
        ledger = cur.fetchall()
        return first, second, after_write, self._spent(cur) - spent, ledger

    def run(self) -> List:
        from .auditor import Outcome  # (auditor imports this module)
        connection = self._connect("none")
        try:
            with connection.cursor() as cur:
                self._prepare_table(cur)
                first, second, after_write, spent, ledger = self._ask_around_a_write(cur)
                kinds = ",".join(row[0] for row in ledger)
                free = all(float(e) == 0 and float(d) == 0 and float(r) == 0
                           for kind, e, d, r in ledger if kind == "reused")
                outcomes = [
                    Outcome("reuse", LABEL, "asked twice", EPSILON, "identical answers",
                            GROUPS, second == first,
                            f"[{sum(a != b for a, b in zip(first, second))} groups differ]"),
                    Outcome("reuse", LABEL, "D, then D' (a row added)", EPSILON,
                            "identical answers", GROUPS, after_write == first,
                            f"[{sum(a != b for a, b in zip(first, after_write))} groups "
                            f"differ after the write]"),
                    Outcome("reuse", LABEL, "ledger", EPSILON, f"charged {spent:g}",
                            3, kinds == "charge,reused,reused" and free
                            and abs(spent - STATEMENT_EPSILON) < 1e-12,
                            f"[ledger {kinds}; reuses of epsilon, delta, rho 0: {free}; "
                            f"expected one charge of {STATEMENT_EPSILON:g}]")]
                # The period 0, as every other audit runs: fresh draws.
                cur.execute("SET dp_agg.release_cache_period = 0")
                fresh_first, fresh_second = self._answers(cur), self._answers(cur)
                differ = sum(a != b for a, b in zip(fresh_first, fresh_second))
                outcomes.append(Outcome("fresh", LABEL, "period 0, asked twice", EPSILON,
                                        f"{differ} groups differ", GROUPS, differ > 0,
                                        "[fresh draws: not reused]"))
                cur.execute("SELECT dp_agg.clear_release_cache()")
                cur.execute("DROP TABLE audit.reuse")
        finally:
            connection.close()
        return outcomes

    def self_check(self) -> List:
        from .auditor import Outcome
        fault = "cache_invalidated_by_writes"
        connection = self._connect(fault)
        try:
            with connection.cursor() as cur:
                self._prepare_table(cur)
                first, _, after_write, spent, ledger = self._ask_around_a_write(cur)
                kinds = ",".join(row[0] for row in ledger)
                detected = after_write != first or abs(spent - STATEMENT_EPSILON) > 1e-12
                cur.execute("SELECT dp_agg.clear_release_cache()")
                cur.execute("DROP TABLE audit.reuse")
        finally:
            connection.close()
        return [Outcome("self-check", f"release cache [{fault}]", "D, then D' (a row added)",
                        EPSILON, f"charged {spent:g}", GROUPS, detected,
                        f"[{fault}: ledger {kinds}; the write "
                        f"{'made a fresh release: detected' if detected else 'went unseen: NOT detected'}]")]
