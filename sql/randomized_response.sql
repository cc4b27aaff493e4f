-- Randomized response (local differential privacy): dp_agg.randomized_response
-- and dp_rr_proportion / dp_rr_proportion_se. Nothing here is charged.
\set VERBOSITY terse

-- The empirical rate of truthful answers at epsilon 1 over 200000 calls:
-- p = e/(1+e) = 0.731059; the number of truthful answers is Binomial(n, p),
-- and by the Chernoff bound P(|rate - p| >= t) <= 2 exp(-n KL(p +- t || p)):
-- t = 0.0067 fails with 2.7e-10 (each of the two columns).
SELECT abs(avg(dp_agg.randomized_response(true, 1.0)::int) - exp(1.0) / (1 + exp(1.0))) < 0.0067
       AS truth_rate_ok,
       abs(avg(dp_agg.randomized_response(false, 1.0)::int) - 1 / (1 + exp(1.0))) < 0.0067
       AS flip_rate_ok
FROM generate_series(1, 200000);
-- epsilon 0.1 (p = 0.524979): t = 0.0076 fails with 1.8e-10
SELECT abs(avg(dp_agg.randomized_response(true, 0.1)::int) - exp(0.1) / (1 + exp(0.1))) < 0.0076
       AS small_epsilon_ok
FROM generate_series(1, 200000);
-- NULL in, NULL out (STRICT); VOLATILE: a fresh draw per row
SELECT dp_agg.randomized_response(NULL, 1.0) IS NULL AS null_answer;
SELECT provolatile, proparallel FROM pg_proc WHERE oid = 'dp_agg.randomized_response'::regproc;
-- epsilon is checked
SELECT dp_agg.randomized_response(true, 0);
SELECT dp_agg.randomized_response(true, 'NaN');
SELECT dp_agg.randomized_response(true, 65);

-- The estimate: 100000 respondents, 30% true answers, randomized at
-- epsilon 1. The observed rate is Binomial with mean 0.3 p + 0.7 q =
-- 0.407576: within 0.0107 of it except with 1.1e-10 (Chernoff, as above),
-- so the estimate (observed - q) / (p - q) is within 0.0107 / 0.462117 =
-- 0.0232 of 0.3, and its standard error within [0.0031, 0.0036] (0.003363
-- at the mean observed rate).
CREATE TABLE rr_answers AS
  SELECT g, dp_agg.randomized_response(g % 10 < 3, 1.0) AS answer FROM generate_series(1, 100000) g;
SELECT abs(dp_rr_proportion(answer, 1.0) - 0.3) < 0.0232 AS estimate_ok,
       dp_rr_proportion_se(answer, 1.0) BETWEEN 0.0031 AND 0.0036 AS se_ok
FROM rr_answers;
-- the standard error is the plug-in formula of the observed rate
SELECT abs(dp_rr_proportion_se(answer, 1.0)
           - sqrt(avg(answer::int) * (1 - avg(answer::int)) / count(*))
             / (exp(1.0) / (1 + exp(1.0)) - 1 / (1 + exp(1.0)))) < 1e-12 AS se_formula
FROM rr_answers;
-- GROUP BY and parallel plans (combine) give the same exact estimates
SELECT g % 2 AS half, dp_rr_proportion(answer, 1.0) AS estimate INTO TEMP serial FROM rr_answers GROUP BY 1;
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SELECT bool_and(s.estimate = p.estimate) AS parallel_same
FROM serial s JOIN (SELECT g % 2 AS half, dp_rr_proportion(answer, 1.0) AS estimate
                    FROM rr_answers GROUP BY 1) p USING (half);
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
-- no answers: the uninformed 0.5 with an infinite standard error
SELECT dp_rr_proportion(answer, 1.0), dp_rr_proportion_se(answer, 1.0) FROM rr_answers WHERE false;
-- one epsilon per call
SELECT dp_rr_proportion(answer, CASE WHEN g < 100 THEN 1.0 ELSE 2.0 END) FROM rr_answers;
SELECT dp_rr_proportion(answer, 0) FROM rr_answers;
-- it charges nothing
SELECT epsilon_spent INTO TEMP before FROM dp_agg.budgets WHERE role = session_user;
SELECT dp_rr_proportion(answer, 1.0) IS NOT NULL AS answered FROM rr_answers;
SELECT b.epsilon_spent = a.epsilon_spent AS not_charged
FROM before b, dp_agg.budgets a WHERE a.role = session_user;
SELECT * FROM dp_agg.query_cost('SELECT dp_rr_proportion(answer, 1.0) FROM rr_answers');
DROP TABLE rr_answers;
-- A state written by hand and passed to a final function directly is refused
-- (22023), never converted out of range (found by the second review of issue 29).
SELECT dp_agg.rr_proportion_final('{-5,3,1}'::float8[]);
\echo :LAST_ERROR_SQLSTATE
SELECT dp_agg.rr_proportion_final('{5,30,1}'::float8[]);
\echo :LAST_ERROR_SQLSTATE
SELECT dp_agg.rr_proportion_se_final('{1e300,3,1}'::float8[]);
\echo :LAST_ERROR_SQLSTATE
SELECT dp_agg.rr_proportion_final('{10,3.5,1}'::float8[]);
\echo :LAST_ERROR_SQLSTATE
SELECT round(dp_agg.rr_proportion_final('{10,3,1}'::float8[])::numeric, 6) AS hand_written_but_valid;
