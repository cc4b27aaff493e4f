"""Sampling from the database: the reserved audit database, its tables (each
dataset once per group, so that one GROUP BY statement returns many
independent releases), and parallel collection of releases.
"""

import os
import queue
import sys
import threading
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

import numpy as np
import psycopg2

from .suites import GAUSS_DELTA, GROUP_SELECTION_MAX_COUNT, Mechanism


class AuditSetupError(Exception):
    """The server cannot run the audit (exit status 2)."""


class AuditDatabase:
    """A database of the audit's own, with one connection per parallel job.

    The database (default dp_agg_audit) is reserved for this suite: one left
    over by an interrupted run is dropped, a fresh one is created with the
    extension and a privacy budget for the session user, and it is dropped at
    the end. Its budget is not anyone's: every query of the audit is paid
    from it (docs/administrator_guide.md "Privacy budgets"; a role without a budget is refused).

    The delta budget is below 1 (a CHECK on dp_agg.role_budget), and every
    Gaussian statement costs its delta (0.01), a partition-selection one
    0.1 to 0.3, so the audit resets its own spent amounts
    (dp_agg.reset_spent, on a connection of its own, in autocommit) whenever
    the delta charged since the last reset would pass DELTA_RESET_AT. The
    statements in flight at a reset are counted as charged after it, and a
    reset waits until they leave room for the next statement, so the delta
    charged between resets never passes DELTA_RESET_AT, whatever `jobs` is.
    """

    # Groups per table: each statement releases at most this many answers.
    GROUPS_PER_TABLE = 50_000
    # A quantile state is 8 KiB: 10,000 groups keep one statement's hash table
    # (80 MB) within work_mem.
    QUANTILE_GROUPS_PER_STATEMENT = 10_000
    # Far more than a run spends: a statement costs its epsilon, not per group.
    AUDIT_BUDGET = 1_000_000
    AUDIT_DELTA_BUDGET = 0.99
    DELTA_RESET_AT = 0.5
    # dp_agg.max_delta for the audit's transactions: large enough to measure
    # (raised to the statement's own delta for partition selection).
    MAX_DELTA = GAUSS_DELTA
    # Groups of each size in the partition-selection table: one statement
    # releases (or not) this many groups of each size.
    GROUP_SELECTION_GROUPS = 10_000

    def __init__(self, database: str, jobs: int):
        self.database = database
        maintenance_db = os.environ.get("PGDATABASE", "postgres")
        if maintenance_db == database:
            maintenance_db = "postgres"
        self.admin = psycopg2.connect(dbname=maintenance_db)
        self.admin.autocommit = True
        self.connections: "queue.Queue" = queue.Queue()
        self.main = None
        with self.admin.cursor() as cur:
            cur.execute("SELECT rolsuper FROM pg_roles WHERE rolname = current_user")
            if not cur.fetchone()[0]:
                raise AuditSetupError("needs a superuser connection (the test faults are "
                                      "superuser-only settings)")
            # A database that holds a dp_agg ledger is dropped only with
            # the confirmation (docs/administrator_guide.md "Removing dp_agg").
            cur.execute("SET dp_agg.allow_drop_extension = on")
            cur.execute(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')
            cur.execute("RESET dp_agg.allow_drop_extension")
            cur.execute(f'CREATE DATABASE "{database}"')
        try:
            self.main = psycopg2.connect(dbname=database)
            self.main.autocommit = True
            with self.main.cursor() as cur:
                try:
                    cur.execute("CREATE EXTENSION dp_agg")
                    cur.execute("SELECT dp_agg.set_budget(session_user::regrole, %s, %s)",
                                (float(self.AUDIT_BUDGET), self.AUDIT_DELTA_BUDGET))
                    cur.execute("CREATE SCHEMA audit")
                    cur.execute("SELECT dp_count(1, 1.0)")
                except psycopg2.Error as error:
                    raise AuditSetupError(f"dp_agg does not work here "
                                          f"({(error.pgerror or str(error)).strip()}); "
                                          "is it in shared_preload_libraries?") from error
            for _ in range(jobs):
                self.connections.put(psycopg2.connect(dbname=database))
            self.budget_connection = psycopg2.connect(dbname=database)
            self.budget_connection.autocommit = True
        except BaseException:
            self.close()
            raise
        self.jobs = jobs
        self.budget_lock = threading.Condition()
        self.delta_since_reset = 0.0
        self.delta_in_flight = 0.0
        self.tables: Dict[Tuple, str] = {}
        self.releases_drawn = 0

    def table_for(self, columns: Tuple[Tuple[str, str], ...], rows: Tuple) -> str:
        """A table holding the dataset `rows` once in every group g: each group
        of `GROUP BY g` is a separate release (README), so one statement draws
        one independent answer per group. Every group also holds one row of
        NULLs, which every aggregate skips (so an empty dataset still has a
        group). `columns` is ((name, SQL type), ...); with more than one
        column, each row is a tuple."""
        key = (columns, rows)
        if key not in self.tables:
            name = f"audit.dataset_{len(self.tables)}"
            tuple_rows = rows if len(columns) > 1 else tuple((r,) for r in rows)
            placeholders = "(" + ", ".join(f"%s::{t}" for _, t in columns) + ")"
            values = ", ".join(["(" + ", ".join(["NULL"] * len(columns)) + ")"]
                               + [placeholders] * len(rows))
            names = ", ".join(n for n, _ in columns)
            # A privacy unit u is made distinct per group g, so that the
            # groups stay independent releases.
            selected = ", ".join(f"(g * 1000 + v.u)::integer AS u" if n == "u"
                                 else f"v.{n}::{t} AS {n}" for n, t in columns)
            with self.main.cursor() as cur:
                cur.execute(f"CREATE UNLOGGED TABLE {name} AS "
                            f"SELECT g, {selected} "
                            f"FROM generate_series(1, {self.GROUPS_PER_TABLE}) AS g, "
                            f"(VALUES {values}) AS v({names})",
                            [repr(v) for r in tuple_rows for v in r])
                if any(n == "u" for n, _ in columns):
                    cur.execute(f"SECURITY LABEL FOR dp_agg ON COLUMN {name}.u "
                                f"IS 'privacy_unit'")
                cur.execute(f"ANALYZE {name}")
            self.tables[key] = name
        return self.tables[key]

    def _pay_delta(self, delta: float):
        """Keeps the delta spent below the budget: see the class comment."""
        with self.budget_lock:
            if self.delta_since_reset + delta > self.DELTA_RESET_AT:
                # Statements in flight may be charged after the reset.
                self.budget_lock.wait_for(
                    lambda: self.delta_in_flight + delta <= self.DELTA_RESET_AT)
                with self.budget_connection.cursor() as cur:
                    cur.execute("SELECT dp_agg.reset_spent(session_user::regrole)")
                self.delta_since_reset = self.delta_in_flight
            self.delta_since_reset += delta
            self.delta_in_flight += delta

    def _settle_delta(self, delta: float):
        with self.budget_lock:
            self.delta_in_flight -= delta
            self.budget_lock.notify_all()

    def _execute(self, query: str, fault: str, delta: Optional[float]) -> List[Tuple]:
        """Runs one private statement on a connection of the pool: its rows."""
        connection = self.connections.get()
        try:
            if delta is not None:
                self._pay_delta(delta)
            try:
                with connection, connection.cursor() as cur:
                    # Explicit per transaction: the CSPRNG (never a test seed) and the fault.
                    cur.execute("SET LOCAL dp_agg.insecure_test_seed = 0")
                    cur.execute("SET LOCAL dp_agg.insecure_test_fault = %s", (fault,))
                    cur.execute("SET LOCAL dp_agg.max_epsilon = 10")  # the default
                    cur.execute("SET LOCAL dp_agg.max_delta = %s",
                                (max(self.MAX_DELTA, delta or 0.0),))
                    cur.execute("SET LOCAL extra_float_digits = 3")  # exact round trip
                    cur.execute("SET LOCAL work_mem = '128MB'")  # one hash table for all groups
                    cur.execute("SET LOCAL max_parallel_workers_per_gather = 0")  # jobs = cores
                    cur.execute(query)
                    return cur.fetchall()
            finally:
                if delta is not None:
                    self._settle_delta(delta)
        finally:
            self.connections.put(connection)

    def _draw_chunk(self, query: str, fault: str, exact_text: bool, delta: Optional[float]):
        column = [row[0] for row in self._execute(query, fault, delta)]
        values = np.array([float(v) for v in column]) if exact_text else np.asarray(column, float)
        return values, (column if exact_text else None)

    def releases(self, mechanism: Mechanism, rows: Tuple, epsilon: float, count: int,
                 fault: str, executor) -> "PendingReleases":
        """`count` independent releases on the dataset `rows`, drawn in the
        background by statements of the form
            SELECT dp_...(x, ...) FROM dataset WHERE g <= n GROUP BY g
        (every group draws fresh noise, and so does every statement)."""
        table = self.table_for(mechanism.columns, rows)
        # float4 answers are fetched as float8 (exact), numeric ones as text (exact).
        cast = {"numeric": "::text", "float4": "::float8"}.get(mechanism.output, "")
        exact_text = mechanism.output == "numeric" and mechanism.function == "dp_sum"
        chunk = (self.QUANTILE_GROUPS_PER_STATEMENT if mechanism.kind == "quantile"
                 else self.GROUPS_PER_TABLE)
        sizes = [min(chunk, count - start) for start in range(0, count, chunk)]
        def query(size):
            if mechanism.unit:
                # The unit level groups by (g, k, u) and keeps one group per
                # unit; the release is group k = 1 of each g.
                return (f"SELECT a FROM (SELECT k, {mechanism.call(epsilon)}{cast} AS a "
                        f"FROM {table} WHERE g <= {size} GROUP BY g, k) s WHERE k = 1")
            return (f"SELECT {mechanism.call(epsilon)}{cast} FROM {table} WHERE g <= {size} "
                    f"GROUP BY g")
        futures = [executor.submit(self._draw_chunk, query(size), fault, exact_text,
                                   mechanism.delta) for size in sizes]
        self.releases_drawn += count
        return PendingReleases(futures)

    def group_size_table(self) -> str:
        """A table of groups (c, g): GROUP_SELECTION_GROUPS groups g of each
        size c = 1 .. GROUP_SELECTION_MAX_COUNT, a group of size c holding
        exactly c rows."""
        key = ("group sizes", GROUP_SELECTION_MAX_COUNT)
        if key not in self.tables:
            name = "audit.group_sizes"
            with self.main.cursor() as cur:
                cur.execute(f"CREATE UNLOGGED TABLE {name} AS "
                            f"SELECT c, g FROM generate_series(1, {GROUP_SELECTION_MAX_COUNT}) "
                            f"AS c, generate_series(1, {self.GROUP_SELECTION_GROUPS}) AS g, "
                            f"generate_series(1, {GROUP_SELECTION_MAX_COUNT}) AS r WHERE r <= c")
                cur.execute(f"ANALYZE {name}")
            self.tables[key] = name
        return self.tables[key]

    def group_selections(self, epsilon: float, delta: float, largest: int, count: int,
                         fault: str, executor) -> "PendingGroupSelections":
        """`count` independent releases of group_selection(epsilon, delta) for
        each group size 1 .. largest, by statements of the form
            SELECT c, g FROM group_sizes WHERE c <= largest AND g <= n
            GROUP BY c, g HAVING dp_agg.group_selection(epsilon, delta)
        (every group draws fresh noise; the rows are the released groups)."""
        table = self.group_size_table()
        assert largest <= GROUP_SELECTION_MAX_COUNT
        chunk = self.GROUP_SELECTION_GROUPS
        sizes = [min(chunk, count - start) for start in range(0, count, chunk)]
        futures = [executor.submit(
            self._execute,
            f"SELECT c, g FROM {table} WHERE c <= {largest} AND g <= {size} GROUP BY c, g "
            f"HAVING dp_agg.group_selection({epsilon!r}::float8, {delta!r}::float8)",
            fault, delta) for size in sizes]
        self.releases_drawn += count * largest
        return PendingGroupSelections(futures, sizes, largest)

    def unit_group_table(self, largest: int) -> str:
        """A table (kind, c, g, u) with u labelled privacy_unit, for c = 1 ..
        largest and GROUP_SELECTION_GROUPS groups g: group (0, c, g) holds c
        one-row units; group (1, c, g) holds c - 1 one-row units and a heavy
        unit of `heavy` rows, whose other `heavy` rows are in the group
        (2, c, g) of its own. Every unit id is distinct."""
        from .suites import UNIT_GROUP_SELECTION_AUDITS
        heavy = max(a.heavy_rows for a in UNIT_GROUP_SELECTION_AUDITS)
        key = ("unit groups", largest, heavy)
        if key not in self.tables:
            name = "audit.unit_groups"
            groups = self.GROUP_SELECTION_GROUPS
            with self.main.cursor() as cur:
                cur.execute(f"DROP TABLE IF EXISTS {name}")
                # unit id: ((c * groups + g) * 4 + kind) * 1000 + r, the heavy
                # unit r = 999 (shared by its groups of kind 1 and 2).
                cur.execute(
                    f"CREATE UNLOGGED TABLE {name} AS "
                    f"SELECT 0 AS kind, c, g, ((c::bigint * {groups} + g) * 4) * 1000 + r AS u "
                    f"FROM generate_series(1, {largest}) c, generate_series(1, {groups}) g, "
                    f"generate_series(1, {largest}) r WHERE r <= c "
                    f"UNION ALL SELECT 1, c, g, ((c::bigint * {groups} + g) * 4 + 1) * 1000 + r "
                    f"FROM generate_series(1, {largest}) c, generate_series(1, {groups}) g, "
                    f"generate_series(1, {largest}) r WHERE r < c "
                    f"UNION ALL SELECT kind, c, g, ((c::bigint * {groups} + g) * 4 + 1) * 1000 "
                    f"+ 999 FROM generate_series(1, {largest}) c, "
                    f"generate_series(1, {groups}) g, generate_series(1, 2) kind, "
                    f"generate_series(1, {heavy}) r")
                cur.execute(f"SECURITY LABEL FOR dp_agg ON COLUMN {name}.u IS 'privacy_unit'")
                cur.execute(f"ANALYZE {name}")
            self.tables[key] = name
        return self.tables[key]

    def unit_group_selections(self, epsilon: float, delta: float, largest: int, count: int,
                              fault: str, executor) -> "PendingUnitGroupSelections":
        """`count` independent releases of group_selection(epsilon, delta)
        over privacy units for each group of unit_group_table(largest), by
        statements of the form
            SELECT kind, c, g FROM unit_groups WHERE c <= largest AND g <= n
            GROUP BY kind, c, g HAVING dp_agg.group_selection(epsilon, delta)
        (the unit level groups by (kind, c, g, u) and keeps one group per unit)."""
        table = self.unit_group_table(largest)
        chunk = self.GROUP_SELECTION_GROUPS
        sizes = [min(chunk, count - start) for start in range(0, count, chunk)]
        futures = [executor.submit(
            self._execute,
            f"SELECT kind, c, g FROM {table} WHERE c <= {largest} AND g <= {size} "
            f"GROUP BY kind, c, g "
            f"HAVING dp_agg.group_selection({epsilon!r}::float8, {delta!r}::float8)",
            fault, delta) for size in sizes]
        self.releases_drawn += 2 * count * largest
        return PendingUnitGroupSelections(futures, sizes, largest)

    def close(self):
        for connection in ([self.main, getattr(self, "budget_connection", None)]
                           + list(self.connections.queue)):
            try:
                if connection is not None:
                    connection.close()
            except psycopg2.Error:
                pass
        with self.admin.cursor() as cur:
            try:  # ours alone: FORCE ends any straggling session
                cur.execute("SET dp_agg.allow_drop_extension = on")
                cur.execute(f'DROP DATABASE IF EXISTS "{self.database}" WITH (FORCE)')
            except psycopg2.Error as error:
                print(f"audit: cleanup incomplete: {error.pgerror}", file=sys.stderr)
        self.admin.close()


class PendingReleases:
    """Releases being drawn; result() waits for them."""

    def __init__(self, futures):
        self.futures = futures

    def result(self) -> "Releases":
        parts = [f.result() for f in self.futures]
        values = np.concatenate([p[0] for p in parts])
        text = None if parts[0][1] is None else [t for p in parts for t in p[1]]
        return Releases(values, text)


class PendingGroupSelections:
    """Partition-selection releases being drawn; result() waits for them and
    returns a (largest, count) array: 1.0 where the group of that size (row
    c - 1) was released in that draw, else 0.0."""

    def __init__(self, futures, sizes: List[int], largest: int):
        self.futures, self.sizes, self.largest = futures, sizes, largest

    def result(self) -> np.ndarray:
        parts = []
        for future, size in zip(self.futures, self.sizes):
            released = np.zeros((self.largest, size))
            rows = np.array(future.result(), dtype=np.int64).reshape(-1, 2)
            released[rows[:, 0] - 1, rows[:, 1] - 1] = 1.0
            parts.append(released)
        return np.concatenate(parts, axis=1)


class PendingUnitGroupSelections(PendingGroupSelections):
    """result(): a (2, largest, count) array, [kind, c - 1, draw] = 1.0 where
    the group (kind, c) was released in that draw (kind 0 plain, 1 with the
    heavy unit; the heavy unit's own groups, kind 2, are not audited)."""

    def result(self) -> np.ndarray:
        parts = []
        for future, size in zip(self.futures, self.sizes):
            released = np.zeros((3, self.largest, size))
            rows = np.array(future.result(), dtype=np.int64).reshape(-1, 3)
            released[rows[:, 0], rows[:, 1] - 1, rows[:, 2] - 1] = 1.0
            parts.append(released[:2])
        return np.concatenate(parts, axis=2)


@dataclass
class Releases:
    """Answers as float64 (exact for integer, float4 and float8 answers) and,
    for numeric dp_sum answers, their exact decimal text."""
    values: np.ndarray
    exact_text: Optional[List[str]] = None

    def __len__(self):
        return len(self.values)
