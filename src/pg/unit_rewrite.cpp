// The rewrite of a private aggregation level over privacy units into a
// per-unit inner level and the private outer level (unit_rewrite.h); the
// checks that come first are unit_checks.cpp, the window function that picks
// each unit's groups unit_group_sample.cpp.
#include "unit_rewrite.h"

#include "unit_level.h"

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
#include "utils/inval.h"
#include "utils/syscache.h"
#include "windowapi.h"
}

#include <cstdint>

#include "aggregate_catalog.h"
#include "../core/random_source.h"
#include "error_boundary.h"
#include "restriction.h"
#include "settings.h"

#define DP_EXPRESSION_MUTATOR(function) \
  reinterpret_cast<Node* (*)()>(reinterpret_cast<void (*)()>(function))

namespace dp_pg {

using namespace unit_level;

namespace {

Const* Int4Constant(int value) {
  return makeConst(INT4OID, -1, InvalidOid, sizeof(int32), Int32GetDatum(value), false, true);
}

Const* Float8Constant(double value) {
  return makeConst(FLOAT8OID, -1, InvalidOid, sizeof(float8), Float8GetDatum(value), false,
                   FLOAT8PASSBYVAL);
}

Oid CatalogAggregate(const char* name, Oid argument_type) {
  return LookupFuncName(list_make2(makeString(pstrdup("pg_catalog")), makeString(pstrdup(name))), 1,
                        &argument_type, false);
}

// Whether PostgreSQL's sum and avg of this type can raise for some rows
// (float8pl, float4pl and float8_accum on overflow, numeric_add beyond
// numeric's range): a unit's rows must then be summed with
// dp_agg.unit_sum, whose additions never raise (75_total_functions.sql).
bool BuiltinSumCanRaise(Oid type) {
  return type == FLOAT4OID || type == FLOAT8OID || type == NUMERICOID;
}

// dp_agg.unit_sum(type), or InvalidOid for a type without one.
Oid UnitSumAggregate(Oid argument_type) {
  return LookupFuncName(list_make2(makeString(pstrdup("dp_agg")), makeString(pstrdup("unit_sum"))),
                        1, &argument_type, true);
}

// An aggregate call name(value) FILTER (filter) of the inner level: a
// built-in one, or dp_agg.unit_sum for "sum" over a type whose built-in sum
// can raise.
Aggref* InnerAggregate(const char* name, Expr* value, Expr* filter, Oid input_collation) {
  const Oid input_type = exprType(reinterpret_cast<Node*>(value));
  Oid function = InvalidOid;
  if (strcmp(name, "count") == 0) {
    function = F_COUNT_ANY;
  } else if (strcmp(name, "sum") == 0 && BuiltinSumCanRaise(input_type)) {
    function = UnitSumAggregate(input_type);
    if (!OidIsValid(function)) elog(ERROR, "dp_agg: dp_agg.unit_sum is missing");
  } else {
    function = CatalogAggregate(name, input_type);
  }
  auto* aggref = makeNode(Aggref);
  aggref->aggfnoid = function;
  aggref->aggtype = get_func_rettype(function);
  aggref->aggcollid = InvalidOid;
  aggref->inputcollid = input_collation;
  aggref->aggtranstype = InvalidOid;
  aggref->aggargtypes = list_make1_oid(input_type);
  aggref->args = list_make1(makeTargetEntry(value, 1, nullptr, false));
  aggref->aggfilter = filter;
  aggref->aggkind = AGGKIND_NORMAL;
  aggref->aggsplit = AGGSPLIT_SIMPLE;
  aggref->aggno = -1;
  aggref->aggtransno = -1;
  aggref->location = -1;
  return aggref;
}

// dp_agg.total_float8div(float8, float8) or dp_agg.total_numeric_div(numeric,
// numeric) (75_total_functions.sql).
Oid TotalDivision(Oid type) {
  const Oid arguments[2] = {type, type};
  const char* name = type == FLOAT8OID ? "total_float8div" : "total_numeric_div";
  return LookupFuncName(list_make2(makeString(pstrdup("dp_agg")), makeString(pstrdup(name))), 2,
                        arguments, false);
}

Expr* Coerced(Expr* expression, Oid target) {
  const Oid source = exprType(reinterpret_cast<Node*>(expression));
  if (source == target) return expression;
  Node* coerced = coerce_to_target_type(nullptr, reinterpret_cast<Node*>(expression), source,
                                        target, -1, COERCION_IMPLICIT, COERCE_IMPLICIT_CAST, -1);
  if (coerced == nullptr)
    elog(ERROR, "dp_agg: no implicit cast from %s to %s for a privacy unit level",
         format_type_be(source), format_type_be(target));
  return reinterpret_cast<Expr*>(coerced);
}

Expr* Divided(Expr* expression, int divisor) {
  if (divisor == 1) return expression;
  return reinterpret_cast<Expr*>(makeFuncExpr(
      F_FLOAT8DIV, FLOAT8OID, list_make2(Coerced(expression, FLOAT8OID), Float8Constant(divisor)),
      InvalidOid, InvalidOid, COERCE_EXPLICIT_CALL));
}

struct Rewriter {
  LevelShape shape;
  int max_groups;
  Query* inner;
  List* columns;  // TargetEntry* of the inner level, in order
};

Var* InnerColumn(Rewriter* rewriter, Expr* expression, const char* name) {
  const auto position = static_cast<AttrNumber>(list_length(rewriter->columns) + 1);
  rewriter->columns =
      lappend(rewriter->columns, makeTargetEntry(expression, position, pstrdup(name), false));
  Node* node = reinterpret_cast<Node*>(expression);
  return makeVar(1, position, exprType(node), exprTypmod(node), exprCollation(node), 0);
}

// A built-in ordered-set aggregate of the inner level over one unit's rows
// in a group: percentile_disc(0.5) WITHIN GROUP (ORDER BY value), the unit's
// lower median, for the quantiles; mode() WITHIN GROUP (ORDER BY value), its
// most frequent value (the least in the call's collation among ties), for
// dp_select. Both are a value the unit has, so each unit contributes exactly
// one value to the group whatever its number of rows, which is what the
// row-level sensitivity of Smith's mechanism (max(f, 1 - f)) and of
// permute-and-flip's counts (1, monotonic) assume of one row.
Var* OneValuePerUnit(UnitCombination combination, Expr* value, Expr* filter, Oid input_collation,
                     Rewriter* rewriter) {
  const Oid value_type = exprType(reinterpret_cast<Node*>(value));
  Oid less = InvalidOid;
  Oid equal_operator = InvalidOid;
  bool hashable = false;
  get_sort_group_operators(value_type, false, false, false, &less, &equal_operator, nullptr,
                           &hashable);
  if (!OidIsValid(less) || !OidIsValid(equal_operator))
    RefuseUnitLevel("the aggregated type has no ordering for a privacy unit level",
                    "Over privacy units each unit's rows in a group are combined into one "
                    "value (its median, or its most frequent value), which needs a btree "
                    "ordering of the type.");
  const bool quantile = combination == UnitCombination::kQuantile;
  Oid declared[2] = {FLOAT8OID, ANYELEMENTOID};
  const char* name = quantile ? "percentile_disc" : "mode";
  const Oid function =
      LookupFuncName(list_make2(makeString(pstrdup("pg_catalog")), makeString(pstrdup(name))),
                     quantile ? 2 : 1, quantile ? declared : declared + 1, false);
  auto* aggref = makeNode(Aggref);
  aggref->aggfnoid = function;
  aggref->aggtype = value_type;  // anyelement resolved to the value's type
  aggref->aggcollid = exprCollation(reinterpret_cast<Node*>(value));
  aggref->inputcollid = input_collation;
  aggref->aggtranstype = InvalidOid;
  aggref->aggargtypes =
      quantile ? list_make2_oid(FLOAT8OID, value_type) : list_make1_oid(value_type);
  aggref->aggdirectargs = quantile ? list_make1(Float8Constant(0.5)) : NIL;
  auto* sorted = makeTargetEntry(value, 1, nullptr, false);
  sorted->ressortgroupref = 1;
  aggref->args = list_make1(sorted);
  auto* order = makeNode(SortGroupClause);
  order->tleSortGroupRef = 1;
  order->eqop = equal_operator;
  order->sortop = less;
  order->nulls_first = false;
  order->hashable = hashable;
  aggref->aggorder = list_make1(order);
  aggref->aggfilter = filter;
  aggref->aggkind = AGGKIND_ORDERED_SET;
  aggref->aggsplit = AGGSPLIT_SIMPLE;
  aggref->aggno = -1;
  aggref->aggtransno = -1;
  aggref->location = -1;
  return InnerColumn(rewriter, reinterpret_cast<Expr*>(aggref),
                     quantile ? "unit_median" : "unit_vote");
}

// The private aggregate over per-unit rows that replaces `aggref`.
Node* RewrittenAggregate(Aggref* aggref, Rewriter* rewriter) {
  const AggregateCacheEntry* entry = LookupAggregate(aggref->aggfnoid);
  const ArgumentLayout& layout = ArgumentLayoutOf(aggref);
  const auto* original = aggref;
  auto* outer = static_cast<Aggref*>(copyObjectImpl(aggref));
  if (entry->kind == nullptr) return reinterpret_cast<Node*>(outer);
  // Group selection: counts the rows of the outer level, one per unit kept
  // in the group; calibrated for a unit in up to max_groups groups.
  if (entry->kind->family == Family::kGroupSelection) {
    for (int position = 0; position < list_length(outer->args); ++position) {
      auto* argument = static_cast<TargetEntry*>(list_nth(outer->args, position));
      argument->expr = Divided(argument->expr, rewriter->max_groups);
    }
    return reinterpret_cast<Node*>(outer);
  }
  auto* value = static_cast<Expr*>(copyObjectImpl(ArgumentAt(aggref, 0)));
  auto* filter = static_cast<Expr*>(copyObjectImpl(original->aggfilter));
  Var* combined = nullptr;
  Oid combined_type = InvalidOid;
  const UnitCombination combination = UnitCombinationOf(aggref);
  if (combination == UnitCombination::kCount) {
    // A unit counts once in a group if it has a counted row there: count
    // per unit, NULL when zero, and dp_count counts the non-NULL rows.
    Aggref* count = InnerAggregate("count", value, filter, original->inputcollid);
    auto* nonzero = makeNode(NullIfExpr);
    nonzero->opno = OpernameGetOprid(list_make1(makeString(pstrdup("="))), INT8OID, INT8OID);
    nonzero->opfuncid = F_INT8EQ;
    nonzero->opresulttype = INT8OID;
    nonzero->args = list_make2(count, makeConst(INT8OID, -1, InvalidOid, sizeof(int64),
                                                Int64GetDatum(0), false, FLOAT8PASSBYVAL));
    nonzero->location = -1;
    combined = InnerColumn(rewriter, reinterpret_cast<Expr*>(nonzero), "unit_count");
    combined_type = INT8OID;
  } else if (combination == UnitCombination::kSum) {
    // Sum: each unit's total in the group, clamped to [lower, upper] in the
    // type of the built-in sum and cast back to the value's type (in range
    // after the clamp), so the private sum keeps its signature and result
    // type and clamps the per-unit total again (idempotent).
    Aggref* inner = InnerAggregate("sum", value, filter, original->inputcollid);
    const Oid value_type = exprType(reinterpret_cast<Node*>(value));
    auto* clamp_low = makeNode(MinMaxExpr);
    clamp_low->minmaxtype = inner->aggtype;
    clamp_low->op = IS_GREATEST;
    clamp_low->args = list_make2(
        inner, Coerced(static_cast<Expr*>(copyObjectImpl(ArgumentAt(aggref, layout.lower))),
                       inner->aggtype));
    clamp_low->location = -1;
    auto* clamp_high = makeNode(MinMaxExpr);
    clamp_high->minmaxtype = inner->aggtype;
    clamp_high->op = IS_LEAST;
    clamp_high->args = list_make2(
        clamp_low, Coerced(static_cast<Expr*>(copyObjectImpl(ArgumentAt(aggref, layout.upper))),
                           inner->aggtype));
    clamp_high->location = -1;
    // GREATEST and LEAST skip NULLs: a unit whose total is NULL (no
    // non-NULL value in the group, or a numeric total beyond numeric's
    // range) must stay NULL, so that it adds nothing, not the lower bound.
    auto* no_total = makeNode(NullTest);
    no_total->arg = static_cast<Expr*>(copyObjectImpl(inner));
    no_total->nulltesttype = IS_NULL;
    no_total->argisrow = false;
    no_total->location = -1;
    auto* when_no_total = makeNode(CaseWhen);
    when_no_total->expr = reinterpret_cast<Expr*>(no_total);
    when_no_total->result = reinterpret_cast<Expr*>(
        makeNullConst(inner->aggtype, -1, get_typcollation(inner->aggtype)));
    when_no_total->location = -1;
    auto* clamped = makeNode(CaseExpr);
    clamped->casetype = inner->aggtype;
    clamped->casecollid = get_typcollation(inner->aggtype);
    clamped->arg = nullptr;
    clamped->args = list_make1(when_no_total);
    clamped->defresult = reinterpret_cast<Expr*>(clamp_high);
    clamped->location = -1;
    Node* back = coerce_to_target_type(nullptr, reinterpret_cast<Node*>(clamped), inner->aggtype,
                                       value_type, -1, COERCION_EXPLICIT, COERCE_IMPLICIT_CAST, -1);
    if (back == nullptr) elog(ERROR, "dp_agg: no cast back to %s", format_type_be(value_type));
    combined = InnerColumn(rewriter, reinterpret_cast<Expr*>(back), "unit_sum");
    combined_type = value_type;
  } else if (combination == UnitCombination::kQuantile || combination == UnitCombination::kVote) {
    combined = OneValuePerUnit(combination, value, filter, original->inputcollid, rewriter);
    combined_type = combined->vartype;
  } else {
    // Mean: BigQuery's per-unit semantics, each unit's mean in the group,
    // clamped and averaged by the private mean (the overload for the type of
    // the built-in avg, whose result type is the same), so a unit weighs one
    // value whatever its number of rows.
    const Oid value_type = exprType(reinterpret_cast<Node*>(value));
    Expr* mean = nullptr;
    if (value_type == FLOAT8OID || value_type == NUMERICOID) {
      // avg(float8) raises when its sums of values or squares overflow, and
      // avg(numeric) beyond numeric's range: the unit's total that cannot
      // raise (dp_agg.unit_sum) over its count, divided by the total
      // division (NULL for no rows, like avg). The private mean clamps it.
      Aggref* total = InnerAggregate("sum", value, filter, original->inputcollid);
      Aggref* count =
          InnerAggregate("count", static_cast<Expr*>(copyObjectImpl(value)),
                         static_cast<Expr*>(copyObjectImpl(filter)), original->inputcollid);
      mean = reinterpret_cast<Expr*>(
          makeFuncExpr(TotalDivision(value_type), value_type,
                       list_make2(total, Coerced(reinterpret_cast<Expr*>(count), value_type)),
                       InvalidOid, InvalidOid, COERCE_EXPLICIT_CALL));
      combined_type = value_type;
    } else {
      // avg of the integer types accumulates in int8 or numeric without
      // overflow checks, and avg(float4) in float8, whose sums could only
      // overflow past 10^200 rows: none of them raises.
      Aggref* inner = InnerAggregate("avg", value, filter, original->inputcollid);
      combined_type = inner->aggtype;
      mean = reinterpret_cast<Expr*>(inner);
    }
    combined = InnerColumn(rewriter, mean, "unit_avg");
  }
  List* arguments = NIL;
  List* types = NIL;
  for (int position = 0; position < list_length(original->args); ++position) {
    Expr* argument = static_cast<Expr*>(copyObjectImpl(ArgumentAt(outer, position)));
    if (position == 0) {
      argument = reinterpret_cast<Expr*>(combined);
    } else if (position == layout.lower || position == layout.upper) {
      argument = Coerced(argument, combined_type);
    } else if (position == layout.epsilon || position == layout.delta) {
      argument = Divided(argument, rewriter->max_groups);
    }
    arguments = lappend(arguments, makeTargetEntry(argument, static_cast<AttrNumber>(position + 1),
                                                   nullptr, false));
    types = lappend_oid(types, exprType(reinterpret_cast<Node*>(argument)));
  }
  outer->args = arguments;
  outer->aggargtypes = types;
  outer->aggfilter = nullptr;
  // dp_count(DISTINCT unit, e): the per-unit level already made each unit
  // one row, so the outer count is a plain count of units.
  outer->aggdistinct = NIL;
  // dp_select compares the votes with its candidates in the call's collation.
  if (combination != UnitCombination::kVote) outer->inputcollid = InvalidOid;
  if (entry->final_kind == FinalKind::kMean || entry->kind->family == Family::kVariance) {
    // The overload of the same aggregate for the combined type.
    Oid argument_types[FUNC_MAX_ARGS];
    int count = 0;
    ListCell* cell;
    foreach (cell, types) argument_types[count++] = lfirst_oid(cell);
    List* name = list_make2(makeString(get_namespace_name(get_func_namespace(aggref->aggfnoid))),
                            makeString(get_func_name(aggref->aggfnoid)));
    outer->aggfnoid = LookupFuncName(name, count, argument_types, false);
    if (get_func_rettype(outer->aggfnoid) != aggref->aggtype)
      elog(ERROR, "dp_agg: %s over per-unit means changes its result type",
           AggregateName(aggref->aggfnoid));
  }
  return reinterpret_cast<Node*>(outer);
}

Node* RewriteOuterExpression(Node* node, Rewriter* rewriter) {
  if (node == nullptr) return nullptr;
  const int key = KeyPosition(rewriter->shape, node);
  if (key >= 0) {
    const auto* column = static_cast<TargetEntry*>(list_nth(rewriter->columns, key));
    Node* expression = reinterpret_cast<Node*>(column->expr);
    return reinterpret_cast<Node*>(makeVar(1, static_cast<AttrNumber>(key + 1),
                                           exprType(expression), exprTypmod(expression),
                                           exprCollation(expression), 0));
  }
  if (IsA(node, Aggref) && reinterpret_cast<Aggref*>(node)->agglevelsup == 0)
    return RewrittenAggregate(reinterpret_cast<Aggref*>(node), rewriter);
  return expression_tree_mutator(node, DP_EXPRESSION_MUTATOR(RewriteOuterExpression), rewriter);
}

SortGroupClause* GroupClauseFor(Oid type, Index reference) {
  Oid less = InvalidOid;
  Oid equal_operator = InvalidOid;
  bool hashable = false;
  get_sort_group_operators(type, true, true, false, &less, &equal_operator, nullptr, &hashable);
  auto* clause = makeNode(SortGroupClause);
  clause->tleSortGroupRef = reference;
  clause->eqop = equal_operator;
  clause->sortop = less;
  clause->nulls_first = false;
  clause->hashable = hashable;
  return clause;
}

// Appends the unit column to the subquery's outputs (and the item's column
// names); returns its column number at the outer level.
AttrNumber CarryUnitColumn(RangeTblEntry* entry, Index inner_item, AttrNumber inner_column,
                           Oid* type, int32* typmod, Oid* collation) {
  Query* subquery = entry->subquery;
  const Oid relation = rt_fetch(inner_item, subquery->rtable)->relid;
  get_atttypetypmodcoll(relation, inner_column, type, typmod, collation);
  const auto position = static_cast<AttrNumber>(list_length(subquery->targetList) + 1);
  ListCell* cell;
  foreach (cell, subquery->targetList) {
    if (static_cast<TargetEntry*>(lfirst(cell))->resjunk)
      elog(ERROR, "dp_agg: a unit subquery with junk columns");
  }
  subquery->targetList = lappend(
      subquery->targetList,
      makeTargetEntry(reinterpret_cast<Expr*>(makeVar(static_cast<int>(inner_item), inner_column,
                                                      *type, *typmod, *collation, 0)),
                      position, pstrdup("dp_agg_unit"), false));
  entry->eref->colnames = lappend(entry->eref->colnames, makeString(pstrdup("dp_agg_unit")));
  return position;
}

// Turns the FROM item that reads a UnitWithQuery into a subquery, as
// PostgreSQL inlines a WITH query referenced once. The WITH query itself is
// moved (not copied: the other rewrites of this query hold pointers into it,
// e.g. to its range table) and leaves the level's WITH list.
void InlineUnitWithQuery(Query* level, RangeTblEntry* entry) {
  CommonTableExpr* cte = UnitWithQuery(level, entry);
  if (cte == nullptr) elog(ERROR, "dp_agg: not a unit WITH query");
  entry->rtekind = RTE_SUBQUERY;
  entry->subquery = reinterpret_cast<Query*>(cte->ctequery);
  entry->security_barrier = false;
  entry->ctename = nullptr;
  entry->ctelevelsup = 0;
  entry->self_reference = false;
  entry->coltypes = NIL;
  entry->coltypmods = NIL;
  entry->colcollations = NIL;
  level->cteList = list_delete_ptr(level->cteList, cte);
}

}  // namespace

void RewriteForPrivacyUnits(Query* level, Index item, AttrNumber column, int max_groups) {
  Oid unit_type = InvalidOid;
  int32 unit_typmod = -1;
  Oid unit_collation = InvalidOid;
  RangeTblEntry* unit_entry = rt_fetch(item, level->rtable);
  if (unit_entry->rtekind == RTE_CTE) InlineUnitWithQuery(level, unit_entry);
  if (unit_entry->rtekind == RTE_SUBQUERY) {
    Index inner_item = 0;
    AttrNumber inner_column = InvalidAttrNumber;
    if (!UnitSubquery(unit_entry->subquery, &inner_item, &inner_column))
      elog(ERROR, "dp_agg: not a unit subquery");
    column = CarryUnitColumn(unit_entry, inner_item, inner_column, &unit_type, &unit_typmod,
                             &unit_collation);
  } else {
    get_atttypetypmodcoll(unit_entry->relid, column, &unit_type, &unit_typmod, &unit_collation);
  }
  Rewriter rewriter{{GroupKeyExpressions(level), item, column}, max_groups, nullptr, NIL};
  auto* inner = makeNode(Query);
  inner->commandType = CMD_SELECT;
  inner->querySource = QSRC_ORIGINAL;
  inner->canSetTag = true;
  inner->rtable = level->rtable;
  inner->jointree = level->jointree;
  inner->cteList = level->cteList;
  inner->hasRowSecurity = level->hasRowSecurity;
  inner->hasAggs = true;
  inner->hasWindowFuncs = true;
  rewriter.inner = inner;

  // Inner columns 1..k: the group keys; k+1: the unit. The unit comes
  // first in the inner GROUP BY, so that a sorted grouping's output is
  // already in the order of the sampler's PARTITION BY unit (no second sort);
  // PostgreSQL chooses between that and hashing by its cost estimates.
  Index reference = 0;
  ListCell* cell;
  foreach (cell, level->groupClause) {
    auto* clause = static_cast<SortGroupClause*>(copyObjectImpl(lfirst(cell)));
    Expr* key = static_cast<Expr*>(copyObjectImpl(
        get_sortgroupclause_tle(static_cast<SortGroupClause*>(lfirst(cell)), level->targetList)
            ->expr));
    char name[32];
    snprintf(name, sizeof name, "key_%u", reference + 1);
    InnerColumn(&rewriter, key, name);
    clause->tleSortGroupRef = ++reference;
    static_cast<TargetEntry*>(llast(rewriter.columns))->ressortgroupref = reference;
    inner->groupClause = lappend(inner->groupClause, clause);
  }
  InnerColumn(&rewriter,
              reinterpret_cast<Expr*>(makeVar(static_cast<int>(item), column, unit_type,
                                              unit_typmod, unit_collation, 0)),
              "unit");
  const Index unit_reference = ++reference;
  static_cast<TargetEntry*>(llast(rewriter.columns))->ressortgroupref = unit_reference;
  inner->groupClause = lcons(GroupClauseFor(unit_type, unit_reference), inner->groupClause);

  // The outer level's expressions, with each private aggregate's per-unit
  // combination appended to the inner columns.
  ListCell* target_cell;
  foreach (target_cell, level->targetList) {
    auto* entry = static_cast<TargetEntry*>(lfirst(target_cell));
    entry->expr = reinterpret_cast<Expr*>(
        RewriteOuterExpression(reinterpret_cast<Node*>(entry->expr), &rewriter));
  }
  level->havingQual = RewriteOuterExpression(level->havingQual, &rewriter);

  // The sampling of at most max_groups groups per unit: the window function
  // dp_agg.unit_group_sample(max_groups) over each unit's rows (one per
  // group) marks a uniformly random subset of min(max_groups, groups) of
  // them, drawn from the CSPRNG per query (never by the order of rows or
  // keys), and the outer level keeps the marked rows.
  const Oid sample_function = UnitGroupSampleFunction();
  if (!OidIsValid(sample_function)) elog(ERROR, "dp_agg: dp_agg.unit_group_sample is missing");
  auto* window = makeNode(WindowFunc);
  window->winfnoid = sample_function;
  window->wintype = BOOLOID;
  window->args = list_make1(Int4Constant(max_groups));
  window->winref = 1;
  window->winstar = false;
  window->winagg = false;
  window->location = -1;
  Var* kept = InnerColumn(&rewriter, reinterpret_cast<Expr*>(window), "unit_group_kept");
  auto* clause = makeNode(WindowClause);
  clause->partitionClause = list_make1(GroupClauseFor(unit_type, unit_reference));
  clause->orderClause = NIL;
  clause->frameOptions = FRAMEOPTION_DEFAULTS;
  clause->winref = 1;
  inner->windowClause = list_make1(clause);
  inner->targetList = rewriter.columns;
  // One level deeper now: references to outer queries reach one more up.
  IncrementVarSublevelsUp(reinterpret_cast<Node*>(inner), 1, 1);

  auto* entry = makeNode(RangeTblEntry);
  entry->rtekind = RTE_SUBQUERY;
  entry->subquery = inner;
  entry->security_barrier = true;
  entry->inFromCl = true;
  List* names = NIL;
  foreach (cell, rewriter.columns) {
    auto* column_entry = static_cast<TargetEntry*>(lfirst(cell));
    if (!column_entry->resjunk) names = lappend(names, makeString(column_entry->resname));
  }
  entry->alias = makeAlias("dp_agg_units", NIL);
  entry->eref = makeAlias("dp_agg_units", names);
  auto* reference_node = makeNode(RangeTblRef);
  reference_node->rtindex = 1;
  level->rtable = list_make1(entry);
  level->jointree = makeFromExpr(list_make1(reference_node), reinterpret_cast<Node*>(kept));
  level->cteList = NIL;
  level->hasWindowFuncs = false;
  level->hasAggs = true;
  level->hasRowSecurity = false;
}

bool IsUnitSumAggregate(Oid function) {
  return function == UnitSumAggregate(FLOAT4OID) || function == UnitSumAggregate(FLOAT8OID) ||
         function == UnitSumAggregate(NUMERICOID);
}

namespace {

// dp_agg.unit_group_sample(int), looked up when first asked after any change
// of pg_proc or pg_namespace (the judge asks on every statement).
bool sample_function_known = false;
Oid sample_function_oid = InvalidOid;
uint64 sample_function_changes = 0;

void ForgetSampleFunction(Datum, int, uint32) {
  sample_function_known = false;
  ++sample_function_changes;
}

}  // namespace

Oid UnitGroupSampleFunction() {
  static bool callbacks_registered = false;
  if (!callbacks_registered) {
    CacheRegisterSyscacheCallback(PROCOID, ForgetSampleFunction, 0);
    CacheRegisterSyscacheCallback(NAMESPACEOID, ForgetSampleFunction, 0);
    callbacks_registered = true;
  }
  if (sample_function_known) return sample_function_oid;
  const uint64 changes = sample_function_changes;
  const Oid argument = INT4OID;
  const Oid function = LookupFuncName(
      list_make2(makeString(pstrdup("dp_agg")), makeString(pstrdup("unit_group_sample"))), 1,
      &argument, true);
  // An invalidation that arrived during the lookup leaves it unkept.
  sample_function_known = changes == sample_function_changes;
  sample_function_oid = function;
  return function;
}

}  // namespace dp_pg
