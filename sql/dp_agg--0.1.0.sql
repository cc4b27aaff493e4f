-- dp_agg 0.1.0: differentially private aggregates.
\echo Use "CREATE EXTENSION dp_agg" to load this file. \quit

-- Internal objects live in schema dp_agg; the aggregates themselves go to the
-- schema the extension is created in (public by default), so that analysts
-- can write dp_avg(...) like avg(...).
CREATE SCHEMA dp_agg;
GRANT USAGE ON SCHEMA dp_agg TO PUBLIC;

-- Transition state: a real type with text input/output (not `internal`), so
-- that Citus can push partial aggregation down to its workers.
CREATE TYPE dp_agg.aggregate_state;

CREATE FUNCTION dp_agg.aggregate_state_in(cstring) RETURNS dp_agg.aggregate_state
  AS 'MODULE_PATHNAME', 'dp_aggregate_state_in' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.aggregate_state_out(dp_agg.aggregate_state) RETURNS cstring
  AS 'MODULE_PATHNAME', 'dp_aggregate_state_out' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE TYPE dp_agg.aggregate_state (
  INPUT = dp_agg.aggregate_state_in,
  OUTPUT = dp_agg.aggregate_state_out,
  INTERNALLENGTH = VARIABLE,
  ALIGNMENT = double,
  STORAGE = plain
);

-- Support functions. All are VOLATILE (the final functions draw noise), STRICT
-- transition functions skip NULL values, and none may be called directly: the
-- states hold exact sums, so EXECUTE is revoked from PUBLIC below. The
-- aggregates still work for everyone, because PostgreSQL checks the support
-- functions' privileges against the aggregate's owner.
CREATE FUNCTION dp_agg.count_transfn(dp_agg.aggregate_state, anyelement, float8)
  RETURNS dp_agg.aggregate_state AS 'MODULE_PATHNAME', 'dp_count_transfn'
  LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.int2_transfn(dp_agg.aggregate_state, smallint, smallint, smallint, float8)
  RETURNS dp_agg.aggregate_state AS 'MODULE_PATHNAME', 'dp_int2_transfn'
  LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.int4_transfn(dp_agg.aggregate_state, integer, integer, integer, float8)
  RETURNS dp_agg.aggregate_state AS 'MODULE_PATHNAME', 'dp_int4_transfn'
  LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.int8_transfn(dp_agg.aggregate_state, bigint, bigint, bigint, float8)
  RETURNS dp_agg.aggregate_state AS 'MODULE_PATHNAME', 'dp_int8_transfn'
  LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.float4_transfn(dp_agg.aggregate_state, real, real, real, float8)
  RETURNS dp_agg.aggregate_state AS 'MODULE_PATHNAME', 'dp_float4_transfn'
  LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.float8_transfn(dp_agg.aggregate_state, float8, float8, float8, float8)
  RETURNS dp_agg.aggregate_state AS 'MODULE_PATHNAME', 'dp_float8_transfn'
  LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.numeric_transfn(dp_agg.aggregate_state, numeric, numeric, numeric, float8)
  RETURNS dp_agg.aggregate_state AS 'MODULE_PATHNAME', 'dp_numeric_transfn'
  LANGUAGE C VOLATILE STRICT PARALLEL SAFE;

CREATE FUNCTION dp_agg.combine(dp_agg.aggregate_state, dp_agg.aggregate_state)
  RETURNS dp_agg.aggregate_state AS 'MODULE_PATHNAME', 'dp_combine'
  LANGUAGE C VOLATILE STRICT PARALLEL SAFE;

CREATE FUNCTION dp_agg.count_final(dp_agg.aggregate_state) RETURNS bigint
  AS 'MODULE_PATHNAME', 'dp_count_final' LANGUAGE C VOLATILE PARALLEL SAFE;
CREATE FUNCTION dp_agg.sum_final_int8(dp_agg.aggregate_state) RETURNS bigint
  AS 'MODULE_PATHNAME', 'dp_sum_final_int8' LANGUAGE C VOLATILE PARALLEL SAFE;
CREATE FUNCTION dp_agg.sum_final_numeric(dp_agg.aggregate_state) RETURNS numeric
  AS 'MODULE_PATHNAME', 'dp_sum_final_numeric' LANGUAGE C VOLATILE PARALLEL SAFE;
CREATE FUNCTION dp_agg.sum_final_float4(dp_agg.aggregate_state) RETURNS real
  AS 'MODULE_PATHNAME', 'dp_sum_final_float4' LANGUAGE C VOLATILE PARALLEL SAFE;
CREATE FUNCTION dp_agg.sum_final_float8(dp_agg.aggregate_state) RETURNS float8
  AS 'MODULE_PATHNAME', 'dp_sum_final_float8' LANGUAGE C VOLATILE PARALLEL SAFE;
CREATE FUNCTION dp_agg.avg_final_numeric(dp_agg.aggregate_state) RETURNS numeric
  AS 'MODULE_PATHNAME', 'dp_avg_final_numeric' LANGUAGE C VOLATILE PARALLEL SAFE;
CREATE FUNCTION dp_agg.avg_final_float8(dp_agg.aggregate_state) RETURNS float8
  AS 'MODULE_PATHNAME', 'dp_avg_final_float8' LANGUAGE C VOLATILE PARALLEL SAFE;

REVOKE ALL ON FUNCTION
  dp_agg.count_transfn(dp_agg.aggregate_state, anyelement, float8),
  dp_agg.int2_transfn(dp_agg.aggregate_state, smallint, smallint, smallint, float8),
  dp_agg.int4_transfn(dp_agg.aggregate_state, integer, integer, integer, float8),
  dp_agg.int8_transfn(dp_agg.aggregate_state, bigint, bigint, bigint, float8),
  dp_agg.float4_transfn(dp_agg.aggregate_state, real, real, real, float8),
  dp_agg.float8_transfn(dp_agg.aggregate_state, float8, float8, float8, float8),
  dp_agg.numeric_transfn(dp_agg.aggregate_state, numeric, numeric, numeric, float8),
  dp_agg.combine(dp_agg.aggregate_state, dp_agg.aggregate_state),
  dp_agg.count_final(dp_agg.aggregate_state),
  dp_agg.sum_final_int8(dp_agg.aggregate_state),
  dp_agg.sum_final_numeric(dp_agg.aggregate_state),
  dp_agg.sum_final_float4(dp_agg.aggregate_state),
  dp_agg.sum_final_float8(dp_agg.aggregate_state),
  dp_agg.avg_final_numeric(dp_agg.aggregate_state),
  dp_agg.avg_final_float8(dp_agg.aggregate_state)
FROM PUBLIC;

-- dp_count(value, epsilon): noisy number of non-NULL values. To count rows,
-- count a NOT NULL column or a constant: dp_count(1, 0.5).
CREATE AGGREGATE dp_count(anyelement, float8) (
  SFUNC = dp_agg.count_transfn, STYPE = dp_agg.aggregate_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.count_final, COMBINEFUNC = dp_agg.combine, PARALLEL = SAFE
);

-- dp_sum(value, lower, upper, epsilon): noisy sum of values clamped to
-- [lower, upper]. Result types follow sum().
CREATE AGGREGATE dp_sum(smallint, smallint, smallint, float8) (
  SFUNC = dp_agg.int2_transfn, STYPE = dp_agg.aggregate_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.sum_final_int8, COMBINEFUNC = dp_agg.combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_sum(integer, integer, integer, float8) (
  SFUNC = dp_agg.int4_transfn, STYPE = dp_agg.aggregate_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.sum_final_int8, COMBINEFUNC = dp_agg.combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_sum(bigint, bigint, bigint, float8) (
  SFUNC = dp_agg.int8_transfn, STYPE = dp_agg.aggregate_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.sum_final_numeric, COMBINEFUNC = dp_agg.combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_sum(real, real, real, float8) (
  SFUNC = dp_agg.float4_transfn, STYPE = dp_agg.aggregate_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.sum_final_float4, COMBINEFUNC = dp_agg.combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_sum(float8, float8, float8, float8) (
  SFUNC = dp_agg.float8_transfn, STYPE = dp_agg.aggregate_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.sum_final_float8, COMBINEFUNC = dp_agg.combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_sum(numeric, numeric, numeric, float8) (
  SFUNC = dp_agg.numeric_transfn, STYPE = dp_agg.aggregate_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.sum_final_numeric, COMBINEFUNC = dp_agg.combine, PARALLEL = SAFE
);

-- dp_avg(value, lower, upper, epsilon): noisy mean of values clamped to
-- [lower, upper]; always within [lower, upper]. Result types follow avg().
CREATE AGGREGATE dp_avg(smallint, smallint, smallint, float8) (
  SFUNC = dp_agg.int2_transfn, STYPE = dp_agg.aggregate_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.avg_final_numeric, COMBINEFUNC = dp_agg.combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_avg(integer, integer, integer, float8) (
  SFUNC = dp_agg.int4_transfn, STYPE = dp_agg.aggregate_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.avg_final_numeric, COMBINEFUNC = dp_agg.combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_avg(bigint, bigint, bigint, float8) (
  SFUNC = dp_agg.int8_transfn, STYPE = dp_agg.aggregate_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.avg_final_numeric, COMBINEFUNC = dp_agg.combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_avg(real, real, real, float8) (
  SFUNC = dp_agg.float4_transfn, STYPE = dp_agg.aggregate_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.avg_final_float8, COMBINEFUNC = dp_agg.combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_avg(float8, float8, float8, float8) (
  SFUNC = dp_agg.float8_transfn, STYPE = dp_agg.aggregate_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.avg_final_float8, COMBINEFUNC = dp_agg.combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_avg(numeric, numeric, numeric, float8) (
  SFUNC = dp_agg.numeric_transfn, STYPE = dp_agg.aggregate_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.avg_final_numeric, COMBINEFUNC = dp_agg.combine, PARALLEL = SAFE
);


-- ===========================================================================
-- (epsilon, delta) variants: discrete Gaussian noise calibrated exactly (see
-- core/gaussian_mechanism.h). delta must lie in (0, 1) and not above the
-- superuser setting dp_agg.max_delta; it is charged to the delta budget.
-- The support functions take the extra argument and ignore it per row; the
-- executor hook reads it once, like epsilon.
-- ===========================================================================
-- The same C transition functions, declared once more for each extra
-- argument (delta, confidence): CREATE AGGREGATE needs exact signatures.
CREATE FUNCTION dp_agg.count_transfn(dp_agg.aggregate_state, anyelement, float8, float8)
  RETURNS dp_agg.aggregate_state AS 'MODULE_PATHNAME', 'dp_count_transfn'
  LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.count_transfn(dp_agg.aggregate_state, anyelement, float8, float8, float8)
  RETURNS dp_agg.aggregate_state AS 'MODULE_PATHNAME', 'dp_count_transfn'
  LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.int2_transfn(dp_agg.aggregate_state, smallint, smallint, smallint, float8, float8)
  RETURNS dp_agg.aggregate_state AS 'MODULE_PATHNAME', 'dp_int2_transfn'
  LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.int4_transfn(dp_agg.aggregate_state, integer, integer, integer, float8, float8)
  RETURNS dp_agg.aggregate_state AS 'MODULE_PATHNAME', 'dp_int4_transfn'
  LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.int8_transfn(dp_agg.aggregate_state, bigint, bigint, bigint, float8, float8)
  RETURNS dp_agg.aggregate_state AS 'MODULE_PATHNAME', 'dp_int8_transfn'
  LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.float4_transfn(dp_agg.aggregate_state, real, real, real, float8, float8)
  RETURNS dp_agg.aggregate_state AS 'MODULE_PATHNAME', 'dp_float4_transfn'
  LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.float8_transfn(dp_agg.aggregate_state, float8, float8, float8, float8, float8)
  RETURNS dp_agg.aggregate_state AS 'MODULE_PATHNAME', 'dp_float8_transfn'
  LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.numeric_transfn(dp_agg.aggregate_state, numeric, numeric, numeric, float8, float8)
  RETURNS dp_agg.aggregate_state AS 'MODULE_PATHNAME', 'dp_numeric_transfn'
  LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.float8_transfn(dp_agg.aggregate_state, float8, float8, float8, float8, float8, float8)
  RETURNS dp_agg.aggregate_state AS 'MODULE_PATHNAME', 'dp_float8_transfn'
  LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
REVOKE ALL ON FUNCTION
  dp_agg.count_transfn(dp_agg.aggregate_state, anyelement, float8, float8),
  dp_agg.count_transfn(dp_agg.aggregate_state, anyelement, float8, float8, float8),
  dp_agg.int2_transfn(dp_agg.aggregate_state, smallint, smallint, smallint, float8, float8),
  dp_agg.int4_transfn(dp_agg.aggregate_state, integer, integer, integer, float8, float8),
  dp_agg.int8_transfn(dp_agg.aggregate_state, bigint, bigint, bigint, float8, float8),
  dp_agg.float4_transfn(dp_agg.aggregate_state, real, real, real, float8, float8),
  dp_agg.float8_transfn(dp_agg.aggregate_state, float8, float8, float8, float8, float8),
  dp_agg.numeric_transfn(dp_agg.aggregate_state, numeric, numeric, numeric, float8, float8),
  dp_agg.float8_transfn(dp_agg.aggregate_state, float8, float8, float8, float8, float8, float8)
FROM PUBLIC;

CREATE AGGREGATE dp_count(anyelement, float8, float8) (
  SFUNC = dp_agg.count_transfn, STYPE = dp_agg.aggregate_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.count_final, COMBINEFUNC = dp_agg.combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_sum(smallint, smallint, smallint, float8, float8) (
  SFUNC = dp_agg.int2_transfn, STYPE = dp_agg.aggregate_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.sum_final_int8, COMBINEFUNC = dp_agg.combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_avg(smallint, smallint, smallint, float8, float8) (
  SFUNC = dp_agg.int2_transfn, STYPE = dp_agg.aggregate_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.avg_final_numeric, COMBINEFUNC = dp_agg.combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_sum(integer, integer, integer, float8, float8) (
  SFUNC = dp_agg.int4_transfn, STYPE = dp_agg.aggregate_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.sum_final_int8, COMBINEFUNC = dp_agg.combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_avg(integer, integer, integer, float8, float8) (
  SFUNC = dp_agg.int4_transfn, STYPE = dp_agg.aggregate_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.avg_final_numeric, COMBINEFUNC = dp_agg.combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_sum(bigint, bigint, bigint, float8, float8) (
  SFUNC = dp_agg.int8_transfn, STYPE = dp_agg.aggregate_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.sum_final_numeric, COMBINEFUNC = dp_agg.combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_avg(bigint, bigint, bigint, float8, float8) (
  SFUNC = dp_agg.int8_transfn, STYPE = dp_agg.aggregate_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.avg_final_numeric, COMBINEFUNC = dp_agg.combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_sum(real, real, real, float8, float8) (
  SFUNC = dp_agg.float4_transfn, STYPE = dp_agg.aggregate_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.sum_final_float4, COMBINEFUNC = dp_agg.combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_avg(real, real, real, float8, float8) (
  SFUNC = dp_agg.float4_transfn, STYPE = dp_agg.aggregate_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.avg_final_float8, COMBINEFUNC = dp_agg.combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_sum(float8, float8, float8, float8, float8) (
  SFUNC = dp_agg.float8_transfn, STYPE = dp_agg.aggregate_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.sum_final_float8, COMBINEFUNC = dp_agg.combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_avg(float8, float8, float8, float8, float8) (
  SFUNC = dp_agg.float8_transfn, STYPE = dp_agg.aggregate_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.avg_final_float8, COMBINEFUNC = dp_agg.combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_sum(numeric, numeric, numeric, float8, float8) (
  SFUNC = dp_agg.numeric_transfn, STYPE = dp_agg.aggregate_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.sum_final_numeric, COMBINEFUNC = dp_agg.combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_avg(numeric, numeric, numeric, float8, float8) (
  SFUNC = dp_agg.numeric_transfn, STYPE = dp_agg.aggregate_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.avg_final_numeric, COMBINEFUNC = dp_agg.combine, PARALLEL = SAFE
);

-- ===========================================================================
-- Error bars, at no privacy cost.
--  * dp_count_margin / dp_sum_margin: the half-width of a confidence interval
--    for dp_count / dp_sum, from the public parameters alone.
--  * dp_count_interval / dp_sum_interval / dp_avg_interval: the same single
--    release as dp_count / dp_sum / dp_avg (same cost), returned with its
--    interval as a dp_agg.estimate (value, low, high, confidence). Read the
--    fields from a subquery so that the aggregate is computed once:
--      SELECT (e).value, (e).low, (e).high
--      FROM (SELECT dp_avg_interval(age, 0, 110, 0.5, 0.95) AS e FROM patients) q;
-- ===========================================================================
CREATE TYPE dp_agg.estimate AS (
  value double precision, low double precision, high double precision,
  confidence double precision
);

CREATE FUNCTION dp_count_margin(epsilon float8, delta float8 DEFAULT 0,
                                confidence float8 DEFAULT 0.95) RETURNS float8
  AS 'MODULE_PATHNAME', 'dp_count_margin' LANGUAGE C STABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_sum_margin(lower float8, upper float8, epsilon float8, delta float8 DEFAULT 0,
                              confidence float8 DEFAULT 0.95) RETURNS float8
  AS 'MODULE_PATHNAME', 'dp_sum_margin' LANGUAGE C STABLE STRICT PARALLEL SAFE;

CREATE FUNCTION dp_agg.count_interval_final(dp_agg.aggregate_state) RETURNS dp_agg.estimate
  AS 'MODULE_PATHNAME', 'dp_count_interval_final' LANGUAGE C VOLATILE PARALLEL SAFE;
CREATE FUNCTION dp_agg.sum_interval_final(dp_agg.aggregate_state) RETURNS dp_agg.estimate
  AS 'MODULE_PATHNAME', 'dp_sum_interval_final' LANGUAGE C VOLATILE PARALLEL SAFE;
CREATE FUNCTION dp_agg.avg_interval_final(dp_agg.aggregate_state) RETURNS dp_agg.estimate
  AS 'MODULE_PATHNAME', 'dp_avg_interval_final' LANGUAGE C VOLATILE PARALLEL SAFE;
REVOKE ALL ON FUNCTION dp_agg.count_interval_final(dp_agg.aggregate_state),
  dp_agg.sum_interval_final(dp_agg.aggregate_state),
  dp_agg.avg_interval_final(dp_agg.aggregate_state) FROM PUBLIC;

-- (value, epsilon, confidence) and (value, epsilon, delta, confidence); sums
-- and means of any numeric type go through double precision.
CREATE AGGREGATE dp_count_interval(anyelement, float8, float8) (
  SFUNC = dp_agg.count_transfn, STYPE = dp_agg.aggregate_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.count_interval_final, COMBINEFUNC = dp_agg.combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_count_interval(anyelement, float8, float8, float8) (
  SFUNC = dp_agg.count_transfn, STYPE = dp_agg.aggregate_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.count_interval_final, COMBINEFUNC = dp_agg.combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_sum_interval(float8, float8, float8, float8, float8) (
  SFUNC = dp_agg.float8_transfn, STYPE = dp_agg.aggregate_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.sum_interval_final, COMBINEFUNC = dp_agg.combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_sum_interval(float8, float8, float8, float8, float8, float8) (
  SFUNC = dp_agg.float8_transfn, STYPE = dp_agg.aggregate_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.sum_interval_final, COMBINEFUNC = dp_agg.combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_avg_interval(float8, float8, float8, float8, float8) (
  SFUNC = dp_agg.float8_transfn, STYPE = dp_agg.aggregate_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.avg_interval_final, COMBINEFUNC = dp_agg.combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_avg_interval(float8, float8, float8, float8, float8, float8) (
  SFUNC = dp_agg.float8_transfn, STYPE = dp_agg.aggregate_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.avg_interval_final, COMBINEFUNC = dp_agg.combine, PARALLEL = SAFE
);

UPDATE pg_catalog.pg_proc SET provolatile = 'v'
WHERE pronamespace = '@extschema@'::regnamespace
  AND proname IN ('dp_count', 'dp_sum', 'dp_avg', 'dp_count_interval', 'dp_sum_interval',
                  'dp_avg_interval')
  AND prokind = 'a';

-- CREATE AGGREGATE has no volatility option and records aggregates as
-- immutable, so the planner would treat two identical calls as one, or copy a
-- call into several places when it flattens a subquery, drawing noise a
-- different number of times than the query says. Every call is a separate
-- noisy release: mark the aggregates VOLATILE like their support functions.
UPDATE pg_catalog.pg_proc SET provolatile = 'v'
WHERE pronamespace = '@extschema@'::regnamespace
  AND proname IN ('dp_count', 'dp_sum', 'dp_avg') AND prokind = 'a';

-- ===========================================================================
-- Privacy budgets and the ledger.
--
-- Who pays: the session user, i.e. the role that logged in. SET ROLE and
-- SECURITY DEFINER functions change current_user but not session_user, so
-- they cannot move spending to a role with more budget, and membership in
-- other roles grants no budget. Budgets belong to login roles.
-- Budgets are per database (each database has its own tables and writer).
-- Amounts are exact numerics: 50 charges of 0.1 are exactly 5.0.
-- ===========================================================================

CREATE TABLE dp_agg.role_budget (
  role_name name PRIMARY KEY,
  epsilon_total numeric NOT NULL CHECK (epsilon_total >= 0),
  epsilon_spent numeric NOT NULL DEFAULT 0 CHECK (epsilon_spent >= 0),
  delta_total numeric NOT NULL DEFAULT 0 CHECK (delta_total >= 0 AND delta_total < 1),
  delta_spent numeric NOT NULL DEFAULT 0 CHECK (delta_spent >= 0),
  updated_at timestamptz NOT NULL DEFAULT now()
);

-- One row per charge and per administrative change (never updated or deleted
-- by dp_agg).
CREATE TABLE dp_agg.ledger_entry (
  id bigserial PRIMARY KEY,
  recorded_at timestamptz NOT NULL DEFAULT now(),
  kind text NOT NULL CHECK (kind IN ('charge', 'set_budget', 'add_budget', 'reset_spent',
                                     'revoke_budget')),
  role_name name NOT NULL,           -- whose budget
  session_user_name name NOT NULL,   -- who ran the query or made the change
  current_user_name name,            -- the active role at that moment (audit only)
  epsilon numeric NOT NULL,          -- charged, or the new/added total for admin rows
  delta numeric NOT NULL,
  query_id bigint,                   -- pg_stat_statements' query identifier, when computed
  aggregates text,                   -- the private aggregates that were paid for
  query text                         -- the statement text (at most 1000 characters and
                                     -- 1023 bytes, cut between characters)
);

-- pg_dump keeps budgets and the ledger.
SELECT pg_catalog.pg_extension_config_dump('dp_agg.role_budget', '');
SELECT pg_catalog.pg_extension_config_dump('dp_agg.ledger_entry', '');
SELECT pg_catalog.pg_extension_config_dump('dp_agg.ledger_entry_id_seq', '');

REVOKE ALL ON dp_agg.role_budget, dp_agg.ledger_entry, dp_agg.ledger_entry_id_seq FROM PUBLIC;

-- Administrators: superusers, and members of the role named by the
-- superuser-only setting dp_agg.admin_role. Judged by the session user, so
-- that neither SET ROLE nor a SECURITY DEFINER function can lend the right.
CREATE FUNCTION dp_agg.is_admin() RETURNS boolean
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  SELECT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = session_user AND rolsuper)
      OR (coalesce(current_setting('dp_agg.admin_role', true), '') <> ''
          AND EXISTS (SELECT 1 FROM pg_roles WHERE rolname = current_setting('dp_agg.admin_role'))
          AND pg_has_role(session_user, current_setting('dp_agg.admin_role'), 'MEMBER'))
$$;

CREATE FUNCTION dp_agg.require_admin(action text) RETURNS void
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF NOT dp_agg.is_admin() THEN
    RAISE EXCEPTION 'permission denied to %', action
      USING ERRCODE = 'insufficient_privilege',
            HINT = 'Only superusers and members of the role named in dp_agg.admin_role manage privacy budgets.';
  END IF;
END $$;

CREATE FUNCTION dp_agg.check_amounts(epsilon float8, delta float8) RETURNS void
LANGUAGE plpgsql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF epsilon IS NULL OR delta IS NULL OR epsilon = 'NaN' OR epsilon < 0
     OR epsilon = 'Infinity' OR delta = 'NaN' OR delta < 0 OR delta >= 1 THEN
    RAISE EXCEPTION 'invalid budget: epsilon % and delta %', epsilon, delta
      USING ERRCODE = 'invalid_parameter_value',
            HINT = 'epsilon must be a finite number >= 0 and delta a number in [0, 1).';
  END IF;
END $$;

-- Sets a role's totals (spent amounts are kept).
CREATE FUNCTION dp_agg.set_budget(role regrole, epsilon float8, delta float8 DEFAULT 0)
RETURNS void LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  name_of_role name := (SELECT rolname FROM pg_roles WHERE oid = role);
BEGIN
  PERFORM dp_agg.require_admin('set privacy budgets');
  PERFORM dp_agg.check_amounts(epsilon, delta);
  INSERT INTO dp_agg.role_budget AS b (role_name, epsilon_total, delta_total)
  VALUES (name_of_role, epsilon::numeric, delta::numeric)
  ON CONFLICT (role_name) DO UPDATE
    SET epsilon_total = excluded.epsilon_total, delta_total = excluded.delta_total,
        updated_at = now();
  INSERT INTO dp_agg.ledger_entry (kind, role_name, session_user_name, current_user_name,
                                   epsilon, delta)
  VALUES ('set_budget', name_of_role, session_user, current_user, epsilon::numeric, delta::numeric);
END $$;

-- Adds to a role's totals (creating a budget if it has none).
CREATE FUNCTION dp_agg.add_budget(role regrole, epsilon float8, delta float8 DEFAULT 0)
RETURNS void LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  name_of_role name := (SELECT rolname FROM pg_roles WHERE oid = role);
BEGIN
  PERFORM dp_agg.require_admin('add to privacy budgets');
  PERFORM dp_agg.check_amounts(epsilon, delta);
  INSERT INTO dp_agg.role_budget AS b (role_name, epsilon_total, delta_total)
  VALUES (name_of_role, epsilon::numeric, delta::numeric)
  ON CONFLICT (role_name) DO UPDATE
    SET epsilon_total = b.epsilon_total + excluded.epsilon_total,
        delta_total = b.delta_total + excluded.delta_total, updated_at = now();
  INSERT INTO dp_agg.ledger_entry (kind, role_name, session_user_name, current_user_name,
                                   epsilon, delta)
  VALUES ('add_budget', name_of_role, session_user, current_user, epsilon::numeric, delta::numeric);
END $$;

-- Sets a role's spent amounts back to zero. This gives privacy budget back,
-- so it is an administrator's decision and leaves an audit row.
CREATE FUNCTION dp_agg.reset_spent(role regrole)
RETURNS void LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  name_of_role name := (SELECT rolname FROM pg_roles WHERE oid = role);
  previous dp_agg.role_budget;
BEGIN
  PERFORM dp_agg.require_admin('reset privacy budgets');
  UPDATE dp_agg.role_budget b SET epsilon_spent = 0, delta_spent = 0, updated_at = now()
  WHERE b.role_name = name_of_role
  RETURNING * INTO previous;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'role "%" has no privacy budget', name_of_role
      USING ERRCODE = 'undefined_object';
  END IF;
  INSERT INTO dp_agg.ledger_entry (kind, role_name, session_user_name, current_user_name,
                                   epsilon, delta)
  VALUES ('reset_spent', name_of_role, session_user, current_user, 0, 0);
END $$;

-- Removes a role's budget: its private queries are refused again.
CREATE FUNCTION dp_agg.revoke_budget(role regrole)
RETURNS void LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  name_of_role name := (SELECT rolname FROM pg_roles WHERE oid = role);
BEGIN
  PERFORM dp_agg.require_admin('revoke privacy budgets');
  DELETE FROM dp_agg.role_budget b WHERE b.role_name = name_of_role;
  INSERT INTO dp_agg.ledger_entry (kind, role_name, session_user_name, current_user_name,
                                   epsilon, delta)
  VALUES ('revoke_budget', name_of_role, session_user, current_user, 0, 0);
END $$;

-- Applied by the ledger writer (never by users): the charge, atomically
-- against the limit, under the row lock of the role's budget.
CREATE FUNCTION dp_agg.apply_charge(role name, session_role name, epsilon numeric,
                                    delta numeric, query_id bigint, aggregates text, query text,
                                    OUT status text, OUT epsilon_total numeric,
                                    OUT epsilon_spent numeric, OUT delta_total numeric,
                                    OUT delta_spent numeric)
LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  UPDATE dp_agg.role_budget b
     SET epsilon_spent = b.epsilon_spent + apply_charge.epsilon,
         delta_spent = b.delta_spent + apply_charge.delta
   WHERE b.role_name = role
     AND b.epsilon_spent + apply_charge.epsilon <= b.epsilon_total
     AND b.delta_spent + apply_charge.delta <= b.delta_total
  RETURNING b.epsilon_total, b.epsilon_spent, b.delta_total, b.delta_spent
       INTO epsilon_total, epsilon_spent, delta_total, delta_spent;
  IF FOUND THEN
    INSERT INTO dp_agg.ledger_entry (kind, role_name, session_user_name, current_user_name,
                                     epsilon, delta, query_id, aggregates, query)
    VALUES ('charge', role, role, session_role, apply_charge.epsilon, apply_charge.delta,
            apply_charge.query_id, apply_charge.aggregates, left(apply_charge.query, 1000));
    status := 'charged';
    RETURN;
  END IF;
  SELECT b.epsilon_total, b.epsilon_spent, b.delta_total, b.delta_spent
    INTO epsilon_total, epsilon_spent, delta_total, delta_spent
    FROM dp_agg.role_budget b WHERE b.role_name = role;
  status := CASE WHEN FOUND THEN 'exhausted' ELSE 'no_budget' END;
END $$;

REVOKE ALL ON FUNCTION dp_agg.apply_charge(name, name, numeric, numeric, bigint, text, text),
  dp_agg.require_admin(text), dp_agg.check_amounts(float8, float8) FROM PUBLIC;

-- Budgets: administrators see every role, everyone else their own.
CREATE VIEW dp_agg.budgets WITH (security_barrier) AS
  SELECT role_name AS role, epsilon_total, epsilon_spent,
         epsilon_total - epsilon_spent AS epsilon_remaining,
         delta_total, delta_spent, delta_total - delta_spent AS delta_remaining, updated_at
  FROM dp_agg.role_budget
  WHERE role_name = session_user OR dp_agg.is_admin();

-- The ledger, filtered the same way.
CREATE VIEW dp_agg.ledger WITH (security_barrier) AS
  SELECT id, recorded_at, kind, role_name AS role, session_user_name, current_user_name,
         epsilon, delta, query_id, aggregates, query
  FROM dp_agg.ledger_entry
  WHERE role_name = session_user OR dp_agg.is_admin();

-- What the session user has left.
CREATE FUNCTION dp_agg.remaining_budget(OUT epsilon numeric, OUT delta numeric)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  SELECT epsilon_total - epsilon_spent, delta_total - delta_spent
  FROM dp_agg.role_budget WHERE role_name = session_user
$$;

GRANT SELECT ON dp_agg.budgets, dp_agg.ledger TO PUBLIC;

-- ===========================================================================
-- dp_percentile(value, fraction, lower, upper, epsilon) and
-- dp_median(value, lower, upper, epsilon): the exponential mechanism
-- (permute-and-flip, sampled exactly) over a fixed grid of 1024 bins between
-- the public bounds. Memory is fixed (8 KiB per group) whatever the number of
-- rows; the answer always lies in [lower, upper], also on empty input.
-- ===========================================================================
CREATE TYPE dp_agg.quantile_state;
CREATE FUNCTION dp_agg.quantile_state_in(cstring) RETURNS dp_agg.quantile_state
  AS 'MODULE_PATHNAME', 'dp_quantile_state_in' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.quantile_state_out(dp_agg.quantile_state) RETURNS cstring
  AS 'MODULE_PATHNAME', 'dp_quantile_state_out' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE TYPE dp_agg.quantile_state (
  INPUT = dp_agg.quantile_state_in, OUTPUT = dp_agg.quantile_state_out,
  INTERNALLENGTH = VARIABLE, ALIGNMENT = double, STORAGE = plain
);
CREATE FUNCTION dp_agg.quantile_transfn(dp_agg.quantile_state, float8, float8, float8, float8, float8)
  RETURNS dp_agg.quantile_state AS 'MODULE_PATHNAME', 'dp_quantile_transfn'
  LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.quantile_transfn(dp_agg.quantile_state, float8, float8, float8, float8)
  RETURNS dp_agg.quantile_state AS 'MODULE_PATHNAME', 'dp_quantile_transfn'
  LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.quantile_combine(dp_agg.quantile_state, dp_agg.quantile_state)
  RETURNS dp_agg.quantile_state AS 'MODULE_PATHNAME', 'dp_quantile_combine'
  LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.quantile_final(dp_agg.quantile_state) RETURNS float8
  AS 'MODULE_PATHNAME', 'dp_quantile_final' LANGUAGE C VOLATILE PARALLEL SAFE;
REVOKE ALL ON FUNCTION
  dp_agg.quantile_transfn(dp_agg.quantile_state, float8, float8, float8, float8, float8),
  dp_agg.quantile_transfn(dp_agg.quantile_state, float8, float8, float8, float8),
  dp_agg.quantile_combine(dp_agg.quantile_state, dp_agg.quantile_state),
  dp_agg.quantile_final(dp_agg.quantile_state)
FROM PUBLIC;

CREATE AGGREGATE dp_percentile(float8, float8, float8, float8, float8) (
  SFUNC = dp_agg.quantile_transfn, STYPE = dp_agg.quantile_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.quantile_final, COMBINEFUNC = dp_agg.quantile_combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_median(float8, float8, float8, float8) (
  SFUNC = dp_agg.quantile_transfn, STYPE = dp_agg.quantile_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.quantile_final, COMBINEFUNC = dp_agg.quantile_combine, PARALLEL = SAFE
);
UPDATE pg_catalog.pg_proc SET provolatile = 'v'
WHERE pronamespace = '@extschema@'::regnamespace
  AND proname IN ('dp_percentile', 'dp_median') AND prokind = 'a';

-- ===========================================================================
-- dp_select(value, candidates, epsilon): the private mode among candidates
-- given in the query; dp_select(value, weight, lower, upper, candidates,
-- epsilon): the candidate with the largest total of clamped weights.
-- Permute-and-flip, sampled exactly; any type with an equality operator.
-- ===========================================================================
CREATE TYPE dp_agg.selection_state;
CREATE FUNCTION dp_agg.selection_state_in(cstring) RETURNS dp_agg.selection_state
  AS 'MODULE_PATHNAME', 'dp_selection_state_in' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.selection_state_out(dp_agg.selection_state) RETURNS cstring
  AS 'MODULE_PATHNAME', 'dp_selection_state_out' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE TYPE dp_agg.selection_state (
  INPUT = dp_agg.selection_state_in, OUTPUT = dp_agg.selection_state_out,
  INTERNALLENGTH = VARIABLE, ALIGNMENT = double, STORAGE = plain
);
CREATE FUNCTION dp_agg.select_transfn(dp_agg.selection_state, anyelement, anyarray, float8)
  RETURNS dp_agg.selection_state AS 'MODULE_PATHNAME', 'dp_select_transfn'
  LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.select_transfn(dp_agg.selection_state, anyelement, float8, float8, float8,
                                      anyarray, float8)
  RETURNS dp_agg.selection_state AS 'MODULE_PATHNAME', 'dp_select_transfn'
  LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.select_combine(dp_agg.selection_state, dp_agg.selection_state)
  RETURNS dp_agg.selection_state AS 'MODULE_PATHNAME', 'dp_select_combine'
  LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
-- FINALFUNC_EXTRA: the extra (NULL) arguments only resolve the result type.
CREATE FUNCTION dp_agg.select_final(dp_agg.selection_state, anyelement, anyarray, float8)
  RETURNS anyelement AS 'MODULE_PATHNAME', 'dp_select_final' LANGUAGE C VOLATILE PARALLEL SAFE;
CREATE FUNCTION dp_agg.select_final(dp_agg.selection_state, anyelement, float8, float8, float8,
                                    anyarray, float8)
  RETURNS anyelement AS 'MODULE_PATHNAME', 'dp_select_final' LANGUAGE C VOLATILE PARALLEL SAFE;
REVOKE ALL ON FUNCTION
  dp_agg.select_transfn(dp_agg.selection_state, anyelement, anyarray, float8),
  dp_agg.select_transfn(dp_agg.selection_state, anyelement, float8, float8, float8, anyarray, float8),
  dp_agg.select_combine(dp_agg.selection_state, dp_agg.selection_state),
  dp_agg.select_final(dp_agg.selection_state, anyelement, anyarray, float8),
  dp_agg.select_final(dp_agg.selection_state, anyelement, float8, float8, float8, anyarray, float8)
FROM PUBLIC;

CREATE AGGREGATE dp_select(anyelement, anyarray, float8) (
  SFUNC = dp_agg.select_transfn, STYPE = dp_agg.selection_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.select_final, FINALFUNC_EXTRA, COMBINEFUNC = dp_agg.select_combine,
  PARALLEL = SAFE
);
CREATE AGGREGATE dp_select(anyelement, float8, float8, float8, anyarray, float8) (
  SFUNC = dp_agg.select_transfn, STYPE = dp_agg.selection_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.select_final, FINALFUNC_EXTRA, COMBINEFUNC = dp_agg.select_combine,
  PARALLEL = SAFE
);
UPDATE pg_catalog.pg_proc SET provolatile = 'v'
WHERE pronamespace = '@extschema@'::regnamespace AND proname = 'dp_select' AND prokind = 'a';

-- ---------------------------------------------------------------------------
-- Restricted analysts and protected tables.
--
--   SECURITY LABEL FOR dp_agg ON TABLE t IS 'protected';
--   SECURITY LABEL FOR dp_agg ON ROLE r IS 'restricted';
--
-- A restricted role holds no SELECT on protected tables (dp_agg refuses a
-- label or GRANT that would break this); each query that passes dp_agg's rules
-- is given access as the table owner. Without the preloaded library nothing
-- grants it, so a restricted role then reads nothing.
-- ---------------------------------------------------------------------------

-- dp_agg.group_selection(epsilon, delta): true for a group whose noisy row
-- count passes the (epsilon, delta) partition-selection threshold. dp_agg puts
-- it into HAVING when a restricted role groups protected rows.
CREATE FUNCTION dp_agg.group_selection_transfn(dp_agg.aggregate_state, float8, float8)
  RETURNS dp_agg.aggregate_state AS 'MODULE_PATHNAME', 'dp_group_selection_transfn'
  LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.group_selection_final(dp_agg.aggregate_state)
  RETURNS boolean AS 'MODULE_PATHNAME', 'dp_group_selection_final'
  LANGUAGE C VOLATILE PARALLEL SAFE;
REVOKE ALL ON FUNCTION
  dp_agg.group_selection_transfn(dp_agg.aggregate_state, float8, float8),
  dp_agg.group_selection_final(dp_agg.aggregate_state)
FROM PUBLIC;
CREATE AGGREGATE dp_agg.group_selection(float8, float8) (
  SFUNC = dp_agg.group_selection_transfn, STYPE = dp_agg.aggregate_state,
  INITCOND = 'uninitialized', FINALFUNC = dp_agg.group_selection_final,
  COMBINEFUNC = dp_agg.combine, PARALLEL = SAFE
);
UPDATE pg_catalog.pg_proc SET provolatile = 'v'
WHERE pronamespace = 'dp_agg'::regnamespace AND proname = 'group_selection' AND prokind = 'a';

-- Convenience functions beside the labels. They run as the extension owner
-- so that members of dp_agg.admin_role need not own the tables; the label
-- provider itself checks that the session user is an administrator.
CREATE FUNCTION dp_agg.set_label(object_kind text, object_name text, new_label text)
RETURNS void LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF object_kind NOT IN ('TABLE', 'ROLE') THEN
    RAISE EXCEPTION 'dp_agg labels only tables and roles' USING ERRCODE = 'invalid_parameter_value';
  END IF;
  EXECUTE format('SECURITY LABEL FOR dp_agg ON %s %s IS %s', object_kind, object_name,
                 coalesce(quote_literal(new_label), 'NULL'));
END $$;
REVOKE ALL ON FUNCTION dp_agg.set_label(text, text, text) FROM PUBLIC;
CREATE FUNCTION dp_agg.protect_table(target regclass) RETURNS void
LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$ SELECT dp_agg.set_label('TABLE', target::text, 'protected') $$;
CREATE FUNCTION dp_agg.unprotect_table(target regclass) RETURNS void
LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$ SELECT dp_agg.set_label('TABLE', target::text, NULL) $$;
CREATE FUNCTION dp_agg.restrict_role(target regrole) RETURNS void
LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$ SELECT dp_agg.set_label('ROLE', target::text, 'restricted') $$;
CREATE FUNCTION dp_agg.unrestrict_role(target regrole) RETURNS void
LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$ SELECT dp_agg.set_label('ROLE', target::text, NULL) $$;
-- EXECUTE stays with PUBLIC: the label provider refuses everyone but
-- superusers and members of dp_agg.admin_role (judged by the session user).

CREATE VIEW dp_agg.protected_tables AS
  SELECT l.objoid::regclass AS table_name
  FROM pg_catalog.pg_seclabel l
  WHERE l.provider = 'dp_agg' AND l.classoid = 'pg_catalog.pg_class'::regclass
    AND l.objsubid = 0 AND l.label = 'protected';
CREATE VIEW dp_agg.restricted_roles AS
  SELECT l.objoid::regrole AS role_name
  FROM pg_catalog.pg_shseclabel l
  WHERE l.provider = 'dp_agg' AND l.classoid = 'pg_catalog.pg_authid'::regclass
    AND l.label = 'restricted';
GRANT SELECT ON dp_agg.protected_tables, dp_agg.restricted_roles TO PUBLIC;
