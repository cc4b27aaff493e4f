-- DROP EXTENSION dp_agg would delete every budget and the whole ledger: it
-- is refused, by every path, unless a superuser confirms it in the session
-- (dp_agg.allow_drop_extension, src/pg/drop_guard.cpp). The one drop that
-- succeeds is rolled back. DROP DATABASE of a database that holds a ledger
-- likewise (section 6).
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

-- 5. Confirmed in the session, the drop goes through (rolled back here),
-- and takes the database's ledger label (section 6) with it.
SET dp_agg.allow_drop_extension = on;
BEGIN;
SET LOCAL client_min_messages = warning;
DROP EXTENSION dp_agg CASCADE;
SELECT count(*) AS installed FROM pg_extension WHERE extname = 'dp_agg';
SELECT count(*) AS ledger_label FROM pg_shseclabel
WHERE provider = 'dp_agg' AND objoid = (SELECT oid FROM pg_database WHERE datname = current_database());
ROLLBACK;
RESET dp_agg.allow_drop_extension;
SELECT count(*) > 0 AS ledger_kept FROM dp_agg.ledger_entry;
DROP EXTENSION dp_agg;

-- 6. DROP DATABASE of a database that holds a dp_agg ledger is guarded the
-- same way (issue 28, finding 3). It runs in another database, so the
-- database carries a label in the shared catalog, set by CREATE EXTENSION
-- (and the upgrade, and every ledger entry).
SELECT current_database() AS regress_database \gset
SELECT label AS this_database_label FROM pg_shseclabel
WHERE provider = 'dp_agg' AND objoid = (SELECT oid FROM pg_database WHERE datname = current_database());
SET client_min_messages = warning;
SET dp_agg.allow_drop_extension = on;
DROP DATABASE IF EXISTS regress_dp_agg_ledger_db;
DROP DATABASE IF EXISTS regress_dp_agg_ledger_copy;
DROP DATABASE IF EXISTS regress_dp_agg_plain_db;
RESET dp_agg.allow_drop_extension;
RESET client_min_messages;
CREATE DATABASE regress_dp_agg_ledger_db;
\c regress_dp_agg_ledger_db
SET client_min_messages = warning;
CREATE EXTENSION dp_agg;
RESET client_min_messages;
\c :regress_database
-- Refused, with or without IF EXISTS or FORCE.
DROP DATABASE regress_dp_agg_ledger_db;
\echo :LAST_ERROR_SQLSTATE
DROP DATABASE IF EXISTS regress_dp_agg_ledger_db WITH (FORCE);
-- A copy holds the copied ledger: it is labelled when it is created.
CREATE DATABASE regress_dp_agg_ledger_copy TEMPLATE regress_dp_agg_ledger_db;
DROP DATABASE regress_dp_agg_ledger_copy;
-- A database without dp_agg, or one that does not exist, is not concerned.
CREATE DATABASE regress_dp_agg_plain_db;
DROP DATABASE regress_dp_agg_plain_db;
DROP DATABASE IF EXISTS regress_dp_agg_no_such_db;
-- The label is a superuser's: nobody else may remove it, and it has one value.
SECURITY LABEL FOR dp_agg ON DATABASE regress_dp_agg_ledger_db IS 'other';
ALTER DATABASE regress_dp_agg_ledger_db OWNER TO dp_agg_regress_analyst;
SET ROLE dp_agg_regress_analyst;
SECURITY LABEL FOR dp_agg ON DATABASE regress_dp_agg_ledger_db IS NULL;
DROP DATABASE regress_dp_agg_ledger_db;
RESET ROLE;
-- A superuser removes it only with the confirmation that DROP DATABASE
-- needs: without it, removing the label then dropping went through
-- unconfirmed (review 28).
SECURITY LABEL FOR dp_agg ON DATABASE regress_dp_agg_ledger_db IS NULL;
\echo :LAST_ERROR_SQLSTATE
DROP DATABASE regress_dp_agg_ledger_db;
\echo :LAST_ERROR_SQLSTATE
-- Confirmed by a superuser in the session: dropped.
SET dp_agg.allow_drop_extension = on;
DROP DATABASE regress_dp_agg_ledger_copy;
DROP DATABASE regress_dp_agg_ledger_db;
RESET dp_agg.allow_drop_extension;
SELECT count(*) AS left_over FROM pg_database WHERE datname LIKE 'regress_dp_agg_%';

\set VERBOSITY terse
-- ---------------------------------------------------------------------------
-- DROP EXTENSION IF EXISTS dp_agg where dp_agg is not installed is a NOTICE,
-- not the guard's refusal: the idempotent statement of migration scripts and
-- of `pg_restore --clean --if-exists` into a database without dp_agg works,
-- as there is no ledger to lose.
-- Found by: the issue-17 privacy review (the guard refused a statement naming
-- dp_agg even where it was not installed, "would delete every privacy budget").
-- Shown in this database after a confirmed drop (rolled back).
-- ---------------------------------------------------------------------------
BEGIN;
SET LOCAL dp_agg.allow_drop_extension = on;
SET LOCAL client_min_messages = warning;
DROP EXTENSION dp_agg CASCADE;
RESET dp_agg.allow_drop_extension;
SET LOCAL client_min_messages = notice;
SELECT count(*) AS installed FROM pg_extension WHERE extname = 'dp_agg';
-- Nothing to drop: a NOTICE, not the guard's refusal.
DROP EXTENSION IF EXISTS dp_agg;
SELECT 'continues' AS transaction_state;
ROLLBACK;
SELECT count(*) AS installed FROM pg_extension WHERE extname = 'dp_agg';
\set VERBOSITY default
