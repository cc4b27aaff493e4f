#include "information_schema.h"

#include "pg_includes.h"

extern "C" {
#include "catalog/namespace.h"
#include "nodes/nodeFuncs.h"
#include "parser/analyze.h"
#include "storage/lmgr.h"
#include "utils/acl.h"
#include "utils/lsyscache.h"
}

#include "restriction.h"

namespace dp_pg {

namespace {

struct Swap {
  Oid tables;  // information_schema.tables
  Oid columns;  // information_schema.columns
  Oid our_tables;  // dp_agg.information_schema_tables
  Oid our_columns;  // dp_agg.information_schema_columns
};

bool SwapViews(Node* node, Swap* swap) {
  if (node == nullptr) return false;
  if (IsA(node, RangeTblEntry)) {
    auto* entry = reinterpret_cast<RangeTblEntry*>(node);
    if (entry->rtekind != RTE_RELATION) return false;
    Oid replacement = InvalidOid;
    if (entry->relid == swap->tables) replacement = swap->our_tables;
    if (entry->relid == swap->columns) replacement = swap->our_columns;
    if (OidIsValid(replacement)) {
      // The rewriter expands the view it finds here; it expects the lock
      // that parse analysis took on the view the query named.
      LockRelationOid(replacement, AccessShareLock);
      entry->relid = replacement;
    }
    return false;
  }
  if (IsA(node, Query))
    return query_tree_walker(reinterpret_cast<Query*>(node), DP_EXPRESSION_WALKER(SwapViews), swap,
                             QTW_EXAMINE_RTES_BEFORE);
  return expression_tree_walker(node, DP_EXPRESSION_WALKER(SwapViews), swap);
}

// Looked up each time (syscache hits): the extension may be absent from this
// database, or dropped and created again with new OIDs.
void PointToListingViews(Query* query) {
  const Oid ours = get_namespace_oid("dp_agg", true);
  const Oid theirs = get_namespace_oid("information_schema", true);
  if (!OidIsValid(ours) || !OidIsValid(theirs)) return;
  Swap swap{get_relname_relid("tables", theirs), get_relname_relid("columns", theirs),
            get_relname_relid("information_schema_tables", ours),
            get_relname_relid("information_schema_columns", ours)};
  if (!OidIsValid(swap.our_tables)) swap.tables = InvalidOid;
  if (!OidIsValid(swap.our_columns)) swap.columns = InvalidOid;
  if (!OidIsValid(swap.tables) && !OidIsValid(swap.columns)) return;
  SwapViews(reinterpret_cast<Node*>(query), &swap);
}

}  // namespace

void PointRestrictedQueryToListingViews(Query* query) {
  if (IsTransactionState() && RestrictedSession()) PointToListingViews(query);
}

}  // namespace dp_pg

extern "C" {

// dp_agg.lists_protected_table(relation): whether the listing views show
// `relation` to this session although it holds no privilege on it: the
// session is restricted, the relation is protected (or a partition or
// INHERITS child of a protected table), and the role may use its schema.
// False for every relation in an unrestricted session.
PG_FUNCTION_INFO_V1(dp_lists_protected_table);
Datum dp_lists_protected_table(PG_FUNCTION_ARGS) {
  const Oid relation = PG_GETARG_OID(0);
  if (!dp_pg::RestrictedSession()) PG_RETURN_BOOL(false);
  if (!dp_pg::IsProtectedRelation(relation, false)) PG_RETURN_BOOL(false);
  const Oid schema = get_rel_namespace(relation);
  PG_RETURN_BOOL(OidIsValid(schema) &&
                 pg_namespace_aclcheck(schema, GetUserId(), ACL_USAGE) == ACLCHECK_OK);
}

}  // extern "C"
