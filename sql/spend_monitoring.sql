-- Spend you can watch (issue 28, finding 4): every charge records its query
-- identifier without pg_stat_statements, dp_agg.spend_by_query sums the
-- spending per role, query shape and day for administrators, and a charge
-- that leaves a role less than dp_agg.budget_alert_fraction of a budget
-- total gives the analyst a NOTICE (what is left, which the role may read
-- anyway) and the server log a LOG line when it crosses the threshold.
\set VERBOSITY default

SET client_min_messages = warning;
DROP ROLE IF EXISTS regress_spend_analyst;
DROP SCHEMA IF EXISTS spend_monitoring CASCADE;
RESET client_min_messages;
CREATE ROLE regress_spend_analyst LOGIN;
SELECT current_user AS superuser_name \gset
CREATE SCHEMA spend_monitoring;
CREATE TABLE spend_monitoring.t AS
  SELECT g AS x, g % 3 AS k FROM generate_series(1, 300) g;
GRANT USAGE ON SCHEMA spend_monitoring TO regress_spend_analyst;
GRANT SELECT ON spend_monitoring.t TO regress_spend_analyst;
SELECT dp_agg.set_budget('regress_spend_analyst', 2, 1e-6);

-- 1. query_id is computed without pg_stat_statements (with compute_query_id
-- = auto, the default, dp_agg computes it for the statements it may charge:
-- suite query_ids) and recorded with every charge: the same shape with other
-- constants shares one identifier, another shape has its own.
SHOW compute_query_id;
SELECT count(*) AS pg_stat_statements_loaded FROM pg_extension WHERE extname = 'pg_stat_statements';
SET SESSION AUTHORIZATION regress_spend_analyst;
SELECT dp_count(x, 0.25) IS NOT NULL AS answered FROM spend_monitoring.t;
SELECT dp_count(x, 0.125) IS NOT NULL AS answered FROM spend_monitoring.t;
SELECT count(*) AS groups FROM (SELECT k, dp_sum(x, 0, 300, 0.5) FROM spend_monitoring.t GROUP BY k) g;
-- The analyst reads their own rows, identifiers included.
SELECT count(*) AS charges, count(query_id) AS with_query_id,
       count(DISTINCT query_id) AS shapes
FROM dp_agg.ledger WHERE kind = 'charge';
-- Administrators' view only: an analyst sees no rows.
SELECT count(*) AS rows_seen_by_analyst FROM dp_agg.spend_by_query;
RESET SESSION AUTHORIZATION;

-- 2. dp_agg.spend_by_query: per role, query shape and day, the number of
-- charges and what they spent, with the text of the latest one.
SELECT role, query_id IS NOT NULL AS has_query_id, day = current_date AS today, charges,
       epsilon, delta, rho, zcdp_delta, sample_query, first_charge <= last_charge AS ordered
FROM dp_agg.spend_by_query WHERE role = 'regress_spend_analyst'
ORDER BY epsilon;
-- The identifiers are pg_stat_statements' (the queries' own, as
-- pg_stat_activity shows them): a superuser's query of the same shape has it.
SELECT dp_count(x, 0.5) IS NOT NULL AS answered FROM spend_monitoring.t;
SELECT (SELECT query_id FROM dp_agg.ledger_entry WHERE kind = 'charge'
        ORDER BY seq DESC LIMIT 1)
       = (SELECT query_id FROM dp_agg.spend_by_query
          WHERE role = 'regress_spend_analyst' AND charges = 2) AS same_shape_same_id;

-- 3. The alert. A superuser's setting (default 0.1): the analyst cannot turn
-- the administrator's alert off.
SHOW dp_agg.budget_alert_fraction;
SET SESSION AUTHORIZATION regress_spend_analyst;
SET dp_agg.budget_alert_fraction = 0;
\echo :LAST_ERROR_SQLSTATE
-- Spent 0.875 of 2 so far: 0.9 more leaves 0.225, above 0.2: quiet.
SELECT dp_count(x, 0.9) IS NOT NULL AS answered FROM spend_monitoring.t;
-- 0.125 more leaves 0.1 < 0.2: a NOTICE with what is left, and (seen here
-- with client_min_messages = log) the LOG line for the administrator, since
-- this charge crossed the threshold.
SET client_min_messages = log;
SELECT dp_count(x, 0.125) IS NOT NULL AS answered FROM spend_monitoring.t;
-- Below it, every charge says so; the LOG line came once, at the crossing.
SELECT dp_count(x, 0.0625) IS NOT NULL AS answered FROM spend_monitoring.t;
RESET client_min_messages;
-- What the NOTICE said is what the role reads itself.
SELECT epsilon, delta FROM dp_agg.remaining_budget();
-- delta: a charge that spends it (here all of it) is alerted for delta;
-- later pure charges say nothing about delta.
SELECT dp_count(x, 0.01, 1e-6) IS NOT NULL AS answered FROM spend_monitoring.t;
RESET SESSION AUTHORIZATION;
-- A zCDP budget is alerted in rho.
SELECT dp_agg.set_budget_zcdp('regress_spend_analyst', 0.01);
SELECT dp_agg.reset_spent('regress_spend_analyst');
SET SESSION AUTHORIZATION regress_spend_analyst;
SELECT dp_count(x, 0.1) IS NOT NULL AS answered FROM spend_monitoring.t;
SELECT dp_count(x, 0.1) IS NOT NULL AS answered FROM spend_monitoring.t;
RESET SESSION AUTHORIZATION;
-- 0 turns it off (here for the analyst's role, as an administrator would).
ALTER ROLE regress_spend_analyst SET dp_agg.budget_alert_fraction = 0;
SELECT dp_agg.reset_spent('regress_spend_analyst');
\c - regress_spend_analyst
SHOW dp_agg.budget_alert_fraction;
SELECT dp_count(x, 0.14) IS NOT NULL AS answered FROM spend_monitoring.t;
\c - :superuser_name
ALTER ROLE regress_spend_analyst RESET dp_agg.budget_alert_fraction;

-- The ledger stays verifiable.
SELECT ok FROM dp_agg.verify_ledger();
