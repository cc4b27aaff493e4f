-- The 95% error margins of the Gaussian forms (delta 1e-6) against the Laplace forms,
-- for a count and for a sum of ages in [0, 110], over the epsilon grid of
-- plot_error_vs_epsilon.py: the figures of docs/choosing_parameters.md ("For one or a few
-- releases, prefer the Laplace forms"). The margins are the extension's exact noise
-- quantiles (dp_count_margin, dp_sum_margin), on which the measured 95th percentiles sit
-- (docs/error_vs_epsilon.png). Costs no budget:
--   psql -X -d postgres -f test/bench/gaussian_vs_laplace_margins.sql
SELECT e AS epsilon,
       dp_count_margin(e) AS count_laplace, dp_count_margin(e, 1e-6) AS count_gauss,
       round((dp_count_margin(e, 1e-6) / nullif(dp_count_margin(e), 0))::numeric, 2) AS count_ratio,
       round(dp_sum_margin(0, 110, e)::numeric, 1) AS sum_laplace,
       round(dp_sum_margin(0, 110, e, 1e-6)::numeric, 1) AS sum_gauss,
       round((dp_sum_margin(0, 110, e, 1e-6) / dp_sum_margin(0, 110, e))::numeric, 2) AS sum_ratio
FROM unnest(ARRAY[0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10]::float8[]) e;
