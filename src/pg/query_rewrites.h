// The changes a judged query needs before it is planned, and the one step
// that makes them. The judge (query_judgement.h) decides and lists them
// without touching the query; ApplyRewrites is the only place where the
// query rules modify a query.
//
// To add a rewrite: add a kind below, let the judge append it where its
// rule is decided (the position in the list is the order of application),
// and apply it in ApplyRewrite (query_rewrites.cpp).
#ifndef DP_AGG_PG_QUERY_REWRITES_H
#define DP_AGG_PG_QUERY_REWRITES_H

#include "pg_includes.h"

namespace dp_pg {

struct PublicKeyPlan;  // public_keys.h

enum class RewriteKind {
  // entry (a subquery): security_barrier, so that the planner pushes no
  // outer condition that is not LEAKPROOF into it.
  kSecurityBarrier,
  // entry (a subquery in FROM): replaced by MaterializedOnce(subquery) and
  // no longer LATERAL.
  kMaterializeFromItem,
  // sublink: its query replaced by MaterializedOnce(query).
  kMaterializeSubLink,
  // level: every WITH query of the level becomes MATERIALIZED.
  kMaterializeWithQueries,
  // level: rewritten into a per-unit level and a private level over it
  // (unit_rewrite.h); comes before the level's other rewrites.
  kPrivacyUnits,
  // level: dp_agg.group_selection(epsilon / max_groups, delta / max_groups)
  // ANDed in front of HAVING.
  kAddGroupSelection,
  // level: `col = ANY(keys)` ANDed to its WHERE for every column with
  // declared public keys that a group key uses (public_keys.h); comes
  // before the privacy-unit rewrite.
  kFilterToPublicKeys,
  // level: grouped by its declared public keys, every one released
  // (public_keys.h ReleasePublicKeys), in place of group selection.
  kReleasePublicKeys,
  // level (public LEFT JOIN protected, grouped by the public side): every
  // aggregate of the level gets FILTER (WHERE <the protected item's whole
  // row> IS NOT NULL), so that a public row without protected rows gives its
  // aggregates no row rather than one NULL-extended row.
  kAggregateMatchedRows,
  // level: its group keys appended to its ORDER BY (group_keys.h).
  kOrderByGroupKeys,
  // entry (a protected table): read with the privileges of `owner`.
  kOwnerAccess,
  // level (one that evaluates expressions on protected rows): its
  // expressions folded as the planner folds them, then every built-in
  // function with a total replacement (HasTotalReplacement, allow_list.h)
  // replaced by dp_agg.total_<name> (total_functions.cpp).
  kTotalArithmetic,
  // entry (pg_class, read by a restricted role): its planner statistics
  // masked (MaskPlannerStatistics, catalog_access.h).
  kMaskPlannerStatistics,
};

// One change, with the node it applies to (the other pointers are nullptr).
struct Rewrite {
  RewriteKind kind;
  Query* level;
  RangeTblEntry* entry;
  SubLink* sublink;
  Oid owner;
  // kPrivacyUnits: the unit table's FROM item and column; kPrivacyUnits and
  // kAddGroupSelection: dp_agg.max_groups_contributed (1 otherwise).
  Index unit_item;
  AttrNumber unit_column;
  int max_groups;
  // kFilterToPublicKeys and kReleasePublicKeys: the judge's plan.
  const PublicKeyPlan* public_keys;
  // kAggregateMatchedRows: the level's protected FROM item.
  Index protected_item;
};

// A palloc'd Rewrite of `kind` on `level`, `entry` or `sublink`.
Rewrite* LevelRewrite(RewriteKind kind, Query* level);
Rewrite* EntryRewrite(RewriteKind kind, RangeTblEntry* entry);
Rewrite* SubLinkRewrite(SubLink* sublink);
Rewrite* OwnerAccessRewrite(RangeTblEntry* entry, Oid owner);
Rewrite* PublicKeysRewrite(RewriteKind kind, Query* level, const PublicKeyPlan* plan);
Rewrite* PrivacyUnitsRewrite(Query* level, Index unit_item, AttrNumber unit_column, int max_groups);

// Applies `rewrites` (Rewrite*) in list order. The judge lists them as it
// finishes each level: the rewrites of a level's WITH queries, FROM items
// and sublinks (inner levels) come before the rewrites of the level itself,
// and owner access comes last. Each rewrite changes only its own node, and
// MaterializedOnce keeps every outer reference pointing at the same level
// whether the levels around or inside it are wrapped before or after, so
// the order matters only in that it is fixed.
void ApplyRewrites(const List* rewrites);

}  // namespace dp_pg

#endif  // DP_AGG_PG_QUERY_REWRITES_H
