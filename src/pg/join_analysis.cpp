#include "join_analysis.h"

extern "C" {
#include "access/htup_details.h"
#include "access/stratnum.h"
#include "access/table.h"
#include "catalog/pg_am.h"
#include "catalog/pg_class.h"
#include "catalog/pg_index.h"
#include "catalog/pg_inherits.h"
#include "commands/defrem.h"
#include "nodes/makefuncs.h"
#include "parser/parsetree.h"
#include "utils/rel.h"
}

#include "public_keys.h"
#include "refusal.h"

namespace dp_pg {

namespace {

bool CollectVarnos(Node* node, Bitmapset** varnos) {
  if (node == nullptr) return false;
  if (IsA(node, Var)) {
    const auto* var = reinterpret_cast<Var*>(node);
    if (var->varlevelsup == 0) *varnos = bms_add_member(*varnos, var->varno);
    return false;
  }
  return expression_tree_walker(node, DP_EXPRESSION_WALKER(CollectVarnos), varnos);
}

// An equality that may pin down the row of a public table: where it holds.
struct Equality {
  OpExpr* expression;
  bool everywhere;  // WHERE, or the ON of an inner join
  Bitmapset* nullable_side;  // else: the nullable side of its outer join
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

// Collects the binary operator conditions of the join tree, each with where
// it holds, and notes whether the protected item lies on the nullable side
// of an outer join.
void AnalyzeJoinTree(Query* query, Node* node, FromAnalysis* analysis) {
  if (node == nullptr || IsA(node, RangeTblRef)) return;
  if (IsA(node, FromExpr)) {
    auto* from = reinterpret_cast<FromExpr*>(node);
    ListCell* cell;
    foreach (cell, from->fromlist)
      AnalyzeJoinTree(query, static_cast<Node*>(lfirst(cell)), analysis);
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
      if (var->varlevelsup != 0 || var->varno != static_cast<int>(item) || var->varattno != column)
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

// A constant key list (public_keys.h) is pinned when one of its columns
// holds distinct values and is pinned like a unique key's column.
bool PinnedByDistinctConstants(const FromAnalysis& analysis, Index item, const RangeTblEntry* entry,
                               const Bitmapset* known) {
  const int columns = list_length(entry->eref->colnames);
  for (int column = 1; column <= columns; ++column) {
    const Oid type = ConstantKeyColumnType(entry, static_cast<AttrNumber>(column));
    if (!OidIsValid(type)) continue;
    const Oid opclass = GetDefaultOpClass(type, BTREE_AM_OID);
    if (!OidIsValid(opclass)) continue;
    if (PinsColumn(analysis, item, static_cast<AttrNumber>(column), get_opclass_family(opclass),
                   known) &&
        ConstantColumnDistinct(entry, static_cast<AttrNumber>(column)))
      return true;
  }
  return false;
}

// Only plain tables can be looked up by a unique key: refuses any other
// public item, and a LATERAL one (it runs once per row of the items before
// it).
void CheckPublicItemKinds(Query* query, const Bitmapset* public_items,
                          const List* materialized_entries, int code) {
  int item = -1;
  while ((item = bms_next_member(public_items, item)) >= 0) {
    RangeTblEntry* entry = rt_fetch(item, query->rtable);
    const bool lateral =
        entry->lateral && !list_member_ptr(materialized_entries, static_cast<void*>(entry));
    if (lateral)
      Refuse(code, "LATERAL next to protected rows is not supported",
             "A LATERAL item runs once per row of the items before it.", kJoinHint);
    if (entry->rtekind != RTE_RELATION && IsLongKeyList(entry))
      Refuse(code, "a list of keys joined to protected rows has more than 1,000 rows",
             "A VALUES list or unnest of constants LEFT JOINed to protected rows releases every "
             "key it lists, up to 1,000 keys; nothing was charged.",
             "List at most 1,000 keys per query, or ask an administrator to declare the keys "
             "(dp_agg.set_public_keys, up to 100,000) and GROUP BY the column itself.");
    if (entry->rtekind != RTE_RELATION && !IsConstantKeyList(entry))
      Refuse(code,
             "protected rows are combined with a function, VALUES list, subquery or WITH "
             "query",
             "Each protected row could meet many of its rows; only tables with a unique key "
             "can be looked up safely.",
             kJoinHint);
  }
}

}  // namespace

Node* FlatCopy(Query* query, const void* node) {
  return flatten_join_alias_vars(query, static_cast<Node*>(copyObjectImpl(node)));
}

Bitmapset* VarnosOf(Node* node) {
  Bitmapset* varnos = nullptr;
  CollectVarnos(node, &varnos);
  return varnos;
}

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

// The pinning is a fixpoint, so that chains of lookups work and cycles that
// pin nothing do not.
FromAnalysis CheckFrom(Query* query, const Bitmapset* items, const Bitmapset* protected_items,
                       const List* materialized_entries, int code) {
  FromAnalysis analysis;
  if (bms_num_members(protected_items) > 1)
    Refuse(code, "a query level reads more than one protected table, or one table twice",
           "A join of protected rows with protected rows can repeat each of them many times.",
           kJoinHint);
  analysis.protected_item = static_cast<Index>(bms_singleton_member(protected_items));
  Bitmapset* public_items = bms_difference(items, protected_items);
  CheckPublicItemKinds(query, public_items, materialized_entries, code);
  AnalyzeJoinTree(query, reinterpret_cast<Node*>(query->jointree), &analysis);
  Bitmapset* known = bms_make_singleton(static_cast<int>(analysis.protected_item));
  bool progress = true;
  int item;
  while (progress) {
    progress = false;
    item = -1;
    while ((item = bms_next_member(public_items, item)) >= 0) {
      if (bms_is_member(item, known)) continue;
      const RangeTblEntry* entry = rt_fetch(item, query->rtable);
      if (entry->rtekind == RTE_RELATION
              ? PinnedByUniqueKey(analysis, item, entry->relid, entry->inh, known)
              : PinnedByDistinctConstants(analysis, item, entry, known)) {
        known = bms_add_member(known, item);
        progress = true;
      }
    }
  }
  item = -1;
  while ((item = bms_next_member(public_items, item)) >= 0) {
    if (bms_is_member(item, known)) continue;
    char rule[NAMEDATALEN + 128];
    const RangeTblEntry* entry = rt_fetch(item, query->rtable);
    if (entry->rtekind != RTE_RELATION)
      Refuse(code, "a list of keys is joined to protected rows without a column of distinct keys",
             "Each protected row must meet at most one of its rows: join with = on the list's "
             "own column (not an expression of it), whose values in the list are distinct and "
             "not NULL.",
             "Remove the duplicate keys, e.g. FROM (VALUES ('north'), ('south')) k(region) LEFT "
             "JOIN t ON t.region = k.region GROUP BY k.region.");
    snprintf(rule, sizeof rule, "table \"%s\" is joined to protected rows without a unique key",
             get_rel_name(entry->relid));
    Refuse(code, rule,
           "Each protected row could meet many of its rows and count many times (this includes "
           "cross joins).",
           kJoinHint);
  }
  return analysis;
}

}  // namespace dp_pg
