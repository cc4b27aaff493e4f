-- Every catalog fact about the objects of extension dp_agg that an install
-- or upgrade script decides, one sorted line each, free of OIDs and of the
-- order in which objects were created: two databases whose listings are
-- equal hold the same SQL objects. Used by run_upgrade_test.sh to compare a
-- fresh install of the current version with an upgraded older one.
\pset tuples_only on
\pset format unaligned
WITH ext AS (
  SELECT oid, extname, extversion, extnamespace, extrelocatable, extconfig, extcondition
  FROM pg_extension WHERE extname = 'dp_agg'
), member AS (
  SELECT d.classid, d.objid
  FROM pg_depend d, ext
  WHERE d.refclassid = 'pg_extension'::regclass AND d.refobjid = ext.oid AND d.deptype = 'e'
), facts AS (
  SELECT 'extension' AS kind,
         format('version=%s schema=%s relocatable=%s config=%s conditions=%s', extversion,
                extnamespace::regnamespace, extrelocatable,
                (SELECT array_agg(c::regclass::text ORDER BY c::regclass::text)
                   FROM unnest(extconfig) c),
                extcondition) AS fact
  FROM ext
  UNION ALL
  SELECT 'member', pg_describe_object(classid, objid, 0) FROM member
  UNION ALL
  SELECT 'comment', pg_describe_object(m.classid, m.objid, 0) || ' = ' || d.description
  FROM member m JOIN pg_description d ON d.classoid = m.classid AND d.objoid = m.objid
                                      AND d.objsubid = 0
  UNION ALL
  SELECT 'init_privs', pg_describe_object(m.classid, m.objid, i.objsubid) || ' ' ||
         i.privtype::text || ' ' || i.initprivs::text
  FROM member m JOIN pg_init_privs i ON i.classoid = m.classid AND i.objoid = m.objid
  UNION ALL
  SELECT 'function', format('%s(%s) returns %s kind=%s volatile=%s parallel=%s strict=%s '
                            'secdef=%s leakproof=%s lang=%s config=%s acl=%s src=%s bin=%s '
                            'owner=%s',
                            p.pronamespace::regnamespace || '.' || p.proname,
                            pg_get_function_identity_arguments(p.oid),
                            pg_get_function_result(p.oid), p.prokind, p.provolatile,
                            p.proparallel, p.proisstrict, p.prosecdef, p.proleakproof,
                            (SELECT lanname FROM pg_language WHERE oid = p.prolang), p.proconfig,
                            p.proacl, md5(p.prosrc), p.probin, p.proowner::regrole)
         || coalesce(' args=' || pg_get_function_arguments(p.oid), '')
  FROM member m JOIN pg_proc p ON m.classid = 'pg_proc'::regclass AND p.oid = m.objid
  UNION ALL
  SELECT 'aggregate', format('%s(%s) transfn=%s finalfn=%s combinefn=%s transtype=%s init=%s '
                             'finalextra=%s finalmodify=%s sortop=%s',
                             p.oid::regproc, pg_get_function_identity_arguments(p.oid),
                             a.aggtransfn::regprocedure, a.aggfinalfn::regprocedure,
                             a.aggcombinefn::regprocedure, a.aggtranstype::regtype,
                             a.agginitval, a.aggfinalextra, a.aggfinalmodify, a.aggsortop)
  FROM member m JOIN pg_proc p ON m.classid = 'pg_proc'::regclass AND p.oid = m.objid
       JOIN pg_aggregate a ON a.aggfnoid = p.oid
  UNION ALL
  SELECT 'relation', format('%s kind=%s acl=%s options=%s owner=%s view=%s',
                            c.oid::regclass, c.relkind, c.relacl, c.reloptions,
                            c.relowner::regrole,
                            CASE WHEN c.relkind = 'v' THEN md5(pg_get_viewdef(c.oid)) END)
  FROM member m JOIN pg_class c ON m.classid = 'pg_class'::regclass AND c.oid = m.objid
  UNION ALL
  SELECT 'column', format('%s.%s %s notnull=%s default=%s acl=%s', c.oid::regclass, a.attname,
                          format_type(a.atttypid, a.atttypmod), a.attnotnull,
                          pg_get_expr(ad.adbin, ad.adrelid), a.attacl)
  FROM member m JOIN pg_class c ON m.classid = 'pg_class'::regclass AND c.oid = m.objid
       JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
       LEFT JOIN pg_attrdef ad ON ad.adrelid = c.oid AND ad.adnum = a.attnum
  UNION ALL
  SELECT 'constraint', format('%s %s %s', co.conrelid::regclass, co.conname,
                              pg_get_constraintdef(co.oid))
  FROM member m JOIN pg_constraint co ON m.classid = 'pg_class'::regclass
                                       AND co.conrelid = m.objid
  UNION ALL
  SELECT 'index', pg_get_indexdef(i.indexrelid)
  FROM member m JOIN pg_index i ON m.classid = 'pg_class'::regclass AND i.indrelid = m.objid
  UNION ALL
  SELECT 'type', format('%s len=%s align=%s storage=%s in=%s out=%s acl=%s owner=%s',
                        t.oid::regtype, t.typlen, t.typalign, t.typstorage, t.typinput,
                        t.typoutput, t.typacl, t.typowner::regrole)
  FROM member m JOIN pg_type t ON m.classid = 'pg_type'::regclass AND t.oid = m.objid
  UNION ALL
  SELECT 'schema', format('%s acl=%s owner=%s', n.nspname, n.nspacl, n.nspowner::regrole)
  FROM member m JOIN pg_namespace n ON m.classid = 'pg_namespace'::regclass AND n.oid = m.objid
)
SELECT kind || ': ' || fact FROM facts ORDER BY 1;
