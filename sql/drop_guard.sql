-- DROP EXTENSION dp_agg would delete every budget and the whole ledger: it
-- is refused, by every path, unless a superuser confirms it in the session
-- (dp_agg.allow_drop_extension, src/pg/drop_guard.cpp). Runs last: the one
-- drop that succeeds is rolled back.
SELECT count(*) > 0 AS ledger_has_rows FROM dp_agg.ledger_entry;

-- 1. Refused without confirmation, with or without CASCADE / IF EXISTS.
DROP EXTENSION dp_agg;
\echo :LAST_ERROR_SQLSTATE
DROP EXTENSION IF EXISTS dp_agg CASCADE;
DROP EXTENSION plpgsql, dp_agg;

-- 2. Also when the drop comes by cascade from the extension's schema or
-- owner (the object-access hook): nothing is dropped.
SET client_min_messages = warning;
DROP SCHEMA public CASCADE;
RESET client_min_messages;
SELECT extversion IS NOT NULL AS still_installed FROM pg_extension WHERE extname = 'dp_agg';

-- 3. Other extensions are not concerned.
DROP EXTENSION IF EXISTS dp_agg_no_such_extension;

-- 4. The confirmation is a superuser's, for the session only: refused to
-- other roles, and as a lasting setting (postgresql.conf, ALTER SYSTEM,
-- ALTER ROLE/DATABASE ... SET), which would make later drops silent again.
SET ROLE dp_agg_regress_analyst;
SET dp_agg.allow_drop_extension = on;
RESET ROLE;
ALTER ROLE dp_agg_regress_analyst SET dp_agg.allow_drop_extension = on;
SELECT format('ALTER DATABASE %I SET dp_agg.allow_drop_extension = on', current_database())
\gexec
ALTER SYSTEM SET dp_agg.allow_drop_extension = on;
SHOW dp_agg.allow_drop_extension;

-- 5. Confirmed in the session, the drop goes through (rolled back here).
SET dp_agg.allow_drop_extension = on;
BEGIN;
SET LOCAL client_min_messages = warning;
DROP EXTENSION dp_agg CASCADE;
SELECT count(*) AS installed FROM pg_extension WHERE extname = 'dp_agg';
ROLLBACK;
RESET dp_agg.allow_drop_extension;
SELECT count(*) > 0 AS ledger_kept FROM dp_agg.ledger_entry;
DROP EXTENSION dp_agg;
