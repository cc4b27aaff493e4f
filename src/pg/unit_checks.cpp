// The checks of a private aggregation level over privacy units (unit_rewrite.h):
// which levels read a table, a subquery or a WITH query with a unit column,
// and what such a level may contain (CheckUnitLevel), before the rewrite of
// unit_rewrite.cpp.
#include "unit_level.h"
#include "unit_rewrite.h"

extern "C" {
#include "catalog/namespace.h"
#include "nodes/makefuncs.h"
#include "optimizer/optimizer.h"
#include "parser/parse_coerce.h"
#include "parser/parse_func.h"
#include "parser/parse_oper.h"
#include "parser/parsetree.h"
#include "rewrite/rewriteManip.h"
#include "utils/fmgroids.h"
#include "windowapi.h"
}

#include <cstdint>

#include "aggregate_catalog.h"
#include "../core/random_source.h"
#include "error_boundary.h"
#include "restriction.h"
#include "settings.h"

namespace dp_pg {

namespace unit_level {

[[noreturn]] void RefuseUnitLevel(const char* message, const char* detail) {
  ereport(ERROR,
          (errcode(ERRCODE_FEATURE_NOT_SUPPORTED), errmsg("%s", message), errdetail("%s", detail),
           errhint("See README \"Privacy units\" for what is supported.")));
  pg_unreachable();
}

UnitCombination UnitCombinationOf(Aggref* aggref) {
  const AggregateCacheEntry* entry = LookupAggregate(aggref->aggfnoid);
  if (entry->kind == nullptr || entry->layout == nullptr) return UnitCombination::kUnsupported;
  switch (entry->kind->family) {
    case Family::kStatistic:
      // The *_interval forms too: their interval is computed from the noise
      // of the release they make (at epsilon / m), whatever its input.
      if (entry->final_kind == FinalKind::kCount) return UnitCombination::kCount;
      if (entry->final_kind == FinalKind::kSum) return UnitCombination::kSum;
      if (entry->final_kind == FinalKind::kMean) return UnitCombination::kMean;
      return UnitCombination::kUnsupported;
    case Family::kQuantile:
      return UnitCombination::kQuantile;
    case Family::kVariance:
      // The variance of the units' means (each unit one value, as for the mean).
      return UnitCombination::kMean;
    case Family::kSelection:
      // The weighted form would need a per-unit weight bound of its own.
      return entry->layout->per_row == 1 ? UnitCombination::kVote : UnitCombination::kUnsupported;
    case Family::kGroupSelection:
      // dp_agg.group_selection written in HAVING, as the one the judge adds
      // for restricted roles (query_rewrites.cpp AddGroupSelection): the
      // number of units kept in the group decides, at epsilon / m.
      return UnitCombination::kUnitRows;
  }
  return UnitCombination::kUnsupported;
}

Expr* ArgumentAt(Aggref* aggref, int position) {
  return static_cast<TargetEntry*>(list_nth(aggref->args, position))->expr;
}

List* GroupKeyExpressions(Query* query) {
  List* keys = NIL;
  ListCell* cell;
  foreach (cell, query->groupClause) {
    auto* clause = static_cast<SortGroupClause*>(lfirst(cell));
    keys = lappend(keys, get_sortgroupclause_tle(clause, query->targetList)->expr);
  }
  return keys;
}

int KeyPosition(const LevelShape& shape, Node* node) {
  int position = 0;
  ListCell* cell;
  foreach (cell, shape.keys) {
    if (equal(node, lfirst(cell))) return position;
    ++position;
  }
  return -1;
}

// Privacy units through a subquery in FROM (UnitSubquery): the unit is
// carried out of the subquery as an extra output column that the analyst's
// query cannot name (it is added after parsing) and bounded at the level
// that calls the private aggregates, exactly as for the table itself. This
// is sound because a plain projection and filter maps each row of the table
// to at most one output row of the same unit: the level then sees a subset
// of the unit's rows, each carrying its unit.

struct UnitVarSearch {
  Index item;
  AttrNumber column;
};

bool ContainsUnitVar(Node* node, UnitVarSearch* search) {
  if (node == nullptr) return false;
  if (IsA(node, Var)) {
    const auto* var = reinterpret_cast<Var*>(node);
    return var->varlevelsup == 0 && var->varno == static_cast<int>(search->item) &&
           var->varattno == search->column;
  }
  return expression_tree_walker(node, DP_EXPRESSION_WALKER(ContainsUnitVar), search);
}

// Fills the subquery's output columns computed from its unit (join alias
// variables flattened first), and those that are the unit itself.
void DescribeSubqueryColumns(Query* subquery, Index inner_item, AttrNumber inner_column,
                             LevelShape* shape) {
  UnitVarSearch search{inner_item, inner_column};
  AttrNumber attno = 0;
  ListCell* cell;
  foreach (cell, subquery->targetList) {
    auto* entry = static_cast<TargetEntry*>(lfirst(cell));
    ++attno;
    Node* expression =
        flatten_join_alias_vars(subquery, reinterpret_cast<Node*>(copyObjectImpl(entry->expr)));
    if (ContainsUnitVar(expression, &search))
      shape->unit_derived = bms_add_member(shape->unit_derived, attno);
    while (IsA(expression, RelabelType))
      expression = reinterpret_cast<Node*>(reinterpret_cast<RelabelType*>(expression)->arg);
    if (ContainsUnitVar(expression, &search) && IsA(expression, Var))
      shape->unit_itself = bms_add_member(shape->unit_itself, attno);
  }
}

}  // namespace unit_level

using namespace unit_level;

namespace {

// Whether the column `attno` of the level's unit item is (derived from) the
// unit.
bool IsUnitDerivedColumn(const LevelShape* shape, AttrNumber attno) {
  if (shape->column != InvalidAttrNumber) return attno == shape->column;
  return bms_is_member(attno, shape->unit_derived);
}

bool ReferencesUnit(Node* node, LevelShape* shape) {
  if (node == nullptr) return false;
  if (IsA(node, Var)) {
    const auto* var = reinterpret_cast<Var*>(node);
    // A whole-row reference (attno 0) holds the unit too.
    return var->varlevelsup == 0 && var->varno == static_cast<int>(shape->item) &&
           (var->varattno == InvalidAttrNumber || IsUnitDerivedColumn(shape, var->varattno));
  }
  return expression_tree_walker(node, DP_EXPRESSION_WALKER(ReferencesUnit), shape);
}

// Whether `node` is the unit column itself (under a binary-compatible
// relabelling), as in dp_count(DISTINCT patient_id, e).
bool IsUnitColumn(Node* node, const LevelShape* shape) {
  while (node != nullptr && IsA(node, RelabelType))
    node = reinterpret_cast<Node*>(reinterpret_cast<RelabelType*>(node)->arg);
  if (node == nullptr || !IsA(node, Var)) return false;
  const auto* var = reinterpret_cast<Var*>(node);
  if (var->varlevelsup != 0 || var->varno != static_cast<int>(shape->item)) return false;
  if (shape->column != InvalidAttrNumber) return var->varattno == shape->column;
  return bms_is_member(var->varattno, shape->unit_itself);
}

// DISTINCT at unit level: only dp_count(DISTINCT unit, e), which counts the
// units with a (non-NULL) row in the group, as dp_count(unit, e) does after
// the per-unit combination. A distinct count of any other column would
// change by the number of distinct values one unit alone has there, which
// nothing bounds (BigQuery offers no DISTINCT in its DP aggregates either).
void CheckUnitDistinct(Aggref* aggref, LevelShape* shape) {
  if (aggref->aggorder != NIL)
    RefuseUnitLevel("ORDER BY inside a private aggregate over privacy units is not supported",
                    "A private aggregate's answer does not depend on the order of its rows.");
  if (aggref->aggdistinct == NIL) return;
  if (UnitCombinationOf(aggref) == UnitCombination::kCount &&
      IsUnitColumn(reinterpret_cast<Node*>(ArgumentAt(aggref, 0)), shape))
    return;
  RefuseUnitLevel(
      "DISTINCT inside a private aggregate over privacy units is supported only as "
      "dp_count(DISTINCT unit_column, epsilon)",
      "A distinct count of another column changes by the number of distinct values one "
      "unit alone has in a group, which nothing bounds. dp_count(DISTINCT unit_column, "
      "epsilon) and dp_count(1, epsilon) count units; to count distinct values of another "
      "column, label a table whose unit is that column.");
}

// A private aggregate's arguments other than the aggregated value (epsilon,
// delta, bounds, fraction, candidates; both arguments of group selection)
// and group selection's FILTER stay in the outer level, which reads the
// per-unit rows, not the table: they may not read the table's columns (a
// Var of the table there would name a column of the per-unit level).
void CheckParametersStayOuter(Aggref* aggref, UnitCombination combination) {
  const bool whole_call = combination == UnitCombination::kUnitRows;
  if (whole_call && aggref->aggfilter != nullptr)
    RefuseUnitLevel(
        "FILTER on group selection is not supported over a table with a privacy "
        "unit column",
        "Over privacy units group selection counts the units kept in each group; "
        "put the condition into WHERE.");
  int position = 0;
  ListCell* cell;
  foreach (cell, aggref->args) {
    const auto* argument = static_cast<TargetEntry*>(lfirst(cell));
    if ((whole_call || position > 0) &&
        contain_vars_of_level(reinterpret_cast<Node*>(argument->expr), 0))
      RefuseUnitLevel(
          "the parameters of a private aggregate over a table with a privacy unit "
          "column must not depend on its rows",
          "Over privacy units only the aggregated value is read per row; epsilon, "
          "delta, bounds and the other parameters are constants of the query.");
    ++position;
  }
}

// The select list and HAVING outside aggregates: only group keys, and the
// private aggregates the rewrite knows how to combine per unit.
bool CheckOuterExpression(Node* node, LevelShape* shape) {
  if (node == nullptr) return false;
  if (KeyPosition(*shape, node) >= 0) return false;
  if (IsA(node, Aggref)) {
    auto* aggref = reinterpret_cast<Aggref*>(node);
    if (aggref->agglevelsup != 0) return false;
    if (LookupPrivateAggregate(aggref->aggfnoid) == nullptr) {
      char message[256];
      snprintf(message, sizeof message, "%s cannot be used over a table with a privacy unit column",
               AggregateName(aggref->aggfnoid));
      RefuseUnitLevel(message,
                      "Only differentially private aggregates may aggregate a table "
                      "whose rows are grouped into privacy units.");
    }
    const UnitCombination combination = UnitCombinationOf(aggref);
    if (combination == UnitCombination::kUnsupported) {
      char message[256];
      snprintf(message, sizeof message,
               "%s is not supported over a table with a privacy unit column",
               AggregateName(aggref->aggfnoid));
      RefuseUnitLevel(message,
                      "Over privacy units dp_agg supports dp_count, dp_sum, dp_avg (and "
                      "their _interval forms), dp_median, dp_percentile and the unweighted "
                      "dp_select; any other aggregate would be released at row level, "
                      "protecting a person with many rows less than claimed.");
    }
    CheckUnitDistinct(aggref, shape);
    CheckParametersStayOuter(aggref, combination);
    return false;
  }
  if (IsA(node, Var) && reinterpret_cast<Var*>(node)->varlevelsup == 0)
    RefuseUnitLevel("a column outside the aggregates is not a group key",
                    "Over privacy units every column in the select list or HAVING must be "
                    "written exactly as one of the GROUP BY expressions.");
  if (IsA(node, SubLink) || IsA(node, Query))
    RefuseUnitLevel(
        "subqueries in a private aggregation level over privacy units are not "
        "supported",
        "The level is rewritten into a per-unit level and a private level.");
  return expression_tree_walker(node, DP_EXPRESSION_WALKER(CheckOuterExpression), shape);
}

bool HasOuterJoin(Node* node) {
  if (node == nullptr) return false;
  if (IsA(node, JoinExpr)) {
    auto* join = reinterpret_cast<JoinExpr*>(node);
    if (join->jointype != JOIN_INNER) return true;
    return HasOuterJoin(join->larg) || HasOuterJoin(join->rarg);
  }
  if (IsA(node, FromExpr)) {
    ListCell* cell;
    foreach (cell, reinterpret_cast<FromExpr*>(node)->fromlist)
      if (HasOuterJoin(static_cast<Node*>(lfirst(cell)))) return true;
  }
  return false;
}

}  // namespace

bool UnitSubquery(const Query* subquery, Index* inner_item, AttrNumber* inner_column) {
  if (subquery->commandType != CMD_SELECT || subquery->setOperations != nullptr ||
      subquery->hasAggs || subquery->groupClause != NIL || subquery->groupingSets != NIL ||
      subquery->havingQual != nullptr || subquery->hasWindowFuncs || subquery->hasTargetSRFs ||
      subquery->hasSubLinks || subquery->hasRecursive || subquery->hasModifyingCTE ||
      subquery->hasForUpdate || subquery->rowMarks != NIL || subquery->distinctClause != NIL ||
      subquery->limitCount != nullptr || subquery->limitOffset != nullptr ||
      subquery->cteList != NIL || subquery->sortClause != NIL)
    return false;
  if (HasOuterJoin(reinterpret_cast<Node*>(subquery->jointree))) return false;
  if (contain_volatile_functions(reinterpret_cast<Node*>(const_cast<Query*>(subquery))))
    return false;
  ListCell* cell;
  foreach (cell, subquery->targetList) {
    if (static_cast<TargetEntry*>(lfirst(cell))->resjunk) return false;
  }
  Index found = 0;
  AttrNumber found_column = InvalidAttrNumber;
  Index index = 0;
  foreach (cell, subquery->rtable) {
    ++index;
    const auto* entry = static_cast<RangeTblEntry*>(lfirst(cell));
    if (entry->rtekind == RTE_JOIN) continue;
    // Tables only (public ones joined on their key, judged as for any row
    // level); a function, VALUES, subquery or WITH query is not analysed.
    if (entry->rtekind != RTE_RELATION || entry->tablesample != nullptr) return false;
    const AttrNumber column = UnitColumnOfItem(subquery, index);
    if (column == InvalidAttrNumber) continue;
    if (found != 0) return false;
    found = index;
    found_column = column;
  }
  if (found == 0) return false;
  *inner_item = found;
  *inner_column = found_column;
  return true;
}

CommonTableExpr* UnitWithQuery(const Query* level, const RangeTblEntry* entry) {
  if (entry->rtekind != RTE_CTE || entry->ctelevelsup != 0 || entry->self_reference) return nullptr;
  ListCell* cell;
  foreach (cell, level->cteList) {
    auto* cte = static_cast<CommonTableExpr*>(lfirst(cell));
    if (strcmp(cte->ctename, entry->ctename) != 0) continue;
    Index inner_item = 0;
    AttrNumber inner_column = InvalidAttrNumber;
    if (cte->cterecursive || cte->cterefcount != 1 || !IsA(cte->ctequery, Query) ||
        !UnitSubquery(reinterpret_cast<Query*>(cte->ctequery), &inner_item, &inner_column))
      return nullptr;
    return cte;
  }
  return nullptr;
}

AttrNumber UnitColumnOfItem(const Query* query, Index item) {
  const auto* entry = static_cast<RangeTblEntry*>(list_nth(query->rtable, item - 1));
  if (entry->rtekind != RTE_RELATION) return InvalidAttrNumber;
  return PrivacyUnitColumn(entry->relid);
}

void CheckUnitLevel(Query* query, Index item, AttrNumber column) {
  LevelShape shape{GroupKeyExpressions(query), item, column};
  RangeTblEntry* unit_entry = rt_fetch(item, query->rtable);
  Query* source = nullptr;
  if (unit_entry->rtekind == RTE_SUBQUERY) source = unit_entry->subquery;
  if (unit_entry->rtekind == RTE_CTE) {
    CommonTableExpr* cte = UnitWithQuery(query, unit_entry);
    if (cte == nullptr) elog(ERROR, "dp_agg: not a unit WITH query");
    source = reinterpret_cast<Query*>(cte->ctequery);
  }
  if (source != nullptr) {
    Index inner_item = 0;
    AttrNumber inner_column = InvalidAttrNumber;
    if (!UnitSubquery(source, &inner_item, &inner_column))
      elog(ERROR, "dp_agg: not a unit subquery");
    shape.column = InvalidAttrNumber;
    DescribeSubqueryColumns(source, inner_item, inner_column, &shape);
  }
  if (HasOuterJoin(reinterpret_cast<Node*>(query->jointree)))
    RefuseUnitLevel(
        "outer joins in a private aggregation level over privacy units are not "
        "supported",
        "NULL-extended rows would form one pseudo-unit whose sampled groups "
        "depend on which rows are unmatched.");
  if (query->groupingSets != NIL)
    RefuseUnitLevel("GROUPING SETS over privacy units are not supported",
                    "Each grouping set would need its own bound on a unit's groups.");
  if (query->hasWindowFuncs || query->hasTargetSRFs || query->hasSubLinks)
    RefuseUnitLevel(
        "window functions, set-returning functions and subqueries in a private "
        "aggregation level over privacy units are not supported",
        "The level is rewritten into a per-unit level and a private level.");
  ListCell* cell;
  foreach (cell, shape.keys) {
    // Join alias variables flattened: a USING column of a join is the
    // column of one of its sides.
    Node* key = flatten_join_alias_vars(query, static_cast<Node*>(copyObjectImpl(lfirst(cell))));
    if (ReferencesUnit(key, &shape))
      RefuseUnitLevel("the privacy unit column cannot be a group key",
                      "Grouping by the unit would release one answer per person.");
  }
  foreach (cell, query->targetList) {
    auto* entry = static_cast<TargetEntry*>(lfirst(cell));
    CheckOuterExpression(reinterpret_cast<Node*>(entry->expr), &shape);
  }
  CheckOuterExpression(query->havingQual, &shape);
}

}  // namespace dp_pg
