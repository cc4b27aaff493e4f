-- Query identifiers at no cost to other statements (issue 31, row 13): the
-- preloaded library no longer makes PostgreSQL compute every statement's
-- identifier (EnableQueryId); with compute_query_id = auto it computes it
-- itself, exactly as PostgreSQL does, for the statements it may charge or
-- judge. The ledger's query_id is the one PostgreSQL computes with
-- compute_query_id = on or pg_stat_statements loaded.
\set VERBOSITY default

SET client_min_messages = warning;
DROP ROLE IF EXISTS regress_query_ids;
DROP SCHEMA IF EXISTS query_ids CASCADE;
RESET client_min_messages;
CREATE ROLE regress_query_ids;
CREATE SCHEMA query_ids;
CREATE TABLE query_ids.t AS SELECT g AS x FROM generate_series(1, 100) g;
GRANT USAGE ON SCHEMA query_ids TO regress_query_ids;
GRANT SELECT ON query_ids.t TO regress_query_ids;
-- A private aggregate run by a function the statement calls.
CREATE FUNCTION query_ids.wrapped(epsilon float8) RETURNS bigint LANGUAGE plpgsql AS
$$ BEGIN RETURN (SELECT dp_count(x, epsilon) FROM query_ids.t); END $$;
CREATE FUNCTION query_ids.last_charge_id() RETURNS bigint LANGUAGE sql AS
$$ SELECT query_id FROM dp_agg.ledger_entry WHERE kind = 'charge' ORDER BY seq DESC LIMIT 1 $$;
SELECT dp_agg.set_budget('regress_query_ids', 10, 1e-6);
SHOW compute_query_id;

-- 1. A private query: the identifier dp_agg computes (auto) is PostgreSQL's
-- own (on), for the same shape with other constants.
SET SESSION AUTHORIZATION regress_query_ids;
SELECT dp_count(x, 0.1) IS NOT NULL AS answered FROM query_ids.t;
RESET SESSION AUTHORIZATION;
SELECT query_ids.last_charge_id() AS direct_auto \gset
SET compute_query_id = on;
SET SESSION AUTHORIZATION regress_query_ids;
SELECT dp_count(x, 0.2) IS NOT NULL AS answered FROM query_ids.t;
RESET SESSION AUTHORIZATION;
RESET compute_query_id;
SELECT :direct_auto IS NOT NULL AS has_id, query_ids.last_charge_id() = :direct_auto AS postgresql_id;

-- 2. A function's private query is charged with the statement's identifier
-- (the top-level statement's, as pg_stat_activity shows it), in both modes.
SET SESSION AUTHORIZATION regress_query_ids;
SELECT query_ids.wrapped(0.1) IS NOT NULL AS answered;
RESET SESSION AUTHORIZATION;
SELECT query_ids.last_charge_id() AS wrapped_auto \gset
SET compute_query_id = on;
SET SESSION AUTHORIZATION regress_query_ids;
SELECT query_ids.wrapped(0.2) IS NOT NULL AS answered;
RESET SESSION AUTHORIZATION;
RESET compute_query_id;
SELECT :wrapped_auto IS NOT NULL AS has_id, query_ids.last_charge_id() = :wrapped_auto AS postgresql_id,
       :wrapped_auto <> :direct_auto AS own_shape;

-- 3. compute_query_id = off: none is computed, the charge has none.
SET compute_query_id = off;
SET SESSION AUTHORIZATION regress_query_ids;
SELECT dp_count(x, 0.1) IS NOT NULL AS answered FROM query_ids.t;
RESET SESSION AUTHORIZATION;
RESET compute_query_id;
SELECT query_ids.last_charge_id() IS NULL AS no_id;

-- 4. EXPLAIN VERBOSE shows which statements get one: a private query
-- (identifier lines counted: its value depends on table OIDs), not a
-- statement that cannot be charged.
EXPLAIN (VERBOSE, COSTS OFF) SELECT dp_count(x, 0.1) FROM query_ids.t \g | grep -c '^ *Query Identifier: '
EXPLAIN (VERBOSE, COSTS OFF) SELECT x FROM query_ids.t WHERE x = 1;
EXPLAIN (VERBOSE, COSTS OFF) SELECT count(*), max(x) FROM query_ids.t;
-- A function that is not PostgreSQL's may run private queries: identified.
EXPLAIN (VERBOSE, COSTS OFF) SELECT query_ids.wrapped(0.1) \g | grep -c '^ *Query Identifier: '
SET compute_query_id = on;
EXPLAIN (VERBOSE, COSTS OFF) SELECT x FROM query_ids.t WHERE x = 1 \g | grep -c '^ *Query Identifier: '
RESET compute_query_id;

-- 5. Found by review: a built-in function on a value of a type that is not
-- PostgreSQL's own calls functions that type chooses (to_json its cast to
-- json), which may run a private query. The statement is identified, and the
-- charge carries its identifier, not the one of the statement the cast runs.
CREATE TYPE query_ids.mood AS ENUM ('calm');
CREATE TABLE query_ids.moods AS SELECT 'calm'::query_ids.mood AS m;
GRANT SELECT ON query_ids.moods TO regress_query_ids;
CREATE FUNCTION query_ids.mood_json(query_ids.mood) RETURNS json LANGUAGE plpgsql AS
$$ BEGIN RETURN to_json(query_ids.wrapped(0.1)); END $$;
CREATE CAST (query_ids.mood AS json) WITH FUNCTION query_ids.mood_json(query_ids.mood);
SET SESSION AUTHORIZATION regress_query_ids;
SELECT to_json(m) IS NOT NULL AS answered FROM query_ids.moods;
RESET SESSION AUTHORIZATION;
SELECT query_ids.last_charge_id() AS cast_auto \gset
SET compute_query_id = on;
SET SESSION AUTHORIZATION regress_query_ids;
SELECT to_json(m) IS NOT NULL AS answered FROM query_ids.moods;
RESET SESSION AUTHORIZATION;
RESET compute_query_id;
SELECT :cast_auto IS NOT NULL AS has_id, query_ids.last_charge_id() = :cast_auto AS postgresql_id;
EXPLAIN (VERBOSE, COSTS OFF) SELECT to_json(m) FROM query_ids.moods \g | grep -c '^ *Query Identifier: '

-- The ledger stays verifiable.
SELECT ok FROM dp_agg.verify_ledger();
