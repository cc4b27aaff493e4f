-- ===========================================================================
-- The release cache (src/pg/release_cache.h): the same question, asked again
-- by the same role in the same period (dp_agg.release_cache_period), is
-- answered with the rows released for it the first time and is not charged.
-- The stored releases live in files under $PGDATA/dp_agg/release_cache
-- (src/pg/release_store.h), outside any table, so that no ROLLBACK undoes
-- them; each reuse leaves a ledger row of kind 'reused' with epsilon 0.
-- ===========================================================================

-- Applied by the ledger writer (never by users): records that the role was
-- served a stored release. Admitted whenever the role has a budget, even an
-- exhausted one (nothing new is released); a role without any budget is
-- refused, as its charge would be.
CREATE FUNCTION dp_agg.apply_reuse(role_oid oid, role name, session_role name, query_id bigint,
                                   aggregates text, query text, OUT status text)
LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  budget dp_agg.role_budget;
BEGIN
  -- FOR SHARE: the budget recorded with the row is the budget until this
  -- transaction ends (an administrator's change waits, and is chained after).
  SELECT * INTO budget FROM dp_agg.role_budget b
  WHERE b.role_oid = apply_reuse.role_oid AND b.system_identifier = dp_agg.system_identifier()
  FOR SHARE;
  IF NOT FOUND THEN
    status := 'no_budget';
    RETURN;
  END IF;
  PERFORM dp_agg.append_ledger_entry('reused', apply_reuse.role_oid, role, role, session_role,
                                     0, 0, 0, 0, budget, true, apply_reuse.query_id,
                                     apply_reuse.aggregates, left(apply_reuse.query, 1000));
  status := 'reused';
END $$;

-- The stored releases of this database whose period is the current one:
-- administrators see every role's, everyone else their own (decided by the
-- session user, as for dp_agg.ledger).
CREATE FUNCTION dp_agg.release_cache_entries(OUT role_oid oid, OUT current_user_oid oid,
                                             OUT query text, OUT period_start timestamptz,
                                             OUT period_end timestamptz,
                                             OUT stored_at timestamptz, OUT rows bigint,
                                             OUT bytes bigint, OUT times_reused bigint)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'dp_agg_release_cache_entries' LANGUAGE C VOLATILE STRICT;

CREATE VIEW dp_agg.release_cache AS
  SELECT coalesce(r.rolname::text, e.role_oid::text) AS role,
         pg_catalog.current_database() AS database,
         coalesce(u.rolname::text, e.current_user_oid::text) AS current_user_name,
         e.query, e.period_start, e.period_end, e.stored_at, e.rows, e.bytes, e.times_reused
  FROM dp_agg.release_cache_entries() e
  LEFT JOIN pg_catalog.pg_roles r ON r.oid = e.role_oid
  LEFT JOIN pg_catalog.pg_roles u ON u.oid = e.current_user_oid;

-- Removes the stored releases of this database (of one role, or of every
-- role): the next time each question is asked it is released again, and
-- charged (administrators; checks dp_agg.is_admin() itself). Returns how
-- many were removed.
CREATE FUNCTION dp_agg.clear_release_cache(role regrole DEFAULT NULL) RETURNS bigint
AS 'MODULE_PATHNAME', 'dp_agg_clear_release_cache' LANGUAGE C VOLATILE;

COMMENT ON FUNCTION dp_agg.apply_reuse(oid, name, name, bigint, text, text) IS
  'Records one reuse of a stored release in the ledger (kind reused, epsilon 0) for a role with a budget (called by the ledger writer only)';
COMMENT ON FUNCTION dp_agg.release_cache_entries() IS
  'The stored releases of this database in their current period: every role''s for administrators, the session user''s own for everyone else (read them through dp_agg.release_cache)';
COMMENT ON VIEW dp_agg.release_cache IS
  'Stored releases that the same question reuses until the end of their period: administrators see every role''s, everyone else their own';
COMMENT ON FUNCTION dp_agg.clear_release_cache(regrole) IS
  'clear_release_cache([role]): removes the stored releases of this database, of one role or of all, so that those questions are released (and charged) again (administrators)';
