#include "release_replay.h"

extern "C" {
#include "executor/executor.h"
#include "executor/tuptable.h"
#include "miscadmin.h"
#include "nodes/extensible.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "nodes/value.h"
#include "utils/tuplestore.h"
}

#include "aggregate_catalog.h"
#include "distributed.h"
#include "plan_children.h"
#include "settings.h"

namespace dp_pg {

namespace {

constexpr const char* kNodeName = "dp_agg release once";

// --- execution: ExecMaterial's logic, rows kept when they may be read again

struct ReplayState {
  CustomScanState css;
  // Whether this execution may read the rows again: a rewind, a backward
  // fetch, a rescan (the executor's EXEC_FLAG_REWIND/BACKWARD/MARK), or a
  // WITH HOLD cursor, whose COMMIT may rewind the executor without asking
  // for any of them (PersistHoldablePortal; PostgreSQL 15.20 rewinds only
  // scrollable ones, earlier minor releases every one). Otherwise the rows
  // pass through unstored: a plain SELECT pays nothing for the guarantee.
  bool keep_rows;
  Tuplestorestate* store;  // every row the Agg returned, in order (keep_rows)
  TupleTableSlot* stored;  // reads the store (minimal tuples)
  bool eof_underlying;  // the Agg has returned its last row
};

TupleTableSlot* Emit(ReplayState* state, TupleTableSlot* from) {
  // The scan slot is virtual (ExecInitCustomScan in PostgreSQL 15): the
  // values point into `from`, which stays valid until the next call.
  TupleTableSlot* out = state->css.ss.ss_ScanTupleSlot;
  ExecClearTuple(out);
  slot_getallattrs(from);
  const int columns = out->tts_tupleDescriptor->natts;
  std::memcpy(out->tts_values, from->tts_values, sizeof(Datum) * columns);
  std::memcpy(out->tts_isnull, from->tts_isnull, sizeof(bool) * columns);
  ExecStoreVirtualTuple(out);
  ProjectionInfo* projection = state->css.ss.ps.ps_ProjInfo;
  if (projection == nullptr) return out;
  projection->pi_exprContext->ecxt_scantuple = out;
  return ExecProject(projection);
}

void BeginReplay(CustomScanState* node, EState* estate, int eflags) {
  auto* state = reinterpret_cast<ReplayState*>(node);
  auto* plan = reinterpret_cast<CustomScan*>(node->ss.ps.plan);
  // This node answers rewinds, backward scans and rescans itself; the Agg
  // below only ever runs forward, once.
  outerPlanState(node) = ExecInitNode(
      outerPlan(plan), estate, eflags & ~(EXEC_FLAG_REWIND | EXEC_FLAG_BACKWARD | EXEC_FLAG_MARK));
  const bool held = intVal(linitial(plan->custom_private)) != 0;
  state->keep_rows =
      held || (eflags & (EXEC_FLAG_REWIND | EXEC_FLAG_BACKWARD | EXEC_FLAG_MARK)) != 0;
  state->store = state->keep_rows ? tuplestore_begin_heap(true, false, work_mem) : nullptr;
  state->stored = ExecAllocTableSlot(
      &estate->es_tupleTable, node->ss.ss_ScanTupleSlot->tts_tupleDescriptor, &TTSOpsMinimalTuple);
  state->eof_underlying = false;
}

TupleTableSlot* ExecReplay(CustomScanState* node) {
  auto* state = reinterpret_cast<ReplayState*>(node);
  if (!state->keep_rows) {
    if (state->eof_underlying) return ExecClearTuple(node->ss.ss_ScanTupleSlot);
    TupleTableSlot* row = ExecProcNode(outerPlanState(node));
    if (TupIsNull(row)) {
      state->eof_underlying = true;
      return ExecClearTuple(node->ss.ss_ScanTupleSlot);
    }
    return Emit(state, row);
  }
  const bool forward = ScanDirectionIsForward(node->ss.ps.state->es_direction);
  bool at_end_of_store = tuplestore_ateof(state->store);
  if (!forward && at_end_of_store) {
    // Turning back at the end of the store: the first backward read returns
    // the last row added, which the caller already has, unless the Agg had
    // finished (then the caller saw the end, not that row).
    if (!state->eof_underlying && !tuplestore_advance(state->store, forward)) return nullptr;
    at_end_of_store = false;
  }
  if (!at_end_of_store) {
    if (tuplestore_gettupleslot(state->store, forward, false, state->stored))
      return Emit(state, state->stored);
    if (forward) at_end_of_store = true;
  }
  if (at_end_of_store && !state->eof_underlying) {
    TupleTableSlot* row = ExecProcNode(outerPlanState(node));
    if (TupIsNull(row)) {
      state->eof_underlying = true;
      return ExecClearTuple(node->ss.ss_ScanTupleSlot);
    }
    tuplestore_puttupleslot(state->store, row);
    return Emit(state, row);
  }
  return ExecClearTuple(node->ss.ss_ScanTupleSlot);
}

void EndReplay(CustomScanState* node) {
  auto* state = reinterpret_cast<ReplayState*>(node);
  ExecEndNode(outerPlanState(node));
  if (state->store != nullptr) tuplestore_end(state->store);
}

void RescanReplay(CustomScanState* node) {
  auto* state = reinterpret_cast<ReplayState*>(node);
  ExecClearTuple(node->ss.ss_ScanTupleSlot);
  // New parameter values would make the Agg a new execution with new noise
  // for the same charge. Rule (1) of input_checks.h refuses such plans before
  // execution; this is the proof that no plan shape gets past it.
  if (outerPlanState(node)->chgParam != nullptr)
    ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
                    errmsg("dp_agg: a private aggregate would run again with other parameters"),
                    errdetail("Each run would release new answers for one charge."),
                    errhint("Compute the private aggregate once, in a subquery of its own.")));
  // An execution that said it would read forward once is read again: no
  // known caller does on PostgreSQL 15.20 (the top level rewinds only SCROLL
  // and WITH HOLD cursors; earlier minor releases also rewound a PL/pgSQL
  // loop's portal held at a COMMIT inside the loop, which then ends here, a
  // refusal that does not depend on the rows), so this is the proof that
  // none draws again.
  if (!state->keep_rows)
    ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
                    errmsg("dp_agg: a private aggregate's release cannot be read again here"),
                    errdetail("It was computed to be read once; reading it again would draw "
                              "new noise for the same charge."),
                    errhint("Declare the cursor SCROLL to read its rows again.")));
  tuplestore_rescan(state->store);
}

const CustomExecMethods kExecMethods = {
    kNodeName, BeginReplay, ExecReplay, EndReplay, RescanReplay, nullptr, nullptr,
    nullptr,   nullptr,     nullptr,    nullptr,   nullptr,      nullptr,
};

Node* CreateReplayState(CustomScan* plan) {
  auto* state = reinterpret_cast<ReplayState*>(newNode(sizeof(ReplayState), T_CustomScanState));
  state->css.methods = &kExecMethods;
  return reinterpret_cast<Node*>(state);
}

const CustomScanMethods kPlanMethods = {kNodeName, CreateReplayState};

// --- planning: wrap every releasing Agg -------------------------------------

bool ReleasesPrivately(Node* node, void* context) {
  if (node == nullptr) return false;
  if (IsA(node, Aggref)) {
    auto* aggref = reinterpret_cast<Aggref*>(node);
    if (LookupPrivateAggregate(aggref->aggfnoid) != nullptr)
      return !DO_AGGSPLIT_SKIPFINAL(aggref->aggsplit);
    return IsPrivateCitusReleaseCall(aggref);
  }
  return expression_tree_walker(node, DP_EXPRESSION_WALKER(ReleasesPrivately), context);
}

// Above `agg`, with the same output columns, costs and parameters.
// `held`: the plan is a WITH HOLD cursor's.
Plan* WrapInReplay(Plan* agg, bool held, int* next_node_id) {
  CustomScan* replay = makeNode(CustomScan);
  Plan* plan = &replay->scan.plan;
  plan->startup_cost = agg->total_cost;  // the Agg runs to its first row at least
  plan->total_cost = agg->total_cost;
  plan->plan_rows = agg->plan_rows;
  plan->plan_width = agg->plan_width;
  plan->parallel_aware = false;
  plan->parallel_safe = agg->parallel_safe;
  plan->async_capable = false;
  plan->plan_node_id = (*next_node_id)++;
  plan->extParam = bms_copy(agg->extParam);
  plan->allParam = bms_copy(agg->allParam);
  plan->lefttree = agg;
  // The scan tuple is the Agg's row (OUTER_VAR: EXPLAIN VERBOSE shows the
  // Agg's expressions); the output is the scan tuple as it is.
  ListCell* cell;
  foreach (cell, agg->targetlist) {
    const auto* entry = static_cast<TargetEntry*>(lfirst(cell));
    Expr* expr = entry->expr;
    Var* from_agg = makeVar(OUTER_VAR, entry->resno, exprType(reinterpret_cast<Node*>(expr)),
                            exprTypmod(reinterpret_cast<Node*>(expr)),
                            exprCollation(reinterpret_cast<Node*>(expr)), 0);
    TargetEntry* scan_entry = flatCopyTargetEntry(const_cast<TargetEntry*>(entry));
    scan_entry->expr = reinterpret_cast<Expr*>(from_agg);
    replay->custom_scan_tlist = lappend(replay->custom_scan_tlist, scan_entry);
    Var* from_scan = makeVar(INDEX_VAR, entry->resno, from_agg->vartype, from_agg->vartypmod,
                             from_agg->varcollid, 0);
    TargetEntry* output = flatCopyTargetEntry(const_cast<TargetEntry*>(entry));
    output->expr = reinterpret_cast<Expr*>(from_scan);
    plan->targetlist = lappend(plan->targetlist, output);
  }
  replay->scan.scanrelid = 0;
  replay->flags = CUSTOMPATH_SUPPORT_BACKWARD_SCAN;
  // A node, not an integer list: Citus takes the first element of any
  // CustomScan's custom_private for a node and looks at its tag
  // (IsCitusCustomScan, walking the plan for its own scan).
  replay->custom_private = list_make1(makeInteger(held ? 1 : 0));
  replay->methods = &kPlanMethods;
  return plan;
}

struct WrapContext {
  bool held;  // a WITH HOLD cursor's plan
  int next_node_id;
};

// Returns the plan to put where `plan` was (a ChildPlanVisitor).
Plan* Wrap(Plan* plan, void* context) {
  if (plan == nullptr) return nullptr;  // a statement's subplan may be NULL
  check_stack_depth();
  auto* wrap = static_cast<WrapContext*>(context);
  VisitChildPlans(plan, Wrap, wrap);
  if (IsA(plan, Agg) && (ReleasesPrivately(reinterpret_cast<Node*>(plan->targetlist), nullptr) ||
                         ReleasesPrivately(reinterpret_cast<Node*>(plan->qual), nullptr)))
    return WrapInReplay(plan, wrap->held, &wrap->next_node_id);
  return plan;
}

// Raises *context to the largest plan node id at or below `plan`.
Plan* RaiseToMaxNodeId(Plan* plan, void* context) {
  if (plan == nullptr) return nullptr;
  check_stack_depth();
  int* max_id = static_cast<int*>(context);
  *max_id = Max(*max_id, plan->plan_node_id);
  VisitChildPlans(plan, RaiseToMaxNodeId, context);
  return plan;
}

}  // namespace

bool IsReleaseReplay(const Plan* plan) {
  return plan != nullptr && IsA(plan, CustomScan) &&
         reinterpret_cast<const CustomScan*>(plan)->methods == &kPlanMethods;
}

bool IsReleaseReplayState(const PlanState* state) {
  return state != nullptr && IsA(state, CustomScanState) &&
         reinterpret_cast<const CustomScanState*>(state)->methods == &kExecMethods;
}

void RegisterReleaseReplay() { RegisterCustomScanMethods(&kPlanMethods); }

void WrapReleases(PlannedStmt* statement, int cursor_options) {
  if (statement->commandType == CMD_UTILITY) return;
  // The neighbour fuzzer's self-check replays the plans without the node.
  if (TestFaultIs(TestFault::kFinalizeOnRewind)) return;
  // Plan node ids must stay unique within the statement (EXPLAIN ANALYZE and
  // parallel query find nodes by them).
  int max_id = 0;
  RaiseToMaxNodeId(statement->planTree, &max_id);
  VisitPlanList(statement->subplans, RaiseToMaxNodeId, &max_id);
  WrapContext context{(cursor_options & CURSOR_OPT_HOLD) != 0, max_id + 1};
  statement->planTree = Wrap(statement->planTree, &context);
  VisitPlanList(statement->subplans, Wrap, &context);
}

}  // namespace dp_pg
