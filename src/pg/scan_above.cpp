#include "scan_above.h"

#include <cstring>

extern "C" {
#include "nodes/extensible.h"
#include "nodes/makefuncs.h"
}

#include "plan_children.h"

namespace dp_pg {

namespace {

// Raises *context to the largest plan node id at or below `plan`.
Plan* RaiseToMaxNodeId(Plan* plan, void* context) {
  if (plan == nullptr) return nullptr;  // a statement's subplan may be NULL
  check_stack_depth();
  int* max_id = static_cast<int*>(context);
  *max_id = Max(*max_id, plan->plan_node_id);
  VisitChildPlans(plan, RaiseToMaxNodeId, context);
  return plan;
}

}  // namespace

int MaxPlanNodeId(PlannedStmt* statement) {
  int max_id = 0;
  RaiseToMaxNodeId(statement->planTree, &max_id);
  VisitPlanList(statement->subplans, RaiseToMaxNodeId, &max_id);
  return max_id;
}

void PlaceScanAbove(CustomScan* scan, Plan* below, int plan_node_id, bool parallel_safe) {
  Plan* plan = &scan->scan.plan;
  plan->startup_cost = below->total_cost;
  plan->total_cost = below->total_cost;
  plan->plan_rows = below->plan_rows;
  plan->plan_width = below->plan_width;
  plan->parallel_aware = false;
  plan->parallel_safe = parallel_safe;
  plan->async_capable = false;
  plan->plan_node_id = plan_node_id;
  plan->extParam = bms_copy(below->extParam);
  plan->allParam = bms_copy(below->allParam);
  plan->lefttree = below;
  ListCell* cell;
  foreach (cell, below->targetlist) {
    const auto* entry = static_cast<TargetEntry*>(lfirst(cell));
    Node* expression = reinterpret_cast<Node*>(entry->expr);
    Var* from_below = makeVar(OUTER_VAR, entry->resno, exprType(expression), exprTypmod(expression),
                              exprCollation(expression), 0);
    TargetEntry* scan_entry = flatCopyTargetEntry(const_cast<TargetEntry*>(entry));
    scan_entry->expr = reinterpret_cast<Expr*>(from_below);
    scan->custom_scan_tlist = lappend(scan->custom_scan_tlist, scan_entry);
    Var* from_scan = makeVar(INDEX_VAR, entry->resno, from_below->vartype, from_below->vartypmod,
                             from_below->varcollid, 0);
    TargetEntry* output = flatCopyTargetEntry(const_cast<TargetEntry*>(entry));
    output->expr = reinterpret_cast<Expr*>(from_scan);
    plan->targetlist = lappend(plan->targetlist, output);
  }
  scan->scan.scanrelid = 0;
}

TupleTableSlot* EmitRowAbove(CustomScanState* node, TupleTableSlot* from) {
  // The scan slot is virtual (ExecInitCustomScan in PostgreSQL 15).
  TupleTableSlot* out = node->ss.ss_ScanTupleSlot;
  ExecClearTuple(out);
  slot_getallattrs(from);
  const int columns = out->tts_tupleDescriptor->natts;
  std::memcpy(out->tts_values, from->tts_values, sizeof(Datum) * columns);
  std::memcpy(out->tts_isnull, from->tts_isnull, sizeof(bool) * columns);
  ExecStoreVirtualTuple(out);
  ProjectionInfo* projection = node->ss.ps.ps_ProjInfo;
  if (projection == nullptr) return out;
  projection->pi_exprContext->ecxt_scantuple = out;
  return ExecProject(projection);
}

}  // namespace dp_pg
