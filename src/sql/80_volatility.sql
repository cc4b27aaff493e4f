-- CREATE AGGREGATE has no volatility option and records aggregates as
-- immutable, so the planner would treat two identical calls as one, or copy a
-- call into several places when it flattens a subquery, drawing noise a
-- different number of times than the query says. Every call is a separate
-- noisy release: mark every aggregate of the extension VOLATILE like its
-- support functions. Chosen by membership in the extension, so that an
-- aggregate added later cannot be forgotten (an upgrade script that adds one
-- runs this same statement).
UPDATE pg_catalog.pg_proc SET provolatile = 'v'
WHERE prokind = 'a'
  AND oid IN (SELECT d.objid FROM pg_catalog.pg_depend d
              WHERE d.classid = 'pg_catalog.pg_proc'::regclass
                AND d.refclassid = 'pg_catalog.pg_extension'::regclass
                AND d.refobjid = (SELECT e.oid FROM pg_catalog.pg_extension e
                                  WHERE e.extname = 'dp_agg')
                AND d.deptype = 'e');
