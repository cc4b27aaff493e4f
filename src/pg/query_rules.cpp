// The planner hook: judges every query that reads a protected table before it
// is planned.
//
// Every query level is classified by what it returns:
//   public          touches no protected row, or only through private
//                   aggregates (their answers are differentially private);
//   protected rows  returns values of protected rows, one output row per
//                   protected row at most.
// A level that reads protected rows must be either
//   * a row level: filters and projections of one protected source, joined
//     to public tables on a unique key of theirs; its output may only feed
//     another such level or an aggregation level; or
//   * an aggregation level: only dp_agg's private aggregates over the same
//     kind of input, grouped by keys that are released only if DP partition
//     selection lets their group through (partition_selection.h).
// For restricted roles everything evaluated on protected rows must be total
// (allow_list.h: it returns a value for every input and never raises; being
// LEAKPROOF in pg_proc is not enough), released group keys must print the
// same for every row of their group, released rows are ordered by their
// keys, and protected rows may never reach the client.
// A query that passes is given access to the protected tables as their owner
// (RangeTblEntry.checkAsUser, as for a view); nothing else is.
//
// Unrestricted roles keep their privileges; for them only the sensitivity
// rules of private aggregation levels over protected tables apply (one
// protected source, public tables joined on a unique key), which is what
// lets call_sites.cpp accept those joins.
#include "query_rules.h"

extern "C" {
#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "catalog/pg_language.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_index.h"
#include "catalog/pg_inherits.h"
#include "catalog/pg_am.h"
#include "catalog/pg_namespace.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "parser/parse_clause.h"
#include "parser/parse_oper.h"
#include "optimizer/cost.h"
#include "optimizer/planner.h"
#include "parser/parse_func.h"
#include "parser/parsetree.h"
#include "rewrite/rewriteManip.h"
#include "utils/regproc.h"
#include "utils/rel.h"
#include "utils/typcache.h"
}

#include <cstring>

#include "../core/parameters.h"
#include "allow_list.h"
#include "call_sites.h"
#include "error_boundary.h"
#include "release_once.h"
#include "restriction.h"
#include "settings.h"

namespace dp_pg {

namespace {

// One query level and the classification of its WITH queries.
struct Level {
  Query* query;
  const Level* parent;
  bool* cte_protected;  // by position in query->cteList
};

struct Judgement {
  bool restricted;         // the rules for restricted roles apply
  bool reads_protected;    // some level reads a protected table
  List* protected_entries; // RangeTblEntry* of protected tables, to be granted
};

[[noreturn]] void Refuse(int code, const char* rule, const char* detail, const char* hint) {
  ereport(ERROR, (errcode(code), errmsg("dp_agg: %s", rule), errdetail("%s", detail),
                  errhint("%s", hint)));
  pg_unreachable();
}

constexpr const char* kAggregateHint =
    "Restricted roles see protected tables only through dp_agg's private aggregates "
    "(dp_count, dp_sum, dp_avg, dp_percentile, dp_select, ...); transform their answers in an "
    "outer query.";

constexpr const char* kTotalHint =
    "On protected rows use comparisons of integers, floats, numerics, text (with one "
    "deterministic collation), dates and timestamps, AND/OR/NOT, CASE, COALESCE, IS NULL and "
    "widening casts; compute anything else from the released answers in an outer query.";

constexpr const char* kJoinHint =
    "Join a protected table only to public tables, on equality with every column of a unique "
    "index or primary key of the public table, so that each protected row meets at most one "
    "row of each; aggregate first and join the answers otherwise.";

// ---------------------------------------------------------------------------
// Expressions evaluated for protected rows.
// ---------------------------------------------------------------------------

struct RowCheck {
  const char* place;  // "WHERE", "GROUP BY", ... for messages
  bool having;        // HAVING: aggregates are leaves
  bool gated;         // groups may be suppressed after HAVING runs
};

bool ContainsVarOutsideAggregates(Node* node, void* context) {
  if (node == nullptr) return false;
  if (IsA(node, Var)) return true;
  if (IsA(node, Aggref)) return false;
  return expression_tree_walker(node, DP_EXPRESSION_WALKER(ContainsVarOutsideAggregates),
                                context);
}

[[noreturn]] void RefuseFunction(Oid function, const RowCheck* check) {
  char detail[512];
  snprintf(detail, sizeof detail,
           "It would run for protected rows in %s, and it is not on dp_agg's list of total "
           "functions (functions that return a value for every input and never raise an "
           "error): an error that happens only for some rows reveals them.",
           check->place);
  char rule[256];
  snprintf(rule, sizeof rule, "function %s may not be applied to protected rows",
           format_procedure(function));
  Refuse(ERRCODE_INSUFFICIENT_PRIVILEGE, rule, detail, kTotalHint);
}

[[noreturn]] void RefuseCollation(Oid function, const RowCheck* check) {
  char detail[512];
  snprintf(detail, sizeof detail,
           "It compares text in %s without a determined, deterministic collation (two "
           "different implicit collations meet, or the collation is nondeterministic), so it "
           "could fail, or compare loosely, for the rows that reach it.",
           check->place);
  char rule[256];
  snprintf(rule, sizeof rule, "%s over protected rows needs one deterministic collation",
           format_procedure(function));
  Refuse(ERRCODE_INDETERMINATE_COLLATION, rule, detail,
         "Add an explicit COLLATE \"C\" (or another deterministic collation) to one side of "
         "the comparison.");
}

bool ContainsVarOrParam(Node* node, void* context) {
  if (node == nullptr) return false;
  if (IsA(node, Var) || IsA(node, Param)) return true;
  return expression_tree_walker(node, DP_EXPRESSION_WALKER(ContainsVarOrParam), context);
}

bool NeedsCollation(List* arguments) {
  ListCell* cell;
  foreach (cell, arguments) {
    if (type_is_collatable(exprType(static_cast<Node*>(lfirst(cell))))) return true;
  }
  return false;
}

// A call that remains in the expression after constant folding runs at
// execution, for the rows that reach it: its function must be total, and a
// collation-sensitive call needs a determined, deterministic collation.
void CheckCall(Oid function, List* arguments, Oid input_collation, Node* call,
               const RowCheck* check) {
  // In HAVING of a level whose groups are all released, a function of
  // aggregate answers runs once per released group: post-processing.
  if (check->having && !check->gated && contain_agg_clause(call) &&
      !ContainsVarOutsideAggregates(call, nullptr))
    return;
  // Test fault: the old rule that took a simple CASE's test value for a
  // constant folded at planning.
  if (TestFaultIs(TestFault::kCaseTestConstant) && !ContainsVarOrParam(call, nullptr)) return;
  if (!IsTotalFunction(function)) RefuseFunction(function, check);
  if (!TestFaultIs(TestFault::kIndeterminateCollation) &&
      !CollationIsTotal(NeedsCollation(arguments), input_collation))
    RefuseCollation(function, check);
}

[[noreturn]] void RefuseExpression(Node* node, const RowCheck* check) {
  char detail[512];
  snprintf(detail, sizeof detail,
           "It would run for protected rows in %s. %s", check->place,
           IsA(node, CoerceViaIO) || IsA(node, ArrayCoerceExpr) || IsA(node, CoerceToDomain)
               ? "A cast through text, an array cast or a domain check can fail on some "
                 "values, which would reveal them."
               : "dp_agg accepts only expressions that it knows cannot fail (comparisons, "
                 "AND/OR/NOT, CASE, COALESCE, IS NULL, widening casts) and refuses any other "
                 "kind.");
  Refuse(ERRCODE_INSUFFICIENT_PRIVILEGE, "expression not allowed on protected rows", detail,
         kTotalHint);
}

// Walks an expression after constant folding. Every node left is evaluated
// at execution, possibly only for the rows that reach it (CASE, FILTER,
// AND), so every node must be unable to fail: default deny.
bool CheckRowWalker(Node* node, RowCheck* check) {
  if (node == nullptr) return false;
  check_stack_depth();
  switch (nodeTag(node)) {
    case T_Var:
      if (reinterpret_cast<Var*>(node)->varlevelsup > 0)
        Refuse(ERRCODE_INSUFFICIENT_PRIVILEGE, "a query over protected rows refers to an outer query",
               "A correlated subquery or LATERAL reference would run once per outer row.",
               kAggregateHint);
      return false;
    case T_Const:
    case T_CaseTestExpr:  // the value of a simple CASE: a leaf; its comparisons are calls
    case T_SQLValueFunction:
      return false;
    case T_Param:
      if (reinterpret_cast<Param*>(node)->paramkind != PARAM_EXTERN)
        Refuse(ERRCODE_INSUFFICIENT_PRIVILEGE,
               "a query over protected rows uses a value computed by another query",
               "Subquery results may depend on other rows.", kAggregateHint);
      return false;
    case T_Aggref:
      if (!check->having)
        Refuse(ERRCODE_INSUFFICIENT_PRIVILEGE, "aggregate in a row expression",
               "An aggregate cannot appear here.", kAggregateHint);
      return false;  // its arguments are checked with the aggregate itself
    case T_FuncExpr: {
      auto* call = reinterpret_cast<FuncExpr*>(node);
      if (call->funcretset)
        Refuse(ERRCODE_INSUFFICIENT_PRIVILEGE, "set-returning function over protected rows",
               "It would repeat protected rows.", kAggregateHint);
      CheckCall(call->funcid, call->args, call->inputcollid, node, check);
      break;
    }
    case T_OpExpr:
    case T_DistinctExpr:
    case T_NullIfExpr: {
      auto* operation = reinterpret_cast<OpExpr*>(node);
      set_opfuncid(operation);
      if (operation->opretset)
        Refuse(ERRCODE_INSUFFICIENT_PRIVILEGE, "set-returning operator over protected rows",
               "It would repeat protected rows.", kAggregateHint);
      CheckCall(operation->opfuncid, operation->args, operation->inputcollid, node, check);
      break;
    }
    case T_ScalarArrayOpExpr: {
      auto* operation = reinterpret_cast<ScalarArrayOpExpr*>(node);
      set_sa_opfuncid(operation);
      // The array side is folded to a constant or is a parameter; the
      // operator runs per element with the same collation.
      CheckCall(operation->opfuncid, list_make1(linitial(operation->args)),
                operation->inputcollid, node, check);
      break;
    }
    case T_RowCompareExpr: {
      auto* comparison = reinterpret_cast<RowCompareExpr*>(node);
      ListCell* op_cell;
      ListCell* collation_cell;
      ListCell* left_cell;
      forthree (op_cell, comparison->opnos, collation_cell, comparison->inputcollids, left_cell,
                comparison->largs)
        CheckCall(get_opcode(lfirst_oid(op_cell)), list_make1(lfirst(left_cell)),
                  lfirst_oid(collation_cell), node, check);
      break;
    }
    case T_BoolExpr:
    case T_NullTest:
    case T_BooleanTest:
    case T_RelabelType:
    case T_CollateExpr:
    case T_CaseExpr:
    case T_CaseWhen:
    case T_CoalesceExpr:
    case T_List:
    case T_TargetEntry:
      break;
    default:
      // Casts through text, domain checks, arrays built from rows (which
      // can exceed the size limit), GREATEST/LEAST, subscripts and anything
      // else not analysed here. Constants were folded before this walk.
      RefuseExpression(node, check);
  }
  return expression_tree_walker(node, DP_EXPRESSION_WALKER(CheckRowWalker), check);
}

// Judges `expression` as PostgreSQL will run it: constant sub-expressions
// folded first, exactly as the planner folds them (an error such as 1/0 is
// then raised while planning, whatever the data). Query parameters are not
// folded: a generic plan evaluates them per row.
void CheckRowExpression(Node* expression, const char* place, bool having = false,
                        bool gated = false) {
  if (expression == nullptr) return;
  Node* folded = eval_const_expressions(nullptr, static_cast<Node*>(copyObjectImpl(expression)));
  RowCheck check{place, having, gated};
  CheckRowWalker(folded, &check);
}

// ---------------------------------------------------------------------------
// Catalog channels: statistics about protected tables that PostgreSQL shows
// to everyone. Restricted roles may not read them at all.
// ---------------------------------------------------------------------------

bool IsStatisticsFunction(Oid function) {
  const char* name = get_func_name(function);
  if (name == nullptr) return false;
  // Activity statistics in any schema (pg_stat_statements and the like).
  if (strncmp(name, "pg_stat_", 8) == 0) return true;
  if (function >= FirstNormalObjectId || get_func_namespace(function) != PG_CATALOG_NAMESPACE)
    return false;
  static const char* const kSizeFunctions[] = {
      "pg_relation_size", "pg_table_size",      "pg_total_relation_size",
      "pg_indexes_size",  "pg_database_size",   "pg_tablespace_size"};
  for (const char* size_function : kSizeFunctions)
    if (strcmp(name, size_function) == 0) return true;
  return strncmp(name, "pg_stat_", 8) == 0;
}

bool CheckCatalogFunctions(Node* node, void* context) {
  if (node == nullptr) return false;
  if (IsA(node, Query)) return false;  // sublinks are judged as levels of their own
  Oid function = InvalidOid;
  if (IsA(node, FuncExpr)) function = reinterpret_cast<FuncExpr*>(node)->funcid;
  if (IsA(node, OpExpr)) {
    set_opfuncid(reinterpret_cast<OpExpr*>(node));
    function = reinterpret_cast<OpExpr*>(node)->opfuncid;
  }
  // set_config() is SET by another name.
  if (IsA(node, FuncExpr) && function < FirstNormalObjectId &&
      get_func_namespace(function) == PG_CATALOG_NAMESPACE &&
      strcmp(get_func_name(function), "set_config") == 0) {
    Node* name = static_cast<Node*>(linitial(reinterpret_cast<FuncExpr*>(node)->args));
    if (!IsA(name, Const) || reinterpret_cast<Const*>(name)->constisnull ||
        !IsAnalystSetting(TextDatumGetCString(reinterpret_cast<Const*>(name)->constvalue)))
      Refuse(ERRCODE_INSUFFICIENT_PRIVILEGE, "restricted roles may not change this setting",
             "Planner, debugging and dp_agg's own settings show or change how protected rows "
             "are read.",
             "Only client settings and dp_agg.group_selection_epsilon/_delta may be changed, "
             "named by a constant.");
  }
  if (OidIsValid(function) && IsStatisticsFunction(function)) {
    char rule[256];
    snprintf(rule, sizeof rule, "restricted roles may not call %s", get_func_name(function));
    Refuse(ERRCODE_INSUFFICIENT_PRIVILEGE, rule,
           "Table sizes and activity statistics reveal how many rows a table holds.",
           "Estimate row counts with dp_count.");
  }
  return expression_tree_walker(node, DP_EXPRESSION_WALKER(CheckCatalogFunctions), context);
}

// By name, in any schema: extensions such as pg_stat_statements put their
// views elsewhere.
bool IsStatisticsRelation(Oid relation) {
  const char* name = get_rel_name(relation);
  if (name == nullptr) return false;
  return strcmp(name, "pg_statistic") == 0 || strcmp(name, "pg_statistic_ext_data") == 0 ||
         strcmp(name, "pg_stats") == 0 || strcmp(name, "pg_stats_ext") == 0 ||
         strcmp(name, "pg_stats_ext_exprs") == 0 || strncmp(name, "pg_stat_", 8) == 0 ||
         strncmp(name, "pg_statio_", 10) == 0;
}

bool SelectsColumn(const RangeTblEntry* entry, AttrNumber column) {
  return bms_is_member(column - FirstLowInvalidHeapAttributeNumber, entry->selectedCols) ||
         bms_is_member(0 - FirstLowInvalidHeapAttributeNumber, entry->selectedCols);
}

void CheckCatalogAccess(Query* query) {
  ListCell* cell;
  foreach (cell, query->rtable) {
    const auto* entry = static_cast<RangeTblEntry*>(lfirst(cell));
    if (entry->rtekind != RTE_RELATION) continue;
    if (IsStatisticsRelation(entry->relid)) {
      char rule[256];
      snprintf(rule, sizeof rule, "restricted roles may not read %s", get_rel_name(entry->relid));
      Refuse(ERRCODE_INSUFFICIENT_PRIVILEGE, rule,
             "Planner statistics and activity counters describe the data of protected tables.",
             "Estimate what you need with dp_agg's private aggregates.");
    }
    if (entry->relid == RelationRelationId &&
        (SelectsColumn(entry, Anum_pg_class_reltuples) ||
         SelectsColumn(entry, Anum_pg_class_relpages) ||
         SelectsColumn(entry, Anum_pg_class_relallvisible)))
      Refuse(ERRCODE_INSUFFICIENT_PRIVILEGE,
             "restricted roles may not read pg_class.reltuples, relpages or relallvisible",
             "They estimate how many rows a table holds.",
             "Select the other columns of pg_class by name; estimate row counts with dp_count.");
  }
  query_tree_walker(query, DP_EXPRESSION_WALKER(CheckCatalogFunctions), nullptr,
                    QTW_IGNORE_RC_SUBQUERIES);
}

// ---------------------------------------------------------------------------
// The FROM clause of a level that reads protected rows.
// ---------------------------------------------------------------------------

// A copy of part of the query with join alias variables (USING columns,
// join output columns) replaced by the base columns behind them.
Node* FlatCopy(Query* query, const void* node) {
  return flatten_join_alias_vars(query, static_cast<Node*>(copyObjectImpl(node)));
}

bool CollectVarnos(Node* node, Bitmapset** varnos) {
  if (node == nullptr) return false;
  if (IsA(node, Var)) {
    const auto* var = reinterpret_cast<Var*>(node);
    if (var->varlevelsup == 0) *varnos = bms_add_member(*varnos, var->varno);
    return false;
  }
  return expression_tree_walker(node, DP_EXPRESSION_WALKER(CollectVarnos), varnos);
}

Bitmapset* VarnosOf(Node* node) {
  Bitmapset* varnos = nullptr;
  CollectVarnos(node, &varnos);
  return varnos;
}

// Range table indexes of the base items under a jointree node.
void CollectItems(Node* node, Bitmapset** items) {
  if (node == nullptr) return;
  if (IsA(node, RangeTblRef)) {
    *items = bms_add_member(*items, reinterpret_cast<RangeTblRef*>(node)->rtindex);
  } else if (IsA(node, JoinExpr)) {
    CollectItems(reinterpret_cast<JoinExpr*>(node)->larg, items);
    CollectItems(reinterpret_cast<JoinExpr*>(node)->rarg, items);
  } else if (IsA(node, FromExpr)) {
    ListCell* cell;
    foreach (cell, reinterpret_cast<FromExpr*>(node)->fromlist)
      CollectItems(static_cast<Node*>(lfirst(cell)), items);
  }
}

// The conditions of WHERE and of every JOIN ... ON under a jointree node.
void CollectConditions(Node* node, List** conditions) {
  if (node == nullptr) return;
  if (IsA(node, JoinExpr)) {
    auto* join = reinterpret_cast<JoinExpr*>(node);
    CollectConditions(join->larg, conditions);
    CollectConditions(join->rarg, conditions);
    if (join->quals != nullptr) *conditions = lappend(*conditions, join->quals);
  } else if (IsA(node, FromExpr)) {
    auto* from = reinterpret_cast<FromExpr*>(node);
    ListCell* cell;
    foreach (cell, from->fromlist) CollectConditions(static_cast<Node*>(lfirst(cell)), conditions);
    if (from->quals != nullptr) *conditions = lappend(*conditions, from->quals);
  }
}

// An equality that may pin down the row of a public table: where it holds.
struct Equality {
  OpExpr* expression;
  bool everywhere;           // WHERE, or the ON of an inner join
  Bitmapset* nullable_side;  // else: the nullable side of its outer join
};

struct FromAnalysis {
  Index protected_item = 0;
  bool protected_nullable = false;  // inside the nullable side of an outer join
  List* equalities = NIL;           // Equality*
};

void AddConjuncts(Query* query, Node* quals, bool everywhere, Bitmapset* nullable_side,
                  FromAnalysis* analysis) {
  if (quals == nullptr) return;
  Node* flat = FlatCopy(query, quals);
  List* conjuncts = make_ands_implicit(reinterpret_cast<Expr*>(flat));
  ListCell* cell;
  foreach (cell, conjuncts) {
    Node* conjunct = static_cast<Node*>(lfirst(cell));
    if (!IsA(conjunct, OpExpr) || list_length(reinterpret_cast<OpExpr*>(conjunct)->args) != 2)
      continue;
    auto* equality = static_cast<Equality*>(palloc0(sizeof(Equality)));
    equality->expression = reinterpret_cast<OpExpr*>(conjunct);
    equality->everywhere = everywhere;
    equality->nullable_side = nullable_side;
    analysis->equalities = lappend(analysis->equalities, equality);
  }
}

void AnalyzeJoinTree(Query* query, Node* node, FromAnalysis* analysis) {
  if (node == nullptr || IsA(node, RangeTblRef)) return;
  if (IsA(node, FromExpr)) {
    auto* from = reinterpret_cast<FromExpr*>(node);
    ListCell* cell;
    foreach (cell, from->fromlist) AnalyzeJoinTree(query, static_cast<Node*>(lfirst(cell)), analysis);
    AddConjuncts(query, from->quals, true, nullptr, analysis);
    return;
  }
  if (!IsA(node, JoinExpr)) return;
  auto* join = reinterpret_cast<JoinExpr*>(node);
  AnalyzeJoinTree(query, join->larg, analysis);
  AnalyzeJoinTree(query, join->rarg, analysis);
  Bitmapset* nullable = nullptr;
  switch (join->jointype) {
    case JOIN_INNER:
      AddConjuncts(query, join->quals, true, nullptr, analysis);
      return;
    case JOIN_LEFT:
      CollectItems(join->rarg, &nullable);
      break;
    case JOIN_RIGHT:
      CollectItems(join->larg, &nullable);
      break;
    default:
      Refuse(ERRCODE_FEATURE_NOT_SUPPORTED, "FULL JOIN with a protected table is not supported",
             "Its unmatched rows on both sides make the set of groups depend on both tables.",
             kJoinHint);
  }
  if (bms_is_member(analysis->protected_item, nullable)) analysis->protected_nullable = true;
  AddConjuncts(query, join->quals, false, nullable, analysis);
}

// The items of the preserved side when the whole FROM clause is one outer
// join whose nullable side holds the protected item; nullptr otherwise.
Bitmapset* PreservedSideOfTopOuterJoin(Query* query, Index protected_item) {
  FromExpr* from = query->jointree;
  if (list_length(from->fromlist) != 1 || !IsA(linitial(from->fromlist), JoinExpr)) return nullptr;
  auto* join = static_cast<JoinExpr*>(linitial(from->fromlist));
  Node* preserved_side;
  Node* nullable_side;
  if (join->jointype == JOIN_LEFT) {
    preserved_side = join->larg;
    nullable_side = join->rarg;
  } else if (join->jointype == JOIN_RIGHT) {
    preserved_side = join->rarg;
    nullable_side = join->larg;
  } else {
    return nullptr;
  }
  Bitmapset* nullable = nullptr;
  CollectItems(nullable_side, &nullable);
  if (!bms_is_member(static_cast<int>(protected_item), nullable)) return nullptr;
  Bitmapset* preserved = nullptr;
  CollectItems(preserved_side, &preserved);
  return preserved;
}

// Strips binary-compatible casts.
Node* StripRelabel(Node* node) {
  while (node != nullptr && IsA(node, RelabelType))
    node = reinterpret_cast<Node*>(reinterpret_cast<RelabelType*>(node)->arg);
  return node;
}

// Is there, for key column `column` (of item `item`, with btree operator
// family `family`), an equality column = expression with the expression's
// items all in `known`, holding wherever a row of `item` meets the
// protected row?
bool PinsColumn(const FromAnalysis& analysis, Index item, AttrNumber column, Oid family,
                const Bitmapset* known) {
  ListCell* cell;
  foreach (cell, analysis.equalities) {
    const auto* equality = static_cast<Equality*>(lfirst(cell));
    const bool holds = equality->everywhere || bms_is_member(item, equality->nullable_side) ||
                       bms_is_member(analysis.protected_item, equality->nullable_side);
    if (!holds) continue;
    OpExpr* expression = equality->expression;
    // A non-deterministic collation (case-insensitive, say) would let one
    // value equal several distinct keys of a unique index.
    if (OidIsValid(expression->inputcollid) &&
        !get_collation_isdeterministic(expression->inputcollid))
      continue;
    if (!op_in_opfamily(expression->opno, family) ||
        get_op_opfamily_strategy(expression->opno, family) != BTEqualStrategyNumber)
      continue;
    for (int side = 0; side < 2; ++side) {
      Node* column_side = StripRelabel(static_cast<Node*>(list_nth(expression->args, side)));
      Node* other_side = static_cast<Node*>(list_nth(expression->args, 1 - side));
      if (!IsA(column_side, Var)) continue;
      const auto* var = reinterpret_cast<Var*>(column_side);
      if (var->varlevelsup != 0 || var->varno != static_cast<int>(item) ||
          var->varattno != column)
        continue;
      Bitmapset* other_items = VarnosOf(other_side);
      const bool pinned = !bms_is_member(item, other_items) && bms_is_subset(other_items, known);
      bms_free(other_items);
      if (pinned) return true;
    }
  }
  return false;
}

Oid RelationAccessMethod(Oid relation) {
  HeapTuple tuple = SearchSysCache1(RELOID, ObjectIdGetDatum(relation));
  if (!HeapTupleIsValid(tuple)) return InvalidOid;
  const Oid method = reinterpret_cast<Form_pg_class>(GETSTRUCT(tuple))->relam;
  ReleaseSysCache(tuple);
  return method;
}

// Does a valid, immediate, non-partial unique index on plain columns of the
// table behind `item` have all its columns pinned?
bool PinnedByUniqueKey(const FromAnalysis& analysis, Index item, Oid table, bool with_children,
                       const Bitmapset* known) {
  // A unique index of an inheritance parent says nothing about its
  // children's rows (a partitioned table's unique index covers them all).
  if (with_children && get_rel_relkind(table) != RELKIND_PARTITIONED_TABLE && has_subclass(table))
    return false;
  Relation relation = table_open(table, NoLock);  // locked by parse analysis
  List* indexes = RelationGetIndexList(relation);
  table_close(relation, NoLock);
  bool pinned = false;
  ListCell* cell;
  foreach (cell, indexes) {
    HeapTuple tuple = SearchSysCache1(INDEXRELID, ObjectIdGetDatum(lfirst_oid(cell)));
    if (!HeapTupleIsValid(tuple)) continue;
    const auto* index = reinterpret_cast<Form_pg_index>(GETSTRUCT(tuple));
    bool usable = index->indisunique && index->indimmediate && index->indisvalid &&
                  heap_attisnull(tuple, Anum_pg_index_indpred, nullptr) &&
                  heap_attisnull(tuple, Anum_pg_index_indexprs, nullptr) &&
                  RelationAccessMethod(index->indexrelid) == BTREE_AM_OID;
    if (usable) {
      bool is_null = false;
      const Datum classes = SysCacheGetAttr(INDEXRELID, tuple, Anum_pg_index_indclass, &is_null);
      const auto* opclasses = reinterpret_cast<oidvector*>(DatumGetPointer(classes));
      for (int k = 0; k < index->indnkeyatts && usable; ++k) {
        const AttrNumber column = index->indkey.values[k];
        usable = column > 0 && PinsColumn(analysis, item, column,
                                          get_opclass_family(opclasses->values[k]), known);
      }
    }
    ReleaseSysCache(tuple);
    if (usable) {
      pinned = true;
      break;
    }
  }
  list_free(indexes);
  return pinned;
}

// Checks that every row of the level's output contains at most one
// protected row and each protected row appears in at most one output row:
// exactly one protected item, and every other item a public table whose row
// is pinned, through equalities on one of its unique keys, by the protected
// row and the tables already pinned (a fixpoint, so that chains of lookups
// work and cycles that pin nothing do not).
FromAnalysis CheckFrom(Query* query, const Bitmapset* items, const Bitmapset* protected_items,
                       int code) {
  FromAnalysis analysis;
  if (bms_num_members(protected_items) > 1)
    Refuse(code, "a query level reads more than one protected table, or one table twice",
           "A join of protected rows with protected rows can repeat each of them many times.",
           kJoinHint);
  analysis.protected_item = static_cast<Index>(bms_singleton_member(protected_items));
  Bitmapset* public_items = bms_difference(items, protected_items);
  int item = -1;
  while ((item = bms_next_member(public_items, item)) >= 0) {
    const RangeTblEntry* entry = rt_fetch(item, query->rtable);
    if (entry->lateral)
      Refuse(code, "LATERAL next to protected rows is not supported",
             "A LATERAL item runs once per row of the items before it.", kJoinHint);
    if (entry->rtekind != RTE_RELATION)
      Refuse(code, "protected rows are combined with a function, VALUES list, subquery or WITH "
                   "query",
             "Each protected row could meet many of its rows; only tables with a unique key "
             "can be looked up safely.",
             kJoinHint);
  }
  AnalyzeJoinTree(query, reinterpret_cast<Node*>(query->jointree), &analysis);
  Bitmapset* known = bms_make_singleton(static_cast<int>(analysis.protected_item));
  bool progress = true;
  while (progress) {
    progress = false;
    item = -1;
    while ((item = bms_next_member(public_items, item)) >= 0) {
      if (bms_is_member(item, known)) continue;
      const RangeTblEntry* entry = rt_fetch(item, query->rtable);
      if (PinnedByUniqueKey(analysis, item, entry->relid, entry->inh, known)) {
        known = bms_add_member(known, item);
        progress = true;
      }
    }
  }
  item = -1;
  while ((item = bms_next_member(public_items, item)) >= 0) {
    if (bms_is_member(item, known)) continue;
    char rule[NAMEDATALEN + 128];
    snprintf(rule, sizeof rule, "table \"%s\" is joined to protected rows without a unique key",
             get_rel_name(rt_fetch(item, query->rtable)->relid));
    Refuse(code, rule,
           "Each protected row could meet many of its rows and count many times (this includes "
           "cross joins).",
           kJoinHint);
  }
  return analysis;
}

// ---------------------------------------------------------------------------
// Aggregation levels.
// ---------------------------------------------------------------------------

struct AggregateCheck {
  bool restricted;
  bool found_private;
};

bool CheckAggregates(Node* node, AggregateCheck* check) {
  if (node == nullptr) return false;
  if (IsA(node, Query)) return false;
  if (IsA(node, Aggref)) {
    auto* aggref = reinterpret_cast<Aggref*>(node);
    if (aggref->agglevelsup != 0) {
      if (check->restricted)
        Refuse(ERRCODE_INSUFFICIENT_PRIVILEGE, "an outer query's aggregate over protected rows",
               "An aggregate of an outer query cannot read protected rows.", kAggregateHint);
      return false;
    }
    if (LookupPrivateAggregate(aggref->aggfnoid) == nullptr) {
      if (!check->restricted) return false;
      char rule[256];
      snprintf(rule, sizeof rule, "%s is not a differentially private aggregate",
               format_procedure(aggref->aggfnoid));
      Refuse(ERRCODE_INSUFFICIENT_PRIVILEGE, rule,
             "Its answer about protected rows would be exact.", kAggregateHint);
    }
    check->found_private = true;
    if (check->restricted) {
      if (aggref->aggdistinct != NIL || aggref->aggorder != NIL)
        Refuse(ERRCODE_INSUFFICIENT_PRIVILEGE,
               "DISTINCT or ORDER BY inside a private aggregate is not supported",
               "The aggregates' guarantees are stated for every row counted once.",
               "Remove DISTINCT/ORDER BY from the aggregate's arguments.");
      // The value (and dp_select's weight) is evaluated per row; the other
      // arguments are parameters that the executor hook evaluates once,
      // before any row is read (call_sites.cpp), so they cannot fail for
      // some rows only.
      const int per_row = PerRowArgumentCount(aggref);
      int position = 0;
      ListCell* cell;
      foreach (cell, aggref->args) {
        if (position++ >= per_row) break;
        CheckRowExpression(reinterpret_cast<Node*>(static_cast<TargetEntry*>(lfirst(cell))->expr),
                           "an aggregate's value");
      }
      CheckRowExpression(reinterpret_cast<Node*>(aggref->aggfilter), "an aggregate's FILTER");
      // dp_select compares each value with its candidates under the call's
      // collation.
      if (!TestFaultIs(TestFault::kIndeterminateCollation) &&
          !CollationIsTotal(type_is_collatable(exprType(reinterpret_cast<Node*>(
                                linitial_node(TargetEntry, aggref->args)->expr))),
                            aggref->inputcollid))
        Refuse(ERRCODE_INDETERMINATE_COLLATION,
               "a private aggregate over protected text needs one deterministic collation",
               "Comparing its values without a determined collation fails once a row arrives.",
               "Add COLLATE \"C\" (or another deterministic collation) to the value.");
    }
    return false;  // no aggregates inside aggregates
  }
  return expression_tree_walker(node, DP_EXPRESSION_WALKER(CheckAggregates), check);
}

// Looked up each time (a syscache hit): the extension may be dropped and
// created again, with new OIDs.
Oid GroupSelectionAggregate() {
  const Oid arguments[2] = {FLOAT8OID, FLOAT8OID};
  return LookupFuncName(
      list_make2(makeString(pstrdup("dp_agg")), makeString(pstrdup("group_selection"))), 2,
      arguments, false);
}

Const* Float8Constant(double value) {
  return makeConst(FLOAT8OID, -1, InvalidOid, sizeof(float8), Float8GetDatum(value), false,
                   FLOAT8PASSBYVAL);
}

// Adds dp_agg.group_selection(epsilon, delta) in front of the level's HAVING:
// a group appears only if its noisy row count passes the threshold
// (partition_selection.h). It is an ordinary private aggregate call site, so
// the executor hook validates and charges it like the others.
void AddGroupSelection(Query* query) {
  auto* aggref = makeNode(Aggref);
  aggref->aggfnoid = GroupSelectionAggregate();
  aggref->aggtype = BOOLOID;
  aggref->aggcollid = InvalidOid;
  aggref->inputcollid = InvalidOid;
  aggref->aggtranstype = InvalidOid;
  aggref->aggargtypes = list_make2_oid(FLOAT8OID, FLOAT8OID);
  aggref->aggdirectargs = NIL;
  aggref->args = list_make2(
      makeTargetEntry(reinterpret_cast<Expr*>(Float8Constant(group_selection_epsilon)), 1,
                      nullptr, false),
      makeTargetEntry(reinterpret_cast<Expr*>(Float8Constant(group_selection_delta)), 2,
                      nullptr, false));
  aggref->aggorder = NIL;
  aggref->aggdistinct = NIL;
  aggref->aggfilter = nullptr;
  aggref->aggstar = false;
  aggref->aggvariadic = false;
  aggref->aggkind = AGGKIND_NORMAL;
  aggref->agglevelsup = 0;
  aggref->aggsplit = AGGSPLIT_SIMPLE;
  aggref->aggno = -1;
  aggref->aggtransno = -1;
  aggref->location = -1;
  Node* gate = reinterpret_cast<Node*>(aggref);
  query->havingQual =
      query->havingQual == nullptr
          ? gate
          : reinterpret_cast<Node*>(makeBoolExpr(AND_EXPR, list_make2(gate, query->havingQual), -1));
  query->hasAggs = true;
}

// A group key is released as the text of one of its group's rows: its type
// must print the same for every member of the group (IsExactKeyType), and
// grouping by it must not fail: a determined, deterministic collation for
// text, and a total equality operator.
void CheckGroupKey(Node* key, const SortGroupClause* clause) {
  const Oid type = exprType(key);
  if (!TestFaultIs(TestFault::kFirstKeySpelling) && !IsExactKeyType(type)) {
    char rule[256];
    snprintf(rule, sizeof rule, "GROUP BY over protected rows may not use a key of type %s",
             format_type_be(type));
    Refuse(ERRCODE_INSUFFICIENT_PRIVILEGE, rule,
           "Equal values of this type can print differently (interval '1 day' and '24:00:00', "
           "float -0 and 0, numeric 1.0 and 1.00, char(n) with trailing blanks), so a released "
           "key would show one person's own spelling. Group keys may be integers, text, "
           "varchar, boolean, dates, timestamps, uuids, bytea or enums.",
           "Group by an expression of one of those types (for example an integer bucket "
           "computed from the column in a subquery), or by a public table's column.");
  }
  const Oid collation = exprCollation(key);
  if (!TestFaultIs(TestFault::kIndeterminateCollation) &&
      !CollationIsTotal(type_is_collatable(type), collation))
    Refuse(ERRCODE_INDETERMINATE_COLLATION,
           "a GROUP BY key over protected rows needs one deterministic collation",
           "Grouping text without a determined collation fails once a row arrives, and a "
           "nondeterministic collation puts differently spelled values into one group.",
           "Add COLLATE \"C\" (or another deterministic collation) to the key.");
  if (OidIsValid(clause->eqop) && !IsTotalFunction(get_opcode(clause->eqop))) {
    RowCheck check{"GROUP BY", false, false};
    RefuseFunction(get_opcode(clause->eqop), &check);
  }
}

// Orders the level's output by its group keys (after any ORDER BY of the
// query's own), so that the order of released rows is a function of the
// released keys. Without it a HashAggregate emits groups in hash-table order,
// where groups that partition selection suppressed still occupied buckets,
// and ties of the query's own ORDER BY would follow that order.
void OrderByGroupKeys(Query* query) {
  ListCell* cell;
  foreach (cell, query->groupClause) {
    auto* clause = static_cast<SortGroupClause*>(lfirst(cell));
    TargetEntry* entry = get_sortgroupclause_tle(clause, query->targetList);
    if (targetIsInSortList(entry, InvalidOid, query->sortClause)) continue;
    auto* order = static_cast<SortGroupClause*>(copyObjectImpl(clause));
    if (!OidIsValid(order->sortop)) {
      Oid equality = InvalidOid;
      bool hashable = false;
      get_sort_group_operators(exprType(reinterpret_cast<Node*>(entry->expr)), true, true, false,
                               &order->sortop, &equality, nullptr, &hashable);
    }
    order->nulls_first = false;
    query->sortClause = lappend(query->sortClause, order);
  }
}

// ---------------------------------------------------------------------------
// Levels.
// ---------------------------------------------------------------------------

bool JudgeLevel(Query* query, const Level* parent, Judgement* judgement);

[[noreturn]] void RefuseProtectedRows() {
  Refuse(ERRCODE_INSUFFICIENT_PRIVILEGE, "restricted roles may not read rows of protected tables",
         "The query returns values of protected rows; only answers of private aggregates may "
         "leave the database.",
         kAggregateHint);
}

bool CteReturnsProtectedRows(const Level* level, const RangeTblEntry* entry) {
  for (Index up = 0; up < entry->ctelevelsup && level != nullptr; ++up) level = level->parent;
  if (level == nullptr) return false;
  int position = 0;
  ListCell* cell;
  foreach (cell, level->query->cteList) {
    if (strcmp(static_cast<CommonTableExpr*>(lfirst(cell))->ctename, entry->ctename) == 0)
      return level->cte_protected[position];
    ++position;
  }
  return false;
}

// Returns `WITH dp_agg_once AS MATERIALIZED (level) SELECT * FROM
// dp_agg_once`, for a private level below the top of the statement.
//   * Run once: the planner may put a subquery on the inner side of a nested
//     loop, or keep a sublink as a per-row subplan, and each rescan of a
//     plain or sorted aggregation draws fresh noise. The executor refuses
//     such plans (call_sites.cpp), but whether it must depends on the
//     planner's estimates, so the refusal itself would reveal statistics of
//     the protected table. A materialised WITH query without outer
//     references runs at most once per execution wherever the planner puts
//     its scan (an init plan without external parameters).
//   * Nothing pushed in: PostgreSQL pushes no outer condition into a
//     materialised WITH query. A security barrier alone lets LEAKPROOF
//     conditions through, and those could run per protected row (moved from
//     HAVING to WHERE) unjudged; LEAKPROOF is not total.
Query* MaterializedOnce(Query* level) {
  // One level deeper now: references to outer queries (and their WITH
  // queries) reach one more level up.
  IncrementVarSublevelsUp(reinterpret_cast<Node*>(level), 1, 1);
  auto* cte = makeNode(CommonTableExpr);
  cte->ctename = pstrdup("dp_agg_once");
  cte->ctematerialized = CTEMaterializeAlways;
  cte->ctequery = reinterpret_cast<Node*>(level);
  cte->location = -1;
  cte->cterefcount = 1;
  auto* entry = makeNode(RangeTblEntry);
  entry->rtekind = RTE_CTE;
  entry->ctename = cte->ctename;
  entry->ctelevelsup = 0;
  entry->inFromCl = true;
  auto* wrapper = makeNode(Query);
  wrapper->commandType = CMD_SELECT;
  wrapper->querySource = QSRC_ORIGINAL;
  wrapper->canSetTag = true;
  List* names = NIL;
  ListCell* cell;
  foreach (cell, level->targetList) {
    const auto* column = static_cast<TargetEntry*>(lfirst(cell));
    if (column->resjunk) continue;
    Node* expression = reinterpret_cast<Node*>(column->expr);
    char* name = pstrdup(column->resname != nullptr ? column->resname : "?column?");
    names = lappend(names, makeString(name));
    cte->ctecolnames = lappend(cte->ctecolnames, makeString(name));
    cte->ctecoltypes = lappend_oid(cte->ctecoltypes, exprType(expression));
    cte->ctecoltypmods = lappend_int(cte->ctecoltypmods, exprTypmod(expression));
    cte->ctecolcollations = lappend_oid(cte->ctecolcollations, exprCollation(expression));
    wrapper->targetList = lappend(
        wrapper->targetList,
        makeTargetEntry(reinterpret_cast<Expr*>(makeVar(
                            1, static_cast<AttrNumber>(list_length(names)), exprType(expression),
                            exprTypmod(expression), exprCollation(expression), 0)),
                        static_cast<AttrNumber>(list_length(names)), name, false));
  }
  entry->coltypes = cte->ctecoltypes;
  entry->coltypmods = cte->ctecoltypmods;
  entry->colcollations = cte->ctecolcollations;
  entry->eref = makeAlias(cte->ctename, names);
  wrapper->cteList = list_make1(cte);
  wrapper->rtable = list_make1(entry);
  auto* reference = makeNode(RangeTblRef);
  reference->rtindex = 1;
  wrapper->jointree = makeFromExpr(list_make1(reference), nullptr);
  return wrapper;
}

struct SubLinkWalk {
  const Level* level;
  Judgement* judgement;
};

// Judges the queries of sublinks (subqueries in expressions): they may read
// protected tables only through private aggregates.
bool JudgeSubLinks(Node* node, SubLinkWalk* walk) {
  if (node == nullptr) return false;
  if (IsA(node, SubLink)) {
    auto* sublink = reinterpret_cast<SubLink*>(node);
    const bool protected_rows =
        JudgeLevel(reinterpret_cast<Query*>(sublink->subselect), walk->level, walk->judgement);
    if (protected_rows && walk->judgement->restricted)
      Refuse(ERRCODE_INSUFFICIENT_PRIVILEGE, "a subquery in an expression reads protected rows",
             "Its rows would decide the outer query's answer without noise.", kAggregateHint);
    if (walk->judgement->restricted && walk->judgement->reads_protected)
      sublink->subselect =
          reinterpret_cast<Node*>(MaterializedOnce(reinterpret_cast<Query*>(sublink->subselect)));
    return JudgeSubLinks(sublink->testexpr, walk);
  }
  if (IsA(node, Query)) return false;
  return expression_tree_walker(node, DP_EXPRESSION_WALKER(JudgeSubLinks), walk);
}

void RefuseInlinableFunctions(const RangeTblEntry* entry) {
  ListCell* cell;
  foreach (cell, entry->functions) {
    auto* function = static_cast<RangeTblFunction*>(lfirst(cell));
    if (!IsA(function->funcexpr, FuncExpr)) continue;
    const Oid oid = reinterpret_cast<FuncExpr*>(function->funcexpr)->funcid;
    HeapTuple tuple = SearchSysCache1(PROCOID, ObjectIdGetDatum(oid));
    if (!HeapTupleIsValid(tuple)) continue;
    const auto* procedure = reinterpret_cast<Form_pg_proc>(GETSTRUCT(tuple));
    const bool inlinable = procedure->proretset && procedure->prolang == SQLlanguageId;
    ReleaseSysCache(tuple);
    if (inlinable) {
      char rule[256];
      snprintf(rule, sizeof rule,
               "restricted roles may not call SQL function %s in FROM", format_procedure(oid));
      Refuse(ERRCODE_INSUFFICIENT_PRIVILEGE, rule,
             "PostgreSQL inlines a SQL set-returning function's body into the query after "
             "dp_agg has judged it, so its reads of protected tables would not be checked.",
             "Write the function's query into your own query, or call it in the select list.");
    }
  }
}

// Judges one query level; returns whether it returns protected rows.
bool JudgeLevel(Query* query, const Level* parent, Judgement* judgement) {
  check_stack_depth();
  Level level{query, parent, nullptr};
  const int ctes = list_length(query->cteList);
  if (ctes > 0) level.cte_protected = static_cast<bool*>(palloc0(sizeof(bool) * ctes));
  int position = 0;
  ListCell* cell;
  foreach (cell, query->cteList) {
    auto* cte = static_cast<CommonTableExpr*>(lfirst(cell));
    level.cte_protected[position++] =
        JudgeLevel(reinterpret_cast<Query*>(cte->ctequery), &level, judgement);
  }
  const bool restricted = judgement->restricted;
  if (restricted) CheckCatalogAccess(query);

  // Sources: items of FROM, and the branches of set operations.
  Bitmapset* items = nullptr;
  CollectItems(reinterpret_cast<Node*>(query->jointree), &items);
  Bitmapset* protected_items = nullptr;
  bool branch_protected = false;
  Index index = 0;
  foreach (cell, query->rtable) {
    ++index;
    auto* entry = static_cast<RangeTblEntry*>(lfirst(cell));
    const bool in_from = bms_is_member(static_cast<int>(index), items);
    bool is_protected = false;
    switch (entry->rtekind) {
      case RTE_RELATION:
        if (!IsProtectedRelation(entry->relid, entry->inh)) break;
        judgement->reads_protected = true;
        if (restricted && static_cast<Index>(query->resultRelation) == index)
          Refuse(ERRCODE_INSUFFICIENT_PRIVILEGE, "restricted roles may not modify protected tables",
                 "Its row counts and RETURNING would reveal the data.", kAggregateHint);
        if (!in_from) break;  // e.g. a view's own entry kept for permission checks
        is_protected = true;
        judgement->protected_entries = lappend(judgement->protected_entries, entry);
        if (restricted && entry->tablesample != nullptr &&
            entry->tablesample->tsmhandler >= FirstNormalObjectId)
          Refuse(ERRCODE_INSUFFICIENT_PRIVILEGE, "only built-in TABLESAMPLE methods may sample "
                                                 "protected tables",
                 "A method such as SYSTEM_ROWS(n) picks rows depending on the others, like LIMIT.",
                 "Use TABLESAMPLE BERNOULLI or SYSTEM.");
        break;
      case RTE_SUBQUERY:
        is_protected = JudgeLevel(entry->subquery, &level, judgement);
        if (!in_from) branch_protected = branch_protected || is_protected;
        // Outer conditions must not be pushed into a private aggregation
        // level: there they would run for unreleased groups, or (moved from
        // HAVING to WHERE) for every protected row, unjudged. A security
        // barrier still lets LEAKPROOF conditions through, and LEAKPROOF is
        // not total (texteq fails on an indeterminate collation), so a level
        // in FROM also becomes a materialised WITH query (MaterializedOnce),
        // into which PostgreSQL pushes nothing. Branches of a set operation
        // are fenced by the wrapping of the set operation's own level.
        if (restricted && !is_protected && judgement->reads_protected) {
          entry->security_barrier = true;
          if (in_from) {
            // A LATERAL level that refers to the items before it would run
            // once per row of them; one that does not is a plain level.
            if (entry->lateral && contain_vars_of_level(reinterpret_cast<Node*>(entry->subquery), 1))
              Refuse(ERRCODE_INSUFFICIENT_PRIVILEGE,
                     "a LATERAL subquery over protected rows refers to the items before it",
                     "It would run, and release its answers, once per row of those items.",
                     "Aggregate without the reference, then join the answers.");
            entry->subquery = MaterializedOnce(entry->subquery);
            entry->lateral = false;
          }
        }
        break;
      case RTE_CTE:
        is_protected = CteReturnsProtectedRows(&level, entry);
        break;
      case RTE_FUNCTION:
        // The planner inlines a SQL set-returning function in FROM into the
        // query after this judge has run, so its body (say, a view that
        // reads a protected table as the view's owner) would go unjudged.
        if (restricted) RefuseInlinableFunctions(entry);
        break;
      default:
        break;
    }
    if (is_protected && in_from) protected_items = bms_add_member(protected_items, index);
  }
  if (restricted && judgement->reads_protected) {
    // Materialised WITH queries are not merged into the outer query, so
    // outer conditions are not pushed into them either.
    foreach (cell, query->cteList)
      static_cast<CommonTableExpr*>(lfirst(cell))->ctematerialized = CTEMaterializeAlways;
  }
  SubLinkWalk sublinks{&level, judgement};
  query_tree_walker(query, DP_EXPRESSION_WALKER(JudgeSubLinks), &sublinks,
                    QTW_IGNORE_RC_SUBQUERIES);

  if (branch_protected) {
    if (restricted)
      Refuse(ERRCODE_INSUFFICIENT_PRIVILEGE, "set operations over protected rows are not allowed",
             "UNION, INTERSECT and EXCEPT repeat or compare protected rows.", kAggregateHint);
    return true;
  }
  if (protected_items == nullptr) return false;

  const bool aggregation = query->hasAggs || query->groupClause != NIL ||
                           query->groupingSets != NIL || query->havingQual != nullptr;
  AggregateCheck aggregates{restricted, false};
  CheckAggregates(reinterpret_cast<Node*>(query->targetList), &aggregates);
  CheckAggregates(query->havingQual, &aggregates);
  if (!restricted) {
    // Unrestricted roles may read protected rows; their private aggregates
    // must still meet the sensitivity rules.
    if (aggregates.found_private)
      CheckFrom(query, items, protected_items, ERRCODE_FEATURE_NOT_SUPPORTED);
    return !aggregation;
  }

  if (query->commandType != CMD_SELECT)
    Refuse(ERRCODE_INSUFFICIENT_PRIVILEGE, "restricted roles may not modify data using protected "
                                           "rows",
           "Its row counts and RETURNING would reveal the data.", kAggregateHint);
  if (query->rowMarks != NIL)
    Refuse(ERRCODE_INSUFFICIENT_PRIVILEGE, "FOR UPDATE/SHARE of protected rows is not allowed",
           "Locking rows reveals which exist.", kAggregateHint);
  if (query->hasSubLinks)
    Refuse(ERRCODE_INSUFFICIENT_PRIVILEGE, "subqueries in expressions over protected rows are "
                                           "not allowed",
           "They can make one protected row decide about others, or run once per row.",
           "Move the subquery to FROM, or compute it in an outer query.");
  if (query->hasWindowFuncs)
    Refuse(ERRCODE_INSUFFICIENT_PRIVILEGE, "window functions over protected rows are not allowed",
           "Every window frame would be an exact release of overlapping rows.", kAggregateHint);
  if (query->hasTargetSRFs)
    Refuse(ERRCODE_INSUFFICIENT_PRIVILEGE, "set-returning functions over protected rows are not "
                                           "allowed",
           "They repeat protected rows.", kAggregateHint);
  if (query->groupingSets != NIL)
    Refuse(ERRCODE_INSUFFICIENT_PRIVILEGE, "GROUPING SETS, ROLLUP and CUBE over protected rows "
                                           "are not supported",
           "Each grouping set would need its own partition selection.",
           "Run one query per grouping.");
  if (!aggregation && parent == nullptr) RefuseProtectedRows();

  const FromAnalysis from = CheckFrom(query, items, protected_items, ERRCODE_INSUFFICIENT_PRIVILEGE);
  // Conditions and join conditions run for every protected row.
  List* conditions = NIL;
  CollectConditions(reinterpret_cast<Node*>(query->jointree), &conditions);
  CheckRowExpression(FlatCopy(query, conditions), "WHERE or JOIN ... ON");

  if (!aggregation) {
    // Only an aggregation level may hold the public LEFT JOIN protected
    // shape: in a row level, an unmatched public row becomes a NULL-extended
    // row whose existence depends on the protected rows, so removing one
    // protected row would change two rows of the output (its own and the
    // NULL-extended one), a sensitivity of 2 charged as 1.
    if (from.protected_nullable)
      Refuse(ERRCODE_INSUFFICIENT_PRIVILEGE,
             "a protected table on the nullable side of an outer join is accepted only at the "
             "level that aggregates",
             "Below it, removing one protected row can both remove its own row and add a "
             "NULL-extended public row.",
             "Put the outer join into the query level that calls the private aggregates.");
    if (query->distinctClause != NIL)
      Refuse(ERRCODE_INSUFFICIENT_PRIVILEGE, "DISTINCT over protected rows is not allowed",
             "It returns protected values.", kAggregateHint);
    if (query->limitCount != nullptr || query->limitOffset != nullptr)
      Refuse(ERRCODE_INSUFFICIENT_PRIVILEGE, "LIMIT or OFFSET on protected rows is not allowed",
             "Which rows are kept would depend on the others.",
             "Apply LIMIT to the aggregated answers.");
    CheckRowExpression(FlatCopy(query, query->targetList), "the select list");
    return true;  // protected rows: an outer level must aggregate them
  }

  // Group keys are values of rows, evaluated for every row.
  Bitmapset* key_items = nullptr;
  foreach (cell, query->groupClause) {
    auto* clause = static_cast<SortGroupClause*>(lfirst(cell));
    Node* expression = FlatCopy(query, get_sortgroupclause_tle(clause, query->targetList)->expr);
    CheckRowExpression(expression, "GROUP BY");
    CheckGroupKey(expression, clause);
    key_items = bms_join(key_items, VarnosOf(expression));
  }
  // Any group exists because of protected rows and must pass partition
  // selection, except in one shape: `public LEFT JOIN (protected ...) ON ...`
  // as the whole FROM clause, grouped and filtered by columns of the public
  // side only. Its rows are the public side's rows, each kept at least once,
  // so its groups exist whatever the protected rows; a protected row moves
  // only within the group of the one public row it meets.
  bool gated = query->groupClause != NIL;
  if (from.protected_nullable) {
    Bitmapset* preserved = PreservedSideOfTopOuterJoin(query, from.protected_item);
    Bitmapset* used = bms_join(key_items, VarnosOf(FlatCopy(query, query->jointree->quals)));
    if (preserved == nullptr || !bms_is_subset(used, preserved))
      Refuse(ERRCODE_INSUFFICIENT_PRIVILEGE,
             "a protected table on the nullable side of an outer join is accepted only as "
             "public LEFT JOIN protected, grouped and filtered by the public side",
             "Otherwise removing a protected row can move a public row into another group, or "
             "decide whether a group exists.",
             "Write FROM public_table LEFT JOIN protected_table ON ..., GROUP BY and WHERE on "
             "the public table's columns; put conditions on protected columns into ON.");
    gated = false;
  }
  CheckRowExpression(query->havingQual, "HAVING", true, gated);
  if (gated) AddGroupSelection(query);
  if (!TestFaultIs(TestFault::kHashGroupOrder)) OrderByGroupKeys(query);
  return false;
}

// ---------------------------------------------------------------------------

planner_hook_type previous_planner = nullptr;

PlannedStmt* PlannerHook(Query* query, const char* query_string, int cursor_options,
                         ParamListInfo bound_parameters) {
  Judgement judgement{RestrictedSession(), false, NIL};
  // Partitionwise aggregation makes one call site per partition, so the
  // charge would follow the plan (and the statistics behind it). SET cannot
  // turn it on in a restricted session, but a connection option can.
  if (judgement.restricted && enable_partitionwise_aggregate)
    Refuse(ERRCODE_INSUFFICIENT_PRIVILEGE,
           "restricted sessions must run with enable_partitionwise_aggregate off",
           "Partitionwise aggregation charges once per partition chosen by the planner.",
           "Reconnect without -c enable_partitionwise_aggregate=on.");
  const bool returns_protected_rows = JudgeLevel(query, nullptr, &judgement);
  if (judgement.restricted && returns_protected_rows) RefuseProtectedRows();
  if (judgement.restricted) {
    // Access as the table owner, the way a view gives it, for exactly the
    // tables of this validated query.
    ListCell* cell;
    foreach (cell, judgement.protected_entries) {
      auto* entry = static_cast<RangeTblEntry*>(lfirst(cell));
      // A view's owner already checks access, unless the view belongs to a
      // restricted role (a view of the analyst's own, judged here as part
      // of this query).
      if (OidIsValid(entry->checkAsUser) && !RoleIsRestricted(entry->checkAsUser)) continue;
      HeapTuple tuple = SearchSysCache1(RELOID, ObjectIdGetDatum(entry->relid));
      if (!HeapTupleIsValid(tuple)) elog(ERROR, "dp_agg: relation %u vanished", entry->relid);
      entry->checkAsUser = reinterpret_cast<Form_pg_class>(GETSTRUCT(tuple))->relowner;
      ReleaseSysCache(tuple);
    }
  }
  PlannedStmt* plan =
      previous_planner != nullptr
          ? previous_planner(query, query_string, cursor_options, bound_parameters)
          : standard_planner(query, query_string, cursor_options, bound_parameters);
  // The judgement depends on who runs the query: a cached plan is made again
  // when the current user changes.
  if (judgement.reads_protected) plan->dependsOnRole = true;
  VerifyReleasedOnce(plan);
  return plan;
}

}  // namespace

void InstallPlannerHook() {
  previous_planner = planner_hook;
  planner_hook = PlannerHook;
}

}  // namespace dp_pg
