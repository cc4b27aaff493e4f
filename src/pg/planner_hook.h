// The planner hook: every query, including generic plans of prepared
// statements, is planned here, after views are expanded. It only dispatches:
// judge (query_judgement.h), rewrite (query_rewrites.h), plan, and prove that
// every release happens once (release_once.h).
#ifndef DP_AGG_PG_PLANNER_HOOK_H
#define DP_AGG_PG_PLANNER_HOOK_H

#include "pg_includes.h"

namespace dp_pg {

void InstallPlannerHook();

}  // namespace dp_pg

#endif  // DP_AGG_PG_PLANNER_HOOK_H
