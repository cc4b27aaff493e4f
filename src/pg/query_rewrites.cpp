#include "query_rewrites.h"

extern "C" {
#include "catalog/namespace.h"
#include "nodes/makefuncs.h"
#include "parser/parse_func.h"
#include "rewrite/rewriteManip.h"
}

#include "catalog_access.h"
#include "group_keys.h"
#include "settings.h"

namespace dp_pg {

namespace {

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

// Materialised WITH queries are not merged into the outer query, so outer
// conditions are not pushed into them either.
void MaterializeWithQueries(Query* level) {
  ListCell* cell;
  foreach (cell, level->cteList)
    static_cast<CommonTableExpr*>(lfirst(cell))->ctematerialized = CTEMaterializeAlways;
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

Rewrite* NewRewrite(RewriteKind kind) {
  auto* rewrite = static_cast<Rewrite*>(palloc0(sizeof(Rewrite)));
  rewrite->kind = kind;
  return rewrite;
}

void ApplyRewrite(const Rewrite& rewrite) {
  switch (rewrite.kind) {
    case RewriteKind::kSecurityBarrier:
      rewrite.entry->security_barrier = true;
      return;
    case RewriteKind::kMaterializeFromItem:
      rewrite.entry->subquery = MaterializedOnce(rewrite.entry->subquery);
      rewrite.entry->lateral = false;
      return;
    case RewriteKind::kMaterializeSubLink:
      rewrite.sublink->subselect = reinterpret_cast<Node*>(
          MaterializedOnce(reinterpret_cast<Query*>(rewrite.sublink->subselect)));
      return;
    case RewriteKind::kMaterializeWithQueries:
      MaterializeWithQueries(rewrite.level);
      return;
    case RewriteKind::kAddGroupSelection:
      AddGroupSelection(rewrite.level);
      return;
    case RewriteKind::kOrderByGroupKeys:
      OrderByGroupKeys(rewrite.level);
      return;
    case RewriteKind::kOwnerAccess:
      rewrite.entry->checkAsUser = rewrite.owner;
      return;
    case RewriteKind::kMaskPlannerStatistics:
      MaskPlannerStatistics(rewrite.entry);
      return;
  }
  elog(ERROR, "dp_agg: unknown query rewrite %d", static_cast<int>(rewrite.kind));
}

}  // namespace

Rewrite* LevelRewrite(RewriteKind kind, Query* level) {
  Rewrite* rewrite = NewRewrite(kind);
  rewrite->level = level;
  return rewrite;
}

Rewrite* EntryRewrite(RewriteKind kind, RangeTblEntry* entry) {
  Rewrite* rewrite = NewRewrite(kind);
  rewrite->entry = entry;
  return rewrite;
}

Rewrite* SubLinkRewrite(SubLink* sublink) {
  Rewrite* rewrite = NewRewrite(RewriteKind::kMaterializeSubLink);
  rewrite->sublink = sublink;
  return rewrite;
}

Rewrite* OwnerAccessRewrite(RangeTblEntry* entry, Oid owner) {
  Rewrite* rewrite = EntryRewrite(RewriteKind::kOwnerAccess, entry);
  rewrite->owner = owner;
  return rewrite;
}

void ApplyRewrites(const List* rewrites) {
  ListCell* cell;
  foreach (cell, rewrites) ApplyRewrite(*static_cast<const Rewrite*>(lfirst(cell)));
}

}  // namespace dp_pg
