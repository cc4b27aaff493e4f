// dp_agg on Citus: what a wrapper call site is for dp_agg (partial or
// release), checked when the executor hook prepares it (sites.h).
#include "sites.h"

#include <cstdlib>
#include <cstring>

extern "C" {
#include "access/genam.h"
#include "access/table.h"
#include "catalog/dependency.h"
#include "catalog/namespace.h"
#include "catalog/pg_namespace.h"
#include "catalog/pg_type.h"
#include "commands/extension.h"
#include "nodes/makefuncs.h"
#include "optimizer/tlist.h"
#include "parser/parse_func.h"
#include "parser/parsetree.h"
#include "utils/datum.h"
#include "utils/fmgroids.h"
#include "utils/inval.h"
#include "utils/typcache.h"
#include "tcop/pquery.h"
#include "utils/rel.h"
#include "nodes/extensible.h"
}

#include "../aggregate_catalog.h"
#include "catalog.h"
#include "contract.h"
#include "node_role.h"
#include "plan_text.h"
#include "wrappers.h"
namespace dp_pg {

namespace {

// Follows the value of `expression` (an Agg input column) down through
// plan nodes that only pass columns on, to the Citus scan, and returns the
// remote_scan column it reads (0 if it is anything else).
AttrNumber RemoteColumn(Node* expression, Plan* plan, CustomScan** scan) {
  Node* node = StripRelabel(expression);
  for (;;) {
    if (plan == nullptr || node == nullptr || !IsA(node, Var)) return 0;
    const auto* var = reinterpret_cast<Var*>(node);
    if (var->varno != OUTER_VAR || var->varattno < 1 ||
        var->varattno > list_length(plan->targetlist))
      return 0;
    node = StripRelabel(reinterpret_cast<Node*>(
        static_cast<TargetEntry*>(list_nth(plan->targetlist, var->varattno - 1))->expr));
    if (IsA(plan, CustomScan)) break;
    if (!IsA(plan, Sort) && !IsA(plan, IncrementalSort) && !IsA(plan, Material)) return 0;
    plan = plan->lefttree;
  }
  auto* custom = reinterpret_cast<CustomScan*>(plan);
  // The scan's output entry reads a scan column, directly (scanrelid) or
  // through custom_scan_tlist (INDEX_VAR).
  if (node == nullptr || !IsA(node, Var)) return 0;
  const auto* scan_var = reinterpret_cast<Var*>(node);
  if (scan_var->varno == INDEX_VAR) {
    if (scan_var->varattno < 1 || scan_var->varattno > list_length(custom->custom_scan_tlist))
      return 0;
    node = StripRelabel(reinterpret_cast<Node*>(
        static_cast<TargetEntry*>(list_nth(custom->custom_scan_tlist, scan_var->varattno - 1))
            ->expr));
    if (node == nullptr || !IsA(node, Var)) return 0;
    scan_var = reinterpret_cast<Var*>(node);
  }
  if (IS_SPECIAL_VARNO(scan_var->varno)) return 0;
  *scan = custom;
  return scan_var->varattno;
}

// The Citus scan below an Agg node (through Sort/Material only).
CustomScan* CitusScanBelow(Plan* plan) {
  while (plan != nullptr && (IsA(plan, Sort) || IsA(plan, IncrementalSort) || IsA(plan, Material)))
    plan = plan->lefttree;
  return plan != nullptr && IsA(plan, CustomScan) ? reinterpret_cast<CustomScan*>(plan) : nullptr;
}

// The coordinator's combine call -> the worker_partial_agg call in the job
// that produces its input column, rebuilt as the inner private call.
Aggref* ReleaseSiteInnerCall(Aggref* combine, Agg* plan, Oid inner) {
  if (list_length(combine->args) != 3)
    RefuseDistributed("dp_agg cannot verify a Citus combine step",
                      "coord_combine_agg was called with an unexpected argument list.", nullptr);
  Node* partial_column =
      reinterpret_cast<Node*>(static_cast<TargetEntry*>(lsecond(combine->args))->expr);
  CustomScan* scan = nullptr;
  const AttrNumber column = RemoteColumn(partial_column, plan->plan.lefttree, &scan);
  WorkerJob job;
  if (column == 0 || !ReadWorkerJob(scan, &job))
    RefuseDistributed(
        "dp_agg releases a distributed private aggregate only from Citus's own plan",
        column == 0 ? "The input of coord_combine_agg is not a column of a Citus scan."
                    : "dp_agg cannot read the worker job of this Citus plan.",
        "Write the private aggregate itself (dp_sum, dp_count, ...), never Citus's wrappers.");
  ListCell* cell;
  foreach (cell, job.job_query->targetList) {
    auto* entry = static_cast<TargetEntry*>(lfirst(cell));
    if (entry->resno != column) continue;
    Node* expression = StripRelabel(reinterpret_cast<Node*>(entry->expr));
    if (expression == nullptr || !IsA(expression, Aggref)) break;
    auto* partial = reinterpret_cast<Aggref*>(expression);
    if (WrapperOf(partial->aggfnoid) != Wrapper::kWorkerPartial ||
        InnerAggregateOid(partial) != inner)
      break;
    return InnerCall(partial, inner);
  }
  RefuseDistributed("dp_agg releases a distributed private aggregate only from Citus's own plan",
                    "The combined column does not come from worker_partial_agg of the same "
                    "aggregate in the distributed plan.",
                    nullptr);
}

}  // namespace

namespace {

// The top Agg node of the plan runs in partial mode (AGGSPLIT_INITIAL_SERIAL)
// and so sends exact transition states to the client. PostgreSQL itself
// makes a partial Agg node only below a Finalize step (parallel or
// partitionwise aggregation), which on a worker is refused as a private
// aggregate that is not wrapped; a partial Agg node at the top of a plan is
// made only by RunShardPartialsDirectly.
bool IsDirectShardPartial(Aggref* aggref, Agg* plan, EState* estate) {
  return aggref->aggsplit == AGGSPLIT_INITIAL_SERIAL && plan->aggsplit == AGGSPLIT_INITIAL_SERIAL &&
         estate->es_plannedstmt != nullptr &&
         estate->es_plannedstmt->planTree == reinterpret_cast<Plan*>(plan);
}

}  // namespace

Aggref* CitusInnerAggregate(Aggref* outer, Agg* plan, EState* estate, CitusSiteRole* role) {
  *role = CitusSiteRole::kNone;
  const Wrapper wrapper = WrapperOf(outer->aggfnoid);
  if (wrapper == Wrapper::kNone) {
    if (IsWorkerNode() && LookupPrivateAggregate(outer->aggfnoid) != nullptr) {
      // The partial step that RunShardPartialsDirectly made of Citus's
      // wrapper: exactly what worker_partial_agg computes, for the same
      // authenticated coordinator only.
      if (IsDirectShardPartial(outer, plan, estate)) {
        RequireAuthenticatedCoordinator();
        *role = CitusSiteRole::kPartial;
        return outer;
      }
      ereport(ERROR,
              (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
               errmsg("%s cannot run on a Citus worker", AggregateName(outer->aggfnoid)),
               errdetail("Private aggregates are charged and released only on the coordinator; "
                         "a worker only computes partial states for it."),
               errhint("Run the query on the coordinator.")));
    }
    return nullptr;
  }
  if (!WrapsPrivateAggregate(outer)) return nullptr;
  const Oid inner = InnerAggregateOid(outer);
  if (!OidIsValid(inner))
    RefuseDistributed("dp_agg cannot tell which aggregate a Citus wrapper runs",
                      "Its aggregate argument is not a constant.", nullptr);
  if (wrapper == Wrapper::kWorkerPartial) {
    RequireAuthenticatedCoordinator();
    *role = CitusSiteRole::kPartial;
    return InnerCall(outer, inner);
  }
  if (IsWorkerNode())
    ereport(ERROR, (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
                    errmsg("%s cannot be released on a Citus worker", AggregateName(inner)),
                    errhint("Run the query on the coordinator.")));
  *role = CitusSiteRole::kRelease;
  return ReleaseSiteInnerCall(outer, plan, inner);
}

int CheckCitusReleaseInput(Aggref* inner, Agg* plan) {
  CustomScan* scan = CitusScanBelow(plan->plan.lefttree);
  WorkerJob job;
  if (scan == nullptr || !ReadWorkerJob(scan, &job))
    RefuseDistributed("dp_agg cannot bound how often one row feeds a distributed aggregate",
                      "Its input is not a Citus distributed scan.", nullptr);
  // The coordinator's own shards would be read by a task it runs itself
  // (local execution, or a connection to itself), where the fragment is a
  // query of this node's analyst, which dp_agg refuses: refused here, before
  // anything is charged (review of privacy units on Citus, finding R1).
  if (job.runs_on_coordinator)
    ereport(ERROR,
            (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
             errmsg("dp_agg cannot release %s over shards placed on the coordinator",
                    AggregateName(inner->aggfnoid)),
             errdetail("dp_agg's workers compute partial states only for the coordinator's "
                       "authenticated connections; the coordinator does not run them for its "
                       "own shards. An administrator moves them to workers: "
                       "citus_set_node_property(<coordinator host>, <port>, "
                       "'shouldhaveshards', false), then citus_drain_node or "
                       "citus_move_shard_placement for the shards already there.")));
  Query* query = job.job_query;
  // One table, read once per shard, by tasks that each aggregate their own
  // shard: the shards partition the rows, so every row feeds one partial.
  const char* problem = nullptr;
  if (job.is_modification) problem = "The distributed plan modifies a table.";
  if (job.has_subplans) problem = "The distributed plan runs subqueries or CTEs first.";
  if (job.has_dependent_jobs) problem = "The distributed plan repartitions rows between nodes.";
  if (job.relation_count != 1) problem = "The distributed plan reads several tables.";
  bool one_table = CoordinatorJobReadsOneShard(query);
  // Over privacy units (see above) each task reads the rewrite's per-unit
  // level of its shard instead: m groups per unit.
  int unit_groups = 1;
  const char* unit_problem = nullptr;
  if (!one_table) {
    unit_groups = UnitJobGroups(query, &unit_problem);
    if (unit_groups == 0) problem = unit_problem;
  }
  if (const char* clause = CoordinatorJobClauseProblem(query)) problem = clause;
  if (problem != nullptr)
    ereport(
        ERROR,
        (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
         errmsg("dp_agg cannot bound how often one row feeds %s", AggregateName(inner->aggfnoid)),
         errdetail("%s", problem),
         errhint("Aggregate rows of a single distributed table, filtered by conditions on "
                 "that table's own columns; a table with a privacy unit must be "
                 "hash-distributed by its unit column.")));
  return unit_groups;
}

namespace {

[[noreturn]] void RefuseInstrumented(const char* aggregate) {
  ereport(
      ERROR,
      (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
       errmsg("dp_agg: EXPLAIN ANALYZE cannot run %s over a Citus distributed table", aggregate),
       errdetail("Under EXPLAIN ANALYZE (or auto_explain.log_analyze) Citus wraps every task "
                 "in worker_save_query_explain_analyze, which cannot return the workers' "
                 "partial states; the query is refused before anything is charged."),
       errhint("Run EXPLAIN without ANALYZE to see the plan and the workers' fragments, or "
               "run the query itself.")));
  pg_unreachable();
}

}  // namespace

namespace {

bool FindInstrumentedSubplanRelease(PlanState* node, void* context) {
  if (node == nullptr) return false;
  if (IsA(node, CustomScanState)) {
    auto* scan = reinterpret_cast<CustomScan*>(node->plan);
    if (scan->methods != nullptr && scan->methods->CustomName != nullptr &&
        std::strncmp(scan->methods->CustomName, "Citus ", 6) == 0 &&
        list_length(scan->custom_private) == 1) {
      // Citus writes a char field (Task's replicationModel) with %c, a NUL
      // byte when it is 0, which would end a C string before subPlanList:
      // the whole text, with its NUL bytes made blanks.
      StringInfoData plan_text;
      initStringInfo(&plan_text);
      outNode(&plan_text, linitial(scan->custom_private));
      for (int i = 0; i < plan_text.len; ++i)
        if (plan_text.data[i] == '\0') plan_text.data[i] = ' ';
      const bool found = TextHasPrivateRelease(plan_text.data);
      pfree(plan_text.data);
      if (found) return true;
    }
  }
  return planstate_tree_walker(node, DP_EXPRESSION_WALKER(FindInstrumentedSubplanRelease), context);
}

}  // namespace

// Citus's adaptive executor asks whether its scan runs instrumented
// (RequestedForExplainAnalyze: es_instrument != 0, set by EXPLAIN ANALYZE and
// by auto_explain.log_analyze alike) and then sends every task as
// SELECT * FROM worker_save_query_explain_analyze('<fragment>', ...) AS
// (field_0 cstring, ...): a column definition list of the fragment's result
// types, where the cstring partial states of worker_partial_agg are not
// allowed ("column "field_0" has pseudo-type cstring"), and the worker would
// plan the fragment inside a function, where it is not the coordinator's
// statement anyway (AcceptCoordinatorFragment). Running it uninstrumented
// would not be EXPLAIN ANALYZE, so it is refused, decided by the statement
// alone and before ChargeQueryCost; it failed on every worker after the
// charge (issue 25, finding 4 (a)).
void RefuseInstrumentedCitusRelease(Aggref* inner, EState* estate) {
  if (estate->es_instrument == 0) return;
  RefuseInstrumented(AggregateName(inner->aggfnoid));
}

// A private level nested in a subquery or WITH query runs as a Citus subplan
// (ExecuteSubPlans), in an executor of its own started without
// instrumentation, from the first row of the instrumented statement: Citus
// then wraps its tasks too (SubPlanExplainAnalyzeContext), and the subplan
// was charged before they failed. Decided here, when the instrumented
// statement starts, before any of its charges (the statement's own level is
// found here too, in the scan's combineQuery, before its release sites are
// prepared).
void RefuseInstrumentedCitusSubplans(PlanState* root, EState* estate) {
  if (estate->es_instrument == 0 || root == nullptr || !CitusInstalled()) return;
  if (FindInstrumentedSubplanRelease(root, nullptr)) RefuseInstrumented("a private aggregate");
}

bool PlanHasCitusSubplanRelease(PlanState* root) {
  if (root == nullptr || !CitusInstalled()) return false;
  return FindInstrumentedSubplanRelease(root, nullptr);
}

}  // namespace dp_pg
