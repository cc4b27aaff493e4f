\echo Use "CREATE EXTENSION dp_agg" to load this file. \quit

-- Internal objects live in schema dp_agg; the aggregates themselves go to the
-- schema the extension is created in (public by default), so that analysts
-- can write dp_avg(...) like avg(...). What PUBLIC may use in schema dp_agg is
-- decided in one place, 90_privileges.sql.
CREATE SCHEMA dp_agg;
COMMENT ON SCHEMA dp_agg IS
  'dp_agg internals, budgets, the privacy ledger and the administration functions';
