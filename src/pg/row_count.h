// dp_count(epsilon), the row count that reads like count(*), is written as
// dp_count(true, epsilon) before anything else looks at the query.
#ifndef DP_AGG_PG_ROW_COUNT_H
#define DP_AGG_PG_ROW_COUNT_H

#include "pg_includes.h"

namespace dp_pg {

// Rewrites, in place and at every query level (subqueries, CTEs, sublinks),
// each call of the one-argument aggregate dp_count(float8) into a call of
// dp_count(anyelement, float8) over the constant true. Counting a value that
// is never NULL counts rows, so the rest of dp_agg (judgement, charging,
// privacy units, Citus) sees an ordinary dp_count(1, epsilon) and treats it
// as one: there is no second code path to keep in step. Refuses DISTINCT and
// ORDER BY inside the call (22023), which have no meaning for a row count.
void ExpandRowCounts(Query* query);

}  // namespace dp_pg

extern "C" {
// The support function of dp_count(float8): only reached if a call escaped
// ExpandRowCounts, and then it refuses rather than count.
PGDLLEXPORT Datum dp_count_rows_transfn(PG_FUNCTION_ARGS);
}

#endif  // DP_AGG_PG_ROW_COUNT_H
