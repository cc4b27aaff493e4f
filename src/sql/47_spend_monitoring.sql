-- ===========================================================================
-- Spend you can watch (README "Watching spend").
--
-- Every charge's ledger row records the query's identifier (query_id, as
-- pg_stat_statements computes it: dp_agg enables compute_query_id = auto's
-- computation when preloaded) and its text. dp_agg.spend_by_query sums the
-- charges per role, query shape and day, like pg_stat_statements does per
-- query; dp_agg.budget_alert_fraction raises a NOTICE for the analyst and a
-- LOG line for the administrator when a charge leaves a role little of its
-- budget (src/pg/spend_alert.h).
-- ===========================================================================

-- Administrators only (like dp_agg.ledger's other roles' rows): everyone
-- else sees no rows. role is the role's current name (the name it had at its
-- last charge if it was dropped); day is the charge's date in the session's
-- TimeZone; query_id is NULL for charges recorded without one (before 0.2.0,
-- or with compute_query_id = off); sample_query is the text of the latest
-- charge of that shape that day.
CREATE VIEW dp_agg.spend_by_query WITH (security_barrier) AS
  SELECT coalesce(r.rolname, s.role_name) AS role, s.query_id, s.day, s.charges, s.epsilon,
         s.delta, s.rho, s.zcdp_delta, s.sample_query, s.first_charge, s.last_charge
  FROM (SELECT e.role_oid, (array_agg(e.role_name ORDER BY e.id DESC))[1] AS role_name,
               e.query_id, e.recorded_at::date AS day, count(*) AS charges,
               sum(e.epsilon) AS epsilon, sum(e.delta) AS delta, sum(e.rho) AS rho,
               sum(e.zcdp_delta) AS zcdp_delta,
               (array_agg(e.query ORDER BY e.id DESC))[1] AS sample_query,
               min(e.recorded_at) AS first_charge, max(e.recorded_at) AS last_charge
        FROM dp_agg.ledger_entry e
        WHERE e.kind = 'charge' AND dp_agg.is_admin()
        GROUP BY e.role_oid, CASE WHEN e.role_oid IS NULL THEN e.role_name END, e.query_id,
                 e.recorded_at::date) s
  LEFT JOIN pg_catalog.pg_roles r ON r.oid = s.role_oid;

COMMENT ON VIEW dp_agg.spend_by_query IS
  'Privacy spending per role, query shape (query_id, with a sample text) and day: charges and epsilon, delta, rho, zCDP delta spent (administrators)';
