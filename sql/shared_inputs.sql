-- Aggregates with identical inputs are separate call sites (review of issue
-- 31's per-row and per-group fast paths). PostgreSQL shares one transition
-- state between aggregates with the same transition function, arguments and
-- initial value (and one result between identical calls) unless they are
-- volatile; dp_agg's aggregates are (src/sql/80_volatility.sql), so every
-- call keeps its own state, plans and release, and is charged exactly its
-- own cost. Were a transition ever shared (a non-volatile aggregate, another
-- PostgreSQL rule), these checks fail: call_sites.cpp then charges each output
-- the largest rho a count, sum or mean of its parameters costs (before this
-- suite: the first aggregate's kind only, so dp_avg then dp_sum was charged
-- twice a mean's rho, less than a mean's plus a sum's).
SET search_path = public, dp_agg;

-- rho of the (epsilon, delta) forms: a mean's and a sum's differ, so a query
-- with both is charged exactly their sum, in either order.
SELECT rho AS rho_sum FROM dp_agg.query_cost(
  'SELECT dp_sum(x, 0, 1000, 1.0, 1e-6) FROM numbers') \gset
SELECT rho AS rho_avg FROM dp_agg.query_cost(
  'SELECT dp_avg(x, 0, 1000, 1.0, 1e-6) FROM numbers') \gset
SELECT :rho_sum <> :rho_avg AS kinds_differ;
SELECT epsilon, delta, rho = :rho_sum + :rho_avg AS rho_is_the_sum
FROM dp_agg.query_cost('SELECT dp_avg(x, 0, 1000, 1.0, 1e-6), dp_sum(x, 0, 1000, 1.0, 1e-6) FROM numbers');
SELECT epsilon, delta, rho = :rho_sum + :rho_avg AS rho_is_the_sum
FROM dp_agg.query_cost('SELECT dp_sum(x, 0, 1000, 1.0, 1e-6), dp_avg(x, 0, 1000, 1.0, 1e-6) FROM numbers');

-- The same for a real run (the ledger), and an identical call twice: two
-- releases, two charges.
SELECT epsilon_spent AS eps0, rho_spent AS rho0 FROM dp_agg.budgets WHERE role = session_user \gset
SELECT dp_avg(x, 0, 1000, 1.0, 1e-6) IS NOT NULL AS a, dp_sum(x, 0, 1000, 1.0, 1e-6) IS NOT NULL AS s
FROM numbers;
SELECT (epsilon_spent - :eps0)::float8 AS epsilon_charged, rho_spent - :rho0 = :rho_sum + :rho_avg AS rho_is_the_sum
FROM dp_agg.budgets WHERE role = session_user;
SELECT epsilon_spent AS eps0 FROM dp_agg.budgets WHERE role = session_user \gset
SELECT dp_sum(x, 0, 1000, 0.5) IS NOT NULL AS first, dp_sum(x, 0, 1000, 0.5) IS NOT NULL AS second
FROM numbers;
SELECT (epsilon_spent - :eps0)::float8 AS epsilon_charged FROM dp_agg.budgets WHERE role = session_user;

-- Were the transition shared, the charge must still cover both releases:
-- forced here by marking the two aggregates immutable (a superuser's catalog
-- edit, rolled back). Charged twice the larger rho, never less than the sum
-- (the first aggregate's kind alone charged dp_avg then dp_sum twice a
-- mean's rho).
BEGIN;
UPDATE pg_proc SET provolatile = 'i'
WHERE prokind = 'a' AND proname IN ('dp_sum', 'dp_avg')
  AND oid IN (SELECT objid FROM pg_depend WHERE classid = 'pg_proc'::regclass AND deptype = 'e'
              AND refobjid = (SELECT oid FROM pg_extension WHERE extname = 'dp_agg'));
SELECT epsilon, delta, rho >= :rho_sum + :rho_avg AS covers_both,
       rho = 2 * greatest(:rho_sum, :rho_avg) AS twice_the_larger
FROM dp_agg.query_cost('SELECT dp_avg(x, 0, 1000, 1.0, 1e-6), dp_sum(x, 0, 1000, 1.0, 1e-6) FROM numbers');
SELECT epsilon, delta, rho >= :rho_sum + :rho_avg AS covers_both,
       rho = 2 * greatest(:rho_sum, :rho_avg) AS twice_the_larger
FROM dp_agg.query_cost('SELECT dp_sum(x, 0, 1000, 1.0, 1e-6), dp_avg(x, 0, 1000, 1.0, 1e-6) FROM numbers');
ROLLBACK;

-- What makes it so: every aggregate of the extension is volatile.
SELECT count(*) AS non_volatile_aggregates
FROM pg_proc p JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid
  AND d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'dp_agg'
WHERE p.prokind = 'a' AND p.provolatile <> 'v';
