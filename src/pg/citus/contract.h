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
// whose text prints and reads back the same whatever the session settings
// (one predicate for both sides).
bool PrintsPortably(const Const* constant);
bool IsShippableConstant(Node* node);

// Outputs. Coordinator, on a restricted role's grouped private level over a
// distributed table before planning: the first column without an aggregate
// that Citus would compute on the workers or ship in a form that reads back
// differently (a repeated key, an expression of keys, a constant that does
// not print portably), or nullptr.
TargetEntry* CoordinatorUnshippedColumn(Query* query);
// Worker, on a fragment: every aggregate is worker_partial_agg around a
// private aggregate (at least one; none in HAVING), every other output a
// group key or a shippable constant.
bool WorkerAcceptsOutputs(Query* fragment);

// Clauses. Coordinator, on the worker job it is about to send: why the
// tasks' query could feed a row to a partial more than once or change which
// rows reach it (a subquery condition, LIMIT/OFFSET, set operations,
// windows, set-returning functions, grouping sets, DISTINCT), or nullptr.
const char* CoordinatorJobClauseProblem(const Query* job_query);
// Worker, on a fragment: an aggregating SELECT without sublinks, WITH, set
// operations, windows, set-returning functions, grouping sets or row locks.
bool WorkerAcceptsFragmentClauses(const Query* fragment);

// FROM. In a worker job, Citus stands for "the shard of this task" with a
// function range-table entry calling pg_catalog.citus_extradata_container(...).
bool IsShardPlaceholder(RangeTblEntry* entry);
// Coordinator, on the worker job: its tasks read one table, their own shard.
bool CoordinatorJobReadsOneShard(Query* job_query);
// Worker, on a fragment: it reads only shards of distributed tables (plain
// or partitioned), directly or, over privacy units, through the per-unit
// level (WorkerUnitFragmentShard); *shards are their range table entries.
bool WorkerFragmentShards(Query* fragment, List** shards);

// Privacy units. Coordinator, on the worker job it is about to send (when
// the tasks do not read their shard directly): the number of groups a unit
// may reach (m), or 0 with *problem set.
int UnitJobGroups(Query* query, const char** problem);
// Worker, on a fragment: the shard it reads through the same shape, or
// nullptr.
RangeTblEntry* WorkerUnitFragmentShard(Query* query);

}  // namespace dp_pg

#endif  // DP_AGG_PG_CITUS_CONTRACT_H
