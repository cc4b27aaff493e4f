-- Findings of the review of the privacy accountant (issue 14, branch
-- review_accountant), each pinned with the correct behaviour. Fixed by
-- giving every budget one certificate, fixed by its kind before any query
-- (README "Why admission never picks a certificate").
\set VERBOSITY terse

SET client_min_messages = warning;
DROP SCHEMA IF EXISTS review_acc CASCADE;
DROP ROLE IF EXISTS regress_review_acc_a;
DROP ROLE IF EXISTS regress_review_acc_b;
RESET client_min_messages;
CREATE SCHEMA review_acc;
CREATE TABLE review_acc.t AS SELECT g AS id FROM generate_series(1, 1000) g;
CREATE ROLE regress_review_acc_a;
CREATE ROLE regress_review_acc_b;
GRANT USAGE ON SCHEMA review_acc TO regress_review_acc_a, regress_review_acc_b;
GRANT SELECT ON review_acc.t TO regress_review_acc_a, regress_review_acc_b;
-- Whether a query is admitted (true) or refused for budget (false, ZP001);
-- any other error propagates.
CREATE FUNCTION review_acc.admitted(query text) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE query;
  RETURN true;
EXCEPTION WHEN SQLSTATE 'ZP001' THEN
  RETURN false;
END $$;
GRANT EXECUTE ON FUNCTION review_acc.admitted(text) TO regress_review_acc_a, regress_review_acc_b;

-- ---------------------------------------------------------------------------
-- Finding 1. An (epsilon, delta) budget admits a charge when EITHER basic
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
-- test/review/adaptive_certificates.py. Whatever the fix (one certificate
-- per budget, a filter proven valid under adaptivity, ...), a budget must
-- not admit both continuations of the same history. Two roles with the
-- same budget and the same first query stand for the two branches.
-- ---------------------------------------------------------------------------
-- test/review/adaptive_certificates.py checks, with the same admission
-- rules, that the adaptive strategy gains nothing under either kind.
-- Under an (epsilon, delta) budget (4, 1e-6): path A is admitted (exactly
-- the budget by basic composition), path B is refused (delta 1e-6 + 1e-9).
SELECT dp_agg.set_budget('regress_review_acc_a', 4, 1e-6);
SELECT dp_agg.set_budget('regress_review_acc_b', 4, 1e-6);
SET SESSION AUTHORIZATION regress_review_acc_a;
SELECT review_acc.admitted('SELECT dp_count(id, 0.0038, 1e-6) FROM review_acc.t') AS q1_admitted;
SELECT review_acc.admitted('SELECT dp_count(id, 3.9962) FROM review_acc.t') AS path_a \gset
RESET SESSION AUTHORIZATION;
SET SESSION AUTHORIZATION regress_review_acc_b;
SELECT review_acc.admitted('SELECT dp_count(id, 0.0038, 1e-6) FROM review_acc.t') AS q1_admitted;
SELECT review_acc.admitted('SELECT dp_count(id, 4.6562, 1e-9) FROM review_acc.t') AS path_b \gset
RESET SESSION AUTHORIZATION;
SELECT :'path_a'::boolean AS path_a, :'path_b'::boolean AS path_b,
       NOT (:'path_a'::boolean AND :'path_b'::boolean) AS never_both_continuations;
-- Under a zCDP budget of the rho of (4, 1e-6): path A (a pure epsilon
-- 3.9962 costs rho 7.98) is refused, path B (rho 0.311) admitted.
SELECT dp_agg.set_budget_zcdp('regress_review_acc_a', dp_agg.zcdp_rho(4, 1e-6));
SELECT dp_agg.set_budget_zcdp('regress_review_acc_b', dp_agg.zcdp_rho(4, 1e-6));
SELECT dp_agg.reset_spent('regress_review_acc_a');
SELECT dp_agg.reset_spent('regress_review_acc_b');
SET SESSION AUTHORIZATION regress_review_acc_a;
SELECT review_acc.admitted('SELECT dp_count(id, 0.0038, 1e-6) FROM review_acc.t') AS q1_admitted;
SELECT review_acc.admitted('SELECT dp_count(id, 3.9962) FROM review_acc.t') AS path_a \gset
RESET SESSION AUTHORIZATION;
SET SESSION AUTHORIZATION regress_review_acc_b;
SELECT review_acc.admitted('SELECT dp_count(id, 0.0038, 1e-6) FROM review_acc.t') AS q1_admitted;
SELECT review_acc.admitted('SELECT dp_count(id, 4.6562, 1e-9) FROM review_acc.t') AS path_b \gset
RESET SESSION AUTHORIZATION;
SELECT :'path_a'::boolean AS path_a, :'path_b'::boolean AS path_b,
       NOT (:'path_a'::boolean AND :'path_b'::boolean) AS never_both_continuations;
-- The kind is the administrator's: an analyst cannot switch its own budget
-- to the kind that would admit the continuation it wants (42501), and the
-- refused continuation charged nothing.
SET SESSION AUTHORIZATION regress_review_acc_a;
SELECT dp_agg.set_budget('regress_review_acc_a', 4, 1e-6);
SELECT dp_agg.set_budget_zcdp('regress_review_acc_a', 1);
SELECT budget_kind, epsilon_spent, rho_spent < 0.000001 AS only_q1_in_rho FROM dp_agg.budgets;
RESET SESSION AUTHORIZATION;

-- ---------------------------------------------------------------------------
-- Cleanup.
-- ---------------------------------------------------------------------------
SET client_min_messages = warning;
SELECT dp_agg.revoke_budget('regress_review_acc_a');
SELECT dp_agg.revoke_budget('regress_review_acc_b');
DROP SCHEMA review_acc CASCADE;
DROP ROLE regress_review_acc_a;
DROP ROLE regress_review_acc_b;
RESET client_min_messages;
