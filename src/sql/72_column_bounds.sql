
-- ---------------------------------------------------------------------------
-- Public column bounds (src/pg/column_bounds.h): the range an administrator
-- declares once for a numeric column, so that a restricted role's plain
-- sum() and avg() are answered as dp_sum and dp_avg within it
-- (dp_agg.plain_aggregate_epsilon, src/pg/plain_aggregates.h). Stored as the
-- column's security label 'bounds [lower, upper]': pg_dump keeps it with the
-- table. Public parameters, never derived from the data.
-- ---------------------------------------------------------------------------
CREATE FUNCTION dp_agg.set_column_bounds(target regclass, column_name name, lower numeric,
                                         upper numeric) RETURNS void
LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$ SELECT dp_agg.set_label('COLUMN', format('%s.%I', target, column_name),
                              format('bounds [%s, %s]', lower, upper)) $$;
CREATE FUNCTION dp_agg.unset_column_bounds(target regclass, column_name name) RETURNS void
LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$ SELECT dp_agg.set_label('COLUMN', format('%s.%I', target, column_name), NULL) $$;

CREATE VIEW dp_agg.column_bounds AS
  SELECT l.objoid::regclass AS table_name, a.attname AS column_name,
         pg_catalog.split_part(pg_catalog.substr(l.label, 9), ', ', 1)::numeric AS lower,
         pg_catalog.rtrim(pg_catalog.split_part(l.label, ', ', 2), ']')::numeric AS upper
  FROM pg_catalog.pg_seclabel l
  JOIN pg_catalog.pg_attribute a ON a.attrelid = l.objoid AND a.attnum = l.objsubid
  WHERE l.provider = 'dp_agg' AND l.classoid = 'pg_catalog.pg_class'::regclass
    AND l.objsubid > 0 AND l.label LIKE 'bounds [%';

COMMENT ON FUNCTION dp_agg.set_column_bounds(regclass, name, numeric, numeric) IS
  'set_column_bounds(table, column, lower, upper): declares the public bounds of a numeric column, within which plain sum() and avg() of restricted roles are answered privately (administrators)';
COMMENT ON FUNCTION dp_agg.unset_column_bounds(regclass, name) IS
  'unset_column_bounds(table, column): removes the declared bounds of a column (administrators)';
COMMENT ON VIEW dp_agg.column_bounds IS
  'Declared public bounds of numeric columns (dp_agg.set_column_bounds)';
