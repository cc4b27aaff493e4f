-- ===========================================================================
-- The periods of budgets that renew (README "Budgets that renew"; the
-- renewal itself is in 48_budget_renewal.sql). Defined before the budgets
-- (40_budgets_ledger.sql), whose view shows the current period.
--
-- A budget that renews every L from an anchor A (both chosen by an
-- administrator; A is 1970-01-01 00:00:00 UTC unless given) has its period
-- boundaries at A + k L for every integer k: a public clock, the same for
-- every role, never aligned to a role's own activity. L is a fixed length of
-- time of at least one second (a day counts 24 hours: the periods are on
-- the UTC line, where no daylight-saving change moves them); months, which
-- have no fixed length, are refused. Exact integer arithmetic on
-- microseconds (src/core/renewal_period.h), independent of every session
-- setting.
-- ===========================================================================

CREATE FUNCTION dp_agg.renewal_period_start(every interval, anchor timestamptz,
                                            at timestamptz) RETURNS timestamptz
AS 'MODULE_PATHNAME', 'dp_agg_renewal_period_start' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.renewal_period_end(every interval, anchor timestamptz,
                                          at timestamptz) RETURNS timestamptz
AS 'MODULE_PATHNAME', 'dp_agg_renewal_period_end' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.renewal_text(every interval, anchor timestamptz) RETURNS text
AS 'MODULE_PATHNAME', 'dp_agg_renewal_text' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION dp_agg.renewal_period_start(interval, timestamptz, timestamptz) IS
  'renewal_period_start(every, anchor, at): the start of the period containing at, for a budget that renews every `every` from `anchor` (boundaries anchor + k * every)';
COMMENT ON FUNCTION dp_agg.renewal_period_end(interval, timestamptz, timestamptz) IS
  'renewal_period_end(every, anchor, at): the end of the period containing at (the next renewal after at)';
COMMENT ON FUNCTION dp_agg.renewal_text(interval, timestamptz) IS
  'renewal_text(every, anchor): the renewal schedule as the ledger records it, in UTC, the same in every session (internal)';
