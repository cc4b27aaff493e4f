-- Budget certificates: every budget is admitted under one certificate, fixed
-- by its kind before any query (README "Why admission never picks a
-- certificate"), so an analyst who picks each query after seeing the previous
-- answers cannot choose between two filters; a change of kind after spending
-- keeps what was certified; totals and the remaining epsilon are exact.
-- Part 1 found by: the review of the privacy accountant (issue 14).
-- Part 2 found by: the second adversarial review of the zCDP accountant
-- (issue 14) and its re-review; each "Before the fix:" comment says what the
-- reviewed accountant did instead.
\set VERBOSITY terse

-- ===========================================================================
-- Part 1: one certificate per budget kind.
-- ===========================================================================

SET client_min_messages = warning;
DROP SCHEMA IF EXISTS cert CASCADE;
DROP ROLE IF EXISTS regress_cert_a;
DROP ROLE IF EXISTS regress_cert_b;
RESET client_min_messages;
CREATE SCHEMA cert;
CREATE TABLE cert.t AS SELECT g AS id FROM generate_series(1, 1000) g;
CREATE ROLE regress_cert_a;
CREATE ROLE regress_cert_b;
GRANT USAGE ON SCHEMA cert TO regress_cert_a, regress_cert_b;
GRANT SELECT ON cert.t TO regress_cert_a, regress_cert_b;
-- Whether a query is admitted (true) or refused for budget (false, ZP001);
-- any other error propagates.
CREATE FUNCTION cert.admitted(query text) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE query;
  RETURN true;
EXCEPTION WHEN SQLSTATE 'ZP001' THEN
  RETURN false;
END $$;
GRANT EXECUTE ON FUNCTION cert.admitted(text) TO regress_cert_a, regress_cert_b;

-- ---------------------------------------------------------------------------
-- Before the fix (finding 1): an (epsilon, delta) budget admitted a charge when EITHER basic
-- composition OR the zCDP accountant fits (dp_agg.budget_admits). Each is a
-- valid certificate for a sequence fixed in advance, but the analyst picks
-- each query after seeing the previous answers, and the OR of two filters
-- is not a filter: from the same history, one continuation is admitted by
-- basic composition only and another by the accountant only, and choosing
-- between them on the noisy answer gives a mechanism that is not
-- (epsilon, delta)-DP for the budget.
-- Budget (4, 1e-6). Q1 = dp_count(id, 0.0038, 1e-6) (Gaussian). Then
--   path A: dp_count(id, 3.9962): basic composition is exactly (4, 1e-6);
--   path B: dp_count(id, 4.6562, 1e-9): the accountant certifies
--           rho 9.15e-7 + 0.311 within (4, 1e-6) (CKS20).
-- Taking A or B according to Q1's answer (A when Q1's privacy loss is in
-- its upper tail) releases delta(4) = 1.20e-6 > 1e-6, computed exactly over
-- the discrete Gaussian and geometric laws by
-- test/accountant/adaptive_certificates.py. Whatever the fix (one certificate
-- per budget, a filter proven valid under adaptivity, ...), a budget must
-- not admit both continuations of the same history. Two roles with the
-- same budget and the same first query stand for the two branches.
-- ---------------------------------------------------------------------------
-- test/accountant/adaptive_certificates.py checks, with the same admission
-- rules, that the adaptive strategy gains nothing under either kind.
-- Under an (epsilon, delta) budget (4, 1e-6): path A is admitted (exactly
-- the budget by basic composition), path B is refused (delta 1e-6 + 1e-9).
SELECT dp_agg.set_budget('regress_cert_a', 4, 1e-6);
SELECT dp_agg.set_budget('regress_cert_b', 4, 1e-6);
SET SESSION AUTHORIZATION regress_cert_a;
SELECT cert.admitted('SELECT dp_count(id, 0.0038, 1e-6) FROM cert.t') AS q1_admitted;
SELECT cert.admitted('SELECT dp_count(id, 3.9962) FROM cert.t') AS path_a \gset
RESET SESSION AUTHORIZATION;
SET SESSION AUTHORIZATION regress_cert_b;
SELECT cert.admitted('SELECT dp_count(id, 0.0038, 1e-6) FROM cert.t') AS q1_admitted;
SELECT cert.admitted('SELECT dp_count(id, 4.6562, 1e-9) FROM cert.t') AS path_b \gset
RESET SESSION AUTHORIZATION;
SELECT :'path_a'::boolean AS path_a, :'path_b'::boolean AS path_b,
       NOT (:'path_a'::boolean AND :'path_b'::boolean) AS never_both_continuations;
-- Under a zCDP budget of the rho of (4, 1e-6): path A (a pure epsilon
-- 3.9962 costs rho 7.98) is refused, path B (rho 0.311) admitted.
SELECT dp_agg.set_budget_zcdp('regress_cert_a', dp_agg.zcdp_rho(4, 1e-6));
SELECT dp_agg.set_budget_zcdp('regress_cert_b', dp_agg.zcdp_rho(4, 1e-6));
SELECT dp_agg.reset_spent('regress_cert_a');
SELECT dp_agg.reset_spent('regress_cert_b');
SET SESSION AUTHORIZATION regress_cert_a;
SELECT cert.admitted('SELECT dp_count(id, 0.0038, 1e-6) FROM cert.t') AS q1_admitted;
SELECT cert.admitted('SELECT dp_count(id, 3.9962) FROM cert.t') AS path_a \gset
RESET SESSION AUTHORIZATION;
SET SESSION AUTHORIZATION regress_cert_b;
SELECT cert.admitted('SELECT dp_count(id, 0.0038, 1e-6) FROM cert.t') AS q1_admitted;
SELECT cert.admitted('SELECT dp_count(id, 4.6562, 1e-9) FROM cert.t') AS path_b \gset
RESET SESSION AUTHORIZATION;
SELECT :'path_a'::boolean AS path_a, :'path_b'::boolean AS path_b,
       NOT (:'path_a'::boolean AND :'path_b'::boolean) AS never_both_continuations;
-- The kind is the administrator's: an analyst cannot switch its own budget
-- to the kind that would admit the continuation it wants (42501), and the
-- refused continuation charged nothing.
SET SESSION AUTHORIZATION regress_cert_a;
SELECT dp_agg.set_budget('regress_cert_a', 4, 1e-6);
SELECT dp_agg.set_budget_zcdp('regress_cert_a', 1);
SELECT budget_kind, epsilon_spent, rho_spent < 0.000001 AS only_q1_in_rho FROM dp_agg.budgets;
RESET SESSION AUTHORIZATION;

-- ---------------------------------------------------------------------------
-- Cleanup.
-- ---------------------------------------------------------------------------
SET client_min_messages = warning;
SELECT dp_agg.revoke_budget('regress_cert_a');
SELECT dp_agg.revoke_budget('regress_cert_b');
DROP SCHEMA cert CASCADE;
DROP ROLE regress_cert_a;
DROP ROLE regress_cert_b;
RESET client_min_messages;

-- ===========================================================================
-- Part 2: a change of budget kind after spending; totals beyond float8; the
-- remaining epsilon of a zCDP budget.
-- ===========================================================================

SET client_min_messages = warning;
DROP SCHEMA IF EXISTS cert_switch CASCADE;
DROP ROLE IF EXISTS regress_cert_switch_a;
DROP ROLE IF EXISTS regress_cert_switch_b;
DROP ROLE IF EXISTS regress_cert_switch_c;
RESET client_min_messages;
CREATE SCHEMA cert_switch;
CREATE TABLE cert_switch.t AS SELECT g AS id FROM generate_series(1, 1000) g;
CREATE ROLE regress_cert_switch_a;
CREATE ROLE regress_cert_switch_b;
CREATE ROLE regress_cert_switch_c;
GRANT USAGE ON SCHEMA cert_switch
  TO regress_cert_switch_a, regress_cert_switch_b, regress_cert_switch_c;
GRANT SELECT ON cert_switch.t
  TO regress_cert_switch_a, regress_cert_switch_b, regress_cert_switch_c;
-- Whether a query is admitted (true) or refused for budget (false, ZP001);
-- any other error propagates.
CREATE FUNCTION cert_switch.admitted(query text) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE query;
  RETURN true;
EXCEPTION WHEN SQLSTATE 'ZP001' THEN
  RETURN false;
END $$;
-- An administrator's change, run whether or not a fix refuses it (a
-- refusal with 22023 or 55000 is a valid fix of finding 1 or 2).
CREATE FUNCTION cert_switch.administer(command text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE command;
EXCEPTION WHEN invalid_parameter_value OR object_not_in_prerequisite_state THEN
  NULL;
END $$;
GRANT EXECUTE ON FUNCTION cert_switch.admitted(text)
  TO regress_cert_switch_a, regress_cert_switch_b, regress_cert_switch_c;

-- ---------------------------------------------------------------------------
-- Before the fix (finding 1, high): a change of budget kind after spending gives the
-- analyst back the choice of certificate that "one certificate per budget"
-- took away. set_budget / set_budget_zcdp keep the sums and switch the
-- admission rule to the new kind's certificate only, so a continuation that
-- only the OLD kind admits can be run before the switch and one that only
-- the NEW kind admits after it. The analyst decides which, on the noisy
-- answer of Q1: either by timing (the switch is scheduled, e.g. the
-- migration of upgraded 0.1.0 budgets to zCDP that the README invites) or by
-- asking for the switch (docs/administrator_guide.md "Many Gaussian releases" tells analysts to
-- use zCDP budgets for many Gaussian releases). The two budgets below
-- promise the same (4, 1e-6), and dp_agg.budgets shows guarantee (4, 1e-6)
-- after the switch, yet the strategy of part 1 (Q1, then
-- A or B on Q1's answer) is available again: its exact loss is
-- delta(4) = 1.20e-6 > 1e-6 (test/accountant/kind_switch.py computes it with the
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
SELECT dp_agg.set_budget_zcdp('regress_cert_switch_a', dp_agg.zcdp_rho(4, 1e-6));
SELECT dp_agg.set_budget_zcdp('regress_cert_switch_b', dp_agg.zcdp_rho(4, 1e-6));
SET SESSION AUTHORIZATION regress_cert_switch_a;
SELECT cert_switch.admitted('SELECT dp_count(id, 0.0038, 1e-6) FROM cert_switch.t') AS q1_admitted;
RESET SESSION AUTHORIZATION;
SET SESSION AUTHORIZATION regress_cert_switch_b;
SELECT cert_switch.admitted('SELECT dp_count(id, 0.0038, 1e-6) FROM cert_switch.t') AS q1_admitted;
SELECT cert_switch.admitted('SELECT dp_count(id, 4.6562, 1e-9) FROM cert_switch.t') AS path_b \gset
RESET SESSION AUTHORIZATION;
-- The administrator's switch to the same nominal guarantee. (Role b gets
-- a NOTICE: its sums already exceed the new totals.)
SET client_min_messages = warning;
SELECT cert_switch.administer($$SELECT dp_agg.set_budget('regress_cert_switch_a', 4, 1e-6)$$);
SELECT cert_switch.administer($$SELECT dp_agg.set_budget('regress_cert_switch_b', 4, 1e-6)$$);
RESET client_min_messages;
SET SESSION AUTHORIZATION regress_cert_switch_a;
-- Before the fix: the accountant admitted path A here (true): basic composition alone is
-- checked, although the role was admitted by the zCDP certificate before.
SELECT cert_switch.admitted('SELECT dp_count(id, 3.9962) FROM cert_switch.t') AS path_a \gset
RESET SESSION AUTHORIZATION;
-- Before the fix: the accountant gave path_a t, path_b t, never_both_continuations f.
SELECT :'path_a'::boolean AS path_a, :'path_b'::boolean AS path_b,
       NOT (:'path_a'::boolean AND :'path_b'::boolean) AS never_both_continuations;
-- (the reviewed accountant's dp_agg.budgets then shows both roles as epsilon_delta budgets
-- with guarantee (4, 1e-6), a guarantee that the strategy breaks.)

-- 1b. The other direction, the one the README suggests for upgraded
-- budgets: an (epsilon, delta) budget (4, 1e-6) migrated to the zCDP
-- budget zcdp_rho(4, 1e-6). Path A before the switch, path B after.
SELECT dp_agg.revoke_budget('regress_cert_switch_a');
SELECT dp_agg.revoke_budget('regress_cert_switch_b');
SELECT dp_agg.set_budget('regress_cert_switch_a', 4, 1e-6);
SELECT dp_agg.set_budget('regress_cert_switch_b', 4, 1e-6);
SET SESSION AUTHORIZATION regress_cert_switch_a;
SELECT cert_switch.admitted('SELECT dp_count(id, 0.0038, 1e-6) FROM cert_switch.t') AS q1_admitted;
SELECT cert_switch.admitted('SELECT dp_count(id, 3.9962) FROM cert_switch.t') AS path_a \gset
RESET SESSION AUTHORIZATION;
SET SESSION AUTHORIZATION regress_cert_switch_b;
SELECT cert_switch.admitted('SELECT dp_count(id, 0.0038, 1e-6) FROM cert_switch.t') AS q1_admitted;
RESET SESSION AUTHORIZATION;
SET client_min_messages = warning;
SELECT cert_switch.administer($$SELECT dp_agg.set_budget_zcdp('regress_cert_switch_a', dp_agg.zcdp_rho(4, 1e-6))$$);
SELECT cert_switch.administer($$SELECT dp_agg.set_budget_zcdp('regress_cert_switch_b', dp_agg.zcdp_rho(4, 1e-6))$$);
RESET client_min_messages;
SET SESSION AUTHORIZATION regress_cert_switch_b;
-- Before the fix: the accountant admitted path B here (true): rho 9.15e-7 + 0.311 fits the
-- zCDP total, and basic composition (delta 1e-6 + 1e-9) is no longer
-- checked.
SELECT cert_switch.admitted('SELECT dp_count(id, 4.6562, 1e-9) FROM cert_switch.t') AS path_b \gset
RESET SESSION AUTHORIZATION;
-- Before the fix: the accountant gave path_a t, path_b t, never_both_continuations f.
SELECT :'path_a'::boolean AS path_a, :'path_b'::boolean AS path_b,
       NOT (:'path_a'::boolean AND :'path_b'::boolean) AS never_both_continuations;

-- ---------------------------------------------------------------------------
-- Before the fix (finding 2, low): set_budget_zcdp accepted a rho total that float8 cannot
-- hold (1e400, or 1e-400), and dp_agg.budgets then casts rho_total::float8
-- for guarantee_epsilon: the view raises for everyone who can see that
-- row (the role itself, and every administrator: SELECT * FROM
-- dp_agg.budgets fails for all roles' rows). Fix: refuse such totals in
-- set_budget_zcdp (22023, e.g. rho > 1e300 or 0 < rho < 1e-300), or make the
-- view's conversion total.
-- ---------------------------------------------------------------------------
SELECT dp_agg.revoke_budget('regress_cert_switch_a');
SELECT dp_agg.revoke_budget('regress_cert_switch_b');
-- the reviewed accountant accepted it (a fix may refuse it: then the view has no such row).
SELECT cert_switch.administer($$SELECT dp_agg.set_budget_zcdp('regress_cert_switch_c', 1e400)$$);
-- Before the fix: it raised "... is out of range for type double precision".
SELECT count(guarantee_epsilon) >= 0 AS view_readable
FROM dp_agg.budgets WHERE role LIKE 'regress_cert_switch%';
SELECT cert_switch.administer($$SELECT dp_agg.revoke_budget('regress_cert_switch_c')$$);

-- ---------------------------------------------------------------------------
-- Before the fix (finding 3, low, safe direction): for a zCDP budget, epsilon_remaining
-- (remaining_budget().epsilon, zcdp_pure_epsilon) is "the largest pure
-- epsilon that still fits", checked as e^2 <= 2 rho_remaining, but the
-- ledger charges e^2 / 2 rounded UP to 17 significant digits
-- (query_cost.cpp kChargeDigits): a pure release at the advertised epsilon
-- is refused. Fix: zcdp_pure_epsilon checks the charge as the ledger
-- computes it (ceil to 17 digits of e^2 / 2 <= rho), stepping down until it
-- fits.
-- ---------------------------------------------------------------------------
SELECT dp_agg.set_budget_zcdp('regress_cert_switch_c', 0.123456789012 * 0.123456789012 / 2);
SET SESSION AUTHORIZATION regress_cert_switch_c;
-- 0.123456789011: the charge of 0.123456789012, its exact square halved
-- (25 significant digits) rounded up to 17, exceeds this rho by 3e-21.
SELECT epsilon FROM dp_agg.remaining_budget();
-- Before the fix: it was refused (false).
SELECT cert_switch.admitted(format('SELECT dp_count(id, %s) FROM cert_switch.t',
                                   (SELECT epsilon FROM dp_agg.remaining_budget())))
  AS advertised_epsilon_admitted;
RESET SESSION AUTHORIZATION;

-- ---------------------------------------------------------------------------
-- Found by: the re-review of the accountant (its finding 1): the guarantee
-- shown when the spending already
-- exceeds the current totals. Role c spent about 0.123 epsilon above; an
-- (epsilon, delta) total of 0.05 below that certifies nothing about its
-- history, so guarantee_epsilon/delta are NULL (they showed 0.05); raised
-- back above the spending they show the totals again.
-- ---------------------------------------------------------------------------
SET client_min_messages = warning;
SELECT dp_agg.set_budget('regress_cert_switch_c', 0.05, 0);
SELECT guarantee_epsilon IS NULL AS no_guarantee_below_spending,
       guarantee_delta IS NULL AS no_delta_guarantee_below_spending
  FROM dp_agg.budgets WHERE role = 'regress_cert_switch_c';
SELECT dp_agg.set_budget('regress_cert_switch_c', 5, 0);
SELECT guarantee_epsilon AS guarantee_epsilon_back FROM dp_agg.budgets
 WHERE role = 'regress_cert_switch_c';
RESET client_min_messages;

-- ---------------------------------------------------------------------------
-- Found by: the re-review of the accountant (its finding 4): the NOTICE names
-- the certificate that is exceeded.
-- A zCDP total below the spending, then an (epsilon, delta) total that the
-- spending fits: the earlier zCDP certificate still binds and is the one
-- exceeded (the NOTICE showed the epsilon/delta sums, which fit).
-- ---------------------------------------------------------------------------
SELECT dp_agg.set_budget_zcdp('regress_cert_switch_c', 0.001);
SELECT dp_agg.set_budget('regress_cert_switch_c', 5, 0);
SELECT binding_certificates, epsilon_remaining FROM dp_agg.budgets
 WHERE role = 'regress_cert_switch_c';

-- ---------------------------------------------------------------------------
-- Cleanup.
-- ---------------------------------------------------------------------------
SET client_min_messages = warning;
SELECT dp_agg.revoke_budget('regress_cert_switch_a');
SELECT dp_agg.revoke_budget('regress_cert_switch_b');
SELECT dp_agg.revoke_budget('regress_cert_switch_c');
DROP SCHEMA cert_switch CASCADE;
DROP ROLE regress_cert_switch_a;
DROP ROLE regress_cert_switch_b;
DROP ROLE regress_cert_switch_c;
RESET client_min_messages;
