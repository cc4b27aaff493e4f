-- Privacy budgets: who pays, how much a query costs, what is refused, and
-- that no transaction shape gives budget back. Amounts are exact numerics.
\set VERBOSITY default

CREATE TABLE visits AS
SELECT g AS id, g % 50 AS patient, g % 3 AS clinic, (g % 97)::float8 AS cost
FROM generate_series(1, 600) g;
CREATE TABLE clinics AS SELECT g AS clinic, 'clinic ' || g AS name FROM generate_series(0, 2) g;
CREATE TABLE no_visits (LIKE visits);

SET client_min_messages = warning;
DROP ROLE IF EXISTS dp_budget_analyst;
DROP ROLE IF EXISTS dp_budget_rich;
DROP ROLE IF EXISTS dp_budget_super;
DROP ROLE IF EXISTS dp_budget_admin;
DROP ROLE IF EXISTS dp_budget_admins;
RESET client_min_messages;
CREATE ROLE dp_budget_analyst;
CREATE ROLE dp_budget_rich;
CREATE ROLE dp_budget_super SUPERUSER;
CREATE ROLE dp_budget_admins;
CREATE ROLE dp_budget_admin IN ROLE dp_budget_admins;
GRANT dp_budget_rich TO dp_budget_analyst;
GRANT SELECT ON visits, clinics, no_visits TO dp_budget_analyst, dp_budget_rich, dp_budget_admin;
SELECT dp_agg.set_budget('dp_budget_analyst', 1.0);
SELECT dp_agg.set_budget('dp_budget_rich', 1000);

-- From here on the session user is the analyst: it pays for everything.
SET SESSION AUTHORIZATION dp_budget_analyst;
SELECT * FROM dp_agg.remaining_budget();

-- 1. One call site costs its epsilon once per execution.
SELECT dp_count(id, 0.1) IS NOT NULL AS answered FROM visits;
SELECT epsilon FROM dp_agg.remaining_budget();
-- 2. The groups of one GROUP BY over one table are disjoint: 0.1 in total.
SELECT count(*) AS groups FROM (SELECT clinic, dp_count(id, 0.1) FROM visits GROUP BY clinic) q;
SELECT epsilon FROM dp_agg.remaining_budget();
-- 3. Call sites add up: 0.1 + 0.2 (+ HAVING's own call 0.05).
SELECT count(*) AS groups FROM (
  SELECT clinic, dp_count(id, 0.1), dp_avg(cost, 0, 100, 0.2) FROM visits GROUP BY clinic
  HAVING dp_count(id, 0.05) > 0) q;
SELECT epsilon FROM dp_agg.remaining_budget();
-- 4. GROUPING SETS, ROLLUP and CUBE: every row feeds one group per set, so
-- ROLLUP (clinic) (2 sets) at 0.05 costs 0.1.
SELECT count(*) AS groups FROM (
  SELECT clinic, dp_count(id, 0.05) FROM visits GROUP BY ROLLUP (clinic)) q;
SELECT epsilon FROM dp_agg.remaining_budget();
-- 5. An empty table costs the same as a full one.
SELECT dp_count(id, 0.05) IS NOT NULL AS answered FROM no_visits;
SELECT epsilon FROM dp_agg.remaining_budget();
-- 6. Prepared statements are charged at every execution, generic plans too.
PREPARE count_visits(float8) AS SELECT dp_count(id, $1) IS NOT NULL AS answered FROM visits;
EXECUTE count_visits(0.01);
SET plan_cache_mode = force_generic_plan;
EXECUTE count_visits(0.01);
EXECUTE count_visits(0.01);
RESET plan_cache_mode;
DEALLOCATE count_visits;
SELECT epsilon FROM dp_agg.remaining_budget();

-- 7. Nothing gives budget back: ROLLBACK, ROLLBACK TO SAVEPOINT, an
-- exception block (each of these answered first).
BEGIN;
SELECT dp_count(id, 0.01) IS NOT NULL AS answered FROM visits;
ROLLBACK;
BEGIN;
SAVEPOINT before_query;
SELECT dp_count(id, 0.01) IS NOT NULL AS answered FROM visits;
ROLLBACK TO SAVEPOINT before_query;
COMMIT;
DO $$
BEGIN
  RAISE NOTICE 'released: %', (SELECT dp_count(id, 0.01) IS NOT NULL FROM visits);
  RAISE division_by_zero;
EXCEPTION WHEN division_by_zero THEN
  RAISE NOTICE 'rolled back the block';
END $$;
SELECT epsilon FROM dp_agg.remaining_budget();

-- 8. Plans in which one row could feed an aggregation more than once are
-- refused before anything is charged (SQLSTATE 0A000).
SELECT c.name, dp_count(v.id, 0.1) FROM visits v JOIN clinics c USING (clinic) GROUP BY c.name;
\echo :LAST_ERROR_SQLSTATE
SELECT g, dp_count(id, 0.01) FROM visits, generate_series(1, 100) g GROUP BY g;
\echo :LAST_ERROR_SQLSTATE
SELECT c.clinic, (SELECT dp_count(v.id, 0.1) FROM visits v WHERE v.clinic = c.clinic) FROM clinics c;
\echo :LAST_ERROR_SQLSTATE
SELECT c.clinic, q.n FROM clinics c,
  LATERAL (SELECT dp_count(v.id, 0.1) AS n FROM visits v WHERE v.clinic = c.clinic) q;
\echo :LAST_ERROR_SQLSTATE
SELECT dp_count(id, 0.1) FROM (SELECT id FROM visits UNION ALL SELECT id FROM visits) u;
\echo :LAST_ERROR_SQLSTATE
SELECT dp_count(x, 0.1) FROM (SELECT generate_series(1, 10) AS x FROM visits) s;
\echo :LAST_ERROR_SQLSTATE
SELECT dp_sum(cost, 0, 100, 0.1) FROM (SELECT cost FROM visits ORDER BY cost LIMIT 10) s;
\echo :LAST_ERROR_SQLSTATE
SELECT dp_count(id, 0.1) FROM visits WHERE cost > (SELECT avg(cost) FROM visits);
\echo :LAST_ERROR_SQLSTATE
SELECT dp_count(id, 0.1) FROM visits WHERE clinic IN (SELECT clinic FROM clinics WHERE name LIKE '%1');
\echo :LAST_ERROR_SQLSTATE
SELECT dp_sum((SELECT max(cost) FROM visits), 0, 100, 0.1) FROM visits;
\echo :LAST_ERROR_SQLSTATE
SELECT dp_count(id, 0.1) FILTER (WHERE EXISTS (SELECT 1 FROM clinics)) FROM visits;
\echo :LAST_ERROR_SQLSTATE
SELECT dp_sum(s, 0, 100, 0.1) FROM (SELECT patient, sum(cost) AS s FROM visits GROUP BY patient) q;
\echo :LAST_ERROR_SQLSTATE
WITH v AS MATERIALIZED (SELECT id FROM visits)
SELECT dp_count(id, 0.1) FROM (SELECT id FROM v UNION ALL SELECT id FROM v) u;
\echo :LAST_ERROR_SQLSTATE
SELECT dp_count(id, 0.1) FROM (SELECT id FROM visits GROUP BY GROUPING SETS ((id), (id), (id))) s;
\echo :LAST_ERROR_SQLSTATE
SELECT dp_sum(cost, -100, 100, 0.1) FROM (SELECT DISTINCT ON (clinic) cost FROM visits ORDER BY clinic, cost DESC) s;
\echo :LAST_ERROR_SQLSTATE
-- the refusals cost nothing
SELECT epsilon FROM dp_agg.remaining_budget();

-- 9. What is allowed: filters on the table's own columns, DISTINCT rows,
-- CTEs and subqueries read once, UNION ALL of different tables, and any
-- post-processing of the private answers (joins included).
SELECT dp_count(id, 0.01) IS NOT NULL AS answered FROM visits WHERE clinic = 1 AND cost > 10;
SELECT dp_count(patient, 0.01) IS NOT NULL AS answered FROM (SELECT DISTINCT patient FROM visits) d;
WITH cheap AS (SELECT * FROM visits WHERE cost < 20) SELECT dp_count(id, 0.01) IS NOT NULL AS answered FROM cheap;
SELECT dp_count(id, 0.01) IS NOT NULL AS answered FROM (SELECT id FROM visits UNION ALL SELECT clinic FROM clinics) u;
SELECT c.name, q.n IS NOT NULL AS answered
FROM (SELECT clinic, dp_count(id, 0.01) AS n FROM visits GROUP BY clinic) q JOIN clinics c USING (clinic)
ORDER BY c.name;
SELECT epsilon FROM dp_agg.remaining_budget();

-- A charge is the shortest decimal of the request when that covers what the
-- mechanism uses (the request rounded down to 24 bits), and otherwise that
-- value exactly: 1.0000014305114746 is 1 + 3 * 2^-21 (fits 24 bits), whose
-- shortest decimal is a hair below it.
RESET SESSION AUTHORIZATION;
SELECT dp_count(id, 1.0000014305114746) IS NOT NULL AS answered FROM visits;
SELECT epsilon FROM dp_agg.ledger WHERE kind = 'charge' ORDER BY id DESC LIMIT 1;
SET SESSION AUTHORIZATION dp_budget_analyst;

-- 10. Exhaustion: refused with SQLSTATE ZP001, the budget in DETAIL, nothing
-- released and nothing charged.
SELECT dp_count(id, 0.5) FROM visits;
\echo :LAST_ERROR_SQLSTATE
SELECT epsilon FROM dp_agg.remaining_budget();

-- 11. SET ROLE and SECURITY DEFINER do not change who pays: the session user.
SET ROLE dp_budget_rich;
SELECT current_user, session_user;
SELECT dp_count(id, 0.01) IS NOT NULL AS answered FROM visits;
RESET ROLE;
SELECT epsilon FROM dp_agg.remaining_budget();
RESET SESSION AUTHORIZATION;
CREATE FUNCTION rich_count(eps float8) RETURNS bigint LANGUAGE sql SECURITY DEFINER
  AS 'SELECT dp_count(id, eps) FROM visits';
ALTER FUNCTION rich_count(float8) OWNER TO dp_budget_rich;
SET SESSION AUTHORIZATION dp_budget_analyst;
SELECT rich_count(0.01) IS NOT NULL AS answered;
SELECT epsilon FROM dp_agg.remaining_budget();
-- and a budget can never go below zero (the next query would exceed it)
SELECT dp_count(id, 0.2) FROM visits;
\echo :LAST_ERROR_SQLSTATE

-- 12. Analysts cannot change budgets or write the catalog, and see only
-- their own budget and ledger rows.
SELECT dp_agg.set_budget('dp_budget_analyst', 100);
\echo :LAST_ERROR_SQLSTATE
SELECT dp_agg.add_budget('dp_budget_analyst', 100);
\echo :LAST_ERROR_SQLSTATE
SELECT dp_agg.reset_spent('dp_budget_analyst');
\echo :LAST_ERROR_SQLSTATE
UPDATE dp_agg.role_budget SET epsilon_spent = 0;
\echo :LAST_ERROR_SQLSTATE
INSERT INTO dp_agg.role_budget VALUES ('dp_budget_analyst', 100);
\echo :LAST_ERROR_SQLSTATE
DELETE FROM dp_agg.ledger_entry;
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM dp_agg.apply_charge('dp_budget_analyst'::regrole, 'dp_budget_analyst', 'dp_budget_analyst', -1, 0, NULL, '', '', 0, 0);
\echo :LAST_ERROR_SQLSTATE
SELECT role, epsilon_total, epsilon_spent, epsilon_remaining FROM dp_agg.budgets ORDER BY role;
SELECT kind, role, epsilon, aggregates FROM dp_agg.ledger ORDER BY id;
SELECT sum(epsilon) AS charged FROM dp_agg.ledger WHERE kind = 'charge';

-- 13. Default deny, superusers included.
RESET SESSION AUTHORIZATION;
SET SESSION AUTHORIZATION dp_budget_super;
SELECT dp_count(id, 0.1) FROM visits;
\echo :LAST_ERROR_SQLSTATE
RESET SESSION AUTHORIZATION;

-- 14. Administration: a member of dp_agg.admin_role manages budgets; every
-- change leaves a ledger row; revoking restores default deny.
SET dp_agg.admin_role = 'dp_budget_admins';
SET SESSION AUTHORIZATION dp_budget_admin;
SELECT dp_agg.add_budget('dp_budget_analyst', 0.5);
SELECT dp_agg.reset_spent('dp_budget_rich');
SELECT role, epsilon_total, epsilon_spent FROM dp_agg.budgets
WHERE role IN ('dp_budget_analyst', 'dp_budget_rich') ORDER BY role;
SELECT dp_agg.set_budget('dp_budget_analyst', -1);
\echo :LAST_ERROR_SQLSTATE
SELECT dp_agg.set_budget('dp_budget_analyst', 1, 1.5);
\echo :LAST_ERROR_SQLSTATE
SELECT dp_agg.revoke_budget('dp_budget_rich');
RESET SESSION AUTHORIZATION;
RESET dp_agg.admin_role;
SELECT kind, role, session_user_name, epsilon FROM dp_agg.ledger
WHERE kind <> 'charge' AND role LIKE 'dp_budget_%' ORDER BY id;
SET SESSION AUTHORIZATION dp_budget_rich;
SELECT dp_count(id, 0.1) FROM visits;
\echo :LAST_ERROR_SQLSTATE
RESET SESSION AUTHORIZATION;

DROP FUNCTION rich_count(float8);

-- 15. set_budget without delta keeps the delta total (0 for a new budget);
-- an explicit delta sets it.
SET client_min_messages = warning;
DROP ROLE IF EXISTS dp_budget_delta;
DROP ROLE IF EXISTS dp_budget_renamed;
DROP ROLE IF EXISTS dp_budget_gone;
RESET client_min_messages;
CREATE ROLE dp_budget_delta;
GRANT SELECT ON visits TO dp_budget_delta;
SELECT dp_agg.set_budget('dp_budget_delta', 2, 1e-5);
SELECT dp_agg.set_budget('dp_budget_delta', 5.0);
SELECT epsilon_total, delta_total FROM dp_agg.budgets WHERE role = 'dp_budget_delta';
SELECT dp_agg.set_budget('dp_budget_delta', 5.0, 0);
SELECT epsilon_total, delta_total FROM dp_agg.budgets WHERE role = 'dp_budget_delta';
SELECT kind, epsilon, delta FROM dp_agg.ledger WHERE role = 'dp_budget_delta' ORDER BY id;

-- 16. A query refused for lack of delta says so, with the numbers; and a
-- restricted GROUP BY names group selection as what needs it.
SET SESSION AUTHORIZATION dp_budget_delta;
SELECT dp_count(id, 0.5, 1e-6) FROM visits;
\echo :LAST_ERROR_SQLSTATE
RESET SESSION AUTHORIZATION;
CREATE TABLE guarded AS SELECT g AS id, g % 3 AS ward FROM generate_series(1, 300) g;
SELECT dp_agg.protect_table('guarded');
SELECT dp_agg.restrict_role('dp_budget_delta');
SET SESSION AUTHORIZATION dp_budget_delta;
SELECT ward, dp_count(id, 0.5) FROM guarded GROUP BY ward;
\echo :LAST_ERROR_SQLSTATE
RESET SESSION AUTHORIZATION;
SELECT dp_agg.set_budget('dp_budget_delta', 5.0, 1.5e-6);
SET SESSION AUTHORIZATION dp_budget_delta;
SELECT count(*) AS groups FROM (SELECT ward, dp_count(id, 0.5) FROM guarded GROUP BY ward) q;
-- delta left: 0.5e-6 < 1e-6: the delta budget is exhausted, epsilon is not.
SELECT ward, dp_count(id, 0.5) FROM guarded GROUP BY ward;
\echo :LAST_ERROR_SQLSTATE
RESET SESSION AUTHORIZATION;
-- dp_agg.query_cost: what a query would be charged, for a restricted role
-- too, without running or charging it (group selection included).
SET SESSION AUTHORIZATION dp_budget_delta;
SELECT * FROM dp_agg.remaining_budget();
SELECT * FROM dp_agg.query_cost('SELECT ward, dp_count(id, 0.5) FROM guarded GROUP BY ward');
SELECT * FROM dp_agg.query_cost('SELECT dp_count(id, 0.25), dp_sum(id, 0, 10, 0.5, 1e-9) FROM guarded');
SELECT * FROM dp_agg.remaining_budget();
SELECT count(*) AS ledger_rows FROM dp_agg.ledger;
-- refused exactly as running it would be, and only SELECT is costed
SELECT * FROM dp_agg.query_cost('SELECT count(*) FROM guarded');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM dp_agg.query_cost('DELETE FROM visits');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM dp_agg.query_cost('SELECT 1; SELECT 2');
\echo :LAST_ERROR_SQLSTATE
-- The metadata probes of BI tools are free when the plan's constants prove
-- the private aggregation never runs (a LIMIT 0 at the top, or a one-time
-- filter that is constant false above it): even this GROUP BY, which the
-- role's delta budget could not pay for, answers with no rows.
SELECT * FROM (SELECT ward, dp_count(id, 0.5) FROM guarded GROUP BY ward) s LIMIT 0;
SELECT * FROM (SELECT ward, dp_count(id, 0.5) FROM guarded GROUP BY ward ORDER BY ward) s LIMIT 0;
SELECT * FROM (SELECT ward, dp_count(id, 0.5) FROM guarded GROUP BY ward) s WHERE false;
SELECT * FROM (SELECT ward, dp_count(id, 0.5) FROM guarded GROUP BY ward) s WHERE 1 = 0;
SELECT * FROM dp_agg.query_cost('SELECT * FROM (SELECT dp_count(id, 0.5) FROM guarded) s LIMIT 0');
SELECT * FROM dp_agg.remaining_budget();
-- Not free: an aggregate above the false filter still releases a value
-- (of no rows); LIMIT 1; a LIMIT that is a bound parameter (whether it is
-- folded into the plan depends on the plan cache's cost-based choice).
SELECT dp_count(id, 0.25) IS NOT NULL AS answered FROM guarded WHERE false;
SELECT * FROM dp_agg.remaining_budget();
SELECT count(*) AS rows FROM (SELECT * FROM (SELECT dp_count(id, 0.25) FROM guarded) s LIMIT 1) q;
SELECT * FROM dp_agg.remaining_budget();
PREPARE limited(int) AS SELECT * FROM (SELECT dp_count(id, 0.25) FROM guarded) s LIMIT $1;
EXECUTE limited(0);
DEALLOCATE limited;
SELECT * FROM dp_agg.remaining_budget();
RESET SESSION AUTHORIZATION;
SELECT dp_agg.unrestrict_role('dp_budget_delta');
SELECT dp_agg.unprotect_table('guarded');
DROP TABLE guarded;

-- The probe counts what running would charge (ROLLUP's 2 grouping sets; no
-- private aggregate: 0), and needs no budget (this role has none left).
SET SESSION AUTHORIZATION dp_budget_rich;
SELECT * FROM dp_agg.query_cost('SELECT clinic, dp_count(id, 0.1) FROM visits GROUP BY ROLLUP (clinic)');
SELECT * FROM dp_agg.query_cost('SELECT 1 AS no_private_aggregate');
RESET SESSION AUTHORIZATION;

-- 17. A total set below what was spent is accepted (it stops the role's
-- queries) and shows 0 remaining, never a negative amount.
SELECT dp_agg.set_budget('dp_budget_delta', 0.25);
SELECT epsilon_total, epsilon_spent, epsilon_remaining, delta_remaining
FROM dp_agg.budgets WHERE role = 'dp_budget_delta';
SET SESSION AUTHORIZATION dp_budget_delta;
SELECT * FROM dp_agg.remaining_budget();
SELECT dp_count(id, 0.01) FROM visits;
\echo :LAST_ERROR_SQLSTATE
RESET SESSION AUTHORIZATION;

-- 18. Budgets follow roles, not names: a rename keeps the budget, its
-- spending and its ledger rows.
ALTER ROLE dp_budget_delta RENAME TO dp_budget_renamed;
SELECT role, epsilon_total, epsilon_spent, role_dropped FROM dp_agg.budgets
WHERE role IN ('dp_budget_delta', 'dp_budget_renamed');
SELECT dp_agg.set_budget('dp_budget_renamed', 3);
SET SESSION AUTHORIZATION dp_budget_renamed;
SELECT dp_count(id, 0.25) IS NOT NULL AS answered FROM visits;
SELECT * FROM dp_agg.remaining_budget();
SELECT count(*) AS own_ledger_rows FROM dp_agg.ledger;
RESET SESSION AUTHORIZATION;
SELECT kind, role FROM dp_agg.ledger WHERE kind = 'charge' AND role LIKE 'dp_budget_renamed'
ORDER BY id;

-- 19. A dropped role's budget does not pass to a new role of the same name:
-- the old row stays for the audit (role_dropped), the new role has no
-- budget and sees none of the old ledger rows.
REVOKE SELECT ON visits FROM dp_budget_renamed;
DROP ROLE dp_budget_renamed;
SELECT role, epsilon_total, role_dropped FROM dp_agg.budgets WHERE role = 'dp_budget_renamed';
CREATE ROLE dp_budget_renamed;
GRANT SELECT ON visits TO dp_budget_renamed;
SELECT role, epsilon_total, role_dropped FROM dp_agg.budgets WHERE role = 'dp_budget_renamed'
ORDER BY role_dropped;
SET SESSION AUTHORIZATION dp_budget_renamed;
SELECT * FROM dp_agg.remaining_budget();
SELECT count(*) AS own_ledger_rows FROM dp_agg.ledger;
SELECT count(*) AS visible_budgets FROM dp_agg.budgets;
SELECT dp_count(id, 0.1) FROM visits;
\echo :LAST_ERROR_SQLSTATE
RESET SESSION AUTHORIZATION;
REVOKE SELECT ON visits FROM dp_budget_renamed;
DROP ROLE dp_budget_renamed;

-- 20. zCDP budgets (docs/administrator_guide.md "Privacy budgets"): the issue's target. A role
-- that must be (1, 1e-6)-DP gets the rho of that guarantee; 100 Gaussian
-- counts, each at the epsilon whose rho is a hundredth of it, are all
-- admitted (their epsilons add up to about 11: an (epsilon, delta) budget
-- would refuse the tenth), the 101st is refused. Each count's noise is
-- within 10% of the zCDP optimum sqrt(100 / (2 rho)) (sigma = 1 /
-- sqrt(2 rho_i) for a count, from the rho charged).
SET client_min_messages = warning;
DROP ROLE IF EXISTS dp_budget_zcdp;
DROP ROLE IF EXISTS dp_budget_switch;
DROP ROLE IF EXISTS dp_budget_rho;
RESET client_min_messages;
CREATE ROLE dp_budget_zcdp;
CREATE ROLE dp_budget_switch;
CREATE ROLE dp_budget_rho;
GRANT SELECT ON visits TO dp_budget_zcdp, dp_budget_switch, dp_budget_rho;
SELECT dp_agg.zcdp_rho(1, 1e-6) AS rho_of_guarantee \gset
SELECT :rho_of_guarantee AS rho_of_guarantee,
       dp_agg.zcdp_epsilon(:rho_of_guarantee, 1e-6) <= 1 AS within_1,
       dp_agg.zcdp_epsilon(:rho_of_guarantee, 1e-6) > 0.999999 AS tight;
SELECT dp_agg.set_budget_zcdp('dp_budget_zcdp', dp_agg.zcdp_rho(1, 1e-6));
SELECT dp_agg.gaussian_count_epsilon(:rho_of_guarantee / 100, 1e-6) AS share_epsilon \gset
SELECT round(:share_epsilon::numeric, 6) AS share_epsilon;
SET SESSION AUTHORIZATION dp_budget_zcdp;
SELECT * FROM dp_agg.remaining_budget();
SELECT epsilon, delta, rho <= :rho_of_guarantee / 100 AS within_share, zcdp_delta
FROM dp_agg.query_cost(format('SELECT dp_count(id, %s, 1e-6) FROM visits', :share_epsilon));
DO $$
DECLARE
  share float8 := dp_agg.gaussian_count_epsilon(dp_agg.zcdp_rho(1, 1e-6) / 100, 1e-6);
  answered int := 0;
  value bigint;
BEGIN
  FOR i IN 1..100 LOOP
    EXECUTE format('SELECT dp_count(id, %s, 1e-6) FROM visits', share) INTO value;
    answered := answered + (value IS NOT NULL)::int;
  END LOOP;
  RAISE NOTICE '% Gaussian counts answered', answered;
END $$;
SELECT dp_count(id, :share_epsilon, 1e-6) FROM visits;
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) AS charges, sum(rho) = (SELECT rho_spent FROM dp_agg.budgets) AS rho_adds_up,
       sum(rho) <= :rho_of_guarantee AS within_rho,
       max(sqrt(1 / (2 * rho))) / sqrt(100 / (2 * :rho_of_guarantee)) BETWEEN 1 AND 1.1
         AS sigma_within_10_percent_of_optimum,
       round(max(sqrt(1 / (2 * rho))), 1) AS sigma
FROM dp_agg.ledger WHERE kind = 'charge';
-- What is left, in the budget's own terms and as an (epsilon, delta)
-- guarantee: the role as a whole is (zcdp_epsilon(rho, 1e-6), 1e-6)-DP.
SELECT budget_kind, epsilon_total, delta_total, rho_total = :rho_of_guarantee AS rho_total_set,
       round(epsilon_spent, 6) AS epsilon_spent_by_basic_composition,
       rho_remaining < :rho_of_guarantee / 100 AS less_than_a_share_left,
       epsilon_remaining = dp_agg.zcdp_pure_epsilon(rho_remaining) AS pure_epsilon_left,
       zcdp_delta_total, delta_remaining, guarantee_epsilon <= 1 AS guarantee_within_1,
       guarantee_delta
FROM dp_agg.budgets;
RESET SESSION AUTHORIZATION;

-- 21. An (epsilon, delta) budget keeps 0.1.0's rule exactly (basic
-- composition; the zCDP sums are recorded but never admit anything): a
-- Gaussian count whose rho would fit easily is refused when its delta does
-- not fit. Switching kinds keeps every sum: each charge has a value in both
-- currencies, and the new kind's certificate counts all of them.
SELECT dp_agg.set_budget('dp_budget_switch', 10, 2.5e-6);
SET SESSION AUTHORIZATION dp_budget_switch;
SELECT dp_count(id, 0.5, 1e-6) IS NOT NULL AS gaussian FROM visits;
SELECT dp_count(id, 0.5, 1e-6) IS NOT NULL AS gaussian FROM visits;
SELECT dp_count(id, 0.5) IS NOT NULL AS pure FROM visits;
SELECT dp_count(id, 0.5, 1e-6) FROM visits;
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM dp_agg.remaining_budget();
SELECT rho AS gaussian_rho FROM dp_agg.query_cost('SELECT dp_count(id, 0.5, 1e-6) FROM visits') \gset
-- rho_spent: two Gaussian rho and 0.5^2 / 2 for the Laplace count, exactly.
SELECT budget_kind, epsilon_spent, delta_spent, rho_spent = 2 * :gaussian_rho + 0.125 AS rho_exact,
       zcdp_delta_spent, rho_remaining = dp_agg.gaussian_count_rho(8.5, 0.5e-6) AS rho_remaining_ok
FROM dp_agg.budgets;
RESET SESSION AUTHORIZATION;
-- To a zCDP budget of rho 0.2: everything spent so far counts in rho, and
-- as the role has spent, its (epsilon, delta) certificate keeps binding
-- with its totals (docs/administrator_guide.md "Switching kinds"): a charge must fit both.
SELECT dp_agg.set_budget_zcdp('dp_budget_switch', 0.2);
SET SESSION AUTHORIZATION dp_budget_switch;
SELECT budget_kind, binding_certificates, epsilon_total, delta_total, rho_total,
       rho_remaining = 0.2 - 0.125 - 2 * :gaussian_rho AS rest_exact, delta_remaining
FROM dp_agg.budgets;
-- The Gaussian count refused above by basic composition fits the rho left
-- but stays refused: the analyst cannot pick the certificate by switching.
SELECT dp_count(id, 0.5, 1e-6) FROM visits;
\echo :LAST_ERROR_SQLSTATE
-- A pure release fits both: epsilon 0.1 of the 8.5 left, rho 0.005.
SELECT dp_count(id, 0.1) IS NOT NULL AS pure FROM visits;
-- A pure release costs epsilon^2 / 2: 0.5 (rho 0.125) does not fit the rho.
SELECT dp_count(id, 0.5) FROM visits;
\echo :LAST_ERROR_SQLSTATE
RESET SESSION AUTHORIZATION;
-- reset_spent (audited) gives the budget back and ends the binding of the
-- earlier kind: the zCDP certificate alone admits the Gaussian count now.
SELECT dp_agg.reset_spent('dp_budget_switch');
SET SESSION AUTHORIZATION dp_budget_switch;
SELECT budget_kind, binding_certificates, epsilon_total, rho_spent FROM dp_agg.budgets;
SELECT dp_count(id, 0.5, 1e-6) IS NOT NULL AS gaussian FROM visits;
RESET SESSION AUTHORIZATION;
-- Back to (epsilon, delta) (10, 1e-6): the zCDP-era charge is in its sums
-- (delta 1e-6: no more Gaussian release), and the zCDP certificate binds
-- too, with the totals it had (rho 0.2); setting it again to a lower rho
-- updates that total, and switching back keeps it binding.
SELECT dp_agg.set_budget('dp_budget_switch', 10, 1e-6);
SELECT dp_agg.set_budget_zcdp('dp_budget_switch', 0.01);
SELECT dp_agg.set_budget('dp_budget_switch', 10, 1e-6);
SET SESSION AUTHORIZATION dp_budget_switch;
SELECT budget_kind, binding_certificates, epsilon_spent, delta_spent, rho_total,
       epsilon_remaining = dp_agg.zcdp_pure_epsilon(0.01 - :gaussian_rho) AS least_of_both,
       delta_remaining
FROM dp_agg.budgets;
SELECT dp_count(id, 0.1, 1e-7) FROM visits;
\echo :LAST_ERROR_SQLSTATE
-- epsilon 0.2 fits basic composition (9.5 left) but not the rho left.
SELECT dp_count(id, 0.2) FROM visits;
\echo :LAST_ERROR_SQLSTATE
SELECT dp_count(id, 0.01) IS NOT NULL AS pure FROM visits;
RESET SESSION AUTHORIZATION;
SELECT kind, epsilon, delta,
       CASE kind WHEN 'charge' THEN (rho IN (0.125, :gaussian_rho, 0.005, 0.00005))::text
                 ELSE rho::text END AS rho_as_expected,
       zcdp_delta
FROM dp_agg.ledger WHERE role = 'dp_budget_switch' ORDER BY id;

-- 22. A zCDP budget: Gaussian releases cost their rho, pure ones
-- epsilon^2 / 2, exactly in numeric; the remaining rho is exact and the
-- largest pure epsilon that fits is admitted, anything more is refused.
-- add_budget is refused for it (22023, with guidance).
SELECT dp_agg.set_budget_zcdp('dp_budget_rho', 0.02);
SELECT dp_agg.set_budget_zcdp('dp_budget_rho', -1);
\echo :LAST_ERROR_SQLSTATE
SELECT dp_agg.set_budget_zcdp('dp_budget_rho', 'Infinity');
\echo :LAST_ERROR_SQLSTATE
SELECT dp_agg.set_budget_zcdp('dp_budget_rho', 0.02, 1);
\echo :LAST_ERROR_SQLSTATE
-- Totals that float8 cannot hold (the view converts rho_total) are refused.
SELECT dp_agg.set_budget_zcdp('dp_budget_rho', 1e400);
\echo :LAST_ERROR_SQLSTATE
SELECT dp_agg.set_budget_zcdp('dp_budget_rho', 1e-400);
\echo :LAST_ERROR_SQLSTATE
SELECT dp_agg.set_budget_zcdp('dp_budget_rho', 0.02, 1e-400);
\echo :LAST_ERROR_SQLSTATE
SELECT dp_agg.add_budget('dp_budget_rho', 1);
\echo :LAST_ERROR_SQLSTATE
SET SESSION AUTHORIZATION dp_budget_rho;
SELECT * FROM dp_agg.remaining_budget();
SELECT dp_count(id, 0.1) IS NOT NULL AS pure FROM visits;
SELECT rho AS count_rho FROM dp_agg.query_cost('SELECT dp_count(id, 0.5, 1e-6) FROM visits') \gset
SELECT dp_count(id, 0.5, 1e-6) IS NOT NULL AS gaussian FROM visits;
SELECT rho = 0.02 - 0.005 - :count_rho AS exact_rho_left, budget_kind
FROM dp_agg.remaining_budget();
SELECT epsilon AS pure_left FROM dp_agg.remaining_budget() \gset
SELECT :pure_left * :pure_left / 2 <= 0.02 - 0.005 - :count_rho AS fits,
       (:pure_left + 1e-9) * (:pure_left + 1e-9) / 2 > 0.02 - 0.005 - :count_rho AS largest;
SELECT dp_count(id, :pure_left) IS NOT NULL AS last_pure FROM visits;
SELECT dp_count(id, 0.0001) FROM visits;
\echo :LAST_ERROR_SQLSTATE
SELECT dp_agg.group_selection(0.0001, 1e-9) FROM visits;
\echo :LAST_ERROR_SQLSTATE
RESET SESSION AUTHORIZATION;
REVOKE SELECT ON visits FROM dp_budget_zcdp, dp_budget_switch, dp_budget_rho;
DROP ROLE dp_budget_zcdp;
DROP ROLE dp_budget_switch;
DROP ROLE dp_budget_rho;

-- 23. The conversion functions refuse what no budget can hold: NaN,
-- infinite or negative amounts (22023), never a wrong answer; the display
-- helpers are total.
SELECT dp_agg.zcdp_epsilon(-1, 1e-6);
\echo :LAST_ERROR_SQLSTATE
SELECT dp_agg.zcdp_rho(1, 0);
\echo :LAST_ERROR_SQLSTATE
SELECT dp_agg.gaussian_count_epsilon('Infinity', 1e-6);
\echo :LAST_ERROR_SQLSTATE
SELECT dp_agg.gaussian_count_epsilon('NaN', 1e-6);
\echo :LAST_ERROR_SQLSTATE
SELECT dp_agg.gaussian_count_rho(0, 1e-6) AS no_epsilon, dp_agg.gaussian_count_rho(1, 0) AS no_delta,
       dp_agg.gaussian_count_rho(1e300, 1e-6) > 1e30 AS huge_epsilon_huge_rho;
SELECT dp_agg.zcdp_pure_epsilon(0) AS zero, dp_agg.zcdp_pure_epsilon(0.5) AS one,
       dp_agg.zcdp_pure_epsilon(0.02) AS point_two;
-- 24. Administrators' input gets 22023 with guidance (found by the crash
-- fuzzer's long run): add_budget that would bring a delta total to 1 or more
-- (not the table's 23514), revoke_budget(NULL) (not a NOT NULL violation of
-- the ledger); nothing changes.
CREATE ROLE dp_budget_deltacap;
SELECT dp_agg.add_budget('dp_budget_deltacap', 1, 0.6);
SELECT dp_agg.add_budget('dp_budget_deltacap', 0, 0.4);
\echo :LAST_ERROR_SQLSTATE
SELECT epsilon_total, delta_total FROM dp_agg.role_budget WHERE role_name = 'dp_budget_deltacap';
SELECT dp_agg.revoke_budget(NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT dp_agg.revoke_budget('dp_budget_deltacap');
DROP ROLE dp_budget_deltacap;
