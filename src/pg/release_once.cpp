// Exactly one release per charge under parallel query.
//
// The executor hook charges each private aggregate call site once per
// execution, when the leader starts the plan (call_sites.cpp). Parallel
// workers run the part of the plan below a Gather (or Gather Merge) each on
// their own. For a partial aggregation that is what we want: every worker
// aggregates its share of the rows into a partial state, and the Finalize
// step above the Gather combines them and draws the noise once. A complete
// aggregation below a Gather, however, runs once per participant and each
// participant draws fresh noise: several noisy answers of the same rows for
// one charge (the averaging attack). PostgreSQL does plan that: a subquery
// with a private aggregate on the inner side of a parallel hash join is
// executed by every participant to build its own hash table.
//
// Two layers:
//   * prevention: the paths that aggregate completely at a level with
//     private aggregates are marked parallel-unsafe when they are made
//     (create_upper_paths_hook), so the planner cannot put them below a
//     Gather at all, whatever the settings or statistics; the partial
//     aggregation paths (Partial Aggregate -> Gather -> Finalize) stay.
//   * proof: the final plan is walked and any private aggregate below a
//     multi-process Gather that is not a partial step is an ERROR, so a
//     planner path this file did not foresee fails closed.
#include "release_once.h"

extern "C" {
#include "nodes/nodeFuncs.h"
#include "optimizer/planner.h"
}

#include "call_sites.h"
#include "plan_children.h"

namespace dp_pg {

namespace {

bool ContainsPrivateAggregate(Node* node, void* context) {
  if (node == nullptr) return false;
  if (IsA(node, Aggref)) {
    const auto* aggref = reinterpret_cast<Aggref*>(node);
    return aggref->agglevelsup == 0 && LookupPrivateAggregate(aggref->aggfnoid) != nullptr;
  }
  if (IsA(node, Query)) return false;  // sublinks are levels of their own
  return expression_tree_walker(node, DP_EXPRESSION_WALKER(ContainsPrivateAggregate), context);
}

bool LevelHasPrivateAggregates(const Query* query) {
  return query->hasAggs &&
         (ContainsPrivateAggregate(reinterpret_cast<Node*>(query->targetList), nullptr) ||
          ContainsPrivateAggregate(query->havingQual, nullptr));
}

}  // namespace

void KeepReleasesOutOfParallelPaths(PlannerInfo* root, UpperRelationKind stage,
                                    RelOptInfo* output_rel) {
  if (stage != UPPERREL_GROUP_AGG || !LevelHasPrivateAggregates(root->parse)) return;
  // Every complete path of the grouped relation releases answers; none may
  // run in several processes. A path that already gathers (Finalize above
  // Gather) is parallel-unsafe anyway. Partial paths of the grouped
  // relation (complete aggregation per worker, from partitionwise
  // aggregation) would be appended below a Gather: drop them.
  output_rel->consider_parallel = false;
  ListCell* cell;
  foreach (cell, output_rel->pathlist) static_cast<Path*>(lfirst(cell))->parallel_safe = false;
  output_rel->partial_pathlist = NIL;
}

namespace {

struct PlanWalk {
  PlannedStmt* statement;
  bool below_gather;  // below a Gather that several processes execute
};

void WalkPlan(Plan* plan, PlanWalk walk);

bool WalkSubPlans(Node* node, PlanWalk* walk) {
  if (node == nullptr) return false;
  if (IsA(node, SubPlan)) {
    const auto* subplan = reinterpret_cast<SubPlan*>(node);
    WalkPlan(static_cast<Plan*>(list_nth(walk->statement->subplans, subplan->plan_id - 1)), *walk);
  }
  return expression_tree_walker(node, DP_EXPRESSION_WALKER(WalkSubPlans), walk);
}

bool FindReplicatedRelease(Node* node, void* context) {
  if (node == nullptr) return false;
  if (IsA(node, Aggref)) {
    const auto* aggref = reinterpret_cast<Aggref*>(node);
    if (LookupPrivateAggregate(aggref->aggfnoid) != nullptr &&
        aggref->aggsplit != AGGSPLIT_INITIAL_SERIAL)
      ereport(ERROR,
              (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
               errmsg("dp_agg: %s would run in several parallel processes",
                      AggregateName(aggref->aggfnoid)),
               errdetail("Each process would draw its own noise for one charge."),
               errhint("Run the query with max_parallel_workers_per_gather = 0 and report the "
                       "query to dp_agg's developers.")));
    return false;
  }
  return expression_tree_walker(node, DP_EXPRESSION_WALKER(FindReplicatedRelease), context);
}

Plan* WalkChild(Plan* child, void* walk) {
  WalkPlan(child, *static_cast<PlanWalk*>(walk));
  return child;
}

void WalkPlan(Plan* plan, PlanWalk walk) {
  if (plan == nullptr) return;
  check_stack_depth();
  // A node's own init plans run where the node runs, and those of a Gather
  // or Gather Merge in the leader, before it starts the workers: ExecGather
  // evaluates its initParam and ships the values to them. So they are walked
  // before a Gather below them counts; otherwise an uncorrelated scalar
  // subquery is refused whenever the planner puts a Gather on top, an outcome
  // that planner settings and table sizes would decide.
  WalkSubPlans(reinterpret_cast<Node*>(plan->initPlan), &walk);
  if (IsA(plan, Gather)) {
    if (!reinterpret_cast<Gather*>(plan)->single_copy) walk.below_gather = true;
  } else if (IsA(plan, GatherMerge)) {
    walk.below_gather = true;
  }
  if (walk.below_gather && IsA(plan, Agg)) {
    FindReplicatedRelease(reinterpret_cast<Node*>(plan->targetlist), nullptr);
    FindReplicatedRelease(reinterpret_cast<Node*>(plan->qual), nullptr);
  }
  // Subplans called from expressions run where the expression runs.
  WalkSubPlans(reinterpret_cast<Node*>(plan->targetlist), &walk);
  WalkSubPlans(reinterpret_cast<Node*>(plan->qual), &walk);
  VisitChildPlans(plan, WalkChild, &walk);
}

}  // namespace

void VerifyReleasedOnce(PlannedStmt* plan) {
  if (!plan->parallelModeNeeded) return;  // no Gather anywhere
  PlanWalk walk{plan, false};
  WalkPlan(plan->planTree, walk);
  // Subplans reached only from nodes above every Gather run in the leader;
  // WalkPlan visits those reached below one with below_gather set.
}

}  // namespace dp_pg
