
-- ---------------------------------------------------------------------------
-- Public key sets (src/pg/public_keys.h): the values of a group-key column
-- that an administrator declares public, once. A restricted role's GROUP BY
-- on that column then releases exactly those keys, every one of them (empty
-- ones with noise from no rows), without group selection (no delta), and
-- rows with other values count for nothing. Kept in an extension
-- configuration table, so pg_dump carries it; keys are stored as the text of
-- the column type's values (text, varchar, integers, boolean, uuid, enums).
-- ---------------------------------------------------------------------------
CREATE TABLE dp_agg.public_key_set (
  relation regclass NOT NULL,
  column_name name NOT NULL,
  keys text[] NOT NULL,
  PRIMARY KEY (relation, column_name)
);
SELECT pg_catalog.pg_extension_config_dump('dp_agg.public_key_set', '');

-- Cached plans (prepared statements, generic plans) read the key sets when
-- they were planned: a change plans them again. The column's own dp_agg
-- label is set again, unchanged, and the label hook invalidates the
-- cached plans of the table and of its partitions and INHERITS children.
CREATE FUNCTION dp_agg.replan_public_keys(target regclass, column_name name) RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  column_number int2;
BEGIN
  PERFORM dp_agg.require_admin('declare public keys');
  SELECT a.attnum INTO column_number
  FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
  WHERE a.attrelid = target AND a.attname = replan_public_keys.column_name AND a.attnum > 0
    AND NOT a.attisdropped AND c.relkind IN ('r', 'p', 'm', 'f');
  IF NOT FOUND THEN
    RETURN;  -- no table column: no plan reads its keys
  END IF;
  EXECUTE format('SECURITY LABEL FOR dp_agg ON COLUMN %s.%I IS %L', target,
                 replan_public_keys.column_name,
                 (SELECT l.label FROM pg_seclabel l
                  WHERE l.objoid = target AND l.classoid = 'pg_class'::regclass
                    AND l.objsubid = column_number AND l.provider = 'dp_agg'));
END $$;

CREATE FUNCTION dp_agg.set_public_keys(target regclass, column_name name, keys anyarray)
RETURNS void LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
#variable_conflict use_column
DECLARE
  column_type oid;
  column_collation oid;
  type_kind "char";
  stored text[];
BEGIN
  PERFORM dp_agg.require_admin('declare public keys');
  SELECT a.atttypid, a.attcollation, t.typtype INTO column_type, column_collation, type_kind
  FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid
  WHERE a.attrelid = target AND a.attname = set_public_keys.column_name AND a.attnum > 0
    AND NOT a.attisdropped;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'column "%" of relation % does not exist', set_public_keys.column_name, target
      USING ERRCODE = 'undefined_column';
  END IF;
  IF NOT (column_type IN ('text'::regtype, 'varchar'::regtype, 'int2'::regtype,
                          'int4'::regtype, 'int8'::regtype, 'bool'::regtype, 'uuid'::regtype)
          OR type_kind = 'e') THEN
    RAISE EXCEPTION 'dp_agg: public keys of column "%" of type % are not supported',
                    set_public_keys.column_name, format_type(column_type, NULL)
      USING ERRCODE = 'invalid_parameter_value',
            DETAIL = 'Public keys are declared on text, varchar, smallint, integer, bigint, boolean, uuid and enum columns, whose equal values are the same value.',
            HINT = 'Declare them on such a column, or group by this one with group selection.';
  END IF;
  IF column_collation <> 0 AND NOT (SELECT collisdeterministic FROM pg_collation
                                    WHERE oid = column_collation) THEN
    RAISE EXCEPTION 'dp_agg: column "%" has a nondeterministic collation',
                    set_public_keys.column_name
      USING ERRCODE = 'invalid_parameter_value',
            DETAIL = 'Under it, values that differ would be one key.',
            HINT = 'Use a deterministic collation for the column.';
  END IF;
  IF keys IS NULL OR cardinality(keys) = 0 OR cardinality(keys) > 100000
     OR array_position(keys, NULL) IS NOT NULL THEN
    RAISE EXCEPTION 'dp_agg: public keys must be 1 to 100000 values, none NULL'
      USING ERRCODE = 'invalid_parameter_value',
            HINT = 'Pass an array of the keys, e.g. ARRAY[''north'', ''south''].';
  END IF;
  EXECUTE format('SELECT array_agg(DISTINCT (k::%s)::text) FROM unnest($1) k',
                 format_type(column_type, NULL))
    INTO stored USING keys;
  -- Key sets of tables dropped since (their OIDs) go too.
  DELETE FROM dp_agg.public_key_set s
  WHERE NOT EXISTS (SELECT 1 FROM pg_class c WHERE c.oid = s.relation);
  INSERT INTO dp_agg.public_key_set AS s (relation, column_name, keys)
  VALUES (target, set_public_keys.column_name, stored)
  ON CONFLICT (relation, column_name) DO UPDATE SET keys = EXCLUDED.keys;
  PERFORM dp_agg.replan_public_keys(target, set_public_keys.column_name);
END $$;

CREATE FUNCTION dp_agg.unset_public_keys(target regclass, column_name name) RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  PERFORM dp_agg.require_admin('remove public keys');
  DELETE FROM dp_agg.public_key_set s
  WHERE s.relation = target AND s.column_name = unset_public_keys.column_name;
  PERFORM dp_agg.replan_public_keys(target, unset_public_keys.column_name);
END $$;

CREATE VIEW dp_agg.public_keys AS
  SELECT s.relation AS table_name, s.column_name, s.keys,
         pg_catalog.cardinality(s.keys) AS key_count
  FROM dp_agg.public_key_set s
  WHERE EXISTS (SELECT 1 FROM pg_catalog.pg_class c WHERE c.oid = s.relation);

COMMENT ON TABLE dp_agg.public_key_set IS
  'Declared public key sets of group-key columns (dp_agg.set_public_keys); read it through dp_agg.public_keys';
COMMENT ON FUNCTION dp_agg.set_public_keys(regclass, name, anyarray) IS
  'set_public_keys(table, column, keys): declares the public keys of a column, so that a restricted role''s GROUP BY on it releases exactly those keys, every one, without group selection (administrators)';
COMMENT ON FUNCTION dp_agg.unset_public_keys(regclass, name) IS
  'unset_public_keys(table, column): removes the declared public keys of a column (administrators)';
COMMENT ON FUNCTION dp_agg.replan_public_keys(regclass, name) IS
  'replan_public_keys(table, column): plans cached under a changed key set are made again (set_public_keys and unset_public_keys call it; administrators)';
COMMENT ON VIEW dp_agg.public_keys IS
  'Declared public key sets (dp_agg.set_public_keys): the keys a GROUP BY on the column releases';
