// The FROM clause of a query level that reads protected rows: which items
// it joins, the conditions that hold where, and whether every public table
// is pinned to at most one row per protected row by one of its unique keys.
// Everything here reads the query and the catalogs; nothing modifies the
// query.
#ifndef DP_AGG_PG_JOIN_ANALYSIS_H
#define DP_AGG_PG_JOIN_ANALYSIS_H

#include "pg_includes.h"

namespace dp_pg {

// A copy of part of the query (an expression or a List) with join alias
// variables (USING columns, join output columns) replaced by the base
// columns behind them.
Node* FlatCopy(Query* query, const void* node);

// The range table indexes of the level's own columns (varlevelsup 0) that
// `node` uses.
Bitmapset* VarnosOf(Node* node);

// Range table indexes of the base items under a jointree node.
void CollectItems(Node* node, Bitmapset** items);

// The conditions of WHERE and of every JOIN ... ON under a jointree node.
void CollectConditions(Node* node, List** conditions);

// What CheckFrom learnt about a level's FROM clause.
struct FromAnalysis {
  Index protected_item = 0;
  bool protected_nullable = false;  // inside the nullable side of an outer join
  List* equalities = NIL;  // Equality* (join_analysis.cpp)
};

// Checks that every row of the level's output contains at most one
// protected row and each protected row appears in at most one output row:
// exactly one protected item (of `items`, the level's FROM items,
// `protected_items` are those that return protected rows), and every other
// item a public table whose row is pinned, through equalities on one of its
// unique keys, by the protected row and the tables already pinned. Refuses
// with SQLSTATE `code` otherwise. `materialized_entries` lists the FROM
// items (RangeTblEntry*) that the rewrites will replace by a materialised
// WITH query, which is no longer LATERAL.
FromAnalysis CheckFrom(Query* query, const Bitmapset* items, const Bitmapset* protected_items,
                       const List* materialized_entries, int code);

// The items of the preserved side when the whole FROM clause is one outer
// join whose nullable side holds the protected item; nullptr otherwise.
Bitmapset* PreservedSideOfTopOuterJoin(Query* query, Index protected_item);

}  // namespace dp_pg

#endif  // DP_AGG_PG_JOIN_ANALYSIS_H
