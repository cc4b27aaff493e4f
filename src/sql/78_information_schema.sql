-- information_schema for restricted roles (issue 27; src/pg/information_schema.h).
-- dp_agg's copies of information_schema.tables and information_schema.columns,
-- made from this server's own definitions with one more reason to list a
-- table: dp_agg.lists_protected_table(oid), true only in a restricted session
-- for a protected table whose schema the role may use. A restricted session's
-- references to the two views are pointed to these at parse analysis, so
-- tools that discover tables through information_schema (dbt, Looker, generic
-- connectors) see the protected tables they can query with private
-- aggregates. No privilege on the tables is granted (REFERENCES would let the
-- analyst probe keys through a foreign key, TRIGGER attach code).

CREATE FUNCTION dp_agg.lists_protected_table(oid) RETURNS boolean
  AS 'MODULE_PATHNAME', 'dp_lists_protected_table' LANGUAGE C STABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dp_agg.lists_protected_table(oid) IS
  'whether information_schema lists this relation to the session although it holds no privilege on it: a restricted session, a protected table, a schema it may use';

DO $listing$
DECLARE
  view_name text;
  definition text;
  privilege_test constant text := 'AND (pg_has_role(c.relowner, ''USAGE''::text) OR ';
BEGIN
  FOREACH view_name IN ARRAY ARRAY['tables', 'columns'] LOOP
    definition := pg_catalog.pg_get_viewdef(('information_schema.' || view_name)::regclass);
    -- The privilege test of the view's WHERE, once: checked, so that a server
    -- whose definition differs fails here instead of listing nothing.
    IF (length(definition) - length(replace(definition, privilege_test, ''))) / length(privilege_test) <> 1 THEN
      RAISE EXCEPTION 'dp_agg: information_schema.% has an unexpected definition', view_name;
    END IF;
    definition := replace(definition, privilege_test,
                          privilege_test || 'dp_agg.lists_protected_table(c.oid) OR ');
    EXECUTE format('CREATE VIEW dp_agg.%I AS %s', 'information_schema_' || view_name,
                   rtrim(definition, ';'));
    EXECUTE format('COMMENT ON VIEW dp_agg.%I IS %L', 'information_schema_' || view_name,
                   'information_schema.' || view_name || ' that also lists the protected tables a restricted session may query with private aggregates (read in its place by restricted sessions)');
  END LOOP;
END
$listing$;
