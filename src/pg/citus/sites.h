// dp_agg on Citus: the call sites of Citus's wrappers around private
// aggregates, as the executor hook (call_sites.cpp) prepares them.
#ifndef DP_AGG_PG_CITUS_SITES_H
#define DP_AGG_PG_CITUS_SITES_H

#include "../pg_includes.h"

namespace dp_pg {

// What a call site of Citus's generic aggregate wrappers is for dp_agg.
enum class CitusSiteRole {
  kNone,  // not a Citus wrapper around a private aggregate
  kPartial,  // worker_partial_agg on a worker: accumulate exactly, never release or charge
  kRelease,  // coord_combine_agg on the coordinator: charged once, noise once per group
};

// For an aggregate call `outer` of the Agg node `plan`: when it is a Citus
// wrapper around a private aggregate, checks that this node may run it
// (ERROR otherwise, before execution) and returns the inner private
// aggregate call rebuilt with the wrapper's arguments (the parameters the
// coordinator charges are exactly those the workers use); nullptr otherwise.
// On a worker, the partial step RunShardPartialsDirectly made of a wrapper
// (shard_partials.h) is a kPartial site and returned as it is; any other
// private aggregate that is not wrapped is refused here.
Aggref* CitusInnerAggregate(Aggref* outer, Agg* plan, EState* estate, CitusSiteRole* role);

// The input check of a release site, in place of CheckInput (which refuses
// a CustomScan): the distributed plan must read one table, once per shard,
// or the privacy-unit rewrite's per-unit level of one table hash-distributed
// by its unit column (contract.h). Returns the number of groups a unit may
// reach (the sampler's max_groups; 1 without privacy units), by which the
// call site's charge is multiplied as on one node.
int CheckCitusReleaseInput(Aggref* inner, Agg* plan);

// A release site started with instrumentation (EXPLAIN ANALYZE, or
// auto_explain.log_analyze): Citus would wrap every task in
// worker_save_query_explain_analyze, whose column definition list cannot
// carry the wrapper's cstring partial states, so every task fails on the
// workers after the charge. Refused (ERROR) before anything is charged
// (issue 25, finding 4 (a)).
void RefuseInstrumentedCitusRelease(Aggref* inner, EState* estate);

// The same for the private levels that Citus runs as subplans of an
// instrumented statement (from its scans' subPlanList), checked when the
// statement starts, before any of its charges.
void RefuseInstrumentedCitusSubplans(PlanState* root, EState* estate);

// Whether a Citus scan of the plan runs a private level (one that releases)
// as a subplan or as its combine step: the release cache (release_cache.h)
// then treats the statement as a release even when its own plan charges no
// call site (the subplan is charged when it runs).
bool PlanHasCitusSubplanRelease(PlanState* root);

// Keeps the initial state prepared for a wrapper call site for the rest of
// the query: Citus builds its states from pg_aggregate.agginitcond, so the
// support functions fetch the parameters from here (adapter.h).
// Returns the slot of the final function's cache for the call site
// (CitusFinalCacheSlot), which lives in estate's es_query_cxt.
void** RegisterCitusPreparedState(Aggref* outer, Datum state, Size size, Oid collation,
                                  EState* estate);

}  // namespace dp_pg

#endif  // DP_AGG_PG_CITUS_SITES_H
