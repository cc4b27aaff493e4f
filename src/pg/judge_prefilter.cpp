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

// The quick form of Concerns for a query level (and every level below it)
// without aggregates, window functions and sublinks, the common case (issue
// 31): an Aggref or a WindowFunc belongs to a level with hasAggs or
// hasWindowFuncs (one of an outer level lies in a sublink, and the level
// holding the sublink has hasSubLinks), and every query below a level is a
// sublink's, a WITH query or a subquery in its range table. Only the range
// table and the WITH queries are then read; any other level is walked in
// full.
bool LevelConcerns(Query* query) {
  if (query->hasAggs || query->hasWindowFuncs || query->hasSubLinks)
    return Concerns(reinterpret_cast<Node*>(query), nullptr);
  ListCell* cell;
  foreach (cell, query->rtable) {
    const auto* entry = static_cast<RangeTblEntry*>(lfirst(cell));
    if (entry->rtekind == RTE_SUBQUERY) {
      if (LevelConcerns(entry->subquery)) return true;
    } else if (entry->rtekind == RTE_RELATION) {
      if (Concerns(reinterpret_cast<Node*>(const_cast<RangeTblEntry*>(entry)), nullptr))
        return true;
    } else if (entry->rtekind != RTE_JOIN && entry->rtekind != RTE_CTE &&
               entry->rtekind != RTE_NAMEDTUPLESTORE && entry->rtekind != RTE_RESULT) {
      // Functions, VALUES, table functions: the level is walked in full.
      return Concerns(reinterpret_cast<Node*>(query), nullptr);
    }
  }
  foreach (cell, query->cteList) {
    auto* cte = static_cast<CommonTableExpr*>(lfirst(cell));
    if (LevelConcerns(castNode(Query, cte->ctequery))) return true;
  }
  return false;
}

}  // namespace

bool QueryMayConcernDpAgg(Query* query) {
  // A table may inherit a privacy unit column (protected_tables.h): then
  // every query is judged, as before this test.
  if (AnyUnitTableWithChildren()) return true;
  return LevelConcerns(query);
}

}  // namespace dp_pg
