#!/usr/bin/env python3
"""Crash fuzzer for dp_agg: random private-aggregate calls with random argument
types and extreme or NULL parameters, in assorted SQL shapes, as a superuser,
an unrestricted role and a restricted role, with and without parallel plans.

Fails on
  - a backend crash: the connection is lost, or pg_postmaster_start_time()
    changed (the server restarted after some backend died),
  - SQLSTATE XX000, XX001, XX002 (internal error, data corrupted, index corrupted),
  - any SQLSTATE outside the expected classes (EXPECTED below),
  - an uncharged release: a statement that succeeded and whose outermost result
    carries a private aggregate's answer, but that left fewer new 'charge' rows
    for the session user in dp_agg.ledger_entry than it made releases (the
    generator records, per statement shape, when the result certainly carries
    such an answer: Gen.expect). Includes private queries inside PARALLEL SAFE
    functions run by parallel workers (sessions of the superuser and the
    unrestricted role use force_parallel_mode = on and zero parallel costs half
    the time).
Before fuzzing, a self-check proves the charge check fires: one private query is
charged, and the same query judged against a faked "before == after" ledger
mark must be reported as uncharged.

Then an all-functions pass (fuzz_functions) calls every function of extension
dp_agg, enumerated from pg_proc and pg_depend (so new functions are covered
without editing this file), directly, with extreme arguments (0, -0,
subnormals, 1e-300, 1e300, NaN, +-Infinity, 131072-digit numerics, empty and
1 MB texts, huge arrays, malformed state literals, NULLs for non-strict
functions; one at a time, all at once, and mixed), as the superuser, the
unrestricted and the restricted role, each call in a rolled-back transaction
under statement_timeout 1 s. Fails on a crash, XX000-XX002, or a call still
running 1.5 s past the timeout (not cancelled: issue 26 finding 4). Its
self-check proves the timeout check fires on a call made deaf to interrupts
by the test fault uncancellable_spin, and stays quiet on a normal call and on
pg_sleep(30) (cancelled on time). Other unexpected SQLSTATEs of this pass are
printed as notes, not failures. It gets 40 s (--functions-seconds).

  crash_fuzz.py --quick        fixed seed, bounded (make test, about a minute)
  crash_fuzz.py --long N [--seed S]
Needs PG* variables for a superuser connection. Findings (deduplicated by
class and message, with the first query of each) go to --findings
(default /tmp/dp_agg_crash_findings.txt). Ends with "crash: N passed, M failed".
"""
import argparse
import os
import random
import sys
import time

import psycopg2

import fuzz_common
from fuzz_common import log

DB = "dp_fuzz_crash"
RESTRICTED = "dp_fuzz_crash_analyst"
UNRESTRICTED = "dp_fuzz_crash_user"

# Expected SQLSTATE classes (and single codes): what a fuzzed query may raise.
EXPECTED = {
    "22": "data exception (bad parameters, casts, overflow)",
    "42": "syntax error or access rule violation (dp_agg refusals are 42501)",
    "0A": "feature not supported (dp_agg refusals of unsupported shapes)",
    "53": "insufficient resources (out of memory for huge arrays)",
    "54": "program limit exceeded (huge arrays, stack depth)",
    "57014": "query canceled (statement_timeout)",
    "ZP": "dp_agg's budget errors (ZP001 exhausted, ZP002 no budget)",
    "21": "cardinality violation (a scalar subquery returning several rows)",
    "P0": "PL/pgSQL RAISE in DO blocks",
    "2F": "SQL routine exception",
    "38": "external routine exception",
    "39": "external routine invocation exception",
}
INTERNAL = {"XX000", "XX001", "XX002"}

SETUP = r"""
CREATE EXTENSION IF NOT EXISTS dp_agg;
CREATE SCHEMA fz;
GRANT USAGE ON SCHEMA fz TO PUBLIC;
CREATE TABLE fz.pub (id int PRIMARY KEY, i2 int2, i4 int, i8 bigint, f4 real, f8 float8,
  num numeric, txt text, b bit(4), vb varbit, m money, iv interval, arr int[], farr float8[],
  d date, ts timestamptz, bo bool);
INSERT INTO fz.pub
SELECT g, (g % 100 - 50)::int2, g - 500, g::bigint * 1000003, g / 7.0, g / 3.0,
  (g * 1.5)::numeric, 'r' || (g % 13), (g % 16)::bit(4), (g % 16)::bit(4)::varbit,
  (g % 50)::money, g * interval '1 minute', ARRAY[g, g + 1], ARRAY[g / 2.0],
  date '2020-01-01' + g % 400, timestamptz '2020-01-01' + g * interval '1 hour', g % 2 = 0
FROM generate_series(1, 3000) g;
-- special values
INSERT INTO fz.pub VALUES
  (-1, 32767, 2147483647, 9223372036854775807, 'Infinity', 'NaN', 'NaN', '', B'1111', B'', '-92233720368547758.08',
   '178000000 years', '{}', '{NaN,Infinity}', 'infinity', '-infinity', NULL),
  (-2, -32768, -2147483648, -9223372036854775808, '-Infinity', '-0', '1e1000', NULL, NULL, NULL, NULL,
   '-178000000 years', NULL, NULL, '-infinity', 'infinity', true),
  (-3, NULL, NULL, NULL, NULL, '1e-320', '-1e-1000', repeat('x', 10000), B'0000', B'1', 0, '0', ARRAY[NULL]::int[],
   ARRAY[-0.0], NULL, NULL, false);
CREATE TABLE fz.prot (LIKE fz.pub INCLUDING ALL);
INSERT INTO fz.prot SELECT * FROM fz.pub;
CREATE TABLE fz.empty (LIKE fz.pub);
CREATE TABLE fz.lookup (id int PRIMARY KEY, name text);
-- the only table named in regclass arguments of the all-functions pass
CREATE TABLE fz.target (id int, unit int);
INSERT INTO fz.lookup SELECT g, 'n' || g FROM generate_series(1, 100) g;
ANALYZE fz.pub, fz.prot, fz.lookup;
CREATE FUNCTION fz.run(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE r text; BEGIN EXECUTE q INTO r; RETURN r; END $$;
CREATE FUNCTION fz.run_sql(x float8) RETURNS float8 LANGUAGE sql AS $$ SELECT x * 2 $$;
-- private queries inside PARALLEL SAFE functions (run by parallel workers under
-- force_parallel_mode): every call must be charged
CREATE FUNCTION fz.prun(q text) RETURNS text LANGUAGE plpgsql PARALLEL SAFE AS $$
DECLARE r text; BEGIN EXECUTE q INTO r; RETURN r; END $$;
CREATE FUNCTION fz.p_count(e float8) RETURNS bigint LANGUAGE sql PARALLEL SAFE AS
  $$ SELECT dp_count(t.id, e) FROM fz.pub t $$;
CREATE FUNCTION fz.p_sum_prot(e float8) RETURNS float8 LANGUAGE sql PARALLEL SAFE AS
  $$ SELECT dp_sum(t.f8, 0, 100, e) FROM fz.prot t $$;
CREATE FUNCTION fz.p_median(e float8) RETURNS float8 LANGUAGE sql PARALLEL SAFE AS
  $$ SELECT dp_median(t.f8, 0, 1000, e) FROM fz.pub t WHERE t.id > 0 $$;
CREATE FUNCTION fz.p_select(e float8) RETURNS text LANGUAGE sql PARALLEL SAFE AS
  $$ SELECT dp_select(t.txt, ARRAY['r1','r2'], e) FROM fz.prot t $$;
GRANT SELECT ON fz.pub, fz.empty, fz.lookup TO PUBLIC;
GRANT SELECT ON fz.prot TO {unrestricted};
SELECT dp_agg.protect_table('fz.prot');
SELECT dp_agg.restrict_role('{restricted}');
SELECT dp_agg.set_budget('{restricted}', 1e15, 0.9);
-- plain count/sum/avg of BI tools (issue 27), with public bounds on some columns
ALTER ROLE {restricted} SET dp_agg.plain_aggregate_epsilon = 0.7;
SELECT dp_agg.set_column_bounds('fz.prot', c, -1e6, 1e6) FROM unnest(ARRAY['i4', 'i8', 'f8', 'num']) c;
SELECT dp_agg.set_column_bounds('fz.prot', 'i2', -100, 100);
SELECT dp_agg.set_column_bounds('fz.pub', 'i4', 0, 10);
SELECT dp_agg.set_budget('{unrestricted}', 1e15, 0.9);
SELECT dp_agg.set_budget(current_user::regrole, 1e15, 0.9);
"""

COLS = {  # column -> type
    "i2": "int2", "i4": "int4", "i8": "int8", "f4": "float4", "f8": "float8", "num": "numeric",
    "txt": "text", "b": "bit", "vb": "varbit", "m": "money", "iv": "interval", "arr": "int[]",
    "farr": "float8[]", "d": "date", "ts": "timestamptz", "bo": "bool", "id": "int4",
}
NUMERIC_COLS = ["i2", "i4", "i8", "f4", "f8", "num", "id"]
COLS_PLAIN = ["i2", "i4", "txt", "ts", "d", "bo", "arr", "num", "f8"]
EXTREME = ["0", "-0", "'-0'::float8", "'NaN'", "'NaN'::float8", "'Infinity'", "'-Infinity'",
           "1e-300", "1e300", "-1", "1", "0.5", "1e-15", "8.881784197001252e-16",
           "4.9e-324", "1.7976931348623157e308", "NULL", "NULL::float8", "2147483648",
           "9223372036854775807", "-9223372036854775808", "1e1000", "0.1", "10", "10.000001",
           "'1e-100'", "2.2250738585072014e-308", "3"]
EPS = ["1.0", "0.1", "0.5", "1e-6", "9.99", "10", "1e-15", "8.881784197001252e-16", "1e-300",
       "0", "-0", "-1", "'NaN'", "'Infinity'", "NULL", "1e300", "4.9e-324", "$EPS"]
DELTA = ["1e-6", "1e-9", "1e-100", "1e-300", "4.9e-324", "0", "1", "0.5", "-1e-9", "'NaN'",
         "NULL", "1e-5", "0.999999", "2.2250738585072014e-308"]
STATE_LITERALS = ["'x'", "''", "'uninitialized'", "'0'", "'1 2 3'", "'(1,2)'", "repeat('9', 5000)",
                  "'count 1 1 1'", "'\\x00'", "'-'", "'nan nan nan'",
                  # the selection state's text form: s1 ... type=<type> candidates=<array>
                  "'x type=int4[] candidates={}'", "'x type=void candidates={}'",
                  "'x type=nosuchtype candidates={}'", "'s1 weighted=0 type=int4 candidates={1,2}'",
                  "'s1 weighted=0 epsilon=0x1p+0 lower=0x0p+0 upper=0x0p+0 unit_exponent=0 scores=1,2 type=int4 candidates={1,2}'",
                  "'s1 weighted=1 epsilon=nan lower=inf upper=-inf unit_exponent=99999 scores=-1 type=text candidates={a}'",
                  "'x type=record candidates=(1)'", "'x type=int4 candidates={{1},{2}}'",
                  "' type= candidates='"]
STATE_TYPES = ["dp_agg.selection_state", "dp_agg.aggregate_state", "dp_agg.quantile_state"]


class Gen:
    def __init__(self, rng):
        self.r = rng

    def ch(self, s):
        return self.r.choice(s)

    def num(self):
        if self.r.random() < 0.5:
            return self.ch(["0", "1", "10", "100", "-5", "1000.5"])
        return self.ch(EXTREME)

    def eps(self):
        if self.r.random() < 0.5:
            return self.ch(["1.0", "0.5", "0.1"])
        e = self.ch(EPS)
        return e.replace("$EPS", self.ch(["(SELECT 0.5)", "fz.run_sql(0.25)", "1.0::float4",
                                           "1::int2", "1::numeric", "'1'::text::float8"]))

    def delta(self):
        if self.r.random() < 0.5:
            return "1e-6"
        return self.ch(DELTA)

    def value(self, a):
        r = self.r.random()
        if r < 0.6:
            c = self.ch(list(COLS) + NUMERIC_COLS * 2)
            return f"{a}.{c}"
        if r < 0.8:
            return self.ch(["1", "NULL", "1.5::float4", "'NaN'::numeric", "'x'::text",
                            "B'101'", "'1'::money", "'1 day'::interval", "ARRAY[1,2]",
                            "repeat('a', 100000)", "ARRAY(SELECT generate_series(1, 10000))",
                            "'Infinity'::float8", "-0.0::float8", "32767::int2", "1e300::float8"])
        c = self.ch(NUMERIC_COLS)
        t = self.ch(["int2", "int4", "int8", "float4", "float8", "numeric", "text"])
        return f"{a}.{c}::{t}"

    def bound(self, typ):
        v = self.num()
        if typ and self.r.random() < 0.5:
            return f"{v}::{typ}"
        return v

    def inner_opts(self, a):
        parts = []
        if self.r.random() < 0.15:
            parts.append(" ORDER BY " + self.ch([f"{a}.id", "1e-6::float8", f"{a}.txt DESC", f"{a}.f8 NULLS FIRST"]))
        return "".join(parts)

    def plain_agg(self, a):
        """What BI query builders write (issue 27): rewritten into dp_ aggregates for
        the restricted role, PostgreSQL's own for the others."""
        col = self.ch(COLS_PLAIN)
        return self.ch(["count(*)", "COUNT(1)", f"count({a}.{col})", f"count(DISTINCT {a}.{col})",
                        f"sum({a}.{self.ch(NUMERIC_COLS)})", f"avg({a}.{self.ch(NUMERIC_COLS)})",
                        f"max({a}.{col})", f"sum({a}.i4 + 1)", f"avg(DISTINCT {a}.i4)",
                        f"count(*) FILTER (WHERE {a}.id % 2 = 0)"])

    def agg(self, a):
        if self.r.random() < 0.08:
            return self.plain_agg(a)
        r = self.r.random()
        typ = self.ch([None, None, None, "int2", "int4", "int8", "float4", "float8", "numeric", "numeric",
                       "float8", "int8"] + (["money", "text", "interval", "bit"] if self.r.random() < 0.3 else []))
        v = self.value(a)
        distinct = "DISTINCT " if self.r.random() < 0.07 else ""
        d = f", {self.delta()}" if self.r.random() < 0.3 else ""
        if r < 0.04:  # the row count of issue 13 (DISTINCT/ORDER BY inside are refused)
            call = f"dp_count({distinct}{self.eps()}{self.inner_opts(a)})"
        elif r < 0.25:
            call = f"dp_count({distinct}{v}, {self.eps()}{d}{self.inner_opts(a)})"
        elif r < 0.55:
            f = self.ch(["dp_sum", "dp_avg", "dp_variance", "dp_stddev"])
            arg = f"{a}.{self.ch(NUMERIC_COLS)}" + (f"::{typ}" if typ else "")
            if self.r.random() < 0.2:
                arg = v
            call = f"{f}({distinct}{arg}, {self.bound(typ)}, {self.bound(typ)}, {self.eps()}{d}{self.inner_opts(a)})"
        elif r < 0.65:
            f = self.ch(["dp_sum_interval", "dp_avg_interval"])
            arg = f"{a}.{self.ch(NUMERIC_COLS)}::float8"
            conf = self.ch(["0.95", "0", "1", "'NaN'", "NULL", "-1", "0.5", "1e-300", "0.9999999999999999"])
            call = f"({f}({arg}, {self.num()}, {self.num()}, {self.eps()}{d}, {conf}{self.inner_opts(a)})).*"
            if self.r.random() < 0.5:
                call = call[:-2] + ".value"
        elif r < 0.7:
            conf = self.ch(["0.95", "0", "1", "'NaN'", "NULL", "2"])
            call = f"(dp_count_interval({v}, {self.eps()}{d}, {conf})).high"
        elif r < 0.82:
            if self.r.random() < 0.5:
                call = f"dp_median({a}.{self.ch(NUMERIC_COLS)}::float8, {self.num()}, {self.num()}, {self.eps()}{self.inner_opts(a)})"
            else:
                call = (f"dp_percentile({a}.{self.ch(NUMERIC_COLS)}::float8, {self.ch(['0', '1', '0.5', '-0.1', '1.1', 'NULL', chr(39) + 'NaN' + chr(39)])}, "
                        f"{self.num()}, {self.num()}, {self.eps()}{d})")
        else:
            col = self.ch(["txt", "i4", "i2", "f8", "num", "bo", "d", "b", "arr"])
            cands = {"txt": "ARRAY['r1','r2','']", "i4": "ARRAY[1,2,NULL]", "i2": "ARRAY[1,2]::int2[]",
                     "f8": "ARRAY['NaN'::float8, -0.0, 0]", "num": "ARRAY[1.5, 'NaN']::numeric[]",
                     "bo": "ARRAY[true]", "d": "ARRAY['infinity'::date]", "b": "ARRAY[B'1111']",
                     "arr": "ARRAY[ARRAY[1,2]]"}[col]
            cands = self.ch([cands, "ARRAY[]::text[]", "NULL::text[]",
                             "(SELECT array_agg(g::text) FROM generate_series(1, 20000) g)",
                             "ARRAY[[1,2],[3,4]]", "'{}'::int[]"])
            if self.r.random() < 0.35:
                call = f"dp_select({a}.{col}, {a}.{self.ch(NUMERIC_COLS)}::float8, {self.num()}, {self.num()}, {cands}, {self.eps()})"
            else:
                call = f"dp_select({distinct}{a}.{col}, {cands}, {self.eps()}{self.inner_opts(a)})"
        if self.r.random() < 0.15 and not call.startswith("("):
            call += f" FILTER (WHERE {a}.id % 2 = 0)"
        return call

    # Gen.expect, set by statement(): how many releases the outermost result
    # certainly carries, as a function of the fetched rows (None: no check).
    #   "rows"     every row carries private answers (one release if any row)
    #   "one"      one release, whatever the result (scalar aggregate run for sure)
    #   "nonnull"  one release if the first value is not NULL
    #   "per_row"  one release (one execution of a private query) per row
    #   "per_row_nonnull"  one per row whose first value is not NULL
    @staticmethod
    def releases(expect, rows):
        if expect is None:
            return 0
        if expect == "one":
            return 1
        if rows is None:
            return 0
        if expect == "rows":
            return 1 if rows else 0
        if expect == "nonnull":
            return 1 if rows and rows[0] and rows[0][0] is not None else 0
        if expect == "per_row":
            return len(rows)
        if expect == "per_row_nonnull":
            return sum(1 for row in rows if row and row[0] is not None)
        raise ValueError(expect)

    def surface(self, a):
        """Issue 13's functions over the special values of fz.prot (NaN,
        +-Infinity, infinite timestamps, 1e1000, a 10000-character text): an
        internal error (such as "function returned NULL") or a crash here is a
        finding."""
        return self.ch([
            f"to_char({a}.ts, {self.ch(['chr(89)', repr('YYYY-MM'), repr(''), repr('FMDay HH24:MI:SS.US TZ OF'), repr('Y,YYY J IW Q')])}) IS NOT NULL",
            f"to_char({a}.d, 'YYYY') = '2020'",
            f"width_bucket({a}.{self.ch(['num', 'f8', 'f4', 'i8'])}, {self.ch(['0', '-1e15', '1e15', '5'])}, {self.ch(['100', '1e15', '-5'])}, {self.ch(['1', '10', '100000'])}) > 0",
            f"{self.ch(['floor', 'ceil', 'ceiling', 'round', 'trunc'])}({a}.num) > 1",
            f"{self.ch(['round', 'trunc'])}({a}.num, {self.ch(['-4', '2', '2147483647', '-2147483648', f'{a}.i4'])}) IS NOT NULL",
            f"{self.ch(['lower', 'upper'])}({a}.txt) = 'R1'",
            f"{a}.txt {self.ch(['ILIKE', 'NOT ILIKE'])} {self.ch([repr('R%'), repr('%X%'), repr('%'), repr('_')])}",
            f"{a}.txt {self.ch(['~', '!~', '~*', '!~*'])} {self.ch([repr('^R'), repr('x$'), repr('.*'), repr('a.b'), repr(chr(92) + '%'), repr('(a|b)'), repr('')])}",
            f"substr({a}.txt, {self.ch(['0', '-2147483648', '2147483647', f'{a}.i4'])}, {self.ch(['0', '1', '2147483647'])}) = 'r'",
            f"({a}.{self.ch(['num', 'f8', 'f4', 'i8', 'd', 'ts', 'bo', 'i2'])})::text <> ''",
            f"dp_agg.total_lower({a}.txt) = 'x'",
            f"{a}.txt ~ '^r'",
        ])

    def surface_key(self, a):
        return self.ch([f"to_char({a}.ts, 'YYYY-MM')", f"width_bucket({a}.num, 0, 1000, 10)",
                        f"round({a}.num, -2)", f"floor({a}.num)", f"lower({a}.txt)",
                        f"substring({a}.txt FROM 1 FOR 2)", f"({a}.i4 / 100)::text"])

    def statement(self):
        self.last = None
        self.expect = None
        self.plain_only = False
        r = self.r.random()
        if r < 0.04:
            # PARALLEL SAFE SQL functions holding a private query, once or per row
            f = self.ch(["fz.p_count", "fz.p_sum_prot", "fz.p_median", "fz.p_select"])
            e = self.ch(["1.0", "0.5", "0.1"])
            if self.r.random() < 0.5:
                self.expect = "one"
                return f"SELECT {f}({e})"
            self.expect = "per_row"
            k = self.ch([1, 2, 3])
            return f"SELECT {f}({e}) FROM fz.lookup WHERE id <= {k}"
        if r < 0.09:
            st = self.ch(STATE_TYPES)
            lit = self.ch(STATE_LITERALS)
            return self.ch([f"SELECT {lit}::{st}", f"SELECT {lit}::{st}::text",
                            f"SELECT dp_agg.select_final({lit}::dp_agg.selection_state, 1, ARRAY[1], 1.0)",
                            f"SELECT dp_agg.count_final({lit}::dp_agg.aggregate_state)",
                            f"SELECT dp_agg.quantile_final({lit}::dp_agg.quantile_state)",
                            f"SELECT dp_agg.combine({lit}::dp_agg.aggregate_state, {lit}::dp_agg.aggregate_state)"])
        table = self.ch(["fz.pub", "fz.prot", "fz.prot", "fz.empty"])
        a = "t"
        agg_list = [self.agg(a) for _ in range(self.ch([1, 1, 1, 2, 3]))]
        self.last = (table, agg_list)
        # only plain aggregates: charged for the restricted role alone
        self.plain_only = all(not g.lstrip("(").startswith("dp_") for g in agg_list)
        aggs = ", ".join(agg_list)
        where = self.ch(["", "", f" WHERE {a}.id > 10", f" WHERE {a}.id < 0", f" WHERE {a}.txt = 'r1'",
                         f" WHERE {self.surface(a)}"])
        grp = self.ch(["", "", "", f" GROUP BY {a}.bo", f" GROUP BY {a}.txt", f" GROUP BY {a}.i2",
                       f" GROUP BY {self.surface_key(a)}"])
        src = f"{table} {a}"
        if self.r.random() < 0.15:
            src = f"{table} {a} JOIN fz.lookup l ON l.id = {a}.id"
        if self.r.random() < 0.1:
            src = f"(SELECT * FROM {table}) {a}"
        q = f"SELECT {aggs} FROM {src}{where}{grp}"
        # every row of a private aggregation carries its answers; without GROUP BY
        # there is always exactly one row
        self.expect = "rows"
        w = self.r.random()
        if w < 0.05:
            # a recursive WITH query read by an aggregating sublink: its
            # reference to itself (review 27, finding 1: the plain-aggregate
            # rewrite followed it without end and the backend crashed)
            q = ("WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 2), "
                 f"c AS ({q}) SELECT * FROM c WHERE EXISTS (SELECT count(*) FROM r)")
        elif w < 0.1:
            q = f"WITH c AS ({q}) SELECT * FROM c"
        elif w < 0.18:
            q = f"SELECT * FROM ({q}) s LIMIT 5"
        elif w < 0.24:
            q = f"SELECT (SELECT 1 FROM ({q}) s LIMIT 1)"
            self.expect = None   # the result carries no private answer
        elif w < 0.3:
            body = q.replace("'", "''")
            q = ("DO $do$ DECLARE r record; BEGIN FOR r IN EXECUTE '" + body +
                 "' LOOP END LOOP; END $do$")
            self.expect = None   # nothing returned
        elif w < 0.34:
            body = q.replace("'", "''")
            q = f"SELECT fz.run('{body}')"
            self.expect = "one" if not grp else "nonnull"
        elif w < 0.42:
            # PARALLEL SAFE PL/pgSQL running the private query, once per outer row;
            # under force_parallel_mode the calls run in a parallel worker
            body = q.replace("'", "''")
            k = self.ch([1, 1, 2, 3])
            q = f"SELECT fz.prun('{body}') FROM fz.lookup WHERE id <= {k}"
            self.expect = "per_row" if not grp else "per_row_nonnull"
        elif w < 0.46:
            q = f"DEALLOCATE ALL; PREPARE p AS {q}; EXECUTE p; DEALLOCATE p"
            # the EXECUTE's rows went to the client but psycopg2 keeps the last result
            self.expect = "one" if not grp else None
        return q


def connect(user=None, db=DB):
    return fuzz_common.connect(db, user)


def setup():
    fuzz_common.recreate([DB], [RESTRICTED, UNRESTRICTED, TARGET_ROLE])
    c = connect()
    with c.cursor() as cur:
        cur.execute(SETUP.replace("{restricted}", RESTRICTED).replace("{unrestricted}", UNRESTRICTED))
    c.close()


def teardown():
    fuzz_common.drop([DB], [RESTRICTED, UNRESTRICTED, TARGET_ROLE])


def start_time():
    for _ in range(120):
        try:
            c = connect(db=os.environ.get("PGDATABASE", "postgres"))
            with c.cursor() as cur:
                cur.execute("SELECT pg_postmaster_start_time()::text")
                t = cur.fetchone()[0]
            c.close()
            return t
        except psycopg2.OperationalError:
            time.sleep(0.5)
    raise RuntimeError("server does not come back")


class Sessions:
    ROLES = [None, UNRESTRICTED, RESTRICTED]

    def __init__(self, rng):
        self.r = rng
        self.c = {}
        self.parallel = set()

    def get(self, role):
        c = self.c.get(role)
        if c is None or c.closed:
            c = connect(role)
            with c.cursor() as cur:
                cur.execute("SET statement_timeout = '15s'")
                if role != RESTRICTED and self.r.random() < 0.5:
                    # parallel plans (restricted roles may not change planner settings)
                    cur.execute("SET force_parallel_mode = on; SET parallel_setup_cost = 0; "
                                "SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0; "
                                "SET max_parallel_workers_per_gather = 2")
                    if self.r.random() < 0.5:
                        # the workers, not the leader, run the plan (and any PARALLEL
                        # SAFE function's private query)
                        cur.execute("SET parallel_leader_participation = off")
                    self.parallel.add(c)
            self.c[role] = c
        return c

    def reset(self):
        self.parallel = set()
        fuzz_common.close_all(self.c)
        self.c = {}


class Ledger:
    """Charges seen in dp_agg.ledger_entry, read through a superuser connection."""

    def __init__(self):
        self.c = None
        self.superuser = None

    def cur(self):
        if self.c is None or self.c.closed:
            self.c = connect()
            with self.c.cursor() as cur:
                cur.execute("SELECT session_user::text")
                self.superuser = cur.fetchone()[0]
        return self.c.cursor()

    def mark(self):
        """The newest ledger id: charges made after it have larger ids."""
        with self.cur() as cur:
            cur.execute("SELECT coalesce(max(id), 0) FROM dp_agg.ledger_entry")
            return cur.fetchone()[0]

    def charges_since(self, mark, role):
        """Charges to role's budget (the session user pays) recorded after mark."""
        with self.cur() as cur:
            cur.execute("SELECT count(*) FROM dp_agg.ledger_entry WHERE id > %s AND kind = 'charge' "
                        "AND role_name = %s", (mark, role or self.superuser))
            return cur.fetchone()[0]

    def check(self, mark, role, expect, rows):
        """None if the statement's releases were paid for, else a finding message."""
        need = Gen.releases(expect, rows)
        if need == 0:
            return None
        got = self.charges_since(mark, role)
        if got >= need:
            return None
        return f"uncharged release: {need} release(s) in the result, {got} new charge(s) in the ledger"

    def close(self):
        if self.c is not None:
            try:
                self.c.close()
            except Exception:
                pass
            self.c = None


def self_check():
    """Proves the uncharged-release check fires. Returns a list of (ok, label)."""
    res = []
    led = Ledger()
    q = "SELECT dp_count(t.id, 0.5) FROM fz.pub t"
    c = connect(UNRESTRICTED)
    try:
        with c.cursor() as cur:
            before = led.mark()
            cur.execute(q)
            rows = cur.fetchall()
        got = led.check(before, UNRESTRICTED, "rows", rows)
        res.append((got is None, f"charge check: a charged query passes ({q} as {UNRESTRICTED})"))
        # fake "before == after": the same statement judged against the mark taken after it
        fake = led.check(led.mark(), UNRESTRICTED, "rows", rows)
        res.append((fake is not None and fake.startswith("uncharged"),
                    "charge check fires on a faked before == after ledger mark"))
        # a parallel worker running a PARALLEL SAFE function's private query is charged
        with c.cursor() as cur:
            cur.execute("SET force_parallel_mode = on; SET parallel_setup_cost = 0; "
                        "SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0; "
                        "SET max_parallel_workers_per_gather = 2; SET parallel_leader_participation = off")
            cur.execute("EXPLAIN (ANALYZE, VERBOSE, COSTS OFF) SELECT fz.p_count(0.5) FROM fz.lookup WHERE id <= 2")
            plan = "\n".join(r[0] for r in cur.fetchall())
        res.append(("Worker 0:" in plan and "rows=2" in plan.split("Worker 0:")[1].split("\n")[0],
                    "a parallel worker runs the PARALLEL SAFE function's private query"))
        with c.cursor() as cur:
            before = led.mark()
            cur.execute("SELECT fz.p_count(0.5) FROM fz.lookup WHERE id <= 2")
            rows = cur.fetchall()
        got = led.check(before, UNRESTRICTED, "per_row", rows)
        res.append((got is None, "charge check: PARALLEL SAFE function under force_parallel_mode, "
                    "2 calls, 2 charges" + (f" ({got})" if got else "")))
    finally:
        c.close()
        led.close()
    return res


def crashes_alone(sql):
    """True if sql, run alone as superuser, loses the connection (and waits for the restart)."""
    try:
        c = connect()
    except psycopg2.OperationalError:
        start_time()
        c = connect()
    try:
        with c.cursor() as cur:
            cur.execute("SET statement_timeout = '15s'")
            cur.execute(sql)
        return False
    except psycopg2.Error as e:
        if e.pgcode is None and isinstance(e, (psycopg2.OperationalError, psycopg2.InterfaceError)):
            start_time()
            return True
        return False
    finally:
        try:
            c.close()
        except Exception:
            pass


def reduce_crash(last):
    """The smallest single-aggregate query of the crashing statement that still crashes."""
    if not last:
        return None
    table, aggs = last
    for g in sorted(aggs, key=len):
        for q in (f"SELECT {g} FROM {table} t", f"SELECT {g} FROM fz.pub t"):
            if crashes_alone(q):
                return q
    return None


def agg_shape(q):
    """A dedup key for a reduced crash: aggregate name, ORDER BY/DISTINCT/FILTER inside."""
    name = q.split("(", 2)[1] if q.startswith("SELECT (") else q.split("(", 1)[0]
    name = name.replace("SELECT ", "").strip("( ")
    tags = [t for t in ("ORDER BY", "DISTINCT", "FILTER") if t in q]
    return name + (" with " + "/".join(tags) if tags else "")


def gen_shape(sql):
    """A dedup key for an uncharged release: wrapper and aggregate names."""
    import re
    wrap = "plain"
    for w, tag in (("fz.prun(", "PARALLEL SAFE plpgsql"), ("fz.run(", "plpgsql"), ("PREPARE", "prepared"),
                   ("WITH RECURSIVE", "recursive CTE"), ("WITH c", "CTE"), (") s LIMIT", "subquery LIMIT"), ("SELECT fz.p_", "PARALLEL SAFE sql")):
        if w in sql:
            wrap = tag
            break
    names = sorted(set(re.findall(r"\b(dp_[a-z_]+|fz\.p_[a-z_]+)\(", sql)))
    return wrap + ": " + ",".join(names)


def expected_state(state):
    return state[:2] in EXPECTED or state in EXPECTED


def fuzz(n, seed, out, deadline, reduce=True):
    rng = random.Random(seed)
    gen = Gen(rng)
    sess = Sessions(rng)
    findings = {}   # (class, message) -> first query
    states = {}
    t_start = start_time()
    ran = 0
    reductions = 0
    ledger = Ledger()
    checked = 0
    for i in range(n):
        if time.time() > deadline:
            break
        role = rng.choice(Sessions.ROLES)
        if i % 200 == 199:
            sess.reset()   # new sessions, new parallel settings
        sql = gen.statement()
        expect = gen.expect
        if gen.plain_only and (role != RESTRICTED or gen.last[0] != "fz.prot"):
            expect = None   # PostgreSQL's own aggregates: nothing to charge
        who = role or "superuser"
        ran += 1
        try:
            c = sess.get(role)
            if c in sess.parallel:
                who += " (parallel settings)"
            mark = ledger.mark() if expect else None
            with c.cursor() as cur:
                cur.execute(sql)
                rows = cur.fetchall() if cur.description else None
            states["ok"] = states.get("ok", 0) + 1
            if expect:
                msg = ledger.check(mark, role, expect, rows)
                if Gen.releases(expect, rows):
                    checked += 1
                    k = "checked " + gen_shape(sql).split(":")[0]
                    states[k] = states.get(k, 0) + 1
                if msg is None:
                    continue
                key = ("uncharged", gen_shape(sql))
                states[key[0]] = states.get(key[0], 0) + 1
                states[key] = states.get(key, 0) + 1
                ex = findings.setdefault(key, [])
                if len(ex) < 3:
                    ex.append((who, sql, msg))
                    out.write(f"class=uncharged: {msg}\n  as {who}: {sql}\n\n")
                    out.flush()
            continue
        except psycopg2.Error as e:
            state = e.pgcode
            msg = (e.diag.message_primary if e.diag and e.diag.message_primary else str(e)).strip()
            lost = isinstance(e, (psycopg2.OperationalError, psycopg2.InterfaceError)) and state is None
        if state is None and not lost:
            states["client-side error"] = states.get("client-side error", 0) + 1
            continue
        if state is None:
            sess.reset()
            ledger.close()
            start_time()
            # reducing costs a server restart per try: only the first few crashes
            reduced = reduce_crash(gen.last) if reduce and reductions < 12 else None
            reductions += 1
            t_start = start_time()
            msg = "server process crashed (connection lost, server restarted)"
            if reduced:
                key = ("crash", agg_shape(reduced))
                msg += "; reduced: " + reduced
            else:
                key = ("crash", "not reduced")
        elif state in INTERNAL:
            key = (f"internal {state}", msg)
        elif not expected_state(state):
            key = (f"unexpected {state}", msg)
        else:
            states[state] = states.get(state, 0) + 1
            continue
        states[key[0]] = states.get(key[0], 0) + 1
        states[key] = states.get(key, 0) + 1
        ex = findings.setdefault(key, [])
        if len(ex) < 3:
            ex.append((who, sql, msg))
            out.write(f"class={key[0]}: {msg}\n  as {who}: {sql}\n\n")
            out.flush()
    # a crash that the connection did not notice (a parallel worker's, say)
    if start_time() != t_start:
        findings[("crash", "server restarted")] = [("?", "(between checks)", "pg_postmaster_start_time changed")]
    sess.reset()
    ledger.close()
    states["charge-checked releases"] = checked
    return ran, findings, states


def sqlsmith_pass(seconds):
    import shutil
    import subprocess
    exe = shutil.which("sqlsmith")
    if not exe:
        log("skip - sqlsmith: binary not installed (apt package sqlsmith)")
        return None
    t0 = start_time()
    conn = f"host={os.environ.get('PGHOST', '')} port={os.environ.get('PGPORT', '5432')} dbname={DB} user={os.environ.get('PGUSER', 'postgres')}"
    try:
        subprocess.run([exe, f"--target={conn}", "--max-queries=100000", "--seed=42"],
                       timeout=seconds, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        pass
    return start_time() == t0


# ---------------------------------------------------------------------------
# Every SQL-callable function of the extension, called directly with extreme
# arguments under a statement_timeout that must be honoured (issue 26: a
# conversion that ignored statement_timeout, pg_cancel_backend and
# pg_terminate_backend went unnoticed because no fuzzer called it).

CALL_TIMEOUT_MS = 1000      # statement_timeout of every call
CALL_MARGIN_S = 1.5         # a call running this long past it was not cancelled
CALL_ABANDON_S = 10.0       # the client gives up waiting (the backend may never answer)
TARGET_ROLE = "dp_fuzz_crash_target"   # the only role named in regrole arguments

# Functions of extension dp_agg, found through pg_depend (deptype 'e'), so that a
# function added later is called without editing this list.
EXTENSION_FUNCTIONS = """
SELECT p.oid, quote_ident(n.nspname) || '.' || quote_ident(p.proname), p.prokind, p.proisstrict,
       ARRAY(SELECT format_type(t, NULL) FROM unnest(p.proargtypes) AS t)
FROM pg_proc p
JOIN pg_namespace n ON n.oid = p.pronamespace
JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'
JOIN pg_extension x ON d.refclassid = 'pg_extension'::regclass AND x.oid = d.refobjid
WHERE x.extname = 'dp_agg'
ORDER BY p.oid
"""

_FLOATS = ["0", "'-0'", "'4.9e-324'", "'2.2250738585072014e-308'", "1e-300", "1e300",
           "'1.7976931348623157e308'", "'NaN'", "'Infinity'", "'-Infinity'", "-1", "1e-20"]
_NUMERICS = ["0", "'-0'", "1e-300", "1e300", "'NaN'", "'Infinity'", "'-Infinity'", "-1",
             "repeat('9', 131072)", "'0.' || repeat('0', 16382) || '1'", "'1e-20'"]
_INTS = {"smallint": ["0", "-1", "32767", "-32768"], "integer": ["0", "-1", "2147483647", "-2147483648"],
         "bigint": ["0", "-1", "9223372036854775807", "-9223372036854775808"]}
_TEXTS = ["''", "repeat('x', 1000000)", "E'\\\\'", "'SELECT dp_count(t.id, 1e-300) FROM fz.pub t'",
          "'SELECT dp_agg.zcdp_rho(1e-20, 1e-300)'", "'%'"]
_TIMES = ["'infinity'", "'-infinity'", "'4713-01-01 BC'", "'294276-12-31'"]


def extreme_values(typ):
    """(normal value, extreme values) for an argument type, as SQL expressions
    of that type."""
    def cast(vs):
        return [f"({v})::{typ}" for v in vs]
    if typ in ("double precision", "real"):
        return f"0.5::{typ}", cast(_FLOATS)
    if typ == "numeric":
        return "0.5::numeric", cast(_NUMERICS)
    if typ in _INTS:
        return f"1::{typ}", cast(_INTS[typ])
    if typ in ("text", "name", "cstring", "character"):
        return f"'x'::{typ}", cast(_TEXTS)
    if typ == "boolean":
        return "true", ["false"]
    if typ == "regrole":
        return f"'{TARGET_ROLE}'::regrole", ["0::oid::regrole", "session_user::regrole", "'pg_signal_backend'::regrole"]
    if typ == "regclass":
        return "'fz.target'::regclass", ["0::oid::regclass", "'fz.prot'::regclass", "'pg_class'::regclass"]
    if typ == "oid":
        return "0::oid", ["4294967295::oid"]
    if typ in ("date", "timestamp without time zone", "timestamp with time zone"):
        return f"'2020-01-01'::{typ}", cast(_TIMES)
    if typ == "interval":
        return "'1 day'::interval", cast(["'178000000 years'", "'-178000000 years'", "'0'"])
    if typ.endswith("[]"):
        el = typ[:-2]
        return (f"'{{1}}'::{typ}" if el != "text" else "ARRAY['r1']",
                cast(["'{}'", "ARRAY[NULL]", "'{{1,2},{3,4}}'",
                      "ARRAY(SELECT generate_series(1, 100000))" if el != "text"
                      else "ARRAY(SELECT g::text FROM generate_series(1, 100000) g)"]))
    if typ.startswith("dp_agg.") and typ.endswith("_state"):
        return f"''::{typ}", [f"{v}::{typ}" for v in STATE_LITERALS]
    return None, []


def function_calls(functions, rng):
    """Calls of every function, round-robin (the first round calls each function
    once, so a deadline never leaves one out): for each argument in turn, each
    extreme value with the others at a normal value, and NULLs for non-strict
    functions. Polymorphic arguments get one concrete type per call."""
    per_function = []
    for oid, name, kind, strict, argtypes in functions:
        calls = []
        for poly_el, poly_val in (("integer", "1"), ("text", "'r1'"), ("double precision", "'NaN'")):
            types = [poly_el if t == "anyelement" else f"{poly_el}[]" if t == "anyarray" else t
                     for t in argtypes]
            options = [extreme_values(t) for t in types]
            if any(normal is None for normal, _ in options):
                calls.append((oid, name, kind, [f"NULL::{t}" for t in argtypes]))
                break
            base = [normal for normal, _ in options]
            calls.append((oid, name, kind, list(base)))
            for i, (_, extremes) in enumerate(options):
                for v in extremes:
                    args = list(base)
                    args[i] = v
                    calls.append((oid, name, kind, args))
                if not strict:
                    args = list(base)
                    args[i] = f"NULL::{types[i]}"
                    calls.append((oid, name, kind, args))
            # Extremes together (finding 4 needed a tiny epsilon AND a tiny
            # delta): the diagonal (every argument at its k-th extreme) and
            # random mixes.
            if len(types) > 1:
                for k in range(max(len(e) for _, e in options)):
                    calls.append((oid, name, kind, [e[k % len(e)] if e else b for b, e in options]))
                for _ in range(2 * len(types)):
                    calls.append((oid, name, kind, [rng.choice(e) if e else b for b, e in options]))
            if "anyelement" not in argtypes and "anyarray" not in argtypes:
                break
        first, rest = calls[:1], calls[1:]
        rng.shuffle(rest)
        per_function.append(first + rest)
    out = []
    for k in range(max(len(c) for c in per_function)):
        for c in per_function:
            if k < len(c):
                out.append(c[k])
    return out


def call_sql(name, kind, args):
    call = f"{name}({', '.join(args)})"
    if kind == "a":
        return f"SELECT {call} FROM fz.pub t WHERE t.id BETWEEN 1 AND 5"
    if kind == "w":
        return f"SELECT {call} OVER () FROM fz.pub t WHERE t.id BETWEEN 1 AND 5"
    if kind == "p":
        return f"CALL {call}"
    return f"SELECT {call}"


def timed_call(conn, sql):
    """Runs sql in a transaction that is rolled back (admin functions change
    nothing for the rest of the fuzz), in a thread so that a backend deaf to
    statement_timeout cannot hang the fuzzer. Returns (seconds, sqlstate or
    'ok', message, abandoned)."""
    import threading
    result = {}

    def work():
        try:
            with conn.cursor() as cur:
                cur.execute("BEGIN")
                t0 = time.time()
                try:
                    cur.execute(sql)
                    result["state"], result["msg"] = "ok", ""
                except psycopg2.Error as e:
                    result["state"] = e.pgcode
                    result["msg"] = (e.diag.message_primary if e.diag and e.diag.message_primary
                                     else str(e)).strip()
                result["seconds"] = time.time() - t0
                if result["state"] is not None:
                    cur.execute("ROLLBACK")
        except psycopg2.Error as e:
            result.setdefault("state", e.pgcode)
            result.setdefault("msg", str(e).strip())
    t0 = time.time()
    th = threading.Thread(target=work, daemon=True)
    th.start()
    th.join(CALL_ABANDON_S)
    if th.is_alive():
        return time.time() - t0, None, f"no answer after {CALL_ABANDON_S:.0f} s", True
    return result.get("seconds", time.time() - t0), result.get("state"), result.get("msg", ""), False


def judge_call(seconds, state, msg, abandoned):
    """None, or a finding (class, message) for one call."""
    limit = CALL_TIMEOUT_MS / 1000 + CALL_MARGIN_S
    if abandoned or seconds >= limit:
        return ("timeout not honoured",
                f"ran {seconds:.1f} s under statement_timeout {CALL_TIMEOUT_MS} ms "
                f"(limit {limit:.1f} s){': ' + msg if msg else ''}")
    if state is None:
        return ("crash", "connection lost: " + msg)
    if state in INTERNAL:
        return (f"internal {state}", msg)
    return None


def function_session(role):
    c = connect(role)
    with c.cursor() as cur:
        cur.execute(f"SET statement_timeout = {CALL_TIMEOUT_MS}")
    return c


def timeout_self_check():
    """Proves the timeout check fires on a call that ignores statement_timeout
    (test fault uncancellable_spin: zcdp_rho busy for 3 s without checking for
    interrupts) and stays quiet on the same call without the fault and on a
    long call that is cancelled on time. Returns a list of (ok, label)."""
    res = []
    c = function_session(None)
    try:
        q = "SELECT dp_agg.zcdp_rho(1, 1e-6)"
        got = judge_call(*timed_call(c, q))
        res.append((got is None, f"timeout check: {q} passes ({got})"))
        got = judge_call(*timed_call(c, "SELECT pg_sleep(30)"))
        res.append((got is None, f"timeout check: pg_sleep(30) is cancelled by statement_timeout ({got})"))
        with c.cursor() as cur:
            cur.execute("SET dp_agg.insecure_test_fault = 'uncancellable_spin'")
        got = judge_call(*timed_call(c, q))
        res.append((got is not None and got[0] == "timeout not honoured",
                    f"timeout check fires on {q} under test fault uncancellable_spin ({got})"))
    finally:
        c.close()
    return res


def fuzz_functions(seed, out, deadline):
    """Calls every function of the extension (function_calls) as the superuser,
    the unrestricted and the restricted role in turn until the deadline."""
    rng = random.Random(seed)
    admin = connect()
    with admin.cursor() as cur:
        cur.execute(EXTENSION_FUNCTIONS)
        functions = cur.fetchall()
    admin.close()
    calls = function_calls(functions, rng)
    roles = [None, UNRESTRICTED, RESTRICTED]
    sessions = {}
    findings = {}
    states = {}
    notes = {}
    covered = {r: set() for r in roles}
    t_start = start_time()
    ran = 0
    for oid, name, kind, args in calls:
        for role in roles:
            if time.time() > deadline:
                break
            c = sessions.get(role)
            if c is None or c.closed:
                c = sessions[role] = function_session(role)
            sql = call_sql(name, kind, args)
            seconds, state, msg, abandoned = timed_call(c, sql)
            ran += 1
            covered[role].add(oid)
            got = judge_call(seconds, state, msg, abandoned)
            if got is None:
                states[state] = states.get(state, 0) + 1
                if state != "ok" and not expected_state(state) and (state, msg) not in notes:
                    # Reported, not failed: the pass looks for crashes, internal
                    # errors and unhonoured timeouts; an odd SQLSTATE from an
                    # admin function called with nonsense is for a person to read.
                    notes[(state, msg)] = (role or "superuser", sql)
                continue
            if abandoned or state is None:
                sessions.pop(role, None)   # a new session: this one may be busy for ever
                if state is None and not abandoned:
                    start_time()
            states[got[0]] = states.get(got[0], 0) + 1
            ex = findings.setdefault(got, [])
            if len(ex) < 3:
                who = role or "superuser"
                ex.append((who, sql, got[1]))
                out.write(f"class={got[0]}: {got[1]}\n  as {who}: {sql[:2000]}\n\n")
                out.flush()
    for c in sessions.values():
        try:
            c.close()
        except Exception:
            pass
    if start_time() != t_start:
        findings[("crash", "server restarted")] = [("?", "(between calls)", "pg_postmaster_start_time changed")]
    names = {f[0] for f in functions}
    missed = {r or "superuser": len(names - covered[r]) for r in roles if names - covered[r]}
    return ran, len(functions), len(calls), findings, states, missed, notes


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--long", type=int, metavar="N")
    ap.add_argument("--seed", type=int)
    ap.add_argument("--max-seconds", type=float)
    ap.add_argument("--sqlsmith-seconds", type=float, default=60)
    ap.add_argument("--functions-seconds", type=float,
                    help="time for the all-functions pass (default 40, --long 300)")
    ap.add_argument("--findings", default="/tmp/dp_agg_crash_findings.txt")
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args()
    n = args.long or 4000
    seed = args.seed if args.seed is not None else (1124 if not args.long else int(time.time()))
    budget = args.max_seconds or (90 if not args.long else 1e9)
    passed = failed = 0
    t0 = time.time()
    setup()
    try:
        for ok, label in self_check() + timeout_self_check():
            if ok:
                passed += 1
                log(f"ok - {label}")
            else:
                failed += 1
                log(f"not ok - {label}")
        with open(args.findings, "w") as out:
            ran, findings, states = fuzz(n, seed, out, time.time() + budget)
        summary = ", ".join(f"{k} {v}" for k, v in sorted(states.items(), key=lambda kv: -kv[1])[:14]
                            if isinstance(k, str) and not k.startswith("checked "))
        checked = ", ".join(f"{k[8:]} {v}" for k, v in sorted(states.items(), key=lambda kv: -kv[1])
                            if isinstance(k, str) and k.startswith("checked "))
        if findings:
            failed += 1
            log(f"not ok - crash fuzz seed {seed}: {len(findings)} distinct findings in {ran} statements "
                f"({time.time() - t0:.0f} s); see {args.findings}")
            for (cls, msg), ex in findings.items():
                log(f"  {cls}: {ex[0][2]} ({states.get((cls, msg), 0)} times)")
                for who, sql, m in ex:
                    log(f"    as {who}: {sql[:300]}")
        else:
            passed += 1
            log(f"ok - crash fuzz seed {seed}: {ran} statements, no crash, internal error or uncharged release "
                f"({time.time() - t0:.0f} s)")
        log(f"  outcomes: {summary}")
        log(f"  charge-checked releases by shape: {checked or 'none'}")
        seconds = args.functions_seconds or (40 if not args.long else 300)
        t1 = time.time()
        with open(args.findings, "a") as out:
            ran, nfun, ncalls, findings, states, missed, notes = fuzz_functions(seed, out, t1 + seconds)
        summary = ", ".join(f"{k} {v}" for k, v in sorted(states.items(), key=lambda kv: -kv[1]))
        if findings or missed:
            failed += 1
            log(f"not ok - all-functions pass: {len(findings)} distinct findings in {ran} calls of "
                f"{nfun} functions ({time.time() - t1:.0f} s); functions never called: {missed or 'none'}; "
                f"see {args.findings}")
            for (cls, msg), ex in findings.items():
                log(f"  {cls}: {ex[0][2]}")
                for who, sql, m in ex:
                    log(f"    as {who}: {sql[:300]}")
        else:
            passed += 1
            log(f"ok - all-functions pass: {ran} of {ncalls * 3} calls (every one of the {nfun} functions of "
                f"dp_agg as superuser, unrestricted and restricted role) under statement_timeout "
                f"{CALL_TIMEOUT_MS} ms: no crash, internal error or unhonoured timeout ({time.time() - t1:.0f} s)")
        log(f"  outcomes: {summary}")
        for (state, msg), (who, sql) in notes.items():
            log(f"  note: unexpected SQLSTATE {state} (not a failure of this pass): {msg}\n    as {who}: {sql[:300]}")
        s = sqlsmith_pass(args.sqlsmith_seconds)
        if s is True:
            passed += 1
            log("ok - sqlsmith: no server restart")
        elif s is False:
            failed += 1
            log("not ok - sqlsmith: the server restarted (see the server log)")
    finally:
        if not args.keep:
            teardown()
    log(f"crash: {passed} passed, {failed} failed ({time.time() - t0:.0f} s)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
