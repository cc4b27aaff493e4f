-- What PUBLIC may use among dp_agg's objects, pinned: adding a function,
-- view or table that PUBLIC can reach, or taking one away, changes this
-- output and must be decided in src/sql/90_privileges.sql (and in the
-- upgrade script). Privileges are read from the catalogs (aclexplode of each
-- ACL, or of the default ACL when it is NULL), for every member of the
-- extension, in whichever schema it lives.
CREATE TEMP VIEW extension_member AS
SELECT d.classid, d.objid
FROM pg_depend d JOIN pg_extension e ON d.refobjid = e.oid
WHERE e.extname = 'dp_agg' AND d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e';

CREATE TEMP VIEW public_privilege AS
SELECT m.classid, m.objid, a.privilege_type
FROM extension_member m
JOIN pg_proc p ON m.classid = 'pg_proc'::regclass AND p.oid = m.objid,
     aclexplode(coalesce(p.proacl, acldefault('f', p.proowner))) a
WHERE a.grantee = 0
UNION ALL
SELECT m.classid, m.objid, a.privilege_type
FROM extension_member m
JOIN pg_class c ON m.classid = 'pg_class'::regclass AND c.oid = m.objid,
     aclexplode(coalesce(c.relacl, acldefault(CASE WHEN c.relkind = 'S' THEN 's' ELSE 'r' END::"char",
                                               c.relowner))) a
WHERE a.grantee = 0
UNION ALL
SELECT m.classid, m.objid, a.privilege_type
FROM extension_member m
JOIN pg_type t ON m.classid = 'pg_type'::regclass AND t.oid = m.objid,
     aclexplode(coalesce(t.typacl, acldefault('T', t.typowner))) a
WHERE a.grantee = 0
UNION ALL
SELECT m.classid, m.objid, a.privilege_type
FROM extension_member m
JOIN pg_namespace n ON m.classid = 'pg_namespace'::regclass AND n.oid = m.objid,
     aclexplode(coalesce(n.nspacl, acldefault('n', n.nspowner))) a
WHERE a.grantee = 0;

-- 1. In schema dp_agg: the four filtered views, the administration and
-- budget functions (which check the caller themselves), group_selection
-- (put into restricted roles' queries), the Citus forms of dp_count and the
-- group-key identity (put into queries over distributed tables), the support
-- functions of the aggregates (Citus checks EXECUTE on them; they run only
-- inside dp_agg's own aggregates: support_guard.sql) and the types.
SELECT pg_describe_object(classid, objid, 0) AS object, privilege_type
FROM public_privilege
WHERE pg_describe_object(classid, objid, 0) ~ '(^| )dp_agg\.|^schema dp_agg$'
ORDER BY 1, 2;

-- 2. Elsewhere (the schema the extension was created in): the aggregates
-- and the margin functions, nothing else.
SELECT pg_describe_object(classid, objid, 0) AS object, privilege_type
FROM public_privilege
WHERE pg_describe_object(classid, objid, 0) !~ '(^| )dp_agg\.|^schema dp_agg$'
ORDER BY 1, 2;

-- 3. Nothing in schema dp_agg is executable or selectable by PUBLIC unless
-- listed above: the state types' input and output functions, the ledger
-- writer's apply_charge and the budget and
-- ledger tables are not (counted, so that the listing above cannot shrink to
-- nothing unnoticed).
SELECT count(*) AS members_in_schema_dp_agg,
       count(*) FILTER (WHERE EXISTS (SELECT 1 FROM public_privilege p
                                      WHERE p.classid = m.classid AND p.objid = m.objid))
         AS usable_by_public
FROM extension_member m
WHERE pg_describe_object(m.classid, m.objid, 0) ~ '(^| )dp_agg\.';

-- 4. Every object PUBLIC may use, and every table and view, is commented.
SELECT pg_describe_object(m.classid, m.objid, 0) AS uncommented
FROM extension_member m
WHERE (EXISTS (SELECT 1 FROM public_privilege p WHERE p.classid = m.classid AND p.objid = m.objid)
       OR (m.classid = 'pg_class'::regclass
           AND (SELECT relkind FROM pg_class WHERE oid = m.objid) IN ('r', 'v')))
  AND obj_description(m.objid, (SELECT relname FROM pg_class WHERE oid = m.classid)) IS NULL
ORDER BY 1;

-- 5. The same as a role without privileges sees it: the views and entry
-- points work, the internals are refused.
SET ROLE dp_agg_regress_analyst;
SELECT count(*) >= 0 AS reads_budgets FROM dp_agg.budgets;
SELECT count(*) >= 0 AS reads_ledger FROM dp_agg.ledger;
SELECT dp_agg.is_admin() IS NOT NULL AS is_admin_callable;
SELECT dp_agg.aggregate_state_out('uninitialized'::dp_agg.aggregate_state);
SELECT count(*) FROM dp_agg.ledger_entry;
SELECT * FROM dp_agg.apply_charge(0, 'x', 'x', 0, 0, 0, '', '', 0, 0);
RESET ROLE;
