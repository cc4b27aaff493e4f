// Checks on a private aggregate's call and its input plan, before any row is
// read (ERROR 0A000). Rule (proved in the README, "How much a query costs"):
// a query costs, for every private aggregate call site, its epsilon times the
// number of grouping sets of its Agg node, charged once per execution of the
// statement. This is sound when
//   (1) the call site's Agg node runs at most once per execution: it is not
//       under the inner side of a nested loop or merge join, not in a
//       correlated or per-row subquery, not in a recursive CTE; and
//   (2) every row of every table feeds the aggregation at most once: its
//       input reads each table at most once, through operators that never
//       repeat a row (no joins, no set-returning functions in the select
//       list, no subqueries that make row membership depend on other rows).
// Then the groups of one grouping set partition the input rows, so releasing
// all of them costs epsilon once (parallel composition), and the grouping
// sets and call sites add up (sequential composition). Anything else is
// refused before execution, so the charge never depends on the data.
#ifndef DP_AGG_PG_INPUT_CHECKS_H
#define DP_AGG_PG_INPUT_CHECKS_H

#include "pg_includes.h"

namespace dp_pg {

// DISTINCT or ORDER BY inside the call: refused for every role, before any
// parameter is read, except dp_count(DISTINCT ...) without ORDER BY.
// Whether `aggref` calls a counting aggregate (dp_count, dp_count_interval):
// the one family whose DISTINCT form keeps sensitivity 1 (removing one row
// removes at most one distinct value).
bool IsPrivateCount(const Aggref* aggref);

void RefuseDistinctOrOrderBy(Aggref* aggref);

// Rule (1): `reexecuted` says the call's node may run more than once per
// execution of the statement.
void RefuseReexecution(Aggref* aggref, bool reexecuted);

// The per-row arguments and FILTER may not read other rows or subqueries.
void CheckPerRowExpressions(Aggref* aggref);

// Rule (2) on the input plan of `plan`, the Agg node computing `aggref`.
// Returns the max_groups of the privacy-unit level in the input (the
// marker dp_agg.unit_group_sample(max_groups), unit_rewrite.h), 1 if none:
// each call site of `plan` is charged that many times its epsilon and delta.
int CheckAggregateInput(Agg* plan, Aggref* aggref, EState* estate);

// A private aggregate used as a window function in `plan`'s target list.
void RejectWindowUse(Plan* plan);

}  // namespace dp_pg

#endif  // DP_AGG_PG_INPUT_CHECKS_H
