#include "plain_aggregates.h"

extern "C" {
#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/tableam.h"
#include "executor/tuptable.h"
#include "catalog/indexing.h"
#include "catalog/pg_cast.h"
#include "catalog/pg_extension.h"
#include "catalog/pg_namespace.h"
#include "nodes/makefuncs.h"
#include "parser/parse_func.h"
#include "parser/parse_oper.h"
#include "parser/parsetree.h"
#include "utils/fmgroids.h"
#include "utils/snapmgr.h"
}

#include "column_bounds.h"
#include "refusal.h"
#include "restriction.h"
#include "settings.h"

namespace dp_pg {

namespace {

// A query level and the levels around it (for CTE references).
struct Level {
  Query* query;
  const Level* outer;
};

enum class PlainKind { kNone, kCountRows, kCountValues, kSum, kAvg, kMinMax };

PlainKind KindOf(const Aggref* call) {
  switch (call->aggfnoid) {
    case F_COUNT_:
      return PlainKind::kCountRows;
    case F_COUNT_ANY:
      return PlainKind::kCountValues;
    case F_SUM_INT2:
    case F_SUM_INT4:
    case F_SUM_INT8:
    case F_SUM_FLOAT4:
    case F_SUM_FLOAT8:
    case F_SUM_NUMERIC:
      return PlainKind::kSum;
    case F_AVG_INT2:
    case F_AVG_INT4:
    case F_AVG_INT8:
    case F_AVG_FLOAT4:
    case F_AVG_FLOAT8:
    case F_AVG_NUMERIC:
      return PlainKind::kAvg;
    default:
      break;
  }
  if (get_func_namespace(call->aggfnoid) != PG_CATALOG_NAMESPACE) return PlainKind::kNone;
  const char* name = get_func_name(call->aggfnoid);
  if (name != nullptr && (strcmp(name, "min") == 0 || strcmp(name, "max") == 0))
    return PlainKind::kMinMax;
  return PlainKind::kNone;
}

// The schema dp_agg's aggregates were installed into (CREATE EXTENSION ...
// SCHEMA), looked up in pg_extension: never through the search_path, which
// the analyst sets.
const char* ExtensionSchemaName() {
  Relation extensions = table_open(ExtensionRelationId, AccessShareLock);
  ScanKeyData key;
  ScanKeyInit(&key, Anum_pg_extension_extname, BTEqualStrategyNumber, F_NAMEEQ,
              CStringGetDatum("dp_agg"));
  SysScanDesc scan = systable_beginscan(extensions, ExtensionNameIndexId, true, nullptr, 1, &key);
  HeapTuple tuple = systable_getnext(scan);
  Oid schema = InvalidOid;
  if (HeapTupleIsValid(tuple))
    schema = reinterpret_cast<Form_pg_extension>(GETSTRUCT(tuple))->extnamespace;
  systable_endscan(scan);
  table_close(extensions, AccessShareLock);
  const char* name = OidIsValid(schema) ? get_namespace_name(schema) : nullptr;
  if (name == nullptr)
    ereport(ERROR, (errcode(ERRCODE_UNDEFINED_OBJECT),
                    errmsg("dp_agg: extension dp_agg is not installed in this database"),
                    errhint("CREATE EXTENSION dp_agg;")));
  return name;
}

Oid PrivateAggregate(const char* name, int count, Oid* types) {
  List* qualified =
      list_make2(makeString(pstrdup(ExtensionSchemaName())), makeString(pstrdup(name)));
  return LookupFuncName(qualified, count, types, false);
}

// ---------------------------------------------------------------------------
// Which levels aggregate protected rows.
// ---------------------------------------------------------------------------

// `visiting`: the WITH queries whose rows are being examined further up, so
// that a recursive WITH query's reference to itself (whose rows are those of
// its other branches, examined there) ends the walk instead of recursing
// without end (review 27, finding 1: a stack overflow, SIGSEGV).
bool LevelYieldsProtectedRows(Query* query, const Level* outer, List* visiting);

CommonTableExpr* FindCte(const Level* level, const char* name, Index levels_up,
                         const Level** holder) {
  for (Index up = 0; up < levels_up && level != nullptr; ++up) level = level->outer;
  if (level == nullptr) return nullptr;
  ListCell* cell;
  foreach (cell, level->query->cteList) {
    auto* cte = static_cast<CommonTableExpr*>(lfirst(cell));
    if (strcmp(cte->ctename, name) == 0) {
      *holder = level;
      return cte;
    }
  }
  return nullptr;
}

// Whether range table item `index` of `level` yields rows of a protected
// table: the table itself, or a level below that returns its rows
// unaggregated. An aggregating level returns answers, not rows.
bool ItemYieldsProtectedRows(const Level* level, Index index, List* visiting) {
  RangeTblEntry* entry = rt_fetch(index, level->query->rtable);
  switch (entry->rtekind) {
    case RTE_RELATION:
      return IsProtectedRelation(entry->relid, entry->inh);
    case RTE_SUBQUERY:
      return LevelYieldsProtectedRows(entry->subquery, level, visiting);
    case RTE_CTE: {
      const Level* holder = nullptr;
      CommonTableExpr* cte = FindCte(level, entry->ctename, entry->ctelevelsup, &holder);
      if (cte == nullptr || !IsA(cte->ctequery, Query)) return false;
      if (list_member_ptr(visiting, cte)) return false;  // a recursive reference
      return LevelYieldsProtectedRows(reinterpret_cast<Query*>(cte->ctequery), holder,
                                      lappend(list_copy(visiting), cte));
    }
    default:
      return false;
  }
}

bool FromItemsYield(Node* node, const Level* level, List* visiting) {
  if (node == nullptr) return false;
  if (IsA(node, RangeTblRef))
    return ItemYieldsProtectedRows(level, reinterpret_cast<RangeTblRef*>(node)->rtindex, visiting);
  if (IsA(node, FromExpr)) {
    ListCell* cell;
    foreach (cell, reinterpret_cast<FromExpr*>(node)->fromlist)
      if (FromItemsYield(static_cast<Node*>(lfirst(cell)), level, visiting)) return true;
    return false;
  }
  if (IsA(node, JoinExpr)) {
    auto* join = reinterpret_cast<JoinExpr*>(node);
    return FromItemsYield(join->larg, level, visiting) ||
           FromItemsYield(join->rarg, level, visiting);
  }
  if (IsA(node, SetOperationStmt)) {
    auto* operation = reinterpret_cast<SetOperationStmt*>(node);
    return FromItemsYield(operation->larg, level, visiting) ||
           FromItemsYield(operation->rarg, level, visiting);
  }
  return false;
}

// Whether the FROM items (or set-operation branches) of `query` yield
// protected rows.
bool ReadsProtectedRows(Query* query, const Level* outer, List* visiting = NIL) {
  check_stack_depth();
  const Level level{query, outer};
  return FromItemsYield(reinterpret_cast<Node*>(query->jointree), &level, visiting) ||
         FromItemsYield(query->setOperations, &level, visiting);
}

bool LevelYieldsProtectedRows(Query* query, const Level* outer, List* visiting) {
  if (query->hasAggs || query->groupClause != NIL || query->groupingSets != NIL) return false;
  return ReadsProtectedRows(query, outer, visiting);
}

// ---------------------------------------------------------------------------
// The column behind a sum's or avg's argument.
// ---------------------------------------------------------------------------

// Follows `expression` (a column reference, through subqueries, joins and
// WITH queries that pass it on unchanged) to the table column it reads.
// A cast PostgreSQL wrote or the tool did (Tableau's AVG(CAST(x AS DOUBLE
// PRECISION))): one of the built-in numeric casts that widen
// (IsWideningCast), so the column's bounds hold for the cast value too.
Expr* WideningCastArgument(Expr* expression) {
  if (!IsA(expression, FuncExpr)) return nullptr;
  auto* call = reinterpret_cast<FuncExpr*>(expression);
  if (call->funcformat == COERCE_EXPLICIT_CALL || list_length(call->args) != 1) return nullptr;
  auto* argument = static_cast<Expr*>(linitial(call->args));
  const Oid from = exprType(reinterpret_cast<Node*>(argument));
  if (!IsWideningCast(from, call->funcresulttype)) return nullptr;
  // The cast is pg_cast's own function for the pair, not a function of the
  // same name.
  HeapTuple tuple = SearchSysCache2(CASTSOURCETARGET, ObjectIdGetDatum(from),
                                    ObjectIdGetDatum(call->funcresulttype));
  if (!HeapTupleIsValid(tuple)) return nullptr;
  const Oid cast_function = reinterpret_cast<Form_pg_cast>(GETSTRUCT(tuple))->castfunc;
  ReleaseSysCache(tuple);
  return cast_function == call->funcid ? argument : nullptr;
}

bool TraceColumn(const Level* level, Expr* expression, Oid* relation, AttrNumber* column) {
  check_stack_depth();
  for (;;) {
    if (expression != nullptr && IsA(expression, RelabelType)) {
      expression = reinterpret_cast<RelabelType*>(expression)->arg;
      continue;
    }
    Expr* argument = expression != nullptr ? WideningCastArgument(expression) : nullptr;
    if (argument == nullptr) break;
    expression = argument;
  }
  if (expression == nullptr || !IsA(expression, Var)) return false;
  auto* var = reinterpret_cast<Var*>(expression);
  if (var->varlevelsup != 0 || var->varattno <= 0) return false;
  RangeTblEntry* entry = rt_fetch(var->varno, level->query->rtable);
  switch (entry->rtekind) {
    case RTE_RELATION:
      *relation = entry->relid;
      *column = var->varattno;
      return true;
    case RTE_JOIN:
      if (var->varattno > list_length(entry->joinaliasvars)) return false;
      return TraceColumn(level,
                         static_cast<Expr*>(list_nth(entry->joinaliasvars, var->varattno - 1)),
                         relation, column);
    case RTE_SUBQUERY: {
      Query* below = entry->subquery;
      if (below->setOperations != nullptr) return false;
      TargetEntry* target = get_tle_by_resno(below->targetList, var->varattno);
      const Level inner{below, level};
      return target != nullptr && TraceColumn(&inner, target->expr, relation, column);
    }
    case RTE_CTE: {
      const Level* holder = nullptr;
      CommonTableExpr* cte = FindCte(level, entry->ctename, entry->ctelevelsup, &holder);
      if (cte == nullptr || !IsA(cte->ctequery, Query)) return false;
      auto* below = reinterpret_cast<Query*>(cte->ctequery);
      if (below->setOperations != nullptr || below->commandType != CMD_SELECT) return false;
      TargetEntry* target = get_tle_by_resno(below->targetList, var->varattno);
      const Level inner{below, holder};
      return target != nullptr && TraceColumn(&inner, target->expr, relation, column);
    }
    default:
      return false;
  }
}

// ---------------------------------------------------------------------------
// The rewrite of one call.
// ---------------------------------------------------------------------------

Const* EpsilonConst() {
  return makeConst(FLOAT8OID, -1, InvalidOid, sizeof(float8),
                   Float8GetDatum(plain_aggregate_epsilon), false, FLOAT8PASSBYVAL);
}

Index NextSortGroupRef(const Aggref* call) {
  Index next = 0;
  ListCell* cell;
  foreach (cell, call->args)
    next = Max(next, static_cast<TargetEntry*>(lfirst(cell))->ressortgroupref);
  return next + 1;
}

// count(DISTINCT x) becomes dp_count(DISTINCT x, epsilon): as the parser
// makes it, DISTINCT covers every argument (the epsilon is one value).
void AddDistinctArgument(Aggref* call, TargetEntry* target) {
  Oid sort_operator = InvalidOid;
  Oid equality_operator = InvalidOid;
  bool hashable = false;
  get_sort_group_operators(exprType(reinterpret_cast<Node*>(target->expr)), true, true, false,
                           &sort_operator, &equality_operator, nullptr, &hashable);
  target->ressortgroupref = NextSortGroupRef(call);
  SortGroupClause* clause = makeNode(SortGroupClause);
  clause->tleSortGroupRef = target->ressortgroupref;
  clause->eqop = equality_operator;
  clause->sortop = sort_operator;
  clause->nulls_first = false;
  clause->hashable = hashable;
  call->aggdistinct = lappend(call->aggdistinct, clause);
}

Oid TransitionType(Oid aggregate) {
  HeapTuple tuple = SearchSysCache1(AGGFNOID, ObjectIdGetDatum(aggregate));
  if (!HeapTupleIsValid(tuple)) elog(ERROR, "cache lookup failed for aggregate %u", aggregate);
  const Oid type = reinterpret_cast<Form_pg_aggregate>(GETSTRUCT(tuple))->aggtranstype;
  ReleaseSysCache(tuple);
  return type;
}

const char* PlainName(PlainKind kind) {
  switch (kind) {
    case PlainKind::kSum:
      return "sum";
    case PlainKind::kAvg:
      return "avg";
    default:
      return "count";
  }
}

void RefuseUnboundedArgument(const Aggref* call, PlainKind kind, Oid relation, AttrNumber column) {
  const char* name = PlainName(kind);
  const char* dp_name = kind == PlainKind::kSum ? "dp_sum" : "dp_avg";
  if (OidIsValid(relation)) {
    const char* table = quote_qualified_identifier(get_namespace_name(get_rel_namespace(relation)),
                                                   get_rel_name(relation));
    const char* column_name = get_attname(relation, column, false);
    RefuseAt(ERRCODE_INSUFFICIENT_PRIVILEGE,
             psprintf("%s(%s) needs bounds for column \"%s\" of %s", name, column_name, column_name,
                      table),
             psprintf("A plain %s over protected rows is answered privately only within bounds "
                      "an administrator declared for the column; \"%s\" has none.",
                      name, column_name),
             psprintf("Ask an administrator to run SELECT dp_agg.set_column_bounds(%s, %s, "
                      "lower, upper), or write %s(%s, lower, upper, epsilon) yourself.",
                      quote_literal_cstr(table), quote_literal_cstr(column_name), dp_name,
                      quote_identifier(column_name)),
             call->location, name);
  }
  RefuseAt(
      ERRCODE_INSUFFICIENT_PRIVILEGE,
      psprintf("%s() of an expression over protected rows has no declared bounds", name),
      psprintf("A plain %s over protected rows is answered privately only for a column "
               "whose bounds an administrator declared (dp_agg.set_column_bounds), not for "
               "an expression.",
               name),
      psprintf("Write %s(expression, lower, upper, epsilon) with bounds of your own.", dp_name),
      call->location, name);
}

// FOR THE TEST FAULT plain_bounds_checked_on_rows only: whether a row of
// `relation` holds a value of `column` outside [lower, upper], read from the
// table itself. Deciding a rewrite (or a refusal) from this is the leak the
// neighbour fuzzer must find: declared bounds are checked by clamping, never
// against the rows.
bool FaultRowsOutsideBounds(Oid relation, AttrNumber column) {
  Const* lower = nullptr;
  Const* upper = nullptr;
  if (!DeclaredColumnBounds(relation, column, get_atttype(relation, column), &lower, &upper))
    return false;
  Relation table = table_open(relation, AccessShareLock);
  TableScanDesc scan = table_beginscan(table, GetActiveSnapshot(), 0, nullptr);
  TupleTableSlot* slot = table_slot_create(table, nullptr);
  const Oid type = lower->consttype;
  Oid comparison = InvalidOid;
  switch (type) {
    case INT2OID:
      comparison = F_BTINT2CMP;
      break;
    case INT4OID:
      comparison = F_BTINT4CMP;
      break;
    case INT8OID:
      comparison = F_BTINT8CMP;
      break;
    case FLOAT4OID:
      comparison = F_BTFLOAT4CMP;
      break;
    case FLOAT8OID:
      comparison = F_BTFLOAT8CMP;
      break;
    default:
      comparison = F_NUMERIC_CMP;
      break;
  }
  bool outside = false;
  while (!outside && table_scan_getnextslot(scan, ForwardScanDirection, slot)) {
    bool is_null = false;
    const Datum value = slot_getattr(slot, column, &is_null);
    if (is_null) continue;
    outside = DatumGetInt32(OidFunctionCall2(comparison, value, lower->constvalue)) < 0 ||
              DatumGetInt32(OidFunctionCall2(comparison, value, upper->constvalue)) > 0;
  }
  ExecDropSingleTupleTableSlot(slot);
  table_endscan(scan);
  table_close(table, AccessShareLock);
  return outside;
}

void RewriteCall(Aggref* call, const Level* level) {
  const PlainKind kind = KindOf(call);
  if (kind == PlainKind::kNone) return;
  if (kind == PlainKind::kMinMax)
    RefuseAt(ERRCODE_INSUFFICIENT_PRIVILEGE, "min() and max() of protected rows are not private",
             "The smallest or largest value is one person's value; no noise hides it.",
             "Ask for a private quantile instead, e.g. dp_percentile(column, 0.05, lower, upper, "
             "epsilon) or dp_median(column, lower, upper, epsilon).",
             call->location, get_func_name(call->aggfnoid));
  if (call->aggorder != NIL) return;  // count(x ORDER BY y): refused as written
  if (call->aggdistinct != NIL && kind != PlainKind::kCountValues)
    RefuseAt(ERRCODE_INSUFFICIENT_PRIVILEGE,
             psprintf("%s(DISTINCT ...) has no private form", PlainName(kind)),
             "Only count(DISTINCT x) of the plain aggregates is answered privately with "
             "DISTINCT.",
             psprintf("Drop DISTINCT: %s(x) is answered as dp_%s(x, ...).", PlainName(kind),
                      PlainName(kind)),
             call->location, PlainName(kind));
  Const* epsilon = EpsilonConst();
  List* args = NIL;
  List* types = NIL;
  Oid signature[4] = {InvalidOid, InvalidOid, InvalidOid, FLOAT8OID};
  const char* private_name = "dp_count";
  int arity = 2;
  if (kind == PlainKind::kCountRows) {
    args = list_make1(
        makeTargetEntry(reinterpret_cast<Expr*>(makeBoolConst(true, false)), 1, nullptr, false));
    types = list_make1_oid(BOOLOID);
    signature[0] = ANYELEMENTOID;
    signature[1] = FLOAT8OID;
  } else {
    auto* value = static_cast<TargetEntry*>(linitial(call->args));
    const Oid value_type = exprType(reinterpret_cast<Node*>(value->expr));
    args = list_make1(value);
    types = list_make1_oid(value_type);
    if (kind == PlainKind::kCountValues) {
      signature[0] = ANYELEMENTOID;
      signature[1] = FLOAT8OID;
    } else {
      Oid relation = InvalidOid;
      AttrNumber column = InvalidAttrNumber;
      Const* lower = nullptr;
      Const* upper = nullptr;
      if (!TraceColumn(level, value->expr, &relation, &column) ||
          !DeclaredColumnBounds(relation, column, value_type, &lower, &upper))
        RefuseUnboundedArgument(call, kind, relation, column);
      if (TestFaultIs(TestFault::kPlainBoundsCheckedOnRows) &&
          FaultRowsOutsideBounds(relation, column))
        RefuseAt(ERRCODE_INSUFFICIENT_PRIVILEGE, "values lie outside the declared bounds",
                 "(test fault plain_bounds_checked_on_rows)", "Declare wider bounds.",
                 call->location, PlainName(kind));
      args = lappend(args, makeTargetEntry(reinterpret_cast<Expr*>(lower), 2, nullptr, false));
      args = lappend(args, makeTargetEntry(reinterpret_cast<Expr*>(upper), 3, nullptr, false));
      types = lappend_oid(lappend_oid(types, value_type), value_type);
      signature[0] = signature[1] = signature[2] = value_type;
      signature[3] = FLOAT8OID;
      private_name = kind == PlainKind::kSum ? "dp_sum" : "dp_avg";
      arity = 4;
    }
  }
  auto* epsilon_target =
      makeTargetEntry(reinterpret_cast<Expr*>(epsilon), list_length(args) + 1, nullptr, false);
  args = lappend(args, epsilon_target);
  types = lappend_oid(types, FLOAT8OID);
  const Oid aggregate = PrivateAggregate(private_name, arity, signature);
  if (get_func_rettype(aggregate) != call->aggtype)
    ereport(ERROR,
            (errcode(ERRCODE_INTERNAL_ERROR),
             errmsg("dp_agg: %s returns %s, not %s", private_name,
                    format_type_be(get_func_rettype(aggregate)), format_type_be(call->aggtype))));
  call->aggfnoid = aggregate;
  call->aggstar = false;
  call->aggargtypes = types;
  call->aggdirectargs = NIL;
  call->aggtranstype = TransitionType(aggregate);
  call->args = args;
  if (call->aggdistinct != NIL) AddDistinctArgument(call, epsilon_target);
}

// Rewrites the calls of this level (not those of sublinks, which are levels
// of their own).
bool RewriteCallsWalker(Node* node, const Level* level) {
  if (node == nullptr || IsA(node, Query)) return false;
  if (IsA(node, Aggref)) {
    auto* call = reinterpret_cast<Aggref*>(node);
    if (call->agglevelsup == 0) RewriteCall(call, level);
    return false;  // aggregate arguments hold no aggregates of this level
  }
  return expression_tree_walker(node, DP_EXPRESSION_WALKER(RewriteCallsWalker),
                                const_cast<Level*>(level));
}

void RewriteLevel(Query* query, const Level* outer);

bool RewriteSubLinksWalker(Node* node, const Level* level) {
  if (node == nullptr) return false;
  if (IsA(node, Query)) {
    RewriteLevel(reinterpret_cast<Query*>(node), level);
    return false;
  }
  return expression_tree_walker(node, DP_EXPRESSION_WALKER(RewriteSubLinksWalker),
                                const_cast<Level*>(level));
}

void RewriteLevel(Query* query, const Level* outer) {
  check_stack_depth();
  const Level level{query, outer};
  ListCell* cell;
  foreach (cell, query->cteList) {
    auto* cte = static_cast<CommonTableExpr*>(lfirst(cell));
    if (IsA(cte->ctequery, Query)) RewriteLevel(reinterpret_cast<Query*>(cte->ctequery), &level);
  }
  foreach (cell, query->rtable) {
    auto* entry = static_cast<RangeTblEntry*>(lfirst(cell));
    if (entry->rtekind == RTE_SUBQUERY) RewriteLevel(entry->subquery, &level);
  }
  // Sublinks anywhere in the level's expressions, those of its range table
  // included (function arguments, VALUES lists, TABLESAMPLE: review 27,
  // finding 4), but not its subqueries and WITH queries, just done.
  query_tree_walker(query, DP_EXPRESSION_WALKER(RewriteSubLinksWalker), const_cast<Level*>(&level),
                    QTW_IGNORE_RT_SUBQUERIES | QTW_IGNORE_CTE_SUBQUERIES);
  if (!query->hasAggs || !ReadsProtectedRows(query, outer)) return;
  RewriteCallsWalker(reinterpret_cast<Node*>(query->targetList), &level);
  RewriteCallsWalker(query->havingQual, &level);
}

}  // namespace

void RewritePlainAggregates(Query* query) {
  if (plain_aggregate_epsilon <= 0 || !RestrictedSession()) return;
  RewriteLevel(query, nullptr);
}

}  // namespace dp_pg
