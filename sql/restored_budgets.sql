-- Budgets restored from another cluster (issue 28, finding 2), and set_budget
-- saying when it lowers a total (finding 5). A restore is simulated here by
-- rows that carry another cluster's system identifier (42) and the OIDs that
-- cluster had given: TAP 008 does it with pg_dumpall into a second cluster.
\set VERBOSITY default
SET client_min_messages = notice;
CREATE ROLE regress_dp_restore_alice LOGIN;
CREATE ROLE regress_dp_restore_zed LOGIN;
CREATE ROLE regress_dp_restore_carol LOGIN;
CREATE ROLE regress_dp_restore_dave LOGIN;
CREATE TABLE restore_t AS SELECT g AS x FROM generate_series(1, 10) g;
GRANT SELECT ON restore_t TO PUBLIC;

-- 1. set_budget says when it lowers a total, with the old and new totals;
-- raising says nothing.
SELECT dp_agg.set_budget('regress_dp_restore_dave', 10, 1e-4);
SELECT dp_agg.set_budget('regress_dp_restore_dave', 12);
SELECT dp_agg.set_budget('regress_dp_restore_dave', 6);
SELECT dp_agg.set_budget('regress_dp_restore_dave', 6, 1e-5);
SELECT dp_agg.set_budget_zcdp('regress_dp_restore_dave', 0.5, 1e-6);
SELECT dp_agg.set_budget_zcdp('regress_dp_restore_dave', 0.25, 1e-6);
SELECT dp_agg.revoke_budget('regress_dp_restore_dave');

-- 2. Restored rows: alice's budget, restored under an OID that zed has here
-- (the collision pg_dumpall gives when the roles were created in another
-- order), and two budgets named carol (one of a role dropped in the old
-- cluster), and one whose name no role has.
INSERT INTO dp_agg.role_budget (role_name, epsilon_total, epsilon_spent, delta_total,
                                delta_spent, role_oid, system_identifier, updated_at)
VALUES ('regress_dp_restore_alice', 10, 3.3, 0.0001, 0, 'regress_dp_restore_zed'::regrole, 42,
        '2025-01-01'),
       ('regress_dp_restore_carol', 2, 0.5, 0, 0, 1000001, 42, '2024-01-01'),
       ('regress_dp_restore_carol', 4, 0.25, 0, 0, 1000002, 42, '2025-01-01'),
       ('regress_dp_restore_nobody', 1, 1, 0, 0, 1000003, 42, '2025-01-01');
-- (Restored ledger rows arrive chained, with their hashes: here each
-- budget's charge is appended to this database's chain as one, with the
-- other cluster's identifier, recording the budget after it.)
SELECT count(dp_agg.append_ledger_entry('charge', b.role_oid, b.role_name, b.role_name, NULL,
         b.epsilon_spent, b.delta_spent, 0, 0, b, true, NULL, NULL,
         'SELECT ' || b.role_name || '''s secret question', 42)) AS restored_charges
FROM (SELECT * FROM dp_agg.role_budget WHERE system_identifier = 42
      ORDER BY role_oid) b;
SELECT role, epsilon_spent, orphaned, role_dropped FROM dp_agg.budgets
WHERE role LIKE 'regress_dp_restore%' ORDER BY role, epsilon_spent;

-- zed has the OID of alice's restored row: he has no budget, and sees none of
-- its ledger rows.
SET SESSION AUTHORIZATION regress_dp_restore_zed;
SELECT dp_count(1.0) FROM restore_t;
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) FROM dp_agg.ledger;
SELECT count(*) FROM dp_agg.budgets;
RESET SESSION AUTHORIZATION;
-- alice is refused, with the way out.
SET SESSION AUTHORIZATION regress_dp_restore_alice;
SELECT dp_count(1.0) FROM restore_t;
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM dp_agg.remaining_budget();
RESET SESSION AUTHORIZATION;
SELECT count(*) AS charges FROM dp_agg.ledger_entry
WHERE role_name LIKE 'regress_dp_restore%' AND kind = 'charge';

-- 3. No fresh budget beside a restored one (ZP004); zed, whose name no
-- restored budget has, gets one. (alice's restored OID is zed's: terse.)
SELECT dp_agg.set_budget_zcdp('regress_dp_restore_carol', 1);
\echo :LAST_ERROR_SQLSTATE
\set VERBOSITY terse
SELECT dp_agg.set_budget('regress_dp_restore_alice', 100);
\echo :LAST_ERROR_SQLSTATE
SELECT dp_agg.add_budget('regress_dp_restore_alice', 1);
\echo :LAST_ERROR_SQLSTATE
\set VERBOSITY default
SELECT dp_agg.set_budget('regress_dp_restore_zed', 1);

-- 4. Only administrators re-attach.
SET SESSION AUTHORIZATION regress_dp_restore_alice;
SELECT * FROM dp_agg.reattach_budgets();
\echo :LAST_ERROR_SQLSTATE
RESET SESSION AUTHORIZATION;

-- 5. reattach_budgets: alice by name; carol's two left to a choice; nobody's
-- left for want of a role. (Role OIDs assigned here masked.)
SELECT role, previous_system_identifier, epsilon_spent, reattached,
       regexp_replace(outcome, 'OID [0-9]+', 'OID N', 'g') AS outcome
FROM dp_agg.reattach_budgets() ORDER BY role, epsilon_spent;
SELECT role, epsilon_total, epsilon_spent, delta_total, orphaned FROM dp_agg.budgets
WHERE role LIKE 'regress_dp_restore%' ORDER BY role, epsilon_spent;
SELECT kind, role, epsilon, delta,
       regexp_replace(query, 'OID [0-9]+', 'OID N', 'g') AS query
FROM dp_agg.ledger WHERE kind = 'reattach_budget' ORDER BY id;

-- 6. reattach_budget: one chosen budget; refusals.
SELECT dp_agg.reattach_budget('regress_dp_restore_carol', 1000009);
\echo :LAST_ERROR_SQLSTATE
SELECT dp_agg.reattach_budget('regress_dp_restore_zed', 1000003);
\echo :LAST_ERROR_SQLSTATE
SELECT dp_agg.reattach_budget('regress_dp_restore_carol', 1000002, 42);
SELECT role, epsilon_spent, orphaned FROM dp_agg.budgets
WHERE role LIKE 'regress_dp_restore_carol' ORDER BY epsilon_spent;
-- Run again: what is left is reported, nothing changes.
SELECT role, reattached, regexp_replace(outcome, 'OID [0-9]+', 'OID N', 'g') AS outcome
FROM dp_agg.reattach_budgets() ORDER BY role, epsilon_spent;

-- 7. After: alice is charged on top of what she spent, and sees her
-- budget's earlier ledger rows; zed still sees none of them.
SET SESSION AUTHORIZATION regress_dp_restore_alice;
SELECT dp_count(1.0) IS NOT NULL AS answered FROM restore_t;
SELECT epsilon_spent FROM dp_agg.budgets;
SELECT kind, epsilon, regexp_replace(query, 'OID [0-9]+', 'OID N', 'g') AS query
FROM dp_agg.ledger ORDER BY id;
RESET SESSION AUTHORIZATION;
SET SESSION AUTHORIZATION regress_dp_restore_zed;
SELECT kind, epsilon FROM dp_agg.ledger ORDER BY id;
RESET SESSION AUTHORIZATION;

-- 8. Review 28: a restored budget is re-attached only as its own ledger rows
-- recorded it. Changed before its re-attachment (here: its spending set
-- back), it is refused (ZP004), and verify_ledger says what differs.
BEGIN;
UPDATE dp_agg.role_budget SET epsilon_spent = 0
WHERE role_oid = 1000001 AND system_identifier = 42;
SELECT ok, cardinality(problems) AS problems FROM dp_agg.verify_ledger();
SELECT role, reattached, outcome FROM dp_agg.reattach_budgets() WHERE previous_role_oid = 1000001;
SELECT dp_agg.reattach_budget('regress_dp_restore_dave', 1000001, 42);
\echo :LAST_ERROR_SQLSTATE
ROLLBACK;
-- A re-attachment recorded with amounts its budget's ledger rows do not
-- charge (as before this check: the row changed, then re-attached) is
-- reported by verify_ledger, whatever the budget looks like now.
BEGIN;
UPDATE dp_agg.role_budget
   SET role_oid = 'regress_dp_restore_dave'::regrole, system_identifier = dp_agg.system_identifier(),
       role_name = 'regress_dp_restore_dave', reattached_from = '{1000001@42}',
       epsilon_spent = 0
 WHERE role_oid = 1000001 AND system_identifier = 42;
SELECT dp_agg.append_ledger_entry('reattach_budget', b.role_oid, b.role_name, 'postgres', NULL,
         0, 0, 0, 0, b, true, NULL, NULL,
         're-attached the budget restored from role regress_dp_restore_carol (OID 1000001 in the cluster with system identifier 42): epsilon_delta budget, epsilon 0 of 2 and delta 0 of 0 spent')
FROM dp_agg.role_budget b WHERE b.role_oid = 'regress_dp_restore_dave'::regrole;
SELECT ok, regexp_replace(array_to_string(problems, '; '), 'entry [0-9]+', 'entry N', 'g') AS problems
FROM dp_agg.verify_ledger();
ROLLBACK;
-- A restored budget removed while it waits for its re-attachment (no
-- trigger refuses it) is reported: its ledger rows say it exists.
BEGIN;
DELETE FROM dp_agg.role_budget WHERE role_oid = 1000001 AND system_identifier = 42;
SELECT ok, regexp_replace(array_to_string(problems, '; '), 'entry [0-9]+', 'entry N', 'g') AS problems
FROM dp_agg.verify_ledger();
ROLLBACK;

-- Clean up through dp_agg, so that the ledger records every removal and
-- stays verifiable: the restored budgets left are re-attached to dave and
-- revoked with the budgets of this cluster.
SELECT dp_agg.reattach_budget('regress_dp_restore_dave', 1000001, 42);
SELECT dp_agg.revoke_budget('regress_dp_restore_dave');
SELECT dp_agg.reattach_budget('regress_dp_restore_dave', 1000003, 42);
SELECT dp_agg.revoke_budget(b.role_oid::regrole) FROM dp_agg.role_budget b
WHERE b.role_name LIKE 'regress_dp_restore%' AND b.system_identifier = dp_agg.system_identifier();
SELECT count(*) AS left_over FROM dp_agg.role_budget WHERE role_name LIKE 'regress_dp_restore%';
SELECT ok, problems FROM dp_agg.verify_ledger();
DROP TABLE restore_t;
DROP ROLE regress_dp_restore_alice, regress_dp_restore_zed, regress_dp_restore_carol,
  regress_dp_restore_dave;
