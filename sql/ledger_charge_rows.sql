-- The ledger writer applies the common charge (a budget that does not renew
-- and admits it) in C, and every other case through dp_agg.apply_charge
-- (issue 31, src/pg/ledger_fast_charge.h); a batch of charges locks the
-- chain head once and writes it once (src/pg/ledger_chain.h). Either way the
-- ledger must hold exactly the rows dp_agg.apply_charge records: each charge
-- row carries the digest of the budget row right after it, the budget's
-- spent amounts are the sums of its charges, the chain head is the last row,
-- and a charge to a budget given a renewal schedule, an exhausted budget or
-- no budget takes the SQL path with its own outcome.
\set VERBOSITY default

SET client_min_messages = warning;
DROP ROLE IF EXISTS regress_charge_rows_c;
DROP ROLE IF EXISTS regress_charge_rows_sql;
DROP ROLE IF EXISTS regress_charge_rows_none;
DROP SCHEMA IF EXISTS ledger_charge_rows CASCADE;
RESET client_min_messages;
CREATE ROLE regress_charge_rows_c;
CREATE ROLE regress_charge_rows_sql;
CREATE ROLE regress_charge_rows_none;
CREATE SCHEMA ledger_charge_rows;
CREATE TABLE ledger_charge_rows.t AS SELECT g AS x FROM generate_series(1, 100) g;
GRANT USAGE ON SCHEMA ledger_charge_rows TO PUBLIC;
GRANT SELECT ON ledger_charge_rows.t TO PUBLIC;
SELECT dp_agg.set_budget('regress_charge_rows_c', 2, 1e-6);
SELECT dp_agg.set_budget('regress_charge_rows_sql', 2, 1e-6);

-- After each charge through the writer: the last ledger row of the role is
-- a charge whose budget digest is that of the budget row as it now is.
CREATE FUNCTION ledger_charge_rows.last_charge_matches(role name) RETURNS boolean
LANGUAGE sql AS $$
  SELECT e.kind = 'charge' AND e.budget_digest = dp_agg.budget_digest(b)
         AND e.entry_hash = h.entry_hash AND e.seq = h.seq
  FROM dp_agg.role_budget b, dp_agg.ledger_head h,
       LATERAL (SELECT * FROM dp_agg.ledger_entry e
                WHERE e.role_oid = b.role_oid ORDER BY e.id DESC LIMIT 1) e
  WHERE b.role_oid = role::regrole::oid
$$;

SET SESSION AUTHORIZATION regress_charge_rows_c;
SELECT dp_count(x, 0.5) IS NOT NULL AS answered FROM ledger_charge_rows.t;
RESET SESSION AUTHORIZATION;
SELECT ledger_charge_rows.last_charge_matches('regress_charge_rows_c');
SET SESSION AUTHORIZATION regress_charge_rows_c;
SELECT dp_count(x, 0.25, 1e-7) IS NOT NULL AS answered FROM ledger_charge_rows.t;
RESET SESSION AUTHORIZATION;
SELECT ledger_charge_rows.last_charge_matches('regress_charge_rows_c');

-- The same charges recorded by dp_agg.apply_charge itself, for the other
-- role: the rows agree in every column but the role, the ids, the chain and
-- the time (the query text is the writer's; here it is given the same).
SELECT a.status, a.budget_kind, a.epsilon_spent, a.delta_spent, a.rho_spent
FROM (SELECT * FROM dp_agg.ledger_entry
      WHERE role_oid = 'regress_charge_rows_c'::regrole::oid AND kind = 'charge'
      ORDER BY id LIMIT 1) e,
     dp_agg.apply_charge('regress_charge_rows_sql'::regrole::oid, 'regress_charge_rows_sql',
                         'regress_charge_rows_sql', e.epsilon, e.delta, e.query_id,
                         e.aggregates, e.query, e.rho, e.zcdp_delta) a;
SELECT a.status, a.budget_kind, a.epsilon_spent, a.delta_spent, a.rho_spent
FROM (SELECT * FROM dp_agg.ledger_entry
      WHERE role_oid = 'regress_charge_rows_c'::regrole::oid AND kind = 'charge'
      ORDER BY id OFFSET 1 LIMIT 1) e,
     dp_agg.apply_charge('regress_charge_rows_sql'::regrole::oid, 'regress_charge_rows_sql',
                         'regress_charge_rows_sql', e.epsilon, e.delta, e.query_id,
                         e.aggregates, e.query, e.rho, e.zcdp_delta) a;
SELECT c.kind, c.session_user_name = 'regress_charge_rows_c' AS session_user_is_role,
       c.current_user_name = 'regress_charge_rows_c' AS current_user_is_role,
       c.epsilon, c.delta, c.rho, c.zcdp_delta, c.aggregates, c.query,
       (c.epsilon, c.delta, c.rho, c.zcdp_delta, c.query_id, c.aggregates, c.query,
        c.system_identifier)
         IS NOT DISTINCT FROM
       (s.epsilon, s.delta, s.rho, s.zcdp_delta, s.query_id, s.aggregates, s.query,
        s.system_identifier) AS same_as_sql,
       c.seq < s.seq AS chained_before
FROM (SELECT *, row_number() OVER (ORDER BY id) AS n FROM dp_agg.ledger_entry
      WHERE role_oid = 'regress_charge_rows_c'::regrole::oid AND kind = 'charge') c
JOIN (SELECT *, row_number() OVER (ORDER BY id) AS n FROM dp_agg.ledger_entry
      WHERE role_oid = 'regress_charge_rows_sql'::regrole::oid AND kind = 'charge') s
  USING (n)
ORDER BY n;
-- The two budgets are in the same state (but for the role), so their rows'
-- digests differ only through the role: the spent amounts agree.
SELECT b.role_name, b.epsilon_spent, b.delta_spent, b.rho_spent, b.zcdp_delta_spent
FROM dp_agg.role_budget b
WHERE b.role_name IN ('regress_charge_rows_c', 'regress_charge_rows_sql') ORDER BY 1;

-- Exhausted: refused through dp_agg.apply_charge, nothing recorded.
SET SESSION AUTHORIZATION regress_charge_rows_c;
SELECT dp_count(x, 1.5) FROM ledger_charge_rows.t;
RESET SESSION AUTHORIZATION;
SELECT count(*) AS charges FROM dp_agg.ledger_entry
WHERE role_oid = 'regress_charge_rows_c'::regrole::oid AND kind = 'charge';
-- No budget at all.
SET SESSION AUTHORIZATION regress_charge_rows_none;
SELECT dp_count(x, 0.5) FROM ledger_charge_rows.t;
RESET SESSION AUTHORIZATION;

-- A budget that renews takes the SQL path (dp_agg.renew_budget_if_due
-- first); its charge is recorded the same way.
SELECT dp_agg.set_budget('regress_charge_rows_c', 2, 1e-6, renew_every => '1 day');
SET SESSION AUTHORIZATION regress_charge_rows_c;
SELECT dp_count(x, 0.5) IS NOT NULL AS answered FROM ledger_charge_rows.t;
RESET SESSION AUTHORIZATION;
SELECT ledger_charge_rows.last_charge_matches('regress_charge_rows_c');
-- And back to a budget that does not renew: the C path again (renew_every
-- 0 ends the schedule; without it set_budget keeps the schedule and the
-- charge below would take the SQL path again).
SELECT dp_agg.set_budget('regress_charge_rows_c', 3, 1e-6, renew_every => interval '0');
SELECT renew_every IS NULL AS does_not_renew FROM dp_agg.role_budget
WHERE role_name = 'regress_charge_rows_c';
SET SESSION AUTHORIZATION regress_charge_rows_c;
SELECT dp_count(x, 0.5) IS NOT NULL AS answered FROM ledger_charge_rows.t;
RESET SESSION AUTHORIZATION;
SELECT ledger_charge_rows.last_charge_matches('regress_charge_rows_c');
SELECT epsilon_spent FROM dp_agg.role_budget WHERE role_name = 'regress_charge_rows_c';

-- The whole ledger verifies: chain, head, digests, spent amounts.
SELECT ok, problems FROM dp_agg.verify_ledger();

SET client_min_messages = warning;
SELECT dp_agg.revoke_budget('regress_charge_rows_c');
SELECT dp_agg.revoke_budget('regress_charge_rows_sql');
DROP SCHEMA ledger_charge_rows CASCADE;
RESET client_min_messages;
DROP ROLE regress_charge_rows_c, regress_charge_rows_sql, regress_charge_rows_none;
