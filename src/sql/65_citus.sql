-- dp_agg on Citus (src/pg/distributed.cpp; README, "Scaling out with Citus").
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
