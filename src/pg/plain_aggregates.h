// Plain aggregates, answered privately: what BI tools send.
//
// Query builders (Metabase, Superset, Tableau, Power BI) emit count(*),
// count(x), count(DISTINCT x), sum(x) and avg(x). When an administrator has
// given a restricted role a default epsilon,
//
//   ALTER ROLE analyst SET dp_agg.plain_aggregate_epsilon = 0.5;
//
// each such call at a query level that aggregates protected rows is
// rewritten, before anything else looks at the query, into the private
// aggregate of the same meaning and result type:
//
//   count(*)            -> dp_count(true, epsilon)            bigint
//   count(x)            -> dp_count(x, epsilon)               bigint
//   count(DISTINCT x)   -> dp_count(DISTINCT x, epsilon)      bigint
//   sum(x)              -> dp_sum(x, lower, upper, epsilon)   sum()'s type
//   avg(x)              -> dp_avg(x, lower, upper, epsilon)   avg()'s type
//
// with x's bounds those the administrator declared for its column
// (column_bounds.h). The output column keeps its name and type, so a tool
// reads "count" as the bigint it asked for. The rewritten query is then
// judged, charged, grouped (partition selection), bounded per privacy unit
// and distributed on Citus exactly as if the analyst had written the dp_
// calls: there is no second code path. Whether a call is rewritten depends
// only on the query, the catalog (labels) and the role's settings, never on
// the data.
//
// Not rewritten, so refused as before: plain aggregates of unrestricted
// roles (they read the rows anyway), of levels that read no protected rows
// (a count of released groups in an outer query is post-processing), and
// every aggregate of a restricted role without the setting (fail closed).
#ifndef DP_AGG_PG_PLAIN_AGGREGATES_H
#define DP_AGG_PG_PLAIN_AGGREGATES_H

#include "pg_includes.h"

namespace dp_pg {

// Rewrites, in place and at every query level, a restricted session's plain
// count/sum/avg calls over protected rows into dp_count/dp_sum/dp_avg (see
// above). Refuses (42501, the fix in DETAIL and HINT) a sum or avg whose
// argument is not a column with declared bounds, and min/max, whose
// answers would be a protected row's value.
void RewritePlainAggregates(Query* query);

}  // namespace dp_pg

#endif  // DP_AGG_PG_PLAIN_AGGREGATES_H
