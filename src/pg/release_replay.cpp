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
#include "citus/wrappers.h"
#include "plan_children.h"
#include "scan_above.h"
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
    return EmitRowAbove(node, row);
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
      return EmitRowAbove(node, state->stored);
    if (forward) at_end_of_store = true;
  }
  if (at_end_of_store && !state->eof_underlying) {
    TupleTableSlot* row = ExecProcNode(outerPlanState(node));
    if (TupIsNull(row)) {
      state->eof_underlying = true;
      return ExecClearTuple(node->ss.ss_ScanTupleSlot);
    }
    tuplestore_puttupleslot(state->store, row);
    return EmitRowAbove(node, row);
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
  PlaceScanAbove(replay, agg, (*next_node_id)++, agg->parallel_safe);
  replay->flags = CUSTOMPATH_SUPPORT_BACKWARD_SCAN;
  // A node, not an integer list: Citus takes the first element of any
  // CustomScan's custom_private for a node and looks at its tag
  // (IsCitusCustomScan, walking the plan for its own scan).
  replay->custom_private = list_make1(makeInteger(held ? 1 : 0));
  replay->methods = &kPlanMethods;
  return &replay->scan.plan;
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
  WrapContext context{(cursor_options & CURSOR_OPT_HOLD) != 0, MaxPlanNodeId(statement) + 1};
  statement->planTree = Wrap(statement->planTree, &context);
  VisitPlanList(statement->subplans, Wrap, &context);
}

}  // namespace dp_pg
