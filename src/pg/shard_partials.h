// dp_agg on Citus, on a worker: the partial step of a private aggregate run
// by the aggregate's own transition function instead of through Citus's
// generic wrapper. See README, "Scaling out with Citus".
#ifndef DP_AGG_PG_SHARD_PARTIALS_H
#define DP_AGG_PG_SHARD_PARTIALS_H

#include "pg_includes.h"

namespace dp_pg {

// Planner hook on a worker, for a fragment AcceptCoordinatorFragment
// accepted, after the plan is made: when the plan's top node is an Agg
// whose every aggregate is worker_partial_agg('agg'::regprocedure,
// ROW(args)) around a private aggregate, replaces each of them by agg(args)
// run as a partial step (AGGSPLIT_INITIAL_SERIAL, as the partial step of a
// parallel plan) and prints its transition state as text, which is what
// worker_partial_agg's final function returns. Any other plan is left as it
// is (Citus's generic path, which computes the same states). Off when
// dp_agg.citus_direct_partials is.
void RunShardPartialsDirectly(PlannedStmt* statement);

}  // namespace dp_pg

#endif  // DP_AGG_PG_SHARD_PARTIALS_H
