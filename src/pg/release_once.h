// Every private aggregate call (and every group selection) runs exactly
// once per execution, in every plan shape, parallel ones included.
#ifndef DP_AGG_PG_RELEASE_ONCE_H
#define DP_AGG_PG_RELEASE_ONCE_H

#include "pg_includes.h"

extern "C" {
#include "nodes/pathnodes.h"
#include "optimizer/planner.h"
}

namespace dp_pg {

// The create_upper_paths hook's work (hooks.cpp): keeps complete private
// aggregations out of the parallel part of a plan.
void KeepReleasesOutOfParallelPaths(PlannerInfo* root, UpperRelationKind stage,
                                    RelOptInfo* output_rel);

// Proves on the final plan that no private aggregate runs, other than as
// the partial step of a Finalize above the Gather, below a Gather or Gather
// Merge that several processes execute. Raises an ERROR otherwise.
void VerifyReleasedOnce(PlannedStmt* plan);

}  // namespace dp_pg

#endif  // DP_AGG_PG_RELEASE_ONCE_H
