// A restricted query's plan is a function of the query and public
// information only (issue 26, finding 2).
//
// PostgreSQL chooses a plan from estimates: a table's size (reltuples,
// relpages and the file's actual length), pg_statistic (most common values,
// histograms, distinct counts, widths), extended statistics and index sizes.
// Those describe the protected rows, and a plan's choices are visible through
// time: JIT compiles only a plan costlier than jit_above_cost (hundreds of
// milliseconds), so binary-searching that threshold read a row's presence
// after ANALYZE, the exact count of a value from the MCV list and max(age)
// from the histogram. Hash or sort, parallel or not, index or not are the
// same channel with a smaller signal. So while a private query over
// protected tables is planned for a restricted session (or a Citus worker
// plans the fragment of one), the planner sees, for every protected table:
//   - dp_agg.protected_rows_estimate rows (an administrator's public
//     setting), on as many pages as rows of the columns' type widths fill;
//   - no pg_statistic rows and no extended statistics: PostgreSQL's default
//     selectivities, which depend on the query alone;
//   - type widths instead of measured average widths;
//   - indexes sized from the same row estimate, with no measured tree
//     height; index access methods whose cost functions read the index
//     itself (GIN and BRIN read their metapages) are left out of the plan.
#ifndef DP_AGG_PG_PUBLIC_ESTIMATES_H
#define DP_AGG_PG_PUBLIC_ESTIMATES_H

#include "pg_includes.h"

extern "C" {
#include "nodes/pathnodes.h"
#include "utils/selfuncs.h"
}

namespace dp_pg {

// Whether the planner is planning with public estimates now; set by the
// planner hook around one planning (restored by it, also on error).
bool PublicEstimatesActive();
void SetPublicEstimatesActive(bool active);

// The work of the four planner hooks (hooks.cpp), each for a protected
// table while public estimates are active: get_relation_info (the row
// estimate, no extended statistics, indexes sized from it);
// get_relation_stats and get_index_stats (no statistics: returns true, the
// answer is final; false: ask the next hook); get_attavgwidth (the type's
// width, > 0 and final; 0: ask the next hook).
void PublicRelationInfo(Oid relation, bool inheritance_parent, RelOptInfo* rel);
bool PublicRelationStats(RangeTblEntry* entry, VariableStatData* data);
bool PublicIndexStats(Oid index, VariableStatData* data);
int32 PublicAverageWidth(Oid relation, AttrNumber column);

}  // namespace dp_pg

#endif  // DP_AGG_PG_PUBLIC_ESTIMATES_H
