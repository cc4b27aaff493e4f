// The rules a query must meet before it may read protected tables, checked
// on the rewritten query tree by a planner hook (views are expanded by then,
// and every plan, including generic plans of prepared statements, is made
// here).
#ifndef DP_AGG_PG_QUERY_RULES_H
#define DP_AGG_PG_QUERY_RULES_H

#include "pg_includes.h"

namespace dp_pg {

void InstallPlannerHook();

}  // namespace dp_pg

#endif  // DP_AGG_PG_QUERY_RULES_H
