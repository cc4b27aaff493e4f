// dp_agg on Citus: the coordinator's planner pre-pass, just before Citus
// plans a query.
#ifndef DP_AGG_PG_CITUS_PLANNER_H
#define DP_AGG_PG_CITUS_PLANNER_H

#include "../pg_includes.h"

extern "C" {
#include "optimizer/planner.h"
}

namespace dp_pg {

// Planner pre-pass, just before Citus plans `query`: refuses hand-written
// wrapper calls around private aggregates, and rewrites the query so that
// Citus takes its partial-aggregation path for every private aggregate. A
// restricted session's query that aggregates a distributed table privately
// may call only built-in functions that run no SQL and dp_agg's (ERROR
// 42501 before anything is charged): SQL such a function ran on a worker
// could call a Citus function, which the worker refuses only after the
// coordinator charged (issue 25, finding 3).
// Returns whether `query` itself (its top level) aggregates a distributed
// table privately: then Citus must plan it without its router planners
// (PlanWithoutRouter). A private aggregation in a subquery is planned on its
// own by Citus's recursive planning, through this hook again, unless Citus
// routes the whole query to one shard: then the worker refuses it.
bool PrepareDistributedQuery(Query* query);

// Calls `plan` with Citus's router and fast-path router planners turned off
// for the duration of the call. A query that Citus could prune to one shard
// (WHERE distribution_column = constant) would otherwise be sent whole to a
// worker, noise included; without them Citus's logical planner splits the
// aggregate into worker_partial_agg on the remaining shard and
// coord_combine_agg on the coordinator, as for every other shape.
PlannedStmt* PlanWithoutRouter(Query* query, const char* query_string, int cursor_options,
                               ParamListInfo bound_parameters, planner_hook_type plan);

}  // namespace dp_pg

#endif  // DP_AGG_PG_CITUS_PLANNER_H
