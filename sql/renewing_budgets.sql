-- Budgets that renew (issue 29, item 3; README "Budgets that renew"):
-- dp_agg.set_budget(role, epsilon, delta, renew_every => ...) and
-- set_budget_zcdp(...) make the totals per period. The periods are fixed by a
-- public clock (boundaries renew_from + k * renew_every), the first charge
-- after a boundary records a 'renewal' ledger row with what the ended period
-- spent and starts again from 0, dp_agg.budgets shows the current period,
-- and dp_agg.verify_ledger counts the charges since the last renewal.
-- The periods here are a few seconds long, anchored at a moment the test
-- chooses (renew_from => now()), so that each step runs well
-- inside one period; the test waits for the boundaries.
\set VERBOSITY default

SET client_min_messages = warning;
DROP ROLE IF EXISTS regress_renew_analyst;
DROP ROLE IF EXISTS regress_renew_zcdp;
DROP SCHEMA IF EXISTS renewing_budgets CASCADE;
RESET client_min_messages;
CREATE ROLE regress_renew_analyst LOGIN;
CREATE ROLE regress_renew_zcdp LOGIN;
CREATE SCHEMA renewing_budgets;
CREATE TABLE renewing_budgets.t AS SELECT g AS x FROM generate_series(1, 100) g;
GRANT USAGE ON SCHEMA renewing_budgets TO regress_renew_analyst, regress_renew_zcdp;
GRANT SELECT ON renewing_budgets.t TO regress_renew_analyst, regress_renew_zcdp;

-- 1. The period arithmetic: a public clock, exact, the same in every
-- session (TimeZone and daylight-saving changes do not move it).
SET TimeZone = 'Europe/Paris';
SELECT dp_agg.renewal_period_start('1 day', '1970-01-01 00:00:00+00', '2026-03-29 12:00:00+00')
         = '2026-03-29 00:00:00+00' AS daily_from_midnight_utc,
       dp_agg.renewal_period_end('1 day', '1970-01-01 00:00:00+00', '2026-03-29 12:00:00+00')
         = '2026-03-30 00:00:00+00' AS across_dst_24_hours,
       dp_agg.renewal_period_start('7 days', '2026-01-05 00:00:00+00', '2025-12-31 00:00:00+00')
         = '2025-12-29 00:00:00+00' AS before_the_anchor,
       dp_agg.renewal_period_start('1 day', '2026-01-01 06:00:00+00', '2026-01-01 05:59:59.999999+00')
         = '2025-12-31 06:00:00+00' AS phase_from_the_anchor;
RESET TimeZone;
-- Bad schedules are refused (22023) before anything changes.
SELECT dp_agg.set_budget('regress_renew_analyst', 1, 0, renew_every => interval '1 month');
SELECT dp_agg.set_budget('regress_renew_analyst', 1, 0, renew_every => interval '0.5 seconds');
SELECT dp_agg.set_budget('regress_renew_analyst', 1, 0, renew_every => interval '-1 day');
SELECT dp_agg.set_budget('regress_renew_analyst', 1, 0, renew_every => interval '1 day',
                         renew_from => 'infinity');
SELECT dp_agg.set_budget('regress_renew_analyst', 1, 0, renew_from => now());
SELECT count(*) AS budgets_created FROM dp_agg.budgets WHERE role = 'regress_renew_analyst';

-- 2. A daily budget from the epoch: the view shows the period and the next
-- renewal; the ledger row records the schedule in UTC.
SELECT dp_agg.set_budget('regress_renew_analyst', 1, 0, renew_every => interval '1 day');
SELECT renew_every, renew_from = '1970-01-01 00:00:00+00' AS from_epoch,
       period_start = date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS today_utc,
       next_renewal = period_start + interval '24 hours' AS next_day
FROM dp_agg.budgets WHERE role = 'regress_renew_analyst';
SELECT kind, regexp_replace(query, 'period from .*', 'period from ...') AS query
FROM dp_agg.ledger WHERE role = 'regress_renew_analyst' ORDER BY id;
-- The same schedule again changes nothing; NULL keeps it; interval '0' stops it.
SELECT dp_agg.set_budget('regress_renew_analyst', 1, 0, renew_every => interval '24 hours');
SELECT dp_agg.set_budget('regress_renew_analyst', 2);
SELECT epsilon_total, renew_every FROM dp_agg.budgets WHERE role = 'regress_renew_analyst';
SELECT dp_agg.set_budget('regress_renew_analyst', 1, 0, renew_every => interval '0');
SELECT epsilon_total, renew_every, period_start, next_renewal
FROM dp_agg.budgets WHERE role = 'regress_renew_analyst';

-- 3. A newly renewed budget admits exactly its period's total. Periods of 6
-- seconds, starting now: spend the total, be refused, cross the boundary,
-- spend exactly the total again, be refused again.
SELECT dp_agg.set_budget('regress_renew_analyst', 1, 0, renew_every => interval '6 seconds',
                         renew_from => now());
SET SESSION AUTHORIZATION regress_renew_analyst;
SELECT dp_count(x, 0.5) IS NOT NULL AS answered FROM renewing_budgets.t;
SELECT dp_count(x, 0.5) IS NOT NULL AS answered FROM renewing_budgets.t;
SELECT dp_count(x, 0.0001) IS NOT NULL AS refused FROM renewing_budgets.t;
SELECT epsilon_total, epsilon_spent, epsilon_remaining FROM dp_agg.budgets;
RESET SESSION AUTHORIZATION;
-- Wait for the boundary (the view shows when).
SELECT pg_sleep(extract(epoch FROM next_renewal - clock_timestamp())::float8 + 0.3)
FROM dp_agg.budgets WHERE role = 'regress_renew_analyst';
SET SESSION AUTHORIZATION regress_renew_analyst;
-- Shown renewed before any charge (no ledger row yet: renewal is lazy).
SELECT epsilon_spent, epsilon_remaining FROM dp_agg.budgets;
SELECT count(*) AS renewals_so_far FROM dp_agg.ledger WHERE kind = 'renewal';
SELECT dp_count(x, 0.25) IS NOT NULL AS answered FROM renewing_budgets.t;
SELECT dp_count(x, 0.75) IS NOT NULL AS answered FROM renewing_budgets.t;
SELECT dp_count(x, 0.0001) IS NOT NULL AS refused FROM renewing_budgets.t;
SELECT epsilon_spent, epsilon_remaining FROM dp_agg.budgets;
SELECT kind, epsilon FROM dp_agg.ledger ORDER BY id;
RESET SESSION AUTHORIZATION;
-- The renewal row forgot exactly the first period's 1.0, and the ledger verifies.
SELECT kind, epsilon, delta, rho, zcdp_delta, session_user_name,
       query ~ '^renews every 00:00:06 from .* UTC; this period from .* UTC$' AS records_schedule
FROM dp_agg.ledger WHERE role = 'regress_renew_analyst' AND kind = 'renewal';
SELECT ok, problems FROM dp_agg.verify_ledger();

-- 4. Quiet periods leave no renewal row: the next charge forgets what the
-- last period with charges spent.
SELECT pg_sleep(extract(epoch FROM next_renewal - clock_timestamp())::float8 + 6.3)
FROM dp_agg.budgets WHERE role = 'regress_renew_analyst';
SET SESSION AUTHORIZATION regress_renew_analyst;
SELECT dp_count(x, 1) IS NOT NULL AS answered FROM renewing_budgets.t;
RESET SESSION AUTHORIZATION;
SELECT kind, epsilon FROM dp_agg.ledger WHERE role = 'regress_renew_analyst' AND id >
  (SELECT max(id) FROM dp_agg.ledger WHERE role = 'regress_renew_analyst' AND kind = 'charge'
   AND epsilon = 0.75) ORDER BY id;
SELECT ok FROM dp_agg.verify_ledger();

-- 5. The zCDP kind renews the same way (rho and delta per period).
SELECT dp_agg.set_budget_zcdp('regress_renew_zcdp', 0.125, 0, renew_every => interval '6 seconds',
                              renew_from => now());
SET SESSION AUTHORIZATION regress_renew_zcdp;
SELECT dp_count(x, 0.5) IS NOT NULL AS answered FROM renewing_budgets.t;
SELECT dp_count(x, 0.01) IS NOT NULL AS refused FROM renewing_budgets.t;
SELECT rho_total, rho_spent, budget_kind FROM dp_agg.budgets;
RESET SESSION AUTHORIZATION;
SELECT pg_sleep(extract(epoch FROM next_renewal - clock_timestamp())::float8 + 0.3)
FROM dp_agg.budgets WHERE role = 'regress_renew_zcdp';
SET SESSION AUTHORIZATION regress_renew_zcdp;
SELECT rho_spent FROM dp_agg.budgets;
SELECT dp_count(x, 0.5) IS NOT NULL AS answered FROM renewing_budgets.t;
SELECT dp_count(x, 0.01) IS NOT NULL AS refused FROM renewing_budgets.t;
RESET SESSION AUTHORIZATION;
SELECT kind, epsilon, rho FROM dp_agg.ledger WHERE role = 'regress_renew_zcdp' ORDER BY id;
SELECT ok FROM dp_agg.verify_ledger();

-- 6. verify_ledger catches a renewal row changed outside dp_agg (a superuser
-- who disables the triggers): the hash no longer matches; and one that
-- forgot more than its period spent, even with its hash recomputed.
BEGIN;
ALTER TABLE dp_agg.ledger_entry DISABLE TRIGGER ledger_entry_append_only;
UPDATE dp_agg.ledger_entry SET epsilon = 5
WHERE kind = 'renewal' AND role_name = 'regress_renew_analyst'
  AND seq = (SELECT min(seq) FROM dp_agg.ledger_entry WHERE kind = 'renewal');
SELECT ok, first_bad_entry = (SELECT min(seq) FROM dp_agg.ledger_entry WHERE kind = 'renewal')
         AS points_at_it,
       array_to_string(problems, E'\n') ~ 'does not match its hash' AS hash_problem,
       array_to_string(problems, E'\n') ~ 'forgot epsilon 5' AS amount_problem
FROM dp_agg.verify_ledger();
ROLLBACK;
SELECT ok FROM dp_agg.verify_ledger();

-- 7. A budget row whose schedule is changed outside dp_agg (to renew every
-- second, say) no longer matches the digest its last ledger entry recorded.
BEGIN;
ALTER TABLE dp_agg.role_budget DISABLE TRIGGER ALL;
UPDATE dp_agg.role_budget SET renew_every = interval '1 second'
WHERE role_name = 'regress_renew_analyst';
SELECT ok, array_to_string(problems, E'\n') ~ 'regress_renew_analyst.*changed outside' AS found
FROM dp_agg.verify_ledger();
ROLLBACK;

-- Clean up.
SELECT dp_agg.revoke_budget('regress_renew_analyst');
SELECT dp_agg.revoke_budget('regress_renew_zcdp');
DROP SCHEMA renewing_budgets CASCADE;
