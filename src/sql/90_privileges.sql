-- What PUBLIC may use in schema dp_agg, decided here and nowhere else: first
-- everything is taken from PUBLIC, then the public entry points are granted
-- back by name. An object added later is therefore private until it is
-- listed here, and the regression suite "privileges" pins this list.
--
-- Not granted: the state types' input and output functions, the ledger
-- writer's apply_charge and apply_reuse, the helpers behind the
-- administration functions (the ledger chain's among them), and the budget
-- and ledger tables themselves (read through the filtered views).
GRANT USAGE ON SCHEMA dp_agg TO PUBLIC;
REVOKE ALL ON ALL FUNCTIONS IN SCHEMA dp_agg FROM PUBLIC;
REVOKE ALL ON ALL TABLES IN SCHEMA dp_agg FROM PUBLIC;
REVOKE ALL ON ALL SEQUENCES IN SCHEMA dp_agg FROM PUBLIC;

-- Views that filter rows by the session user (spend_by_query: administrators
-- see every row, everyone else none).
GRANT SELECT ON dp_agg.budgets, dp_agg.ledger, dp_agg.protected_tables, dp_agg.restricted_roles,
  dp_agg.column_bounds, dp_agg.release_cache, dp_agg.spend_by_query, dp_agg.public_keys TO PUBLIC;

-- The budget and label administration functions check dp_agg.is_admin()
-- themselves (judged by the session user), and is_admin() is called by the
-- views above as the querying user. query_cost plans and starts the query as
-- the caller (their own privileges and restrictions apply) and reveals only
-- what the query's text decides. system_identifier() is called by the views;
-- it shows what pg_control_system() shows everyone.
GRANT EXECUTE ON FUNCTION
  dp_agg.is_admin(),
  dp_agg.remaining_budget(),
  dp_agg.query_cost(text),
  dp_agg.set_budget(regrole, float8, float8, interval, timestamptz),
  dp_agg.set_budget_zcdp(regrole, numeric, numeric, interval, timestamptz),
  dp_agg.zcdp_epsilon(float8, float8),
  dp_agg.zcdp_rho(float8, float8),
  dp_agg.gaussian_count_epsilon(numeric, float8),
  dp_agg.gaussian_count_rho(numeric, numeric),
  dp_agg.zcdp_pure_epsilon(numeric),
  dp_agg.add_budget(regrole, float8, float8),
  dp_agg.reset_spent(regrole),
  dp_agg.revoke_budget(regrole),
  dp_agg.reattach_budgets(),
  dp_agg.system_identifier(),
  dp_agg.reattach_budget(regrole, oid, bigint),
  dp_agg.verify_ledger(bigint, text),
  dp_agg.protect_table(regclass),
  dp_agg.unprotect_table(regclass),
  dp_agg.restrict_role(regrole),
  dp_agg.unrestrict_role(regrole),
  dp_agg.set_privacy_unit(regclass, name),
  dp_agg.unset_privacy_unit(regclass, name),
  dp_agg.set_column_bounds(regclass, name, numeric, numeric),
  dp_agg.unset_column_bounds(regclass, name),
  dp_agg.set_public_keys(regclass, name, anyarray),
  dp_agg.unset_public_keys(regclass, name),
  dp_agg.release_cache_entries(),
  dp_agg.clear_release_cache(regrole)
TO PUBLIC;

-- Budgets that renew: the period arithmetic (pure functions of their
-- arguments), called by dp_agg.budgets as the querying user.
GRANT EXECUTE ON FUNCTION
  dp_agg.renewal_period_start(interval, timestamptz, timestamptz),
  dp_agg.renewal_period_end(interval, timestamptz, timestamptz),
  dp_agg.budget_in_period(dp_agg.role_budget, timestamptz)
TO PUBLIC;

-- dp_agg's privacy-unit rewrite puts this window function into a query over
-- a table with a privacy unit column, which runs as the querying role. It
-- only marks random rows; restricted roles may not write it themselves.
GRANT EXECUTE ON FUNCTION dp_agg.unit_group_sample(integer) TO PUBLIC;
-- and these aggregates (75_total_functions.sql), sums that never raise.
GRANT EXECUTE ON ROUTINE dp_agg.unit_sum(float4), dp_agg.unit_sum(float8),
  dp_agg.unit_sum(numeric) TO PUBLIC;

-- dp_agg puts this aggregate into the HAVING clause of a restricted role's
-- query, which runs as that role.
GRANT EXECUTE ON ROUTINE dp_agg.group_selection(float8, float8) TO PUBLIC;

-- dp_agg on Citus: the planner hook writes these into the analyst's query
-- over a distributed table (dp_count's monomorphic forms, charged like
-- dp_count, and the identity around a distribution-column group key).
GRANT EXECUTE ON ROUTINE
  dp_agg.citus_count(boolean, float8),
  dp_agg.citus_count(boolean, float8, float8),
  dp_agg.citus_count_interval(boolean, float8, float8),
  dp_agg.citus_count_interval(boolean, float8, float8, float8),
  dp_agg.citus_group_key(anyelement)
TO PUBLIC;

-- The support functions of dp_agg's own aggregates: Citus checks EXECUTE on
-- an aggregate's transition, combine and final functions for the querying
-- role on every node. They are safe to grant because of where they run, not
-- who calls them (src/pg/support_guard.h; README, "Scaling out with Citus",
-- "Who may query"): only inside an aggregate call, only for dp_agg's own
-- aggregates or a Citus site dp_agg prepared (an aggregate built on them is
-- refused when created and when run), and only on states dp_agg's executor
-- hook prepared (never on a state typed as text).
GRANT EXECUTE ON FUNCTION
  dp_agg.count_transfn(dp_agg.aggregate_state, anyelement, float8),
  dp_agg.count_transfn(dp_agg.aggregate_state, anyelement, float8, float8),
  dp_agg.count_transfn(dp_agg.aggregate_state, anyelement, float8, float8, float8),
  dp_agg.int2_transfn(dp_agg.aggregate_state, smallint, smallint, smallint, float8),
  dp_agg.int2_transfn(dp_agg.aggregate_state, smallint, smallint, smallint, float8, float8),
  dp_agg.int4_transfn(dp_agg.aggregate_state, integer, integer, integer, float8),
  dp_agg.int4_transfn(dp_agg.aggregate_state, integer, integer, integer, float8, float8),
  dp_agg.int8_transfn(dp_agg.aggregate_state, bigint, bigint, bigint, float8),
  dp_agg.int8_transfn(dp_agg.aggregate_state, bigint, bigint, bigint, float8, float8),
  dp_agg.float4_transfn(dp_agg.aggregate_state, real, real, real, float8),
  dp_agg.float4_transfn(dp_agg.aggregate_state, real, real, real, float8, float8),
  dp_agg.float8_transfn(dp_agg.aggregate_state, float8, float8, float8, float8),
  dp_agg.float8_transfn(dp_agg.aggregate_state, float8, float8, float8, float8, float8),
  dp_agg.float8_transfn(dp_agg.aggregate_state, float8, float8, float8, float8, float8, float8),
  dp_agg.numeric_transfn(dp_agg.aggregate_state, numeric, numeric, numeric, float8),
  dp_agg.numeric_transfn(dp_agg.aggregate_state, numeric, numeric, numeric, float8, float8),
  dp_agg.numeric_transfn(dp_agg.aggregate_state, numeric, numeric, numeric, float8, float8, float8),
  dp_agg.group_selection_transfn(dp_agg.aggregate_state, float8, float8),
  dp_agg.combine(dp_agg.aggregate_state, dp_agg.aggregate_state),
  dp_agg.count_final(dp_agg.aggregate_state),
  dp_agg.count_interval_final(dp_agg.aggregate_state),
  dp_agg.sum_final_int8(dp_agg.aggregate_state),
  dp_agg.sum_final_numeric(dp_agg.aggregate_state),
  dp_agg.sum_final_float4(dp_agg.aggregate_state),
  dp_agg.sum_final_float8(dp_agg.aggregate_state),
  dp_agg.sum_interval_final(dp_agg.aggregate_state),
  dp_agg.avg_final_numeric(dp_agg.aggregate_state),
  dp_agg.avg_final_float8(dp_agg.aggregate_state),
  dp_agg.avg_interval_final(dp_agg.aggregate_state),
  dp_agg.group_selection_final(dp_agg.aggregate_state),
  dp_agg.quantile_transfn(dp_agg.quantile_state, float8, float8, float8, float8),
  dp_agg.quantile_transfn(dp_agg.quantile_state, float8, float8, float8, float8, float8),
  dp_agg.quantile_combine(dp_agg.quantile_state, dp_agg.quantile_state),
  dp_agg.quantile_final(dp_agg.quantile_state),
  dp_agg.select_transfn(dp_agg.selection_state, anyelement, anyarray, float8),
  dp_agg.select_transfn(dp_agg.selection_state, anyelement, float8, float8, float8, anyarray, float8),
  dp_agg.select_combine(dp_agg.selection_state, dp_agg.selection_state),
  dp_agg.select_final(dp_agg.selection_state, anyelement, anyarray, float8),
  dp_agg.select_final(dp_agg.selection_state, anyelement, float8, float8, float8, anyarray, float8)
TO PUBLIC;

-- dp_select's Citus forms (65_citus.sql), written into queries over distributed
-- tables by the planner hook, and their final functions (Citus checks EXECUTE).
GRANT EXECUTE ON ROUTINE
  dp_agg.citus_select(text, text[], float8),
  dp_agg.citus_select(text, float8, float8, float8, text[], float8),
  dp_agg.citus_select_final(dp_agg.selection_state, text, text[], float8),
  dp_agg.citus_select_final(dp_agg.selection_state, text, float8, float8, float8, text[], float8),
  dp_agg.citus_select(integer, integer[], float8),
  dp_agg.citus_select(integer, float8, float8, float8, integer[], float8),
  dp_agg.citus_select_final(dp_agg.selection_state, integer, integer[], float8),
  dp_agg.citus_select_final(dp_agg.selection_state, integer, float8, float8, float8, integer[], float8),
  dp_agg.citus_select(bigint, bigint[], float8),
  dp_agg.citus_select(bigint, float8, float8, float8, bigint[], float8),
  dp_agg.citus_select_final(dp_agg.selection_state, bigint, bigint[], float8),
  dp_agg.citus_select_final(dp_agg.selection_state, bigint, float8, float8, float8, bigint[], float8)
TO PUBLIC;

-- Comments for the support functions granted above.
COMMENT ON FUNCTION dp_agg.count_transfn(dp_agg.aggregate_state, anyelement, float8) IS
  'Support function of dp_agg''s aggregates (transition function): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.count_transfn(dp_agg.aggregate_state, anyelement, float8, float8) IS
  'Support function of dp_agg''s aggregates (transition function): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.count_transfn(dp_agg.aggregate_state, anyelement, float8, float8, float8) IS
  'Support function of dp_agg''s aggregates (transition function): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.int2_transfn(dp_agg.aggregate_state, smallint, smallint, smallint, float8) IS
  'Support function of dp_agg''s aggregates (transition function): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.int2_transfn(dp_agg.aggregate_state, smallint, smallint, smallint, float8, float8) IS
  'Support function of dp_agg''s aggregates (transition function): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.int4_transfn(dp_agg.aggregate_state, integer, integer, integer, float8) IS
  'Support function of dp_agg''s aggregates (transition function): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.int4_transfn(dp_agg.aggregate_state, integer, integer, integer, float8, float8) IS
  'Support function of dp_agg''s aggregates (transition function): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.int8_transfn(dp_agg.aggregate_state, bigint, bigint, bigint, float8) IS
  'Support function of dp_agg''s aggregates (transition function): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.int8_transfn(dp_agg.aggregate_state, bigint, bigint, bigint, float8, float8) IS
  'Support function of dp_agg''s aggregates (transition function): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.float4_transfn(dp_agg.aggregate_state, real, real, real, float8) IS
  'Support function of dp_agg''s aggregates (transition function): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.float4_transfn(dp_agg.aggregate_state, real, real, real, float8, float8) IS
  'Support function of dp_agg''s aggregates (transition function): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.float8_transfn(dp_agg.aggregate_state, float8, float8, float8, float8) IS
  'Support function of dp_agg''s aggregates (transition function): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.float8_transfn(dp_agg.aggregate_state, float8, float8, float8, float8, float8) IS
  'Support function of dp_agg''s aggregates (transition function): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.float8_transfn(dp_agg.aggregate_state, float8, float8, float8, float8, float8, float8) IS
  'Support function of dp_agg''s aggregates (transition function): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.numeric_transfn(dp_agg.aggregate_state, numeric, numeric, numeric, float8) IS
  'Support function of dp_agg''s aggregates (transition function): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.numeric_transfn(dp_agg.aggregate_state, numeric, numeric, numeric, float8, float8) IS
  'Support function of dp_agg''s aggregates (transition function): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.numeric_transfn(dp_agg.aggregate_state, numeric, numeric, numeric, float8, float8, float8) IS
  'Support function of dp_agg''s aggregates (transition function): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.group_selection_transfn(dp_agg.aggregate_state, float8, float8) IS
  'Support function of dp_agg''s aggregates (transition function): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.combine(dp_agg.aggregate_state, dp_agg.aggregate_state) IS
  'Support function of dp_agg''s aggregates (combine function): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.count_final(dp_agg.aggregate_state) IS
  'Support function of dp_agg''s aggregates (final function (adds the noise)): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.count_interval_final(dp_agg.aggregate_state) IS
  'Support function of dp_agg''s aggregates (final function (adds the noise)): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.sum_final_int8(dp_agg.aggregate_state) IS
  'Support function of dp_agg''s aggregates (final function (adds the noise)): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.sum_final_numeric(dp_agg.aggregate_state) IS
  'Support function of dp_agg''s aggregates (final function (adds the noise)): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.sum_final_float4(dp_agg.aggregate_state) IS
  'Support function of dp_agg''s aggregates (final function (adds the noise)): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.sum_final_float8(dp_agg.aggregate_state) IS
  'Support function of dp_agg''s aggregates (final function (adds the noise)): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.sum_interval_final(dp_agg.aggregate_state) IS
  'Support function of dp_agg''s aggregates (final function (adds the noise)): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.avg_final_numeric(dp_agg.aggregate_state) IS
  'Support function of dp_agg''s aggregates (final function (adds the noise)): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.avg_final_float8(dp_agg.aggregate_state) IS
  'Support function of dp_agg''s aggregates (final function (adds the noise)): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.avg_interval_final(dp_agg.aggregate_state) IS
  'Support function of dp_agg''s aggregates (final function (adds the noise)): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.group_selection_final(dp_agg.aggregate_state) IS
  'Support function of dp_agg''s aggregates (final function (adds the noise)): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.quantile_transfn(dp_agg.quantile_state, float8, float8, float8, float8) IS
  'Support function of dp_agg''s aggregates (transition function): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.quantile_transfn(dp_agg.quantile_state, float8, float8, float8, float8, float8) IS
  'Support function of dp_agg''s aggregates (transition function): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.quantile_combine(dp_agg.quantile_state, dp_agg.quantile_state) IS
  'Support function of dp_agg''s aggregates (combine function): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.quantile_final(dp_agg.quantile_state) IS
  'Support function of dp_agg''s aggregates (final function (adds the noise)): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.select_transfn(dp_agg.selection_state, anyelement, anyarray, float8) IS
  'Support function of dp_agg''s aggregates (transition function): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.select_transfn(dp_agg.selection_state, anyelement, float8, float8, float8, anyarray, float8) IS
  'Support function of dp_agg''s aggregates (transition function): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.select_combine(dp_agg.selection_state, dp_agg.selection_state) IS
  'Support function of dp_agg''s aggregates (combine function): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.select_final(dp_agg.selection_state, anyelement, anyarray, float8) IS
  'Support function of dp_agg''s aggregates (final function (adds the noise)): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';
COMMENT ON FUNCTION dp_agg.select_final(dp_agg.selection_state, anyelement, float8, float8, float8, anyarray, float8) IS
  'Support function of dp_agg''s aggregates (final function (adds the noise)): runs only inside dp_agg''s own aggregates, on states its executor hook prepared';

-- dp_agg puts these into a restricted role's expressions over protected rows
-- in place of the built-in arithmetic (75_total_functions.sql), and that query
-- runs as that role. They are pure and never raise.
GRANT EXECUTE ON FUNCTION
  dp_agg.total_int2pl(int2, int2),
  dp_agg.total_int2mi(int2, int2),
  dp_agg.total_int2mul(int2, int2),
  dp_agg.total_int2div(int2, int2),
  dp_agg.total_int4pl(int4, int4),
  dp_agg.total_int4mi(int4, int4),
  dp_agg.total_int4mul(int4, int4),
  dp_agg.total_int4div(int4, int4),
  dp_agg.total_int8pl(int8, int8),
  dp_agg.total_int8mi(int8, int8),
  dp_agg.total_int8mul(int8, int8),
  dp_agg.total_int8div(int8, int8),
  dp_agg.total_int24pl(int2, int4),
  dp_agg.total_int24mi(int2, int4),
  dp_agg.total_int24mul(int2, int4),
  dp_agg.total_int24div(int2, int4),
  dp_agg.total_int42pl(int4, int2),
  dp_agg.total_int42mi(int4, int2),
  dp_agg.total_int42mul(int4, int2),
  dp_agg.total_int42div(int4, int2),
  dp_agg.total_int28pl(int2, int8),
  dp_agg.total_int28mi(int2, int8),
  dp_agg.total_int28mul(int2, int8),
  dp_agg.total_int28div(int2, int8),
  dp_agg.total_int82pl(int8, int2),
  dp_agg.total_int82mi(int8, int2),
  dp_agg.total_int82mul(int8, int2),
  dp_agg.total_int82div(int8, int2),
  dp_agg.total_int48pl(int4, int8),
  dp_agg.total_int48mi(int4, int8),
  dp_agg.total_int48mul(int4, int8),
  dp_agg.total_int48div(int4, int8),
  dp_agg.total_int84pl(int8, int4),
  dp_agg.total_int84mi(int8, int4),
  dp_agg.total_int84mul(int8, int4),
  dp_agg.total_int84div(int8, int4),
  dp_agg.total_int2mod(int2, int2),
  dp_agg.total_int2um(int2),
  dp_agg.total_int4mod(int4, int4),
  dp_agg.total_int4um(int4),
  dp_agg.total_int8mod(int8, int8),
  dp_agg.total_int8um(int8),
  dp_agg.total_float4pl(float4, float4),
  dp_agg.total_float4mi(float4, float4),
  dp_agg.total_float4mul(float4, float4),
  dp_agg.total_float4div(float4, float4),
  dp_agg.total_float8pl(float8, float8),
  dp_agg.total_float8mi(float8, float8),
  dp_agg.total_float8mul(float8, float8),
  dp_agg.total_float8div(float8, float8),
  dp_agg.total_float48pl(float4, float8),
  dp_agg.total_float48mi(float4, float8),
  dp_agg.total_float48mul(float4, float8),
  dp_agg.total_float48div(float4, float8),
  dp_agg.total_float84pl(float8, float4),
  dp_agg.total_float84mi(float8, float4),
  dp_agg.total_float84mul(float8, float4),
  dp_agg.total_float84div(float8, float4),
  dp_agg.total_numeric_add(numeric, numeric),
  dp_agg.total_numeric_sub(numeric, numeric),
  dp_agg.total_numeric_mul(numeric, numeric),
  dp_agg.total_numeric_div(numeric, numeric),
  dp_agg.total_numeric_mod(numeric, numeric),
  dp_agg.total_float8(numeric),
  dp_agg.total_date_pli(date, int4),
  dp_agg.total_date_mii(date, int4),
  dp_agg.total_timestamp_pl_interval(timestamp, interval),
  dp_agg.total_timestamp_mi_interval(timestamp, interval),
  dp_agg.total_timestamptz_pl_interval(timestamptz, interval),
  dp_agg.total_timestamptz_mi_interval(timestamptz, interval),
  dp_agg.total_timestamp(date),
  dp_agg.total_timestamptz(date),
  dp_agg.total_date_trunc(text, timestamp),
  dp_agg.total_lower(text),
  dp_agg.total_upper(text),
  dp_agg.total_texticlike(text, text),
  dp_agg.total_texticnlike(text, text),
  dp_agg.total_bpchariclike(bpchar, text),
  dp_agg.total_bpcharicnlike(bpchar, text),
  dp_agg.total_textlike(text, text),
  dp_agg.total_textnlike(text, text),
  dp_agg.total_textlen(text),
  dp_agg.total_length(text),
  dp_agg.total_char_length(text),
  dp_agg.total_character_length(text),
  dp_agg.total_substr(text, int4, int4),
  dp_agg.total_substr(text, int4),
  dp_agg.total_substring(text, int4, int4),
  dp_agg.total_substring(text, int4),
  dp_agg.total_floor(numeric),
  dp_agg.total_ceil(numeric),
  dp_agg.total_ceiling(numeric),
  dp_agg.total_round(numeric, int4),
  dp_agg.total_trunc(numeric, int4),
  dp_agg.total_width_bucket(numeric, numeric, numeric, int4),
  dp_agg.total_width_bucket(float8, float8, float8, int4),
  dp_agg.total_to_char(timestamp, text),
  dp_agg.total_to_char(timestamptz, text),
  dp_agg.total_date_trunc(text, timestamptz)
TO PUBLIC;

-- dp_agg puts these into a restricted role's expressions over protected rows
-- in place of the casts BI tools write (76_total_casts.sql), and that query
-- runs as that role. They are pure and never raise.
GRANT EXECUTE ON FUNCTION
  dp_agg.total_int4(numeric),
  dp_agg.total_int8(numeric),
  dp_agg.total_int2(numeric),
  dp_agg.total_int4(float8),
  dp_agg.total_int2(float8),
  dp_agg.total_int8(float8),
  dp_agg.total_int4(float4),
  dp_agg.total_int2(float4),
  dp_agg.total_int8(float4),
  dp_agg.total_int4(int8),
  dp_agg.total_int2(int8),
  dp_agg.total_int2(int4),
  dp_agg.total_float4(float8),
  dp_agg.total_date(timestamptz),
  dp_agg.total_timestamp(timestamptz),
  dp_agg.total_timestamptz(timestamp),
  dp_agg.total_to_timestamp(float8),
  dp_agg.total_to_timestamp(text, text, timestamptz, text),
  dp_agg.total_to_date(text, text, date, text)
TO PUBLIC;

-- A restricted session reads these in place of information_schema.tables and
-- information_schema.columns (78_information_schema.sql); they list what
-- pg_catalog shows every role.
GRANT SELECT ON dp_agg.information_schema_tables, dp_agg.information_schema_columns TO PUBLIC;
GRANT EXECUTE ON FUNCTION dp_agg.lists_protected_table(oid) TO PUBLIC;

-- dp_variance and dp_stddev (55_variance.sql): their support functions, for
-- the reasons given above for the other aggregates' (Citus checks EXECUTE).
GRANT EXECUTE ON FUNCTION
  dp_agg.variance_int2_transfn(dp_agg.variance_state, smallint, smallint, smallint, float8),
  dp_agg.variance_int2_transfn(dp_agg.variance_state, smallint, smallint, smallint, float8, float8),
  dp_agg.variance_int4_transfn(dp_agg.variance_state, integer, integer, integer, float8),
  dp_agg.variance_int4_transfn(dp_agg.variance_state, integer, integer, integer, float8, float8),
  dp_agg.variance_int8_transfn(dp_agg.variance_state, bigint, bigint, bigint, float8),
  dp_agg.variance_int8_transfn(dp_agg.variance_state, bigint, bigint, bigint, float8, float8),
  dp_agg.variance_float4_transfn(dp_agg.variance_state, real, real, real, float8),
  dp_agg.variance_float4_transfn(dp_agg.variance_state, real, real, real, float8, float8),
  dp_agg.variance_float8_transfn(dp_agg.variance_state, float8, float8, float8, float8),
  dp_agg.variance_float8_transfn(dp_agg.variance_state, float8, float8, float8, float8, float8),
  dp_agg.variance_numeric_transfn(dp_agg.variance_state, numeric, numeric, numeric, float8),
  dp_agg.variance_numeric_transfn(dp_agg.variance_state, numeric, numeric, numeric, float8, float8),
  dp_agg.variance_combine(dp_agg.variance_state, dp_agg.variance_state),
  dp_agg.variance_final_float8(dp_agg.variance_state),
  dp_agg.variance_final_numeric(dp_agg.variance_state),
  dp_agg.stddev_final_float8(dp_agg.variance_state),
  dp_agg.stddev_final_numeric(dp_agg.variance_state)
TO PUBLIC;

-- Randomized response (56_randomized_response.sql): an application may randomize
-- the answers it stores; dp_rr_proportion's support functions (not charged,
-- what they read is already private).
GRANT EXECUTE ON FUNCTION
  dp_agg.randomized_response(boolean, float8),
  dp_agg.rr_check_epsilon(float8, float8, float8),
  dp_agg.rr_transfn(float8[], boolean, float8),
  dp_agg.rr_combine(float8[], float8[]),
  dp_agg.rr_proportion_final(float8[]),
  dp_agg.rr_proportion_se_final(float8[])
TO PUBLIC;
