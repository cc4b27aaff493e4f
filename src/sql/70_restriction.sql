
-- ---------------------------------------------------------------------------
-- Restricted analysts and protected tables.
--
--   SECURITY LABEL FOR dp_agg ON TABLE t IS 'protected';
--   SECURITY LABEL FOR dp_agg ON ROLE r IS 'restricted';
--
-- A restricted role holds no SELECT on protected tables (dp_agg refuses a
-- label or GRANT that would break this); each query that passes dp_agg's rules
-- is given access as the table owner. Without the preloaded library nothing
-- grants it, so a restricted role then reads nothing.
-- ---------------------------------------------------------------------------

-- dp_agg.group_selection(epsilon, delta): true for a group released by
-- (epsilon, delta) partition selection (the optimal rule, partition_selection.h).
-- dp_agg puts it into HAVING when a restricted role groups protected rows.
CREATE FUNCTION dp_agg.group_selection_transfn(dp_agg.aggregate_state, float8, float8)
  RETURNS dp_agg.aggregate_state AS 'MODULE_PATHNAME', 'dp_group_selection_transfn'
  LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.group_selection_final(dp_agg.aggregate_state)
  RETURNS boolean AS 'MODULE_PATHNAME', 'dp_group_selection_final'
  LANGUAGE C VOLATILE PARALLEL SAFE;
CREATE AGGREGATE dp_agg.group_selection(float8, float8) (
  SFUNC = dp_agg.group_selection_transfn, STYPE = dp_agg.aggregate_state,
  INITCOND = 'uninitialized', FINALFUNC = dp_agg.group_selection_final,
  COMBINEFUNC = dp_agg.combine, PARALLEL = SAFE
);

-- Convenience functions beside the labels. They run as the extension owner
-- so that members of dp_agg.admin_role need not own the tables; the label
-- provider itself checks that the session user is an administrator.
CREATE FUNCTION dp_agg.set_label(object_kind text, object_name text, new_label text)
RETURNS void LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF object_kind NOT IN ('TABLE', 'ROLE', 'COLUMN') THEN
    RAISE EXCEPTION 'dp_agg labels only tables, columns and roles' USING ERRCODE = 'invalid_parameter_value';
  END IF;
  EXECUTE format('SECURITY LABEL FOR dp_agg ON %s %s IS %s', object_kind, object_name,
                 coalesce(quote_literal(new_label), 'NULL'));
END $$;
CREATE FUNCTION dp_agg.protect_table(target regclass) RETURNS void
LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$ SELECT dp_agg.set_label('TABLE', target::text, 'protected') $$;
CREATE FUNCTION dp_agg.unprotect_table(target regclass) RETURNS void
LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$ SELECT dp_agg.set_label('TABLE', target::text, NULL) $$;
CREATE FUNCTION dp_agg.restrict_role(target regrole) RETURNS void
LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$ SELECT dp_agg.set_label('ROLE', target::text, 'restricted') $$;
CREATE FUNCTION dp_agg.unrestrict_role(target regrole) RETURNS void
LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$ SELECT dp_agg.set_label('ROLE', target::text, NULL) $$;
-- PUBLIC may call them (90_privileges.sql): the label provider refuses everyone but
-- superusers and members of dp_agg.admin_role (judged by the session user).

CREATE FUNCTION dp_agg.set_privacy_unit(target regclass, unit_column name) RETURNS void
LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$ SELECT dp_agg.set_label('COLUMN', format('%s.%I', target, unit_column), 'privacy_unit') $$;
CREATE FUNCTION dp_agg.unset_privacy_unit(target regclass, unit_column name) RETURNS void
LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$ SELECT dp_agg.set_label('COLUMN', format('%s.%I', target, unit_column), NULL) $$;

-- dp_agg.unit_group_sample(max_groups) OVER (PARTITION BY unit): true for a
-- uniformly random subset of min(max_groups, rows) rows of the partition,
-- drawn from OpenSSL's CSPRNG. dp_agg's privacy-unit rewrite keeps those of
-- each unit's groups; restricted roles may not call it themselves.
-- PARALLEL RESTRICTED: computed in the leader only.
CREATE FUNCTION dp_agg.unit_group_sample(integer) RETURNS boolean
  AS 'MODULE_PATHNAME', 'dp_unit_group_sample'
  LANGUAGE C WINDOW VOLATILE STRICT PARALLEL RESTRICTED;

CREATE VIEW dp_agg.protected_tables AS
  SELECT l.objoid::regclass AS table_name
  FROM pg_catalog.pg_seclabel l
  WHERE l.provider = 'dp_agg' AND l.classoid = 'pg_catalog.pg_class'::regclass
    AND l.objsubid = 0 AND l.label = 'protected';
CREATE VIEW dp_agg.restricted_roles AS
  SELECT l.objoid::regrole AS role_name
  FROM pg_catalog.pg_shseclabel l
  WHERE l.provider = 'dp_agg' AND l.classoid = 'pg_catalog.pg_authid'::regclass
    AND l.label = 'restricted';

COMMENT ON AGGREGATE dp_agg.group_selection(float8, float8) IS
  'True for a group released by (epsilon, delta)-DP partition selection: a group of n rows (or units) with the optimal probability for n (Desfontaines et al., PoPETs 2022); dp_agg adds it to HAVING for restricted roles';
COMMENT ON FUNCTION dp_agg.set_label(text, text, text) IS
  'Sets or removes the dp_agg security label of a table or role (internal; use the four functions beside it)';
COMMENT ON FUNCTION dp_agg.protect_table(regclass) IS
  'protect_table(table): labels a table protected, so restricted roles reach it only through private aggregates (administrators)';
COMMENT ON FUNCTION dp_agg.unprotect_table(regclass) IS
  'unprotect_table(table): removes the protected label of a table (administrators)';
COMMENT ON FUNCTION dp_agg.restrict_role(regrole) IS
  'restrict_role(role): labels a role restricted, so it reads protected tables only through private aggregates (administrators)';
COMMENT ON FUNCTION dp_agg.unrestrict_role(regrole) IS
  'unrestrict_role(role): removes the restricted label of a role (administrators)';
COMMENT ON FUNCTION dp_agg.set_privacy_unit(regclass, name) IS
  'set_privacy_unit(table, column): labels the column privacy_unit, so private aggregates protect all rows of one unit value together (administrators)';
COMMENT ON FUNCTION dp_agg.unset_privacy_unit(regclass, name) IS
  'unset_privacy_unit(table, column): removes the privacy_unit label of a column (administrators)';
COMMENT ON FUNCTION dp_agg.unit_group_sample(integer) IS
  'Window function: true for max_groups rows of the partition chosen uniformly at random from the CSPRNG, by which dp_agg keeps max_groups random groups per privacy unit (internal: used by the privacy-unit rewrite)';
COMMENT ON VIEW dp_agg.protected_tables IS
  'Tables labelled protected';
COMMENT ON VIEW dp_agg.restricted_roles IS
  'Roles labelled restricted';
