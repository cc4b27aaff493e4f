// The planner hook: every query, including generic plans of prepared
// statements, is planned here, after views are expanded. It only dispatches:
// judge (query_judgement.h), rewrite (query_rewrites.h), plan, and prove that
// every release happens once (release_once.h).
#ifndef DP_AGG_PG_PLANNER_HOOK_H
#define DP_AGG_PG_PLANNER_HOOK_H

#include "pg_includes.h"

extern "C" {
#include "optimizer/planner.h"
}

namespace dp_pg {

// The planner hook's work (hooks.cpp): judges a query (query_judgement.h),
// rewrites it, plans it with `next` (the previous planner hook or
// standard_planner) and wraps its releases.
PlannedStmt* PlanPrivateQuery(Query* query, const char* query_string, int cursor_options,
                              ParamListInfo bound_parameters, planner_hook_type next);

}  // namespace dp_pg

#endif  // DP_AGG_PG_PLANNER_HOOK_H
