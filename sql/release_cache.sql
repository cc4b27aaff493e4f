-- The release cache (issue 27, item 3; src/pg/release_cache.h): the same
-- question, asked again by the same role within the same period of
-- dp_agg.release_cache_period, is answered with the rows released the first
-- time, free, and the ledger records the reuse (kind 'reused', epsilon 0).
-- Whether an answer is reused depends only on the role, the query, its
-- parameters, the key's settings and the clock, never on the data: a write
-- to the table in between changes nothing the analyst sees.
--
-- Which releases are reused is asserted through the ledger (its kinds, in
-- order) and the budget, which are exact. Answers are compared as text,
-- never printed. A reused answer equals the first with probability 1; two
-- fresh draws may be equal too, so equality is never the only evidence of
-- a reuse, and inequality is never asserted.
--
-- The test cluster runs with dp_agg.release_cache_period = 0; each part
-- sets the period it tests. Periods are aligned to the Unix epoch: the parts
-- that need two queries in one period use a 366-day period and first wait,
-- if need be, until at least two minutes of it are left (so no boundary can
-- fall between their queries).
\set VERBOSITY default

-- ---------------------------------------------------------------------------
-- Fixtures (superuser)
-- ---------------------------------------------------------------------------
SET client_min_messages = warning;
DROP SCHEMA IF EXISTS rc CASCADE;
DROP ROLE IF EXISTS regress_rc_analyst;
DROP ROLE IF EXISTS regress_rc_other;
DROP ROLE IF EXISTS regress_rc_helper;
RESET client_min_messages;
-- What an earlier run left in this database's cache (none in a fresh one).
SELECT dp_agg.clear_release_cache() >= 0 AS cleared;

CREATE SCHEMA rc;
-- 3000 visits, 1000 per region; age = id % 90.
CREATE TABLE rc.visits (id int, region text, age int);
INSERT INTO rc.visits
SELECT g, (ARRAY['east', 'north', 'south'])[g % 3 + 1], g % 90 FROM generate_series(1, 3000) g;
CREATE ROLE regress_rc_analyst LOGIN;
CREATE ROLE regress_rc_other LOGIN;
CREATE ROLE regress_rc_helper;  -- not restricted: a current user other than the session user
GRANT USAGE ON SCHEMA rc TO regress_rc_analyst, regress_rc_other, regress_rc_helper;
GRANT SELECT ON rc.visits TO regress_rc_helper;
SELECT dp_agg.protect_table('rc.visits');
SELECT dp_agg.restrict_role('regress_rc_analyst');
SELECT dp_agg.restrict_role('regress_rc_other');
SELECT dp_agg.set_budget('regress_rc_analyst', 100, 1e-3);
SELECT dp_agg.set_budget('regress_rc_other', 100, 1e-3);
-- The session user's ledger kinds after `mark`, in order.
CREATE FUNCTION rc.kinds(mark bigint) RETURNS text LANGUAGE sql AS
$$ SELECT coalesce(string_agg(kind, ',' ORDER BY id), '(none)') FROM dp_agg.ledger
   WHERE id > mark AND role = session_user $$;
CREATE FUNCTION rc.mark() RETURNS bigint LANGUAGE sql AS
$$ SELECT coalesce(max(id), 0) FROM dp_agg.ledger $$;
CREATE FUNCTION rc.spent() RETURNS numeric LANGUAGE sql AS
$$ SELECT epsilon_spent FROM dp_agg.budgets WHERE role = session_user $$;
GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA rc TO PUBLIC;

-- At least two minutes left in the current 366-day period (31,622,400 s).
DO $$
BEGIN
  WHILE 31622400 - (floor(extract(epoch FROM clock_timestamp()))::bigint % 31622400) < 120 LOOP
    PERFORM pg_sleep(1);
  END LOOP;
END $$;

-- ---------------------------------------------------------------------------
-- 1. The same question twice in a period: identical answers, one charge, one
-- 'reused' row of epsilon 0. Spelling, spacing, comments and the case of
-- keywords do not make another question.
-- ---------------------------------------------------------------------------
SET SESSION AUTHORIZATION regress_rc_analyst;
SET dp_agg.release_cache_period = '366d';
SELECT rc.mark() AS mark, rc.spent() AS spent \gset
SELECT dp_count(id, 0.5) AS c, dp_sum(age, 0, 100, 0.5) AS s FROM rc.visits \gset first_
SELECT dp_count(id, 0.5) AS c, dp_sum(age, 0, 100, 0.5) AS s FROM rc.visits \gset second_
select   DP_COUNT(id, 0.5) as c,dp_sum(age,0,100,0.5) AS s   -- the same question
  from RC.VISITS \gset third_
SELECT :first_c = :second_c AND :first_s = :second_s AS same_answer,
       :first_c = :third_c AND :first_s = :third_s AS same_answer_respelled;
SELECT rc.kinds(:mark) AS ledger, rc.spent() - :spent AS charged;
SELECT epsilon, delta, rho, aggregates FROM dp_agg.ledger WHERE id > :mark AND kind = 'reused'
ORDER BY id LIMIT 1;

-- A grouped question (group selection included): the same rows.
SELECT string_agg(region || ':' || c, ',' ORDER BY region) AS v
FROM (SELECT region, dp_count(id, 0.5) AS c FROM rc.visits GROUP BY region) q \gset first_
SELECT string_agg(region || ':' || c, ',' ORDER BY region) AS v
FROM (SELECT region, dp_count(id, 0.5) AS c FROM rc.visits GROUP BY region) q \gset second_
SELECT :'first_v' = :'second_v' AS same_rows;
RESET SESSION AUTHORIZATION;

-- ---------------------------------------------------------------------------
-- 2. A write to the table inside the period changes nothing the analyst
-- sees: the same answers, no charge.
-- ---------------------------------------------------------------------------
INSERT INTO rc.visits VALUES (9001, 'north', 50), (9002, 'west', 60);
DELETE FROM rc.visits WHERE id IN (1, 2, 3);
SET SESSION AUTHORIZATION regress_rc_analyst;
SELECT rc.mark() AS mark, rc.spent() AS spent \gset
SELECT dp_count(id, 0.5) AS c, dp_sum(age, 0, 100, 0.5) AS s FROM rc.visits \gset after_write_
SELECT string_agg(region || ':' || c, ',' ORDER BY region) AS v
FROM (SELECT region, dp_count(id, 0.5) AS c FROM rc.visits GROUP BY region) q \gset after_write_
SELECT :first_c = :after_write_c AND :first_s = :after_write_s AND :'first_v' = :'after_write_v'
       AS unchanged_after_write;
SELECT rc.kinds(:mark) AS ledger, rc.spent() - :spent AS charged;
-- ROLLBACK undoes neither the ledger nor the stored release.
BEGIN;
SELECT dp_count(id, 0.25) AS c FROM rc.visits \gset in_rollback_
ROLLBACK;
SELECT dp_count(id, 0.25) AS c FROM rc.visits \gset after_rollback_
SELECT :in_rollback_c = :after_rollback_c AS kept_through_rollback;
SELECT rc.kinds(:mark) AS ledger;
RESET SESSION AUTHORIZATION;

-- ---------------------------------------------------------------------------
-- 3. Another role, another current user, another parameter value or another
-- meaning-changing setting is another question: its own charged release.
-- ---------------------------------------------------------------------------
SET SESSION AUTHORIZATION regress_rc_other;
SET dp_agg.release_cache_period = '366d';
SELECT rc.mark() AS mark \gset
SELECT dp_count(id, 0.5) AS c, dp_sum(age, 0, 100, 0.5) AS s FROM rc.visits \gset other_
SELECT dp_count(id, 0.5) AS c, dp_sum(age, 0, 100, 0.5) AS s FROM rc.visits \gset other_again_
SELECT :other_c = :other_again_c AND :other_s = :other_again_s AS own_release_reused;
SELECT rc.kinds(:mark) AS other_ledger;
RESET SESSION AUTHORIZATION;
-- (a superuser, unrestricted, through SET ROLE: the budget is the session
-- user's, the current user is part of the question)
SET dp_agg.release_cache_period = '366d';
SELECT rc.mark() AS mark \gset
SELECT dp_count(id, 0.5) FROM rc.visits \gset
SET ROLE regress_rc_helper;
SELECT dp_count(id, 0.5) FROM rc.visits \gset
RESET ROLE;
SELECT dp_count(id, 0.5) FROM rc.visits \gset
SELECT rc.kinds(:mark) AS superuser_then_helper_then_superuser;

SET SESSION AUTHORIZATION regress_rc_analyst;
SELECT rc.mark() AS mark \gset
-- Parameters: the values (not the plan) decide. Custom plans first, then
-- generic ones: the same two questions, reused.
PREPARE older_than(int) AS SELECT dp_count(id, 0.5) FROM rc.visits WHERE age > $1;
EXECUTE older_than(10) \gset p10_
EXECUTE older_than(10) \gset p10_again_
EXECUTE older_than(20) \gset p20_
SET plan_cache_mode = force_generic_plan;
EXECUTE older_than(10) \gset p10_generic_
EXECUTE older_than(20) \gset p20_generic_
RESET plan_cache_mode;
SELECT :p10_dp_count = :p10_again_dp_count AND :p10_dp_count = :p10_generic_dp_count
       AND :p20_dp_count = :p20_generic_dp_count AS same_answers_per_value;
SELECT rc.kinds(:mark) AS ledger;
-- A setting that changes what the query computes (the time zone of
-- date_trunc on a timestamptz, for instance) is part of the question.
SELECT rc.mark() AS mark \gset
SELECT dp_count(id, 0.5) FROM rc.visits \gset
SET TimeZone = 'Pacific/Chatham';
SELECT dp_count(id, 0.5) FROM rc.visits \gset
RESET TimeZone;
SELECT dp_count(id, 0.5) FROM rc.visits \gset
SELECT rc.kinds(:mark) AS reused_then_new_zone_then_reused;

-- ---------------------------------------------------------------------------
-- 4. A SCROLL cursor over a reused answer reads those rows, forward,
-- backward and after rewinds.
-- ---------------------------------------------------------------------------
SELECT rc.mark() AS mark \gset
BEGIN;
DECLARE c SCROLL CURSOR FOR
  SELECT string_agg(region || ':' || c, ',' ORDER BY region) AS v
  FROM (SELECT region, dp_count(id, 0.5) AS c FROM rc.visits GROUP BY region) q;
FETCH FIRST FROM c \gset cursor_first_
MOVE ABSOLUTE 0 IN c;
FETCH NEXT FROM c \gset cursor_rewound_
MOVE FORWARD ALL IN c;
FETCH PRIOR FROM c \gset cursor_backward_
COMMIT;
SELECT :'cursor_first_v' = :'first_v' AND :'cursor_rewound_v' = :'first_v'
       AND :'cursor_backward_v' = :'first_v' AS cursor_reads_the_stored_rows;
-- and a grouped cursor, read both ways: every group once per direction
BEGIN;
DECLARE g SCROLL CURSOR FOR
  SELECT region, dp_count(id, 0.5) AS c FROM rc.visits GROUP BY region;
MOVE FORWARD ALL IN g;
MOVE BACKWARD ALL IN g;
COMMIT;
SELECT rc.kinds(:mark) AS ledger;

-- ---------------------------------------------------------------------------
-- 5. dp_agg.query_cost of a question that would be reused: 0, "reused".
-- ---------------------------------------------------------------------------
SELECT epsilon, delta, rho, aggregates
FROM dp_agg.query_cost('SELECT dp_count(id, 0.5) AS c, dp_sum(age, 0, 100, 0.5) AS s FROM rc.visits');
SELECT epsilon, aggregates
FROM dp_agg.query_cost('SELECT dp_count(id, 0.75) FROM rc.visits');

-- ---------------------------------------------------------------------------
-- 6. Not cached: a period of 0, a probe that releases nothing (LIMIT 0),
-- and EXPLAIN ANALYZE.
-- ---------------------------------------------------------------------------
SELECT rc.mark() AS mark \gset
SET dp_agg.release_cache_period = 0;
SELECT dp_count(id, 0.5) FROM rc.visits \gset
SELECT dp_count(id, 0.5) FROM rc.visits \gset
SET dp_agg.release_cache_period = '366d';
SELECT * FROM (SELECT dp_count(id, 0.5) FROM rc.visits) q LIMIT 0;
SELECT rc.kinds(:mark) AS period_0_twice_then_limit_0;
RESET SESSION AUTHORIZATION;
SELECT rc.mark() AS mark \gset
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
  SELECT dp_count(id, 0.5) FROM rc.visits;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
  SELECT dp_count(id, 0.5) FROM rc.visits;
SELECT rc.kinds(:mark) AS explain_analyze_twice;
-- plain EXPLAIN shows the node at the top of a private query
EXPLAIN (COSTS OFF) SELECT region, dp_count(id, 0.5) FROM rc.visits GROUP BY region;

-- ---------------------------------------------------------------------------
-- 7. A period of 1 s: after its boundary, a new charged release.
-- ---------------------------------------------------------------------------
SET SESSION AUTHORIZATION regress_rc_analyst;
SET dp_agg.release_cache_period = 1;
SELECT rc.mark() AS mark \gset
SELECT dp_count(id, 0.5) AS c FROM rc.visits WHERE age < 45 \gset
SELECT pg_sleep(1.1);
SELECT dp_count(id, 0.5) AS c FROM rc.visits WHERE age < 45 \gset
SELECT rc.kinds(:mark) AS across_a_boundary;
SET dp_agg.release_cache_period = '366d';
RESET SESSION AUTHORIZATION;

-- ---------------------------------------------------------------------------
-- 8. Budgets: a reuse needs a budget (a role without one is refused as its
-- charge would be), but not room in it.
-- ---------------------------------------------------------------------------
SELECT dp_agg.set_budget('regress_rc_other', 0.9, 1e-3);  -- it has spent 1.0
SET SESSION AUTHORIZATION regress_rc_other;
SELECT rc.mark() AS mark \gset
SELECT dp_count(id, 0.5) AS c, dp_sum(age, 0, 100, 0.5) AS s FROM rc.visits \gset exhausted_
SELECT :exhausted_c = :other_c AND :exhausted_s = :other_s AS reused_with_no_budget_left;
SELECT dp_count(id, 0.125) FROM rc.visits;  -- a new question: refused
SELECT rc.kinds(:mark) AS ledger;
RESET SESSION AUTHORIZATION;
SELECT dp_agg.revoke_budget('regress_rc_other');
SET SESSION AUTHORIZATION regress_rc_other;
SELECT dp_count(id, 0.5) AS c, dp_sum(age, 0, 100, 0.5) AS s FROM rc.visits;
RESET SESSION AUTHORIZATION;

-- ---------------------------------------------------------------------------
-- 9. Administrators see the cache (everyone else only their own entries)
-- and clear it.
-- ---------------------------------------------------------------------------
SELECT role, current_user_name, left(regexp_replace(query, '\s+', ' ', 'g'), 70) AS query,
       rows, times_reused > 0 AS reused,
       period_end - period_start AS period, stored_at BETWEEN period_start AND period_end AS in_period
FROM dp_agg.release_cache
WHERE role LIKE 'regress_rc_%' AND period_end - period_start = interval '366 days'
ORDER BY role, query, reused;
SET SESSION AUTHORIZATION regress_rc_other;
SELECT DISTINCT role FROM dp_agg.release_cache;
SELECT dp_agg.clear_release_cache();
RESET SESSION AUTHORIZATION;
SELECT dp_agg.clear_release_cache('regress_rc_other') AS removed_of_other;
SELECT count(*) AS entries_of_other FROM dp_agg.release_cache WHERE role = 'regress_rc_other';
SELECT count(*) > 0 AS analyst_entries_kept
FROM dp_agg.release_cache WHERE role = 'regress_rc_analyst';
-- After clearing, a question is released again, and charged.
SELECT dp_agg.clear_release_cache('regress_rc_analyst') > 0 AS cleared_analyst;
SET SESSION AUTHORIZATION regress_rc_analyst;
SELECT rc.mark() AS mark \gset
SELECT dp_count(id, 0.5) AS c, dp_sum(age, 0, 100, 0.5) AS s FROM rc.visits \gset
SELECT rc.kinds(:mark) AS released_again;
RESET SESSION AUTHORIZATION;

-- ---------------------------------------------------------------------------
-- 10. dp_agg.release_cache_max_entries bounds each role's entries: the
-- oldest go first, and an evicted question is released again, charged.
-- ---------------------------------------------------------------------------
SELECT dp_agg.clear_release_cache('regress_rc_analyst') >= 0 AS cleared;
SET dp_agg.release_cache_max_entries = 2;  -- (kept by the session below)
SET SESSION AUTHORIZATION regress_rc_analyst;
SELECT rc.mark() AS mark \gset
SELECT dp_count(id, 0.5) FROM rc.visits WHERE age < 10 \gset
SELECT dp_count(id, 0.5) FROM rc.visits WHERE age < 20 \gset
SELECT dp_count(id, 0.5) FROM rc.visits WHERE age < 30 \gset
SELECT dp_count(id, 0.5) FROM rc.visits WHERE age < 30 \gset
SELECT dp_count(id, 0.5) FROM rc.visits WHERE age < 20 \gset
SELECT dp_count(id, 0.5) FROM rc.visits WHERE age < 10 \gset
SELECT rc.kinds(:mark) AS third_evicts_the_first;
SELECT count(*) AS entries FROM dp_agg.release_cache;
RESET SESSION AUTHORIZATION;
RESET dp_agg.release_cache_max_entries;

-- ---------------------------------------------------------------------------
-- 11. Custom settings are part of the key (review of issue 27): a row
-- security policy that tells the users of one pooled role apart by
-- current_setting('app.tenant') (PostgREST's request.jwt.claims, a
-- multi-tenant application) must not hand one tenant's released answer to
-- another. Tenant a sees 3000 rows, tenant b none; the role is the same.
-- ---------------------------------------------------------------------------
SELECT dp_agg.clear_release_cache('regress_rc_analyst') >= 0 AS cleared;
CREATE TABLE rc.tenant_visits AS SELECT id, 'a'::text AS tenant FROM rc.visits;
ALTER TABLE rc.tenant_visits ENABLE ROW LEVEL SECURITY;
CREATE POLICY by_tenant ON rc.tenant_visits FOR SELECT
  USING (tenant = current_setting('app.tenant', true));
SELECT dp_agg.protect_table('rc.tenant_visits');
-- A restricted role may not change app.tenant: the pooling application
-- sets it, then switches to the role.
SELECT rc.mark() AS mark \gset
SET app.tenant = 'a';
SET SESSION AUTHORIZATION regress_rc_analyst;
SELECT dp_count(id, 1.0) AS c FROM rc.tenant_visits \gset a_
RESET SESSION AUTHORIZATION;
SET app.tenant = 'b';
SET SESSION AUTHORIZATION regress_rc_analyst;
SELECT dp_count(id, 1.0) AS c FROM rc.tenant_visits \gset b_
RESET SESSION AUTHORIZATION;
SET app.tenant = 'a';
SET SESSION AUTHORIZATION regress_rc_analyst;
SELECT dp_count(id, 1.0) AS c FROM rc.tenant_visits \gset again_
SELECT rc.kinds(:mark) AS two_charges_one_reuse;
RESET SESSION AUTHORIZATION;
RESET app.tenant;
-- Laplace noise of scale 1: |noise| > 20 with probability e^-20 < 1e-8.
SELECT :a_c > 2900 AS tenant_a_sees_its_rows, :b_c < 100 AS tenant_b_gets_its_own_answer,
       :again_c = :a_c AS tenant_a_reuses_its_answer;

-- ---------------------------------------------------------------------------
-- Clean up
-- ---------------------------------------------------------------------------
SELECT dp_agg.clear_release_cache() >= 0 AS cleared;
RESET dp_agg.release_cache_period;
SET client_min_messages = warning;
DROP SCHEMA rc CASCADE;
RESET client_min_messages;
