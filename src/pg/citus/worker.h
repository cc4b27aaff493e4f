// dp_agg on Citus: what a worker accepts from the authenticated coordinator.
#ifndef DP_AGG_PG_CITUS_WORKER_H
#define DP_AGG_PG_CITUS_WORKER_H

#include "../pg_includes.h"

namespace dp_pg {

// Planner hook on a worker, before the judge: when this connection is the
// authenticated coordinator and `query` is a fragment of Citus's partial
// aggregation (the shapes of contract.h: every aggregate a
// worker_partial_agg around a private aggregate, every other output a group
// key or a shippable constant, only shards in FROM), gives it owner access
// to the protected shards it reads, the way the coordinator's judge gave the
// analyst's query access to their table, and returns true (the coordinator
// judged the query the fragment comes from). Anything else returns false and
// is judged as usual.
bool AcceptCoordinatorFragment(Query* query);

}  // namespace dp_pg

#endif  // DP_AGG_PG_CITUS_WORKER_H
