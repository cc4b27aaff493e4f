// The aggregates an aggregation level over protected rows may call: for
// restricted roles only dp_agg's private aggregates, each over total
// per-row arguments and without DISTINCT or ORDER BY.
#ifndef DP_AGG_PG_AGGREGATE_RULES_H
#define DP_AGG_PG_AGGREGATE_RULES_H

#include "pg_includes.h"

namespace dp_pg {

// Checks the aggregate calls in the select list and HAVING of `level` (not
// in its subqueries) and returns whether it calls a private aggregate. For
// a `restricted` role, refuses any other aggregate, an outer query's
// aggregate, DISTINCT or ORDER BY inside a private aggregate, and per-row
// arguments or FILTERs that are not total. Raises ERROR; modifies nothing.
bool CheckAggregateCalls(Query* level, bool restricted);

}  // namespace dp_pg

#endif  // DP_AGG_PG_AGGREGATE_RULES_H
