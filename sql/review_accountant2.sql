-- Second adversarial review of the zCDP accountant (issue 14, branch
-- racct, reviewing acct). Every case is pinned with the CORRECT behaviour
-- (fixed on branch afix); each "Before the fix:" comment says what acct
-- output instead.
\set VERBOSITY terse

SET client_min_messages = warning;
DROP SCHEMA IF EXISTS review_acc2 CASCADE;
DROP ROLE IF EXISTS regress_review_acc2_a;
DROP ROLE IF EXISTS regress_review_acc2_b;
DROP ROLE IF EXISTS regress_review_acc2_c;
RESET client_min_messages;
CREATE SCHEMA review_acc2;
CREATE TABLE review_acc2.t AS SELECT g AS id FROM generate_series(1, 1000) g;
CREATE ROLE regress_review_acc2_a;
CREATE ROLE regress_review_acc2_b;
CREATE ROLE regress_review_acc2_c;
GRANT USAGE ON SCHEMA review_acc2
  TO regress_review_acc2_a, regress_review_acc2_b, regress_review_acc2_c;
GRANT SELECT ON review_acc2.t
  TO regress_review_acc2_a, regress_review_acc2_b, regress_review_acc2_c;
-- Whether a query is admitted (true) or refused for budget (false, ZP001);
-- any other error propagates.
CREATE FUNCTION review_acc2.admitted(query text) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE query;
  RETURN true;
EXCEPTION WHEN SQLSTATE 'ZP001' THEN
  RETURN false;
END $$;
-- An administrator's change, run whether or not a fix refuses it (a
-- refusal with 22023 or 55000 is a valid fix of finding 1 or 2).
CREATE FUNCTION review_acc2.administer(command text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE command;
EXCEPTION WHEN invalid_parameter_value OR object_not_in_prerequisite_state THEN
  NULL;
END $$;
GRANT EXECUTE ON FUNCTION review_acc2.admitted(text)
  TO regress_review_acc2_a, regress_review_acc2_b, regress_review_acc2_c;

-- ---------------------------------------------------------------------------
-- Finding 1 (high). A change of budget kind after spending gives the
-- analyst back the choice of certificate that "one certificate per budget"
-- took away. set_budget / set_budget_zcdp keep the sums and switch the
-- admission rule to the new kind's certificate only, so a continuation that
-- only the OLD kind admits can be run before the switch and one that only
-- the NEW kind admits after it. The analyst decides which, on the noisy
-- answer of Q1: either by timing (the switch is scheduled, e.g. the
-- migration of upgraded 0.1.0 budgets to zCDP that the README invites) or by
-- asking for the switch (README "Many Gaussian releases" tells analysts to
-- use zCDP budgets for many Gaussian releases). The two budgets below
-- promise the same (4, 1e-6), and dp_agg.budgets shows guarantee (4, 1e-6)
-- after the switch, yet the strategy of sql/review_accountant.sql (Q1, then
-- A or B on Q1's answer) is available again: its exact loss is
-- delta(4) = 1.20e-6 > 1e-6 (test/review/kind_switch.py computes it with the
-- admission rules of apply_charge and this schedule).
-- The README ("What a switch means for the guarantee") argues per history:
-- a history whose sums fit the new kind at the switch is a run of the new
-- kind's filter, any other a run of the old one's. Each is true, but DP is
-- a property of the whole strategy: here some histories satisfy only the
-- basic-composition filter and others only the zCDP filter, so neither
-- filter theorem covers the strategy, although the administrator's switch
-- (a fixed time) does not depend on any answer. Changes of totals within
-- one kind are safe because those filters are nested (the larger total's
-- covers every history); two kinds' filters are not.
-- Fix: once a role has spent, admission after a switch must keep every
-- certificate it was admitted under since the last reset_spent (the
-- conjunction of valid filters is a valid filter; the guarantee is then
-- each kind's), or a switch with spending must be refused (reset_spent /
-- revoke_budget say explicitly that budget is given back), and the view
-- must show the guarantee that is actually certified.
-- ---------------------------------------------------------------------------
-- 1a. zCDP budget zcdp_rho(4, 1e-6), switched to the (epsilon, delta)
-- budget (4, 1e-6) after Q1. Branch "B favourable" (role b) runs path B
-- before the switch; branch "A favourable" (role a) waits for it.
SELECT dp_agg.set_budget_zcdp('regress_review_acc2_a', dp_agg.zcdp_rho(4, 1e-6));
SELECT dp_agg.set_budget_zcdp('regress_review_acc2_b', dp_agg.zcdp_rho(4, 1e-6));
SET SESSION AUTHORIZATION regress_review_acc2_a;
SELECT review_acc2.admitted('SELECT dp_count(id, 0.0038, 1e-6) FROM review_acc2.t') AS q1_admitted;
RESET SESSION AUTHORIZATION;
SET SESSION AUTHORIZATION regress_review_acc2_b;
SELECT review_acc2.admitted('SELECT dp_count(id, 0.0038, 1e-6) FROM review_acc2.t') AS q1_admitted;
SELECT review_acc2.admitted('SELECT dp_count(id, 4.6562, 1e-9) FROM review_acc2.t') AS path_b \gset
RESET SESSION AUTHORIZATION;
-- The administrator's switch to the same nominal guarantee. (Role b gets
-- a NOTICE: its sums already exceed the new totals.)
SET client_min_messages = warning;
SELECT review_acc2.administer($$SELECT dp_agg.set_budget('regress_review_acc2_a', 4, 1e-6)$$);
SELECT review_acc2.administer($$SELECT dp_agg.set_budget('regress_review_acc2_b', 4, 1e-6)$$);
RESET client_min_messages;
SET SESSION AUTHORIZATION regress_review_acc2_a;
-- Before the fix: acct admits path A here (true): basic composition alone is
-- checked, although the role was admitted by the zCDP certificate before.
SELECT review_acc2.admitted('SELECT dp_count(id, 3.9962) FROM review_acc2.t') AS path_a \gset
RESET SESSION AUTHORIZATION;
-- Before the fix: acct gives path_a t, path_b t, never_both_continuations f.
SELECT :'path_a'::boolean AS path_a, :'path_b'::boolean AS path_b,
       NOT (:'path_a'::boolean AND :'path_b'::boolean) AS never_both_continuations;
-- (acct's dp_agg.budgets then shows both roles as epsilon_delta budgets
-- with guarantee (4, 1e-6), a guarantee that the strategy breaks.)

-- 1b. The other direction, the one the README suggests for upgraded
-- budgets: an (epsilon, delta) budget (4, 1e-6) migrated to the zCDP
-- budget zcdp_rho(4, 1e-6). Path A before the switch, path B after.
SELECT dp_agg.revoke_budget('regress_review_acc2_a');
SELECT dp_agg.revoke_budget('regress_review_acc2_b');
SELECT dp_agg.set_budget('regress_review_acc2_a', 4, 1e-6);
SELECT dp_agg.set_budget('regress_review_acc2_b', 4, 1e-6);
SET SESSION AUTHORIZATION regress_review_acc2_a;
SELECT review_acc2.admitted('SELECT dp_count(id, 0.0038, 1e-6) FROM review_acc2.t') AS q1_admitted;
SELECT review_acc2.admitted('SELECT dp_count(id, 3.9962) FROM review_acc2.t') AS path_a \gset
RESET SESSION AUTHORIZATION;
SET SESSION AUTHORIZATION regress_review_acc2_b;
SELECT review_acc2.admitted('SELECT dp_count(id, 0.0038, 1e-6) FROM review_acc2.t') AS q1_admitted;
RESET SESSION AUTHORIZATION;
SET client_min_messages = warning;
SELECT review_acc2.administer($$SELECT dp_agg.set_budget_zcdp('regress_review_acc2_a', dp_agg.zcdp_rho(4, 1e-6))$$);
SELECT review_acc2.administer($$SELECT dp_agg.set_budget_zcdp('regress_review_acc2_b', dp_agg.zcdp_rho(4, 1e-6))$$);
RESET client_min_messages;
SET SESSION AUTHORIZATION regress_review_acc2_b;
-- Before the fix: acct admits path B here (true): rho 9.15e-7 + 0.311 fits the
-- zCDP total, and basic composition (delta 1e-6 + 1e-9) is no longer
-- checked.
SELECT review_acc2.admitted('SELECT dp_count(id, 4.6562, 1e-9) FROM review_acc2.t') AS path_b \gset
RESET SESSION AUTHORIZATION;
-- Before the fix: acct gives path_a t, path_b t, never_both_continuations f.
SELECT :'path_a'::boolean AS path_a, :'path_b'::boolean AS path_b,
       NOT (:'path_a'::boolean AND :'path_b'::boolean) AS never_both_continuations;

-- ---------------------------------------------------------------------------
-- Finding 2 (low). set_budget_zcdp accepts a rho total that float8 cannot
-- hold (1e400, or 1e-400), and dp_agg.budgets then casts rho_total::float8
-- for guarantee_epsilon: the view raises for everyone who can see that
-- row (the role itself, and every administrator: SELECT * FROM
-- dp_agg.budgets fails for all roles' rows). Fix: refuse such totals in
-- set_budget_zcdp (22023, e.g. rho > 1e300 or 0 < rho < 1e-300), or make the
-- view's conversion total.
-- ---------------------------------------------------------------------------
SELECT dp_agg.revoke_budget('regress_review_acc2_a');
SELECT dp_agg.revoke_budget('regress_review_acc2_b');
-- acct accepts it (a fix may refuse it: then the view has no such row).
SELECT review_acc2.administer($$SELECT dp_agg.set_budget_zcdp('regress_review_acc2_c', 1e400)$$);
-- Before the fix: acct raises "... is out of range for type double precision".
SELECT count(guarantee_epsilon) >= 0 AS view_readable
FROM dp_agg.budgets WHERE role LIKE 'regress_review_acc2%';
SELECT review_acc2.administer($$SELECT dp_agg.revoke_budget('regress_review_acc2_c')$$);

-- ---------------------------------------------------------------------------
-- Finding 3 (low, safe direction). For a zCDP budget, epsilon_remaining
-- (remaining_budget().epsilon, zcdp_pure_epsilon) is "the largest pure
-- epsilon that still fits", checked as e^2 <= 2 rho_remaining, but the
-- ledger charges e^2 / 2 rounded UP to 17 significant digits
-- (query_cost.cpp kChargeDigits): a pure release at the advertised epsilon
-- is refused. Fix: zcdp_pure_epsilon checks the charge as the ledger
-- computes it (ceil to 17 digits of e^2 / 2 <= rho), stepping down until it
-- fits.
-- ---------------------------------------------------------------------------
SELECT dp_agg.set_budget_zcdp('regress_review_acc2_c', 0.123456789012 * 0.123456789012 / 2);
SET SESSION AUTHORIZATION regress_review_acc2_c;
-- 0.123456789011: the charge of 0.123456789012, its exact square halved
-- (25 significant digits) rounded up to 17, exceeds this rho by 3e-21.
SELECT epsilon FROM dp_agg.remaining_budget();
-- Before the fix: acct refuses it (false).
SELECT review_acc2.admitted(format('SELECT dp_count(id, %s) FROM review_acc2.t',
                                   (SELECT epsilon FROM dp_agg.remaining_budget())))
  AS advertised_epsilon_admitted;
RESET SESSION AUTHORIZATION;

-- ---------------------------------------------------------------------------
-- Re-review (racct2) F1: the guarantee shown when the spending already
-- exceeds the current totals. Role c spent about 0.123 epsilon above; an
-- (epsilon, delta) total of 0.05 below that certifies nothing about its
-- history, so guarantee_epsilon/delta are NULL (they showed 0.05); raised
-- back above the spending they show the totals again.
-- ---------------------------------------------------------------------------
SET client_min_messages = warning;
SELECT dp_agg.set_budget('regress_review_acc2_c', 0.05, 0);
SELECT guarantee_epsilon IS NULL AS no_guarantee_below_spending,
       guarantee_delta IS NULL AS no_delta_guarantee_below_spending
  FROM dp_agg.budgets WHERE role = 'regress_review_acc2_c';
SELECT dp_agg.set_budget('regress_review_acc2_c', 5, 0);
SELECT guarantee_epsilon AS guarantee_epsilon_back FROM dp_agg.budgets
 WHERE role = 'regress_review_acc2_c';
RESET client_min_messages;

-- ---------------------------------------------------------------------------
-- Re-review (racct2) F4: the NOTICE names the certificate that is exceeded.
-- A zCDP total below the spending, then an (epsilon, delta) total that the
-- spending fits: the earlier zCDP certificate still binds and is the one
-- exceeded (the NOTICE showed the epsilon/delta sums, which fit).
-- ---------------------------------------------------------------------------
SELECT dp_agg.set_budget_zcdp('regress_review_acc2_c', 0.001);
SELECT dp_agg.set_budget('regress_review_acc2_c', 5, 0);
SELECT binding_certificates, epsilon_remaining FROM dp_agg.budgets
 WHERE role = 'regress_review_acc2_c';

-- ---------------------------------------------------------------------------
-- Cleanup.
-- ---------------------------------------------------------------------------
SET client_min_messages = warning;
SELECT dp_agg.revoke_budget('regress_review_acc2_a');
SELECT dp_agg.revoke_budget('regress_review_acc2_b');
SELECT dp_agg.revoke_budget('regress_review_acc2_c');
DROP SCHEMA review_acc2 CASCADE;
DROP ROLE regress_review_acc2_a;
DROP ROLE regress_review_acc2_b;
DROP ROLE regress_review_acc2_c;
RESET client_min_messages;
