// The child plans of a finished plan node, for the walks over final plans
// (release_once.h, release_replay.h, pinned_settings.h): one list of where
// PostgreSQL keeps them, so that a new kind of child is added once.
#ifndef DP_AGG_PG_PLAN_CHILDREN_H
#define DP_AGG_PG_PLAN_CHILDREN_H

#include "pg_includes.h"

namespace dp_pg {

// Returns the plan to keep in the child's place (the child itself, or one
// that replaces it).
using ChildPlanVisitor = Plan* (*)(Plan* child, void* context);

// Calls `visit` on every child of `plan`: its outer and inner plans and the
// plans of Append, MergeAppend, BitmapAnd, BitmapOr, SubqueryScan and
// CustomScan nodes (not the statement's subplans, which expressions call).
void VisitChildPlans(Plan* plan, ChildPlanVisitor visit, void* context);

// Calls `visit` on every plan of a list (such as a statement's subplans,
// whose entries may be NULL), keeping what it returns.
void VisitPlanList(List* plans, ChildPlanVisitor visit, void* context);

}  // namespace dp_pg

#endif  // DP_AGG_PG_PLAN_CHILDREN_H
