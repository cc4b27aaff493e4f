#include "public_keys.h"

extern "C" {
#include "access/genam.h"
#include "access/table.h"
#include "catalog/namespace.h"
#include "catalog/pg_collation.h"
#include "catalog/pg_inherits.h"
#include "catalog/pg_namespace.h"
#include "nodes/makefuncs.h"
#include "parser/parsetree.h"
#include "utils/rel.h"
#include "optimizer/optimizer.h"
#include "utils/array.h"
#include "utils/fmgroids.h"
#include "utils/typcache.h"
}

#include "join_analysis.h"
#include "refusal.h"
#include "settings.h"

namespace dp_pg {

namespace {

constexpr int kMaxKeyCombinations = 100000;

// dp_agg.public_key_set (relation regclass, column_name name, keys text[]),
// read directly (the judge runs as the analyst, who may not read it).
// Returns the keys of `column` of `relation` as a text[] Datum copied into
// the current context, or 0 when none are declared.
Datum DeclaredKeyText(Oid relation, const char* column) {
  const Oid schema = get_namespace_oid("dp_agg", true);
  if (!OidIsValid(schema)) return 0;
  const Oid catalog = get_relname_relid("public_key_set", schema);
  if (!OidIsValid(catalog)) return 0;
  Relation table = table_open(catalog, AccessShareLock);
  ScanKeyData key;
  ScanKeyInit(&key, 1, BTEqualStrategyNumber, F_OIDEQ, ObjectIdGetDatum(relation));
  SysScanDesc scan = systable_beginscan(table, InvalidOid, false, nullptr, 1, &key);
  Datum keys = 0;
  HeapTuple tuple;
  while (HeapTupleIsValid(tuple = systable_getnext(scan))) {
    bool is_null = false;
    const Datum name = heap_getattr(tuple, 2, RelationGetDescr(table), &is_null);
    if (is_null || strcmp(NameStr(*DatumGetName(name)), column) != 0) continue;
    const Datum value = heap_getattr(tuple, 3, RelationGetDescr(table), &is_null);
    if (!is_null)
      keys = PointerGetDatum(PG_DETOAST_DATUM_COPY(value));  // a copy: the tuple goes with the scan
    break;
  }
  systable_endscan(scan);
  table_close(table, AccessShareLock);
  return keys;
}

// The keys declared for column `column` of `relation` or, when it has none,
// of its nearest ancestor (a partition or INHERITS child read by name holds
// its ancestors' rows: the parent's declaration covers them), found by the
// column's name.
Datum InheritedKeyText(Oid relation, const char* column) {
  const Datum own = DeclaredKeyText(relation, column);
  if (own != 0) return own;
  List* frontier = list_make1_oid(relation);
  List* seen = NIL;
  while (frontier != NIL) {
    const Oid child = linitial_oid(frontier);
    frontier = list_delete_first(frontier);
    Relation inherits = table_open(InheritsRelationId, AccessShareLock);
    ScanKeyData key;
    ScanKeyInit(&key, Anum_pg_inherits_inhrelid, BTEqualStrategyNumber, F_OIDEQ,
                ObjectIdGetDatum(child));
    SysScanDesc scan =
        systable_beginscan(inherits, InheritsRelidSeqnoIndexId, true, nullptr, 1, &key);
    List* parents = NIL;
    HeapTuple tuple;
    while (HeapTupleIsValid(tuple = systable_getnext(scan)))
      parents =
          lappend_oid(parents, reinterpret_cast<Form_pg_inherits>(GETSTRUCT(tuple))->inhparent);
    systable_endscan(scan);
    table_close(inherits, AccessShareLock);
    ListCell* cell;
    foreach (cell, parents) {
      const Oid parent = lfirst_oid(cell);
      if (list_member_oid(seen, parent)) continue;
      seen = lappend_oid(seen, parent);
      const Datum keys = DeclaredKeyText(parent, column);
      if (keys != 0) return keys;
      frontier = lappend_oid(frontier, parent);
    }
  }
  return 0;
}

bool SupportedKeyType(Oid type) {
  return type == TEXTOID || type == VARCHAROID || type == INT2OID || type == INT4OID ||
         type == INT8OID || type == BOOLOID || type == UUIDOID || type_is_enum(type);
}

// The declared keys of `column` of `relation` as constants of the column's
// type and collation; NIL when none are declared.
List* DeclaredKeys(Oid relation, AttrNumber column) {
  const char* name = get_attname(relation, column, false);
  const Datum text_keys = InheritedKeyText(relation, name);
  if (text_keys == 0) return NIL;
  Oid type = InvalidOid;
  int32 typmod = -1;
  Oid collation = InvalidOid;
  get_atttypetypmodcoll(relation, column, &type, &typmod, &collation);
  if (!SupportedKeyType(type))
    Refuse(ERRCODE_FEATURE_NOT_SUPPORTED,
           psprintf("the public keys declared for column \"%s\" do not fit its type %s", name,
                    format_type_be(type)),
           "The column's type was changed after its keys were declared.",
           "An administrator declares them again (dp_agg.set_public_keys) or removes them "
           "(dp_agg.unset_public_keys).");
  Datum* elements = nullptr;
  bool* nulls = nullptr;
  int count = 0;
  deconstruct_array(DatumGetArrayTypeP(text_keys), TEXTOID, -1, false, TYPALIGN_INT, &elements,
                    &nulls, &count);
  Oid input = InvalidOid;
  Oid io_parameter = InvalidOid;
  getTypeInputInfo(type, &input, &io_parameter);
  int16 length = 0;
  bool by_value = false;
  get_typlenbyval(type, &length, &by_value);
  List* keys = NIL;
  for (int i = 0; i < count; ++i) {
    if (nulls[i]) continue;
    // The input functions of these types read no session setting.
    const Datum value =
        OidInputFunctionCall(input, TextDatumGetCString(elements[i]), io_parameter, -1);
    keys = lappend(keys, makeConst(type, -1, collation, length, value, false, by_value));
  }
  return keys;
}

// Whether `relation` is known to Citus (pg_dist_partition), read without
// Citus's headers.
bool IsCitusTable(Oid relation) {
  const Oid catalog = get_relname_relid("pg_dist_partition", PG_CATALOG_NAMESPACE);
  if (!OidIsValid(catalog)) return false;
  Relation table = table_open(catalog, AccessShareLock);
  ScanKeyData key;
  ScanKeyInit(&key, 1, BTEqualStrategyNumber, F_OIDEQ, ObjectIdGetDatum(relation));
  SysScanDesc scan = systable_beginscan(table, InvalidOid, false, nullptr, 1, &key);
  const bool found = HeapTupleIsValid(systable_getnext(scan));
  systable_endscan(scan);
  table_close(table, AccessShareLock);
  return found;
}

// The level that a FROM item of `query` (a subquery, or a WITH query of
// this level or of an enclosing one) reads rows from, when it passes rows
// through (no grouping, set operation or set-returning function); nullptr
// otherwise. `outer` lists the levels enclosing `query`, innermost first;
// *inner_outer is set to those enclosing the returned level.
Query* PassThroughLevel(Query* query, List* outer, const RangeTblEntry* entry, List** inner_outer) {
  Query* inner = nullptr;
  if (entry->rtekind == RTE_SUBQUERY) {
    inner = entry->subquery;
    *inner_outer = lcons(query, list_copy(outer));
  } else if (entry->rtekind == RTE_CTE) {
    // A WITH query named in a subquery below its own level (ctelevelsup >
    // 0) belongs to that enclosing level.
    const auto up = static_cast<int>(entry->ctelevelsup);
    if (up > list_length(outer)) return nullptr;
    Query* owner = up == 0 ? query : static_cast<Query*>(list_nth(outer, up - 1));
    ListCell* cell;
    foreach (cell, owner->cteList) {
      auto* cte = static_cast<CommonTableExpr*>(lfirst(cell));
      if (strcmp(cte->ctename, entry->ctename) == 0 && !cte->cterecursive)
        inner = reinterpret_cast<Query*>(cte->ctequery);
    }
    *inner_outer = up == 0 ? lcons(query, list_copy(outer)) : list_copy_tail(outer, up - 1);
  }
  if (inner == nullptr || inner->commandType != CMD_SELECT || inner->setOperations != nullptr ||
      inner->groupClause != NIL || inner->hasAggs || inner->hasTargetSRFs)
    return nullptr;
  return inner;
}

// Whether `expression` of `query` computes its value from a column with
// declared public keys, through subqueries in FROM at any depth.
bool ComputedFromDeclared(Query* query, List* outer, Node* expression) {
  check_stack_depth();
  ListCell* cell;
  foreach (cell, pull_var_clause(FlatCopy(query, expression), 0)) {
    const auto* var = static_cast<Var*>(lfirst(cell));
    if (var->varlevelsup != 0 || var->varattno <= 0) continue;
    const RangeTblEntry* entry = rt_fetch(var->varno, query->rtable);
    if (entry->rtekind == RTE_RELATION) {
      if (InheritedKeyText(entry->relid, get_attname(entry->relid, var->varattno, false)) != 0)
        return true;
      continue;
    }
    List* inner_outer = NIL;
    Query* inner = PassThroughLevel(query, outer, entry, &inner_outer);
    if (inner != nullptr && var->varattno <= list_length(inner->targetList) &&
        ComputedFromDeclared(
            inner, inner_outer,
            reinterpret_cast<Node*>(
                static_cast<TargetEntry*>(list_nth(inner->targetList, var->varattno - 1))->expr)))
      return true;
  }
  return false;
}

// The table column that `var` (of `query`'s own range table) carries: the
// column itself, or the column a subquery or WITH query in FROM passes
// through unchanged, at any depth (so `FROM (SELECT * FROM t WHERE ...) s
// GROUP BY s.region` is grouped by t.region). Returns the table's RTE and
// sets *column; nullptr when the value is computed or not a table's.
const RangeTblEntry* CarriedColumn(Query* query, List* outer, const Var* var, AttrNumber* column) {
  check_stack_depth();
  if (var->varlevelsup != 0 || var->varattno <= 0) return nullptr;
  const RangeTblEntry* entry = rt_fetch(var->varno, query->rtable);
  if (entry->rtekind == RTE_RELATION) {
    *column = var->varattno;
    return entry;
  }
  List* inner_outer = NIL;
  Query* inner = PassThroughLevel(query, outer, entry, &inner_outer);
  if (inner == nullptr || var->varattno > list_length(inner->targetList)) return nullptr;
  auto* target = static_cast<TargetEntry*>(list_nth(inner->targetList, var->varattno - 1));
  Node* expression = FlatCopy(inner, target->expr);
  if (IsA(expression, Var))
    return CarriedColumn(inner, inner_outer, reinterpret_cast<Var*>(expression), column);
  // A value computed below from a column with public keys: the rows with
  // other values cannot be told apart here.
  if (ComputedFromDeclared(inner, inner_outer, expression))
    Refuse(ERRCODE_FEATURE_NOT_SUPPORTED,
           "a group key computed in a subquery from a column with public keys",
           "The column has declared public keys (dp_agg.public_keys): a group key computed from "
           "it must be computed in the query level that groups, where rows with other values "
           "are left out; nothing was charged.",
           "Select the column itself in the subquery and compute the key in the GROUP BY "
           "level, e.g. SELECT lower(s.region) ... FROM (SELECT region ...) s GROUP BY 1.");
  return nullptr;
}

// The declared keys of the column `var` reads, when it is a column of a
// protected table of the level (directly or through subqueries in FROM);
// NIL otherwise.
List* KeysOfVar(Query* query, List* outer, const Var* var, const Bitmapset* protected_items) {
  if (var->varlevelsup != 0 || var->varattno <= 0 ||
      !bms_is_member(static_cast<int>(var->varno), protected_items))
    return NIL;
  AttrNumber column = InvalidAttrNumber;
  const RangeTblEntry* entry = CarriedColumn(query, outer, var, &column);
  if (entry == nullptr) return NIL;
  List* keys = DeclaredKeys(entry->relid, column);
  if (keys != NIL && IsCitusTable(entry->relid))
    Refuse(ERRCODE_FEATURE_NOT_SUPPORTED, "public keys are not supported on Citus tables yet",
           "The column has declared public keys (dp_agg.public_keys), and dp_agg does not yet "
           "release them on a distributed table; nothing was charged.",
           "Group by the column on a local table, or ask an administrator to remove its keys "
           "(dp_agg.unset_public_keys) to group it with group selection.");
  return keys;
}

Node* CoerceTo(Node* node, Oid type) {
  if (!OidIsValid(type) || exprType(node) == type || IsPolymorphicType(type)) return node;
  return reinterpret_cast<Node*>(
      makeRelabelType(reinterpret_cast<Expr*>(node), type, -1, InvalidOid, COERCE_IMPLICIT_CAST));
}

// Equality of values of `type` that holds only for the same value: the
// type's default equality, under collation "C" for text types.
Oid KeyCollation(Oid type) { return type_is_collatable(type) ? C_COLLATION_OID : InvalidOid; }

Oid KeyEquality(Oid type) {
  const TypeCacheEntry* entry = lookup_type_cache(type, TYPECACHE_EQ_OPR);
  if (!OidIsValid(entry->eq_opr))
    elog(ERROR, "dp_agg: no equality operator for type %s", format_type_be(type));
  return entry->eq_opr;
}

// The key equality of values of `type` and its input types.
struct KeyOperator {
  Oid opno;
  Oid left;
  Oid right;
  Oid collation;
};

KeyOperator KeyOperatorOf(Oid type) {
  KeyOperator key{KeyEquality(type), InvalidOid, InvalidOid, KeyCollation(type)};
  op_input_types(key.opno, &key.left, &key.right);
  return key;
}

// `column` = ANY(keys).
Node* InKeys(Node* column, List* keys) {
  const Oid type = exprType(column);
  const KeyOperator key = KeyOperatorOf(type);
  const Oid element = IsPolymorphicType(key.right) ? type : key.right;
  const int count = list_length(keys);
  auto* values = static_cast<Datum*>(palloc(sizeof(Datum) * count));
  int i = 0;
  ListCell* cell;
  foreach (cell, keys) values[i++] = static_cast<Const*>(lfirst(cell))->constvalue;
  int16 length = 0;
  bool by_value = false;
  char align = 0;
  get_typlenbyvalalign(element, &length, &by_value, &align);
  ArrayType* array = construct_array(values, count, element, length, by_value, align);
  auto* test = makeNode(ScalarArrayOpExpr);
  test->opno = key.opno;
  test->opfuncid = get_opcode(key.opno);
  test->useOr = true;
  test->inputcollid = key.collation;
  test->args =
      list_make2(CoerceTo(column, key.left), makeConst(get_array_type(element), -1, key.collation,
                                                       -1, PointerGetDatum(array), false, false));
  test->location = -1;
  return reinterpret_cast<Node*>(test);
}

// `key_column` = `column`, under the key equality.
Node* KeyEquals(Node* key_column, Node* column) {
  const KeyOperator key = KeyOperatorOf(exprType(column));
  return reinterpret_cast<Node*>(make_opclause(
      key.opno, BOOLOID, false, reinterpret_cast<Expr*>(CoerceTo(key_column, key.left)),
      reinterpret_cast<Expr*>(CoerceTo(column, key.right)), InvalidOid, key.collation));
}

// PostgreSQL 15 declares expression_tree_mutator as taking `Node *(*)()`.
#define DP_KEYS_MUTATOR(function) \
  reinterpret_cast<Node* (*)()>(reinterpret_cast<void (*)()>(function))

struct KeyReplacement {
  List* columns;  // Node*: the group key expressions as the level computes them
  List* keys;  // Var*: the key column that replaces each
  Node* matched;  // non-NULL exactly on rows that met a key: the first group key
};

// Replaces the group keys by the key columns outside aggregates, and gives
// every aggregate of the level FILTER (WHERE matched IS NOT NULL).
Node* ReplaceKeys(Node* node, KeyReplacement* replacement) {
  if (node == nullptr) return nullptr;
  ListCell* column;
  ListCell* key;
  forboth(column, replacement->columns, key, replacement->keys) {
    if (equal(node, lfirst(column))) return static_cast<Node*>(copyObjectImpl(lfirst(key)));
  }
  if (IsA(node, Aggref)) {
    return reinterpret_cast<Node*>(
        AggregateOfMatchedRows(reinterpret_cast<const Aggref*>(node),
                               reinterpret_cast<const Expr*>(replacement->matched)));
  }
  if (IsA(node, Query)) return node;
  return expression_tree_mutator(node, DP_KEYS_MUTATOR(ReplaceKeys), replacement);
}

// The rows of the key relation: the cross product of the key sets.
List* KeyRows(const List* key_sets) {
  List* rows = list_make1(NIL);
  ListCell* set;
  foreach (set, key_sets) {
    List* extended = NIL;
    ListCell* row;
    foreach (row, rows) {
      ListCell* key;
      foreach (key, static_cast<List*>(lfirst(set)))
        extended = lappend(extended, lappend(list_copy(static_cast<List*>(lfirst(row))),
                                             copyObjectImpl(lfirst(key))));
    }
    rows = extended;
  }
  return rows;
}

constexpr int kMaxConstantKeyRows = 1000;

// The values of column `column` (from 1) of a constant key list, folded;
// nullptr when one is not a constant.
// `(VALUES ...) k(a, b)` in FROM is a subquery over the VALUES item: the
// VALUES item and its column that column `*column` of the subquery shows.
const RangeTblEntry* ValuesBehindSubquery(const RangeTblEntry* entry, AttrNumber* column) {
  const Query* query = entry->subquery;
  if (query == nullptr || query->commandType != CMD_SELECT || query->setOperations != nullptr ||
      query->cteList != NIL || query->hasAggs || query->hasWindowFuncs || query->hasTargetSRFs ||
      query->hasSubLinks || query->groupClause != NIL || query->distinctClause != NIL ||
      query->limitCount != nullptr || query->limitOffset != nullptr ||
      query->jointree->quals != nullptr || list_length(query->jointree->fromlist) != 1 ||
      !IsA(linitial(query->jointree->fromlist), RangeTblRef) || *column < 1 ||
      *column > list_length(query->targetList))
    return nullptr;
  const auto* target = static_cast<TargetEntry*>(list_nth(query->targetList, *column - 1));
  const int index = static_cast<RangeTblRef*>(linitial(query->jointree->fromlist))->rtindex;
  const RangeTblEntry* values = rt_fetch(index, query->rtable);
  if (values->rtekind != RTE_VALUES || !IsA(target->expr, Var)) return nullptr;
  const auto* var = reinterpret_cast<Var*>(target->expr);
  if (var->varno != index || var->varlevelsup != 0) return nullptr;
  *column = var->varattno;
  return values;
}

// The array of `unnest(<constant array>)` (one function, no ORDINALITY, a
// one-dimensional array that folds to a constant); nullptr otherwise.
ArrayType* UnnestedConstantArray(const RangeTblEntry* entry) {
  if (entry->rtekind != RTE_FUNCTION || entry->funcordinality || list_length(entry->functions) != 1)
    return nullptr;
  const auto* function = static_cast<RangeTblFunction*>(linitial(entry->functions));
  if (!IsA(function->funcexpr, FuncExpr)) return nullptr;
  const auto* call = reinterpret_cast<FuncExpr*>(function->funcexpr);
  if (call->funcid != F_UNNEST_ANYARRAY || list_length(call->args) != 1) return nullptr;
  Node* argument =
      eval_const_expressions(nullptr, static_cast<Node*>(copyObjectImpl(linitial(call->args))));
  if (!IsA(argument, Const) || reinterpret_cast<Const*>(argument)->constisnull) return nullptr;
  ArrayType* array = DatumGetArrayTypeP(reinterpret_cast<Const*>(argument)->constvalue);
  return ARR_NDIM(array) > 1 ? nullptr : array;
}

List* ConstantColumn(const RangeTblEntry* entry, AttrNumber column) {
  List* values = NIL;
  if (entry->rtekind == RTE_SUBQUERY) {
    const RangeTblEntry* inner = ValuesBehindSubquery(entry, &column);
    return inner == nullptr ? nullptr : ConstantColumn(inner, column);
  }
  if (entry->rtekind == RTE_VALUES) {
    if (list_length(entry->values_lists) > kMaxConstantKeyRows) return nullptr;
    ListCell* row;
    foreach (row, entry->values_lists) {
      auto* cells = static_cast<List*>(lfirst(row));
      if (column < 1 || column > list_length(cells)) return nullptr;
      Node* value = eval_const_expressions(
          nullptr, static_cast<Node*>(copyObjectImpl(list_nth(cells, column - 1))));
      if (!IsA(value, Const)) return nullptr;
      values = lappend(values, value);
    }
    return values;
  }
  ArrayType* array = column == 1 ? UnnestedConstantArray(entry) : nullptr;
  if (array == nullptr) return nullptr;
  const Oid element = ARR_ELEMTYPE(array);
  int16 length = 0;
  bool by_value = false;
  char align = 0;
  get_typlenbyvalalign(element, &length, &by_value, &align);
  Datum* elements = nullptr;
  bool* nulls = nullptr;
  int count = 0;
  deconstruct_array(array, element, length, by_value, align, &elements, &nulls, &count);
  if (count > kMaxConstantKeyRows) return nullptr;
  for (int i = 0; i < count; ++i)
    values = lappend(values,
                     makeConst(element, -1, InvalidOid, length, elements[i], nulls[i], by_value));
  return values;
}

}  // namespace

bool IsConstantKeyList(const RangeTblEntry* entry) {
  if (entry->lateral) return false;
  if (entry->rtekind == RTE_SUBQUERY || entry->rtekind == RTE_VALUES) {
    const int columns = entry->rtekind == RTE_SUBQUERY
                            ? list_length(entry->subquery->targetList)
                            : list_length(static_cast<List*>(linitial(entry->values_lists)));
    for (int column = 1; column <= columns; ++column)
      if (ConstantColumn(entry, static_cast<AttrNumber>(column)) == nullptr) return false;
    return columns > 0;
  }
  return entry->rtekind == RTE_FUNCTION && ConstantColumn(entry, 1) != nullptr;
}

bool IsLongKeyList(const RangeTblEntry* entry) {
  if (entry->lateral) return false;
  AttrNumber column = 1;
  if (entry->rtekind == RTE_SUBQUERY) entry = ValuesBehindSubquery(entry, &column);
  if (entry == nullptr) return false;
  if (entry->rtekind == RTE_VALUES) return list_length(entry->values_lists) > kMaxConstantKeyRows;
  ArrayType* array = UnnestedConstantArray(entry);
  return array != nullptr && ArrayGetNItems(ARR_NDIM(array), ARR_DIMS(array)) > kMaxConstantKeyRows;
}

Oid ConstantKeyColumnType(const RangeTblEntry* entry, AttrNumber column) {
  List* values = ConstantColumn(entry, column);
  return values == nullptr ? InvalidOid : static_cast<Const*>(linitial(values))->consttype;
}

bool ConstantColumnDistinct(const RangeTblEntry* entry, AttrNumber column) {
  List* values = ConstantColumn(entry, column);
  if (values == nullptr) return false;
  const Oid type = static_cast<Const*>(linitial(values))->consttype;
  const Oid equality = get_opcode(KeyEquality(type));
  const Oid collation = KeyCollation(type);
  ListCell* a;
  foreach (a, values) {
    const auto* left = static_cast<Const*>(lfirst(a));
    if (left->constisnull) return false;
    for (ListCell* b = lnext(values, a); b != nullptr; b = lnext(values, b)) {
      const auto* right = static_cast<Const*>(lfirst(b));
      if (!right->constisnull && DatumGetBool(OidFunctionCall2Coll(
                                     equality, collation, left->constvalue, right->constvalue)))
        return false;
    }
  }
  return true;
}

PublicKeyPlan* PlanPublicKeys(Query* query, List* outer, const Bitmapset* protected_items) {
  if (query->groupClause == NIL || protected_items == nullptr) return nullptr;
  auto* plan = static_cast<PublicKeyPlan*>(palloc0(sizeof(PublicKeyPlan)));
  plan->release_all = true;
  ListCell* cell;
  foreach (cell, query->groupClause) {
    auto* clause = static_cast<SortGroupClause*>(lfirst(cell));
    Node* expression = FlatCopy(query, get_sortgroupclause_tle(clause, query->targetList)->expr);
    List* bare_keys = NIL;
    ListCell* var_cell;
    foreach (var_cell, pull_var_clause(expression, 0)) {
      auto* var = static_cast<Var*>(lfirst(var_cell));
      List* keys = KeysOfVar(query, outer, var, protected_items);
      if (keys == NIL) continue;
      if (!list_member(plan->filter_columns, var)) {
        plan->filter_columns = lappend(plan->filter_columns, var);
        plan->filter_keys = lappend(plan->filter_keys, keys);
      }
      if (IsA(expression, Var)) bare_keys = keys;
    }
    if (bare_keys == NIL) plan->release_all = false;
    plan->group_keys = lappend(plan->group_keys, bare_keys);
  }
  if (plan->filter_columns == NIL) return nullptr;
  // The same column twice: its groups are not the cross product.
  if (list_length(plan->filter_columns) != list_length(query->groupClause))
    plan->release_all = false;
  if (plan->release_all) {
    double combinations = 1;
    foreach (cell, plan->group_keys) combinations *= list_length(static_cast<List*>(lfirst(cell)));
    if (combinations > kMaxKeyCombinations)
      Refuse(ERRCODE_PROGRAM_LIMIT_EXCEEDED,
             "the GROUP BY has more than 100,000 combinations of public keys",
             "Each combination of the declared keys is released, empty ones too.",
             "Group by fewer columns with public keys.");
  } else {
    plan->group_keys = NIL;
  }
  return plan;
}

void FilterToPublicKeys(Query* level, const PublicKeyPlan* plan) {
  ListCell* column;
  ListCell* keys;
  forboth(column, plan->filter_columns, keys, plan->filter_keys) {
    Node* test = InKeys(static_cast<Node*>(copyObjectImpl(lfirst(column))),
                        static_cast<List*>(lfirst(keys)));
    level->jointree->quals = make_and_qual(level->jointree->quals, test);
  }
}

void ReleasePublicKeys(Query* level, const PublicKeyPlan* plan) {
  if (TestFaultIs(TestFault::kPublicKeysWithoutJoin)) return;
  // The key relation: VALUES of the key combinations.
  auto* values = makeNode(RangeTblEntry);
  values->rtekind = RTE_VALUES;
  values->values_lists = KeyRows(plan->group_keys);
  List* names = NIL;
  KeyReplacement replacement{NIL, NIL, nullptr};
  const Index values_index = static_cast<Index>(list_length(level->rtable) + 1);
  const Index join_index = values_index + 1;
  Node* on = nullptr;
  List* alias_vars = NIL;
  List* left_columns = NIL;
  AttrNumber position = 0;
  ListCell* clause_cell;
  ListCell* keys_cell;
  forboth(clause_cell, level->groupClause, keys_cell, plan->group_keys) {
    ++position;
    auto* clause = static_cast<SortGroupClause*>(lfirst(clause_cell));
    Node* column = reinterpret_cast<Node*>(
        copyObjectImpl(get_sortgroupclause_tle(clause, level->targetList)->expr));
    const auto* first = static_cast<Const*>(linitial(static_cast<List*>(lfirst(keys_cell))));
    values->coltypes = lappend_oid(values->coltypes, first->consttype);
    values->coltypmods = lappend_int(values->coltypmods, -1);
    values->colcollations = lappend_oid(values->colcollations, first->constcollid);
    names = lappend(names, makeString(psprintf("key%d", position)));
    Var* key = makeVar(values_index, position, first->consttype, -1, first->constcollid, 0);
    Node* key_node = CoerceTo(reinterpret_cast<Node*>(key), exprType(column));
    replacement.columns = lappend(replacement.columns, column);
    replacement.keys = lappend(replacement.keys, key_node);
    if (replacement.matched == nullptr) replacement.matched = column;
    on = make_and_qual(on, KeyEquals(reinterpret_cast<Node*>(key), column));
    alias_vars = lappend(alias_vars, copyObjectImpl(key));
    left_columns = lappend_int(left_columns, position);
  }
  values->eref = makeAlias("dp_agg_public_keys", names);
  values->inFromCl = true;
  level->rtable = lappend(level->rtable, values);

  // (VALUES ...) LEFT JOIN (FROM ... WHERE ...) ON key = column.
  FromExpr* from = level->jointree;
  Node* data = list_length(from->fromlist) == 1 && from->quals == nullptr
                   ? static_cast<Node*>(linitial(from->fromlist))
                   : reinterpret_cast<Node*>(from);
  auto* join_entry = makeNode(RangeTblEntry);
  join_entry->rtekind = RTE_JOIN;
  join_entry->jointype = JOIN_LEFT;
  join_entry->joinmergedcols = 0;
  join_entry->joinaliasvars = alias_vars;
  join_entry->joinleftcols = left_columns;
  join_entry->joinrightcols = NIL;
  join_entry->eref = makeAlias("dp_agg_public_join", list_copy(names));
  join_entry->inFromCl = true;
  level->rtable = lappend(level->rtable, join_entry);
  auto* reference = makeNode(RangeTblRef);
  reference->rtindex = static_cast<int>(values_index);
  auto* join = makeNode(JoinExpr);
  join->jointype = JOIN_LEFT;
  join->isNatural = false;
  join->larg = reinterpret_cast<Node*>(reference);
  join->rarg = data;
  join->quals = on;
  join->rtindex = static_cast<int>(join_index);
  level->jointree = makeFromExpr(list_make1(join), nullptr);

  // The select list (group keys, ORDER BY) and HAVING read the keys.
  ListCell* cell;
  foreach (cell, level->targetList) {
    auto* entry = static_cast<TargetEntry*>(lfirst(cell));
    entry->expr =
        reinterpret_cast<Expr*>(ReplaceKeys(reinterpret_cast<Node*>(entry->expr), &replacement));
  }
  level->havingQual = ReplaceKeys(level->havingQual, &replacement);
}

Aggref* AggregateOfMatchedRows(const Aggref* aggref, const Expr* matched_row) {
  auto* copy = static_cast<Aggref*>(copyObjectImpl(aggref));
  if (copy->agglevelsup != 0 || TestFaultIs(TestFault::kUnmatchedRowsAggregated)) return copy;
  auto* matched = makeNode(NullTest);
  matched->arg = static_cast<Expr*>(copyObjectImpl(matched_row));
  matched->nulltesttype = IS_NOT_NULL;
  matched->argisrow = false;
  matched->location = -1;
  copy->aggfilter =
      copy->aggfilter == nullptr
          ? reinterpret_cast<Expr*>(matched)
          : reinterpret_cast<Expr*>(make_andclause(list_make2(matched, copy->aggfilter)));
  return copy;
}

}  // namespace dp_pg
