// Text that travels between Citus nodes, and a restricted session's private
// query, are printed, read, planned and run under settings no session can
// change.
//
// Citus deparses the fragment it sends to the workers with the output
// functions of the coordinator's session: extra_float_digits rounds a float
// parameter (the workers then aggregate with an epsilon or bounds other than
// the ones the coordinator charged), DateStyle prints a date the workers read
// as another day, standard_conforming_strings and bytea_output change how a
// literal reads, and the coordinator reads the workers' group keys back with
// its session's input functions (issue 25, finding 1; review_const C1-C4
// were instances of the same class). Instead of making every shipped value
// safe one type at a time, the settings that decide how values are printed
// and read are pinned to fixed values while a private query is planned and
// executed on a node of a Citus cluster, on the coordinator (deparse,
// parameters, reading results back) and on the workers (printing partial
// states and group keys).
//
// On one node the same output settings are pinned for a restricted
// session's private query (issue 26, finding 1: DateStyle Postgres printed a
// time-zone abbreviation cut into invalid UTF-8, which made lower() raise for
// the rows it reached), with the planner's and executor's settings the
// session chose (finding 2: plans and their time); the total text functions
// hold on their own too (total_functions.h).
#ifndef DP_AGG_PG_PINNED_SETTINGS_H
#define DP_AGG_PG_PINNED_SETTINGS_H

#include "pg_includes.h"

namespace dp_pg {

// Citus is loaded in this server (its settings exist).
bool CitusLoaded();

// Whether this session's private queries are planned and run as a
// restricted analyst's: it is restricted, or an administrator asked to see
// such plans (dp_agg.plan_as_restricted).
bool PlansAsRestricted();

// Whether a planned statement carries private work whose text or plan the
// session must not shape: a private aggregate (or Citus's wrapper around
// one) in a plan, on a server that has Citus loaded or in a session that
// PlansAsRestricted.
bool NeedsPinnedSettings(const PlannedStmt* plan);

// Opens a GUC nest level and sets every pinned setting in it; returns the
// level for UnpinSettings. With `planner_and_executor` (a restricted
// session's private query, or a Citus worker's fragment of one), also the
// planner's and executor's settings the session chose, jit and the
// session's timeouts (see pinned_settings.cpp). An ERROR in between is
// cleaned up by the (sub)transaction's abort, like a function's SET clause.
int PinSettings(bool planner_and_executor);
void UnpinSettings(int nest_level);

// Around the executor's Run, Finish and End steps of a statement (hooks.cpp;
// ExecutorStart pins in call_sites.cpp): when NeedsPinnedSettings holds,
// pins (PinSettings) and returns the level for UnpinExecutorStep; 0 (no
// level) otherwise.
int PinExecutorStep(const QueryDesc* query);
void UnpinExecutorStep(int nest_level);

}  // namespace dp_pg

#endif  // DP_AGG_PG_PINNED_SETTINGS_H
