-- dp_agg on Citus (src/pg/citus/; README, "Scaling out with Citus").
--
-- dp_count over a distributed table: Citus checks the ROW it passes to
-- worker_partial_agg against pg_proc.proargtypes literally, so the
-- polymorphic dp_count never takes Citus's partial-aggregation path. The
-- planner hook rewrites dp_count(v, ...) over a distributed table into these,
-- with the argument CASE WHEN v IS NOT NULL THEN true END: NULL exactly when
-- v is, so the count is the same.
CREATE AGGREGATE dp_agg.citus_count(boolean, float8) (
  SFUNC = dp_agg.count_transfn, STYPE = dp_agg.aggregate_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.count_final, COMBINEFUNC = dp_agg.combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_agg.citus_count(boolean, float8, float8) (
  SFUNC = dp_agg.count_transfn, STYPE = dp_agg.aggregate_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.count_final, COMBINEFUNC = dp_agg.combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_agg.citus_count_interval(boolean, float8, float8) (
  SFUNC = dp_agg.count_transfn, STYPE = dp_agg.aggregate_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.count_interval_final, COMBINEFUNC = dp_agg.combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_agg.citus_count_interval(boolean, float8, float8, float8) (
  SFUNC = dp_agg.count_transfn, STYPE = dp_agg.aggregate_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.count_interval_final, COMBINEFUNC = dp_agg.combine, PARALLEL = SAFE
);

-- The identity, for GROUP BY on a distribution column: Citus would otherwise
-- push the whole aggregate, noise included, down to the workers. Not STRICT:
-- a NULL key stays a NULL group.
CREATE FUNCTION dp_agg.citus_group_key(anyelement) RETURNS anyelement
  AS 'MODULE_PATHNAME', 'dp_citus_group_key' LANGUAGE C IMMUTABLE PARALLEL SAFE;

COMMENT ON AGGREGATE dp_agg.citus_count(boolean, float8) IS
  'dp_count(value, epsilon) as dp_agg runs it on a Citus distributed table (written by the planner hook, not by analysts)';
COMMENT ON AGGREGATE dp_agg.citus_count(boolean, float8, float8) IS
  'dp_count(value, epsilon, delta) as dp_agg runs it on a Citus distributed table (written by the planner hook, not by analysts)';
COMMENT ON AGGREGATE dp_agg.citus_count_interval(boolean, float8, float8) IS
  'dp_count_interval(value, epsilon, confidence) as dp_agg runs it on a Citus distributed table (written by the planner hook)';
COMMENT ON AGGREGATE dp_agg.citus_count_interval(boolean, float8, float8, float8) IS
  'dp_count_interval(value, epsilon, delta, confidence) as dp_agg runs it on a Citus distributed table (written by the planner hook)';
COMMENT ON FUNCTION dp_agg.citus_group_key(anyelement) IS
  'The identity: dp_agg groups by a Citus distribution column through it so that noise is added on the coordinator';

-- dp_select over a distributed table: Citus checks worker_partial_agg's ROW
-- against pg_proc.proargtypes literally and the final function's result type
-- against the column it fills, so the polymorphic dp_select never takes its
-- partial-aggregation path. The planner hook rewrites dp_select of text,
-- integer and bigint values into these (same transition, combine and final
-- code; the final function takes the element type from the state).
CREATE FUNCTION dp_agg.citus_select_final(dp_agg.selection_state, text, text[], float8)
  RETURNS text AS 'MODULE_PATHNAME', 'dp_select_final' LANGUAGE C VOLATILE PARALLEL SAFE;
CREATE FUNCTION dp_agg.citus_select_final(dp_agg.selection_state, text, float8, float8, float8,
                                          text[], float8)
  RETURNS text AS 'MODULE_PATHNAME', 'dp_select_final' LANGUAGE C VOLATILE PARALLEL SAFE;
CREATE AGGREGATE dp_agg.citus_select(text, text[], float8) (
  SFUNC = dp_agg.select_transfn, STYPE = dp_agg.selection_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.citus_select_final, FINALFUNC_EXTRA, COMBINEFUNC = dp_agg.select_combine,
  PARALLEL = SAFE
);
CREATE AGGREGATE dp_agg.citus_select(text, float8, float8, float8, text[], float8) (
  SFUNC = dp_agg.select_transfn, STYPE = dp_agg.selection_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.citus_select_final, FINALFUNC_EXTRA, COMBINEFUNC = dp_agg.select_combine,
  PARALLEL = SAFE
);
CREATE FUNCTION dp_agg.citus_select_final(dp_agg.selection_state, integer, integer[], float8)
  RETURNS integer AS 'MODULE_PATHNAME', 'dp_select_final' LANGUAGE C VOLATILE PARALLEL SAFE;
CREATE FUNCTION dp_agg.citus_select_final(dp_agg.selection_state, integer, float8, float8, float8,
                                          integer[], float8)
  RETURNS integer AS 'MODULE_PATHNAME', 'dp_select_final' LANGUAGE C VOLATILE PARALLEL SAFE;
CREATE AGGREGATE dp_agg.citus_select(integer, integer[], float8) (
  SFUNC = dp_agg.select_transfn, STYPE = dp_agg.selection_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.citus_select_final, FINALFUNC_EXTRA, COMBINEFUNC = dp_agg.select_combine,
  PARALLEL = SAFE
);
CREATE AGGREGATE dp_agg.citus_select(integer, float8, float8, float8, integer[], float8) (
  SFUNC = dp_agg.select_transfn, STYPE = dp_agg.selection_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.citus_select_final, FINALFUNC_EXTRA, COMBINEFUNC = dp_agg.select_combine,
  PARALLEL = SAFE
);
CREATE FUNCTION dp_agg.citus_select_final(dp_agg.selection_state, bigint, bigint[], float8)
  RETURNS bigint AS 'MODULE_PATHNAME', 'dp_select_final' LANGUAGE C VOLATILE PARALLEL SAFE;
CREATE FUNCTION dp_agg.citus_select_final(dp_agg.selection_state, bigint, float8, float8, float8,
                                          bigint[], float8)
  RETURNS bigint AS 'MODULE_PATHNAME', 'dp_select_final' LANGUAGE C VOLATILE PARALLEL SAFE;
CREATE AGGREGATE dp_agg.citus_select(bigint, bigint[], float8) (
  SFUNC = dp_agg.select_transfn, STYPE = dp_agg.selection_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.citus_select_final, FINALFUNC_EXTRA, COMBINEFUNC = dp_agg.select_combine,
  PARALLEL = SAFE
);
CREATE AGGREGATE dp_agg.citus_select(bigint, float8, float8, float8, bigint[], float8) (
  SFUNC = dp_agg.select_transfn, STYPE = dp_agg.selection_state, INITCOND = 'uninitialized',
  FINALFUNC = dp_agg.citus_select_final, FINALFUNC_EXTRA, COMBINEFUNC = dp_agg.select_combine,
  PARALLEL = SAFE
);
COMMENT ON FUNCTION dp_agg.citus_select_final(dp_agg.selection_state, text, text[], float8) IS
  'Final function of dp_agg.citus_select over text (adds the noise): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.citus_select_final(dp_agg.selection_state, text, float8, float8, float8, text[], float8) IS
  'Final function of weighted dp_agg.citus_select over text (adds the noise): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON AGGREGATE dp_agg.citus_select(text, text[], float8) IS
  'dp_select(value, candidates, epsilon) over text as dp_agg runs it on a Citus distributed table (written by the planner hook)';
COMMENT ON AGGREGATE dp_agg.citus_select(text, float8, float8, float8, text[], float8) IS
  'dp_select(value, weight, lower, upper, candidates, epsilon) over text as dp_agg runs it on a Citus distributed table (written by the planner hook)';
COMMENT ON FUNCTION dp_agg.citus_select_final(dp_agg.selection_state, integer, integer[], float8) IS
  'Final function of dp_agg.citus_select over integer (adds the noise): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.citus_select_final(dp_agg.selection_state, integer, float8, float8, float8, integer[], float8) IS
  'Final function of weighted dp_agg.citus_select over integer (adds the noise): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON AGGREGATE dp_agg.citus_select(integer, integer[], float8) IS
  'dp_select(value, candidates, epsilon) over integer as dp_agg runs it on a Citus distributed table (written by the planner hook)';
COMMENT ON AGGREGATE dp_agg.citus_select(integer, float8, float8, float8, integer[], float8) IS
  'dp_select(value, weight, lower, upper, candidates, epsilon) over integer as dp_agg runs it on a Citus distributed table (written by the planner hook)';
COMMENT ON FUNCTION dp_agg.citus_select_final(dp_agg.selection_state, bigint, bigint[], float8) IS
  'Final function of dp_agg.citus_select over bigint (adds the noise): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.citus_select_final(dp_agg.selection_state, bigint, float8, float8, float8, bigint[], float8) IS
  'Final function of weighted dp_agg.citus_select over bigint (adds the noise): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON AGGREGATE dp_agg.citus_select(bigint, bigint[], float8) IS
  'dp_select(value, candidates, epsilon) over bigint as dp_agg runs it on a Citus distributed table (written by the planner hook)';
COMMENT ON AGGREGATE dp_agg.citus_select(bigint, float8, float8, float8, bigint[], float8) IS
  'dp_select(value, weight, lower, upper, candidates, epsilon) over bigint as dp_agg runs it on a Citus distributed table (written by the planner hook)';
