// Public key sets: the values of a group-key column that an administrator
// declares public (dp_agg.set_public_keys, src/sql/74_public_keys.sql), as
// BigQuery's public groups and Tumult's KeySet. For a restricted role's
// private aggregation level:
//
//   * every group key that uses a declared column (the column itself, or any
//     expression of it: lower(region), region::varchar, a CASE, ...) sees
//     only rows whose value is one of the declared keys: `col = ANY(keys)`
//     (byte equality, collation "C" for text) is ANDed to the level's WHERE
//     before any other rewrite, so a value outside the set changes nothing
//     the level computes (FilterToPublicKeys);
//   * when every group key is a declared column itself, the level releases
//     exactly the declared keys (their cross product for several columns),
//     every one, and needs no group selection: its FROM becomes
//
//       (VALUES (k1), (k2), ...) dp_agg_public_keys(key)
//         LEFT JOIN (<the level's FROM> WHERE <its WHERE>) ON key = col
//
//     grouped by `key` (the select list, HAVING and ORDER BY read key where
//     they read col), and every aggregate of the level gets FILTER (WHERE
//     col IS NOT NULL), so a key no row has aggregates no rows: dp_count is
//     noisy 0, like the same call on an empty table (ReleasePublicKeys).
//
// Why no selection is needed: the released keys are a constant of the
// query and the catalog; a protected row (or unit) reaches only the group of
// its own key, exactly as without the join, so each group's aggregates are
// the ordinary releases on that group's rows and the set of rows released
// is the same on neighbouring databases (Desfontaines et al., "Differentially
// private partition selection", PoPETs 2022, section 2: with a public
// partition set, selection costs nothing). Rows come ordered by key
// (OrderByGroupKeys), never by hash.
#ifndef DP_AGG_PG_PUBLIC_KEYS_H
#define DP_AGG_PG_PUBLIC_KEYS_H

#include "pg_includes.h"

namespace dp_pg {

// What the judge decided for a level (palloc'd; nullptr when no group key
// uses a declared column).
struct PublicKeyPlan {
  List* filter_columns;  // Var* of the protected table, one per declared column used
  List* filter_keys;  // List* of Const*, the keys of each of those columns
  bool release_all;  // every group key is a declared column itself
  List* group_keys;  // when release_all: List* of Const* per group clause, in order
};

// For a restricted role's level that groups protected rows: reads the
// declared key sets of the group keys' columns (items of `protected_items`
// that are tables, or subqueries and WITH queries passing a table's column
// on; `outer` lists the levels enclosing `query`, innermost first, where the
// WITH queries it names may be). Refuses (0A000, before any charge) a
// declared column of a Citus-distributed table, and more than 100,000 key
// combinations.
PublicKeyPlan* PlanPublicKeys(Query* query, List* outer, const Bitmapset* protected_items);

// Keys the analyst supplies (Tumult's KeySet, BigQuery's public groups):
// `(VALUES ('north'), ('south')) k(region) LEFT JOIN t ON t.region =
// k.region GROUP BY k.region`, or `unnest(ARRAY[...]) k(region)` in its
// place (a VALUES list in FROM is a subquery over a VALUES item). Such an item carries no protected
// data when every value in it is a constant of the query (after folding): the judge then accepts it
// as a public item (join_analysis.cpp), pinned to at most one row per protected row when its join
// column's values are distinct (ConstantColumnDistinct). At most kMaxConstantKeyRows rows.
bool IsConstantKeyList(const RangeTblEntry* entry);
// Whether the item is a VALUES list or an unnest of a constant array with
// more rows than such a list may have (the refusal then says so).
bool IsLongKeyList(const RangeTblEntry* entry);
// Whether column `column` of such an item holds pairwise distinct, non-NULL
// values under `type`'s default btree equality (deterministic collations all
// agree on it: byte equality for text).
bool ConstantColumnDistinct(const RangeTblEntry* entry, AttrNumber column);
// The type of column `column` of a constant key list (InvalidOid if none).
Oid ConstantKeyColumnType(const RangeTblEntry* entry, AttrNumber column);

// The rewrites (query_rewrites.cpp applies them).
void FilterToPublicKeys(Query* level, const PublicKeyPlan* plan);
void ReleasePublicKeys(Query* level, const PublicKeyPlan* plan);

// A copy of `aggref` that aggregates only the rows where `matched_row` (a
// whole-row expression of the protected side of an outer join, copied in) IS
// NOT NULL, its own FILTER kept: a key without protected rows gives the
// aggregate no row rather than one NULL-extended row. An aggregate of an
// outer level is returned unchanged (copied).
Aggref* AggregateOfMatchedRows(const Aggref* aggref, const Expr* matched_row);

}  // namespace dp_pg

#endif  // DP_AGG_PG_PUBLIC_KEYS_H
