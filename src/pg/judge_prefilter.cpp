// The planner hook's quick test (see judge_prefilter.h).
#include "judge_prefilter.h"

extern "C" {
#include "access/transam.h"
#include "nodes/nodeFuncs.h"
}

#include "label_cache.h"
#include "restriction.h"

namespace dp_pg {

namespace {

bool Concerns(Node* node, void* context) {
  if (node == nullptr) return false;
  if (IsA(node, Query))
    return query_tree_walker(reinterpret_cast<Query*>(node), DP_EXPRESSION_WALKER(Concerns),
                             context, QTW_EXAMINE_RTES_BEFORE);
  if (IsA(node, RangeTblEntry)) {
    const auto* entry = reinterpret_cast<RangeTblEntry*>(node);
    if (entry->rtekind != RTE_RELATION) return false;  // subqueries: walked as Query
    return IsProtectedRelation(entry->relid, entry->inh) ||
           LabelledPrivacyUnitColumn(entry->relid) != InvalidAttrNumber;
  }
  if (IsA(node, Aggref) && reinterpret_cast<Aggref*>(node)->aggfnoid >= FirstNormalObjectId)
    return true;
  if (IsA(node, WindowFunc) && reinterpret_cast<WindowFunc*>(node)->winfnoid >= FirstNormalObjectId)
    return true;
  return expression_tree_walker(node, DP_EXPRESSION_WALKER(Concerns), context);
}

}  // namespace

bool QueryMayConcernDpAgg(Query* query) {
  // A table may inherit a privacy unit column (protected_tables.h): then
  // every query is judged, as before this test.
  if (AnyUnitTableWithChildren()) return true;
  return Concerns(reinterpret_cast<Node*>(query), nullptr);
}

}  // namespace dp_pg
