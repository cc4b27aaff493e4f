#include "plan_children.h"

namespace dp_pg {

void VisitPlanList(List* plans, ChildPlanVisitor visit, void* context) {
  ListCell* cell;
  foreach (cell, plans) lfirst(cell) = visit(static_cast<Plan*>(lfirst(cell)), context);
}

void VisitChildPlans(Plan* plan, ChildPlanVisitor visit, void* context) {
  switch (nodeTag(plan)) {
    case T_Append:
      VisitPlanList(reinterpret_cast<Append*>(plan)->appendplans, visit, context);
      break;
    case T_MergeAppend:
      VisitPlanList(reinterpret_cast<MergeAppend*>(plan)->mergeplans, visit, context);
      break;
    case T_BitmapAnd:
      VisitPlanList(reinterpret_cast<BitmapAnd*>(plan)->bitmapplans, visit, context);
      break;
    case T_BitmapOr:
      VisitPlanList(reinterpret_cast<BitmapOr*>(plan)->bitmapplans, visit, context);
      break;
    case T_SubqueryScan: {
      auto* scan = reinterpret_cast<SubqueryScan*>(plan);
      if (scan->subplan != nullptr) scan->subplan = visit(scan->subplan, context);
      break;
    }
    case T_CustomScan:
      VisitPlanList(reinterpret_cast<CustomScan*>(plan)->custom_plans, visit, context);
      break;
    default:
      break;
  }
  if (plan->lefttree != nullptr) plan->lefttree = visit(plan->lefttree, context);
  if (plan->righttree != nullptr) plan->righttree = visit(plan->righttree, context);
}

}  // namespace dp_pg
