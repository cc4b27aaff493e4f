// dp_agg on Citus, as the aggregate families see it: the only Citus header
// their support functions include. Citus builds a wrapper's states from
// pg_aggregate.agginitcond and calls the support functions with no input
// collation, so a support function running under a Citus wrapper takes the
// parameters and the collation from the state the executor hook prepared and
// charged for its call site (sites.h, RegisterCitusPreparedState).
#ifndef DP_AGG_PG_CITUS_ADAPTER_H
#define DP_AGG_PG_CITUS_ADAPTER_H

#include "../pg_includes.h"

namespace dp_pg {

// Inside a support function: when its aggregate call is a registered Citus
// wrapper site, a fresh copy (CurrentMemoryContext) of the state prepared
// for it; nullptr otherwise.
void* CitusPreparedState(FunctionCallInfo fcinfo);

// Inside a combine function of a Citus wrapper: the coordinator-prepared
// state of its call site (a fresh copy), or ERROR 42501 when there is none
// (a hand-made combine step).
void* RequireCitusPreparedState(FunctionCallInfo fcinfo);

// Inside a final function run by Citus's coord_combine_agg, which looks the
// function up again for every group (so fn_extra starts empty each time):
// a slot for the final function's cache that lives as long as the query
// (allocate in *context); nullptr when the call is not a Citus wrapper site.
void** CitusFinalCacheSlot(FunctionCallInfo fcinfo, MemoryContext* context);

// Inside a support function of a Citus wrapper site: the input collation of
// the inner private call (Citus calls the support functions with none).
Oid CitusSiteCollation(FunctionCallInfo fcinfo);

// Inside a combine or final function: whether the call belongs to a Citus
// wrapper (then only a registered, coordinator-prepared state may be used;
// states read from text are never trusted to choose parameters).
bool IsCitusWrapperCall(FunctionCallInfo fcinfo);

// Inside a support function: whether its aggregate call is a Citus wrapper
// site that the executor hook prepared for the running query.
bool CitusSiteIsPrepared(FunctionCallInfo fcinfo);

}  // namespace dp_pg

#endif  // DP_AGG_PG_CITUS_ADAPTER_H
