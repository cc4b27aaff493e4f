// The executor hook: walks the plan of every query before the first row is
// read, and for each private aggregate call site dispatches to the checks on
// its call and input (input_checks.h), the preparation of its initial state
// (initial_state.h) and its cost (query_cost.h); then charges the query.
//
// Why here and not in the transition function:
//  * an error must not depend on the data. A GROUP BY over an empty table calls
//    no aggregate function at all, so a check made at the first row would
//    raise an error for a non-empty table only. ExecutorStart sees the query,
//    never the rows.
//  * a final function must produce a noisy answer for zero rows, and for that
//    it needs epsilon and the bounds, which no row delivered. Putting them in
//    the initial state gives every group, every parallel participant and every
//    Citus worker its parameters before any row is read.
//  * parameters must be the same for every row (call_parameters.h): a column,
//    a subquery or a volatile function is refused before execution.
//  * window use is refused from the plan, whether or not any row exists.
#include "call_sites.h"

#include "pinned_settings.h"

#include "aggregate_catalog.h"
#include "citus/sites.h"
#include "cost_probe.h"
#include "initial_state.h"
#include "input_checks.h"
#include "pinned_settings.h"
#include "query_cost.h"
#include "release_cache.h"
#include "release_replay.h"
#include "restriction.h"
#include "settings.h"
#include "site_plans.h"
#include "support_guard.h"

namespace dp_pg {

namespace {

// A partial step's call site and the initial state prepared for it, for the
// finalize step that combines its output (PlanFinalizeSites).
struct PreparedPartial {
  Aggref* aggref;
  Datum initial;
};

// The final functions of a Citus wrapper site run by coord_combine_agg: the
// inner private aggregate's, whose cache lives in the site's slot.
void PlanCitusFinalSite(Aggref* inner, void** slot, EState* estate, Datum initial) {
  HeapTuple tuple = SearchSysCache1(AGGFNOID, ObjectIdGetDatum(inner->aggfnoid));
  if (!HeapTupleIsValid(tuple)) return;
  const Oid final_function = reinterpret_cast<Form_pg_aggregate>(GETSTRUCT(tuple))->aggfinalfn;
  ReleaseSysCache(tuple);
  if (!OidIsValid(final_function)) return;
  FmgrInfo info;
  fmgr_info(final_function, &info);
  PlanFinalSite(info.fn_addr, slot, estate->es_query_cxt, initial);
}

// The finalize steps of `node` (parallel or partitionwise plans), whose
// transitions combine partial states and so were not prepared: each is
// planned with the initial state of the partial step below it.
void PlanFinalizeSites(AggState* node, QueryCost* cost) {
  if (!cost->plan_sites || cost->partial_sites == NIL) return;
  Agg* plan = reinterpret_cast<Agg*>(node->ss.ps.plan);
  for (int i = 0; i < node->numtrans; ++i) {
    Aggref* aggref = node->pertrans[i].aggref;
    if (!DO_AGGSPLIT_COMBINE(aggref->aggsplit)) continue;
    Aggref* partial = FindPartialAggref(plan, aggref);
    if (partial == nullptr) continue;
    ListCell* cell;
    foreach (cell, cost->partial_sites) {
      const auto* prepared = static_cast<const PreparedPartial*>(lfirst(cell));
      if (prepared->aggref != partial) continue;
      PlanAggregateSite(node, i, prepared->initial);
      break;
    }
  }
}

void PrepareAggregates(AggState* node, EState* estate, bool reexecuted, QueryCost* cost) {
  Agg* plan = reinterpret_cast<Agg*>(node->ss.ps.plan);
  // Every output aggregate, including those that share a transition with
  // another (nodeAgg shares one when the transition function, arguments and
  // initial value are the same): an aggregate someone else built on dp_agg's
  // support functions never runs (support_guard.h).
  for (int j = 0; j < node->numaggs; ++j) RefuseForeignAggregate(node->peragg[j].aggref->aggfnoid);
  bool input_checked = false;
  int unit_groups = 1;
  for (int i = 0; i < node->numtrans; ++i) {
    AggStatePerTrans transition = &node->pertrans[i];
    Aggref* aggref = transition->aggref;
    // dp_agg on Citus (citus/sites.cpp): Citus's wrappers are prepared as the
    // private aggregate they run.
    CitusSiteRole citus_role = CitusSiteRole::kNone;
    bool wrapped = false;  // a Citus wrapper, whose own state is Citus's
    if (Aggref* inner = CitusInnerAggregate(aggref, plan, estate, &citus_role)) {
      RefuseForeignAggregate(inner->aggfnoid);
      wrapped = inner != aggref;
      aggref = inner;
    }
    // Before anything is prepared or charged (citus/sites.h).
    if (citus_role == CitusSiteRole::kRelease) RefuseInstrumentedCitusRelease(aggref, estate);
    const AggregateCacheEntry* entry = LookupAggregate(aggref->aggfnoid);
    if (entry->kind == nullptr) continue;
    RefuseDistinctOrOrderBy(aggref);
    // The combining step of a parallel or partial plan has no parameter
    // arguments: its inputs are partial states that already carry them, and
    // the call site is accounted for at its partial step.
    if (DO_AGGSPLIT_COMBINE(aggref->aggsplit)) continue;
    RefuseReexecution(aggref, reexecuted);
    CheckPerRowExpressions(aggref);
    // Who pays: every process pays for the call sites it runs, except a
    // parallel worker running its share of the leader's plan (a partial step
    // below Gather, or the whole subtree of a single-copy Gather), which the
    // leader paid for when it prepared the same nodes. A query that a worker
    // plans and runs itself (inside a PARALLEL SAFE function) is paid by that
    // worker, once per execution like any other.
    const bool charge = !cost->leader_paid && citus_role != CitusSiteRole::kPartial;
    if (charge && !input_checked && citus_role == CitusSiteRole::kRelease) {
      unit_groups = CheckCitusReleaseInput(aggref, plan);  // dp_agg on Citus
      input_checked = true;
    }
    if (charge && !input_checked) {
      unit_groups = CheckAggregateInput(plan, aggref, estate);
      input_checked = true;
    }
    // The entry may be dropped by a cache invalidation while parameters are
    // evaluated: copied.
    AggregateCacheEntry call = *entry;
    // Every output aggregate that uses this transition is its own release.
    int outputs = 0;
    for (int j = 0; j < node->numaggs; ++j) outputs += node->peragg[j].transno == i ? 1 : 0;
    // A transition shared by several outputs (not today: dp_agg's aggregates
    // are volatile, which stops nodeAgg sharing; sql/shared_inputs.sql) may
    // feed a count, a sum and a mean whatever the first aggregate is: its
    // Gaussian rho is then the largest of the three (FinalKind::kOther),
    // charged once per output.
    if (outputs > 1) call.final_kind = FinalKind::kOther;
    RequestedPrivacy requested;
    MemoryContext previous = MemoryContextSwitchTo(estate->es_query_cxt);
    const Datum initial = PrepareInitialState(aggref, call, estate, &requested, cost->leader_paid);
    MemoryContextSwitchTo(previous);
    if (wrapped) {
      // dp_agg on Citus: the wrapper's own state is Citus's; the private
      // state is fetched by the support functions (citus/adapter.h).
      void** final_cache =
          RegisterCitusPreparedState(transition->aggref, initial, VARSIZE(DatumGetPointer(initial)),
                                     aggref->inputcollid, estate);
      if (cost->plan_sites && citus_role == CitusSiteRole::kRelease)
        PlanCitusFinalSite(aggref, final_cache, estate, initial);
    } else {
      transition->initValue = initial;
      transition->initValueIsNull = false;
      if (cost->plan_sites) PlanAggregateSite(node, i, initial);
      if (DO_AGGSPLIT_SKIPFINAL(aggref->aggsplit)) {
        auto* prepared = static_cast<PreparedPartial*>(palloc(sizeof(PreparedPartial)));
        prepared->aggref = aggref;
        prepared->initial = initial;
        cost->partial_sites = lappend(cost->partial_sites, prepared);
      }
    }
    if (unit_groups > 1)
      ValidateUnitLevelLimits(requested.epsilon * unit_groups, requested.delta * unit_groups);
    if (charge) {
      // Over privacy units each group runs at epsilon / max_groups and a
      // unit reaches max_groups groups (unit_rewrite.h): the call site is
      // charged max_groups times the epsilon it runs at (the product in
      // double, so that the epsilon the query wrote is charged exactly when
      // the division and the product round back to it, as they do for the
      // values tested; otherwise within half an ulp of the loss).
      AddCost(cost, aggref, requested, unit_groups,
              GroupingSetCount(plan) * (outputs > 0 ? outputs : 1));
    }
  }
  ResetPerTupleExprContext(estate);
}

void PreparePlanState(PlanState* node, EState* estate, bool reexecuted, QueryCost* cost);
void PrepareChildren(PlanState* node, EState* estate, bool reexecuted, QueryCost* cost);

// A constant that is false or NULL (as a qual, both reject every row).
bool IsConstantFalse(Node* node) {
  if (node == nullptr || !IsA(node, Const)) return false;
  const auto* constant = reinterpret_cast<Const*>(node);
  return constant->consttype == BOOLOID &&
         (constant->constisnull || !DatumGetBool(constant->constvalue));
}

// Whether the plan alone proves that `node` never runs its outer subplan,
// so that no private aggregate below it is ever evaluated and none is paid
// for: this is how the metadata probes of BI tools and drivers look
// (SELECT * FROM (q) s LIMIT 0, ... WHERE false). Decided from the plan's
// constants, never from execution:
//  * Limit with a constant count of 0: ExecLimit (nodeLimit.c) sees the
//    count before it fetches anything and returns no row without ever
//    calling its subplan, in either direction and on every rescan (a
//    constant does not change);
//  * Result whose one-time filter (resconstantqual) is a constant false or
//    NULL: ExecResult evaluates it first and returns no row without calling
//    its subplan. (A qual that is false only at run time, a Param, a
//    function, is not constant and is paid for.)
bool NeverRunsOuterPlan(PlanState* node) {
  if (IsA(node, LimitState)) {
    const auto* limit = reinterpret_cast<Limit*>(node->plan);
    if (limit->limitCount == nullptr || !IsA(limit->limitCount, Const)) return false;
    const auto* count = reinterpret_cast<Const*>(limit->limitCount);
    return !count->constisnull && count->consttype == INT8OID &&
           DatumGetInt64(count->constvalue) == 0;
  }
  if (IsA(node, ResultState)) {
    Node* filter = reinterpret_cast<Result*>(node->plan)->resconstantqual;
    if (filter == nullptr) return false;
    if (IsA(filter, List)) {
      ListCell* cell;
      foreach (cell, reinterpret_cast<List*>(filter))
        if (IsConstantFalse(static_cast<Node*>(lfirst(cell)))) return true;
      return false;
    }
    return IsConstantFalse(filter);
  }
  return false;
}

void PrepareSubPlans(List* subplans, EState* estate, bool reexecuted, QueryCost* cost) {
  ListCell* cell;
  foreach (cell, subplans) {
    auto* subplan = static_cast<SubPlanState*>(lfirst(cell));
    PreparePlanState(subplan->planstate, estate, reexecuted, cost);
  }
}

// Init plans (and materialised WITH queries, which are init plans too) are
// evaluated again on a rescan of their node only when a parameter they
// depend on changed (ExecReScan, ExecReScanCteScan): one without external
// parameters runs at most once per execution, wherever its node is.
void PrepareInitPlans(List* init_plans, EState* estate, bool reexecuted, QueryCost* cost) {
  ListCell* cell;
  foreach (cell, init_plans) {
    auto* subplan = static_cast<SubPlanState*>(lfirst(cell));
    const bool once = bms_is_empty(subplan->planstate->plan->extParam);
    PreparePlanState(subplan->planstate, estate, reexecuted && !once, cost);
  }
}

// Visits every plan node once. `reexecuted`: this node may run more than once
// per execution of the statement (rule (1) in input_checks.h).
void PreparePlanState(PlanState* node, EState* estate, bool reexecuted, QueryCost* cost) {
  if (node == nullptr) return;
  check_stack_depth();
  // Init plans run once for their node; other subplans may run once per row.
  PrepareInitPlans(node->initPlan, estate, reexecuted, cost);
  PrepareSubPlans(node->subPlan, estate, true, cost);
  if (IsA(node, AggState)) {
    PrepareAggregates(reinterpret_cast<AggState*>(node), estate, reexecuted, cost);
  } else if (IsA(node, WindowAggState)) {
    RejectWindowUse(node->plan);
  }
  if (cost->constants_decide && NeverRunsOuterPlan(node)) return;
  PrepareChildren(node, estate, reexecuted, cost);
  // After its subtree: the partial steps below a finalize step are prepared.
  if (IsA(node, AggState)) PlanFinalizeSites(reinterpret_cast<AggState*>(node), cost);
}

// Visits the children of `node` (PreparePlanState).
void PrepareChildren(PlanState* node, EState* estate, bool reexecuted, QueryCost* cost) {
  switch (nodeTag(node)) {
    case T_NestLoopState:
    case T_MergeJoinState:
    case T_RecursiveUnionState:
      PreparePlanState(outerPlanState(node), estate, reexecuted, cost);
      PreparePlanState(innerPlanState(node), estate, true, cost);
      return;
    case T_MemoizeState:
      PreparePlanState(outerPlanState(node), estate, true, cost);
      return;
    case T_AppendState: {
      auto* append = reinterpret_cast<AppendState*>(node);
      for (int i = 0; i < append->as_nplans; ++i)
        PreparePlanState(append->appendplans[i], estate, reexecuted, cost);
      return;
    }
    case T_MergeAppendState: {
      auto* append = reinterpret_cast<MergeAppendState*>(node);
      for (int i = 0; i < append->ms_nplans; ++i)
        PreparePlanState(append->mergeplans[i], estate, reexecuted, cost);
      return;
    }
    case T_SubqueryScanState:
      PreparePlanState(reinterpret_cast<SubqueryScanState*>(node)->subplan, estate, reexecuted,
                       cost);
      return;
    case T_CustomScanState: {
      // The replay above a releasing Agg runs the Agg once (release_replay.h);
      // the release cache at the top runs its plan once, or not at all
      // (release_cache.h).
      if (IsReleaseReplayState(node) || IsReleaseCacheState(node)) {
        PreparePlanState(outerPlanState(node), estate, reexecuted, cost);
        return;
      }
      ListCell* cell;
      foreach (cell, reinterpret_cast<CustomScanState*>(node)->custom_ps)
        PreparePlanState(static_cast<PlanState*>(lfirst(cell)), estate, true, cost);
      return;
    }
    default:
      PreparePlanState(outerPlanState(node), estate, reexecuted, cost);
      PreparePlanState(innerPlanState(node), estate, reexecuted, cost);
      return;
  }
}

}  // namespace

void StartPrivateExecutor(QueryDesc* query, int flags, ExecutorStart_hook_type next) {
  // A parallel worker runs exactly one share of its leader's plan, and it is
  // the first executor it starts. Decided here, on entry: starting that share
  // can itself run queries (a STABLE function evaluated for partition
  // pruning), which are the worker's own and must pay.
  static bool worker_share_started = false;
  const bool leader_paid = IsParallelWorker() && !worker_share_started;
  if (IsParallelWorker()) worker_share_started = true;
  // A cached plan judged before the session was restricted (restriction.h):
  // first, so that nothing before it decides the statement's restriction.
  RefusePlanJudgedBeforeRestriction();
  // dp_agg.query_cost() starting this very query: measured, not charged, and
  // never run (taken on entry: queries run while this one starts pay).
  CostProbe* probe = TakeCostProbe(query);
  DecideNoiseSource();
  CheckExecutionForRestrictedRole(query, flags);
  // Citus prints a fragment again (deferred shard pruning) while the plan
  // starts, and a restricted session's plan is started: under pinned
  // settings (pinned_settings.h).
  const bool pin = NeedsPinnedSettings(query->plannedstmt);
  const int pin_level = pin ? PinSettings(PlansAsRestricted()) : 0;
  next(query, flags);
  if (pin) UnpinSettings(pin_level);
  // Plain EXPLAIN runs nothing, so there is nothing to check, prepare or pay.
  if ((flags & EXEC_FLAG_EXPLAIN_ONLY) != 0) return;
  QueryCost cost;
  // EXPLAIN ANALYZE of a private level that Citus runs as a subplan
  // (citus/sites.h), before any charge of this statement.
  RefuseInstrumentedCitusSubplans(query->planstate, query->estate);
  StartQueryCost(&cost, leader_paid);
  cost.plan_sites = probe == nullptr;
  cost.constants_decide = query->params == nullptr || query->params->numParams == 0;
  PreparePlanState(query->planstate, query->estate, false, &cost);
  if (probe != nullptr) {
    ProbeReleaseCache(query, &cost);
    RecordCostProbe(probe, &cost);
    return;
  }
  // The same question asked again in the period: its stored release is
  // served and the reuse recorded, nothing charged (release_cache.h).
  if (AnswerFromReleaseCache(query, &cost)) {
    pfree(cost.description.data);
    return;
  }
  ChargeQueryCost(&cost);
}

}  // namespace dp_pg
