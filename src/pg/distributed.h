// dp_agg on Citus: partial aggregation on the workers, one charge and the
// noise on the coordinator, and workers that answer private fragments only
// for an authenticated coordinator. See README, "Scaling out with Citus".
#ifndef DP_AGG_PG_DISTRIBUTED_H
#define DP_AGG_PG_DISTRIBUTED_H

#include "pg_includes.h"

namespace dp_pg {

// What a call site of Citus's generic aggregate wrappers is for dp_agg.
enum class CitusSiteRole {
  kNone,  // not a Citus wrapper around a private aggregate
  kPartial,  // worker_partial_agg on a worker: accumulate exactly, never release or charge
  kRelease,  // coord_combine_agg on the coordinator: charged once, noise once per group
};

// dp_agg.node_role and dp_agg.coordinator_cn.
void DefineDistributedSettings();

// For an aggregate call `outer` of the Agg node `plan`: when it is a Citus
// wrapper around a private aggregate, checks that this node may run it
// (ERROR otherwise, before execution) and returns the inner private
// aggregate call rebuilt with the wrapper's arguments (the parameters the
// coordinator charges are exactly those the workers use); nullptr otherwise.
// On a worker, a private aggregate that is not wrapped is refused here.
Aggref* CitusInnerAggregate(Aggref* outer, Agg* plan, EState* estate, CitusSiteRole* role);

// The input check of a release site, in place of CheckInput (which refuses
// a CustomScan): the distributed plan must read one table, once per shard.
void CheckCitusReleaseInput(Aggref* inner, Agg* plan);

// Keeps the initial state prepared for a wrapper call site for the rest of
// the query: Citus builds its states from pg_aggregate.agginitcond, so the
// support functions fetch the parameters from here (CitusPreparedState).
void RegisterCitusPreparedState(Aggref* outer, Datum state, Size size, EState* estate);

// Inside a support function: when its aggregate call is a registered Citus
// wrapper site, a fresh copy (CurrentMemoryContext) of the state prepared
// for it; nullptr otherwise.
void* CitusPreparedState(FunctionCallInfo fcinfo);

// Inside a final function run by Citus's coord_combine_agg, which looks the
// function up again for every group (so fn_extra starts empty each time):
// a slot for the final function's cache that lives as long as the query
// (allocate in *context); nullptr when the call is not a Citus wrapper site.
void** CitusFinalCacheSlot(FunctionCallInfo fcinfo, MemoryContext* context);

// Inside a combine or final function: whether the call belongs to a Citus
// wrapper (then only a registered, coordinator-prepared state may be used;
// states read from text are never trusted to choose parameters).
bool IsCitusWrapperCall(FunctionCallInfo fcinfo);

// Inside a combine function of a Citus wrapper: the coordinator-prepared
// state of its call site (a fresh copy), or ERROR 42501 when there is none
// (a hand-made combine step).
void* RequireCitusPreparedState(FunctionCallInfo fcinfo);

// Planner pre-pass, just before Citus plans `query`: refuses hand-written
// wrapper calls around private aggregates, and rewrites the query so that
// Citus takes its partial-aggregation path for every private aggregate.
void PrepareDistributedQuery(Query* query);

}  // namespace dp_pg

#endif  // DP_AGG_PG_DISTRIBUTED_H
