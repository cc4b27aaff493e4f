// dp_agg on Citus: the contract between the coordinator and the workers.
//
// The coordinator charges a query before Citus sends its fragments; a worker
// that then refuses a fragment refuses after the charge, and its refusal may
// depend on the data. So every fragment shape the coordinator lets Citus
// send must be one the workers accept, and the workers accept nothing else.
// Each shape's coordinator predicate and worker predicate are defined side
// by side in contract.cpp, so that they cannot drift apart.
#ifndef DP_AGG_PG_CITUS_CONTRACT_H
#define DP_AGG_PG_CITUS_CONTRACT_H

#include "../pg_includes.h"

namespace dp_pg {

// Constants: a constant output that the workers may send along, and one
// whose text prints and reads back the same whatever the session settings.
bool PrintsPortably(const Const* constant);
bool IsShippableConstant(Node* node);

// FROM: in a worker job, Citus stands for "the shard of this task" with a
// function range-table entry calling pg_catalog.citus_extradata_container(...).
bool IsShardPlaceholder(RangeTblEntry* entry);

// Privacy units, checked by the coordinator on the worker job it is about to
// send: the number of groups a unit may reach (m), or 0 with *problem set.
int UnitJobGroups(Query* query, const char** problem);
// The same shape, checked by a worker on the fragment it received: the shard
// it reads, or nullptr.
RangeTblEntry* WorkerUnitFragmentShard(Query* query);

}  // namespace dp_pg

#endif  // DP_AGG_PG_CITUS_CONTRACT_H
