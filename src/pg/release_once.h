// Every private aggregate call (and every group selection) runs exactly
// once per execution, in every plan shape, parallel ones included.
#ifndef DP_AGG_PG_RELEASE_ONCE_H
#define DP_AGG_PG_RELEASE_ONCE_H

#include "pg_includes.h"

namespace dp_pg {

// Installs the path hook that keeps complete private aggregations out of
// the parallel part of a plan.
void InstallReleaseOnceHook();

// Proves on the final plan that no private aggregate runs, other than as
// the partial step of a Finalize above the Gather, below a Gather or Gather
// Merge that several processes execute. Raises an ERROR otherwise.
void VerifyReleasedOnce(PlannedStmt* plan);

}  // namespace dp_pg

#endif  // DP_AGG_PG_RELEASE_ONCE_H
