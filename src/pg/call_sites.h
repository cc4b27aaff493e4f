// Private aggregate call sites: the executor hook that prepares every one of
// a query before its first row is read (call_sites.cpp). What a call site is
// and what its parameters may be are declared in aggregate_catalog.h and
// call_parameters.h, included here for the planner-side rules that judge
// call sites too.
#ifndef DP_AGG_PG_CALL_SITES_H
#define DP_AGG_PG_CALL_SITES_H

#include "aggregate_catalog.h"
#include "call_parameters.h"
#include "pg_includes.h"

namespace dp_pg {

// The ExecutorStart hook's work (hooks.cpp): starts the executor with
// `next` (the previous hook or standard_ExecutorStart), then prepares every
// private call site of the query and charges it once.
void StartPrivateExecutor(QueryDesc* query, int flags, ExecutorStart_hook_type next);

}  // namespace dp_pg

#endif  // DP_AGG_PG_CALL_SITES_H
