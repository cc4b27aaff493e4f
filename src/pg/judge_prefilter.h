// The planner hook's quick test (issue 31): whether a query of an
// unrestricted session on a node without Citus can concern dp_agg at all.
// A query that reads no protected table and no table with a privacy unit
// column, and calls no aggregate or window function other than PostgreSQL's
// built-in ones (dp_agg's are all user-defined), passes the judge
// unchanged: the judge and the rewrites it asks for act, for an
// unrestricted role, only on those. Such a query is planned at once.
// Restricted sessions are judged on every statement, whatever it reads.
#ifndef DP_AGG_PG_JUDGE_PREFILTER_H
#define DP_AGG_PG_JUDGE_PREFILTER_H

#include "pg_includes.h"

namespace dp_pg {

// True when `query` (at any depth: subqueries, WITH queries, sublinks,
// views as expanded) may concern dp_agg; false only when it certainly does
// not. Reads cached labels (label_cache.h) and syscaches only.
bool QueryMayConcernDpAgg(Query* query);

}  // namespace dp_pg

#endif  // DP_AGG_PG_JUDGE_PREFILTER_H
