// dp_agg on Citus: partial aggregation on the workers, one charge and the
// noise on the coordinator, and workers that answer private fragments only
// for an authenticated coordinator. See README, "Scaling out with Citus".
#ifndef DP_AGG_PG_DISTRIBUTED_H
#define DP_AGG_PG_DISTRIBUTED_H

#include "pg_includes.h"

extern "C" {
#include "optimizer/planner.h"
}

namespace dp_pg {

// What a call site of Citus's generic aggregate wrappers is for dp_agg.
enum class CitusSiteRole {
  kNone,  // not a Citus wrapper around a private aggregate
  kPartial,  // worker_partial_agg on a worker: accumulate exactly, never release or charge
  kRelease,  // coord_combine_agg on the coordinator: charged once, noise once per group
};

// dp_agg.node_role and dp_agg.coordinator_cn.
void DefineDistributedSettings();

// Restricted sessions may execute no function of extension citus except the
// support functions of worker_partial_agg and coord_combine_agg, which
// Citus's own plans run; on a worker, the authenticated coordinator's
// sessions may also run the few Citus functions that Citus's own execution
// of a SELECT calls there (an explicit list, distributed.cpp), and nothing
// else: Citus opens those sessions as the analyst and pushes the analyst's
// SQL down into them (issue 25, finding 3). Citus's run_command_on_workers, master_run_on_worker
// and the like send any SQL text over the coordinator's connections, which
// carry the certificate the workers trust: a restricted role could have a
// worker compute an exact partial state of a hand-written fragment with them.
// Checked when the function is called (an fmgr hook), so a call reached
// through a view, an inlined SQL function, PL/pgSQL or a SECURITY DEFINER
// function is refused too.
void InstallCitusFunctionGuard();

// Planner hook, on the coordinator, for a restricted session's query before
// it is judged or planned: refuses (ERROR 42501) a call of any function of
// extension citus at any level of the query (subqueries, sublinks, CTEs,
// functions in FROM, operators and casts included). Citus pushes the
// analyst's SQL down to the workers in sessions it opens as the analyst with
// the coordinator's certificate, so a Citus function in it would run on a
// worker (issue 25, finding 3); refused here before anything is charged, and
// the worker refuses it again (InstallCitusFunctionGuard). When
// `citus_planning` (a query planned inside another planning, or while a
// query runs: Citus's recursive planning and local execution, but also
// PL/pgSQL, EXPLAIN and EXECUTE), the functions Citus itself puts into the
// queries it plans pass: read_intermediate_result(s), worker_partial_agg,
// coord_combine_agg and citus_extradata_container.
void RefuseRestrictedCitusCalls(Query* query, bool citus_planning);

// For an aggregate call `outer` of the Agg node `plan`: when it is a Citus
// wrapper around a private aggregate, checks that this node may run it
// (ERROR otherwise, before execution) and returns the inner private
// aggregate call rebuilt with the wrapper's arguments (the parameters the
// coordinator charges are exactly those the workers use); nullptr otherwise.
// On a worker, the partial step RunShardPartialsDirectly made of a wrapper
// (shard_partials.h) is a kPartial site and returned as it is; any other
// private aggregate that is not wrapped is refused here.
Aggref* CitusInnerAggregate(Aggref* outer, Agg* plan, EState* estate, CitusSiteRole* role);

// Citus's worker_partial_agg or coord_combine_agg around a private aggregate
// (or around an aggregate that is not a constant, which is refused when run).
bool IsPrivateCitusWrapperCall(Aggref* outer);
// The coordinator's coord_combine_agg around a private aggregate: a release.
bool IsPrivateCitusReleaseCall(Aggref* outer);

// For an aggregate call of a worker's fragment: when it is Citus's
// worker_partial_agg around a private aggregate named by a constant, that
// private aggregate's own call with the wrapper's arguments (InnerCall);
// nullptr otherwise.
Aggref* WorkerPartialInnerCall(Aggref* outer);

// dp_agg.citus_direct_partials (shard_partials.h).
bool DirectShardPartialsEnabled();

// The input check of a release site, in place of CheckInput (which refuses
// a CustomScan): the distributed plan must read one table, once per shard,
// or the privacy-unit rewrite's per-unit level of one table hash-distributed
// by its unit column. Returns the number of groups a unit may reach (the
// sampler's max_groups; 1 without privacy units), by which the call site's
// charge is multiplied as on one node.
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
// support functions fetch the parameters from here (CitusPreparedState).
void RegisterCitusPreparedState(Aggref* outer, Datum state, Size size, Oid collation,
                                EState* estate);

// Inside a support function of a Citus wrapper site: the input collation of
// the inner private call (Citus calls the support functions with none).
Oid CitusSiteCollation(FunctionCallInfo fcinfo);

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

// Inside a support function: whether its aggregate call is a Citus wrapper
// site that the executor hook prepared for the running query.
bool CitusSiteIsPrepared(FunctionCallInfo fcinfo);

// Inside a combine function of a Citus wrapper: the coordinator-prepared
// state of its call site (a fresh copy), or ERROR 42501 when there is none
// (a hand-made combine step).
void* RequireCitusPreparedState(FunctionCallInfo fcinfo);

// The distributed table that `relation` is a shard of (Citus names shards
// <table>_<shardid> in the table's schema; pg_dist_shard maps the shard id to
// the table), or InvalidOid. Labels reach only the distributed (shell)
// tables, so a shard is protected when its table is (restriction.cpp).
Oid CitusShardParent(Oid relation);

// Planner hook on a worker, before the judge: when this connection is the
// authenticated coordinator and `query` is a fragment of Citus's partial
// aggregation (every aggregate a worker_partial_agg around a private
// aggregate, every other output a group key, only shards in FROM), gives it
// owner access to the protected shards it reads, the way the coordinator's
// judge gave the analyst's query access to their table, and returns true
// (the coordinator judged the query the fragment comes from). Anything else
// returns false and is judged as usual.
bool AcceptCoordinatorFragment(Query* query);

// Planner pre-pass, just before Citus plans `query`: refuses hand-written
// wrapper calls around private aggregates, and rewrites the query so that
// Citus takes its partial-aggregation path for every private aggregate. A
// restricted session's query that aggregates a distributed table privately
// may call only built-in functions that run no SQL and dp_agg's (ERROR
// 42501 before anything is charged): SQL such a function ran on a worker
// could call a Citus function, which the worker refuses only after the
// coordinator charged (issue 25, finding 3).
// Returns whether `query` itself (its top level) aggregates a distributed
// table privately: then Citus must plan it without its router planners
// (PlanWithoutRouter). A private aggregation in a subquery is planned on its
// own by Citus's recursive planning, through this hook again, unless Citus
// routes the whole query to one shard: then the worker refuses it.
bool PrepareDistributedQuery(Query* query);

// Calls `plan` with Citus's router and fast-path router planners turned off
// for the duration of the call. A query that Citus could prune to one shard
// (WHERE distribution_column = constant) would otherwise be sent whole to a
// worker, noise included; without them Citus's logical planner splits the
// aggregate into worker_partial_agg on the remaining shard and
// coord_combine_agg on the coordinator, as for every other shape.
PlannedStmt* PlanWithoutRouter(Query* query, const char* query_string, int cursor_options,
                               ParamListInfo bound_parameters, planner_hook_type plan);

}  // namespace dp_pg

#endif  // DP_AGG_PG_DISTRIBUTED_H
