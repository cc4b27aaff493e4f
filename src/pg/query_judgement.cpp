#include "query_judgement.h"

extern "C" {
#include "access/htup_details.h"
#include "catalog/pg_class.h"
#include "catalog/pg_constraint.h"
#include "catalog/pg_language.h"
#include "optimizer/cost.h"
#include "parser/parsetree.h"
#include "utils/regproc.h"
#include "utils/syscache.h"
}

#include <cstring>

#include "aggregate_catalog.h"
#include "aggregate_rules.h"
#include "catalog_access.h"
#include "group_keys.h"
#include "join_analysis.h"
#include "public_keys.h"
#include "query_rewrites.h"
#include "refusal.h"
#include "restriction.h"
#include "row_expressions.h"
#include "settings.h"
#include "unit_rewrite.h"

namespace dp_pg {

namespace {

// One query level and the classification of its WITH queries.
struct Level {
  Query* query;
  const Level* parent;
  bool* cte_protected;  // by position in query->cteList
};

// What the judge has learnt so far, in the order it walks the query.
struct Judgement {
  bool restricted;  // the rules for restricted roles apply
  bool reads_protected;  // some level judged so far reads a protected table
  List* protected_entries;  // RangeTblEntry* of protected tables read in FROM
  List* rewrites;  // Rewrite*, in order of application
  List* materialized_entries;  // RangeTblEntry* of kMaterializeFromItem rewrites
  List* unit_row_levels;  // Query* of row levels that return rows of a unit table
};

// The sources of a level: items of FROM, and branches of set operations.
struct Sources {
  Bitmapset* items;  // range table indexes of the FROM items
  Bitmapset* protected_items;  // those that return protected rows
  bool branch_protected;  // a set operation's branch returns protected rows
};

void Require(Judgement* judgement, Rewrite* rewrite) {
  judgement->rewrites = lappend(judgement->rewrites, rewrite);
}

bool JudgeLevel(Query* query, const Level* parent, Judgement* judgement);

[[noreturn]] void RefuseProtectedRows() {
  Refuse(ERRCODE_INSUFFICIENT_PRIVILEGE, "restricted roles may not read rows of protected tables",
         "The query returns values of protected rows; only answers of private aggregates may "
         "leave the database.",
         kAggregateHint);
}

// ---------------------------------------------------------------------------
// Rules on the sources of a level.
// ---------------------------------------------------------------------------

// Partitionwise aggregation makes one call site per partition, so the
// charge would follow the plan (and the statistics behind it). SET cannot
// turn it on in a restricted session, but a connection option can.
void RefusePartitionwiseAggregation() {
  if (enable_partitionwise_aggregate)
    Refuse(ERRCODE_INSUFFICIENT_PRIVILEGE,
           "restricted sessions must run with enable_partitionwise_aggregate off",
           "Partitionwise aggregation charges once per partition chosen by the planner.",
           "Reconnect without -c enable_partitionwise_aggregate=on.");
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

// Judges the level's WITH queries, in order (a later one may read an
// earlier one), and returns the level with their classification.
Level JudgeWithQueries(Query* query, const Level* parent, Judgement* judgement) {
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
  return level;
}

// A protected table in the range table of a level. Returns whether it is a
// source of the level's rows (`in_from`: not, e.g., a view's own entry kept
// for permission checks).
bool JudgeProtectedTable(Query* query, Index index, RangeTblEntry* entry, bool in_from,
                         Judgement* judgement) {
  judgement->reads_protected = true;
  if (judgement->restricted && static_cast<Index>(query->resultRelation) == index)
    Refuse(ERRCODE_INSUFFICIENT_PRIVILEGE, "restricted roles may not modify protected tables",
           "Its row counts and RETURNING would reveal the data.", kAggregateHint);
  if (!in_from) return false;
  judgement->protected_entries = lappend(judgement->protected_entries, entry);
  if (judgement->restricted && entry->tablesample != nullptr &&
      entry->tablesample->tsmhandler >= FirstNormalObjectId)
    Refuse(ERRCODE_INSUFFICIENT_PRIVILEGE,
           "only built-in TABLESAMPLE methods may sample "
           "protected tables",
           "A method such as SYSTEM_ROWS(n) picks rows depending on the others, like LIMIT.",
           "Use TABLESAMPLE BERNOULLI or SYSTEM.");
  return true;
}

// A subquery in FROM or a branch of a set operation: a level of its own.
// Returns whether it returns protected rows.
//
// Outer conditions must not be pushed into a private aggregation level:
// there they would run for unreleased groups, or (moved from HAVING to
// WHERE) for every protected row, unjudged. A security barrier still lets
// LEAKPROOF conditions through, and LEAKPROOF is not total (texteq fails on
// an indeterminate collation), so a level in FROM also becomes a
// materialised WITH query (MaterializedOnce), into which PostgreSQL pushes
// nothing. Branches of a set operation are fenced by the wrapping of the set
// operation's own level. The fence goes on every public-answer level judged
// once the statement has met a protected table (judgement->reads_protected,
// in the order of judgement), so a level that comes earlier and reads none
// is left as it is: it has nothing to protect.
bool JudgeSubquery(RangeTblEntry* entry, bool in_from, const Level* level, Judgement* judgement) {
  const bool is_protected = JudgeLevel(entry->subquery, level, judgement);
  if (judgement->restricted && !is_protected && judgement->reads_protected) {
    Require(judgement, EntryRewrite(RewriteKind::kSecurityBarrier, entry));
    if (in_from) {
      // A LATERAL level that refers to the items before it would run
      // once per row of them; one that does not is a plain level.
      if (entry->lateral && contain_vars_of_level(reinterpret_cast<Node*>(entry->subquery), 1))
        Refuse(ERRCODE_INSUFFICIENT_PRIVILEGE,
               "a LATERAL subquery over protected rows refers to the items before it",
               "It would run, and release its answers, once per row of those items.",
               "Aggregate without the reference, then join the answers.");
      Require(judgement, EntryRewrite(RewriteKind::kMaterializeFromItem, entry));
      judgement->materialized_entries = lappend(judgement->materialized_entries, entry);
    }
  }
  return is_protected;
}

// The planner inlines a SQL set-returning function in FROM into the query
// after this judge has run, so its body (say, a view that reads a protected
// table as the view's owner) would go unjudged.
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
      snprintf(rule, sizeof rule, "restricted roles may not call SQL function %s in FROM",
               format_procedure(oid));
      Refuse(ERRCODE_INSUFFICIENT_PRIVILEGE, rule,
             "PostgreSQL inlines a SQL set-returning function's body into the query after "
             "dp_agg has judged it, so its reads of protected tables would not be checked.",
             "Write the function's query into your own query, or call it in the select list.");
    }
  }
}

// Judges every entry of the level's range table, in order, and classifies
// the level's sources.
Sources JudgeSources(Query* query, const Level* level, Judgement* judgement) {
  Sources sources{nullptr, nullptr, false};
  CollectItems(reinterpret_cast<Node*>(query->jointree), &sources.items);
  Index index = 0;
  ListCell* cell;
  foreach (cell, query->rtable) {
    ++index;
    auto* entry = static_cast<RangeTblEntry*>(lfirst(cell));
    const bool in_from = bms_is_member(static_cast<int>(index), sources.items);
    bool is_protected = false;
    switch (entry->rtekind) {
      case RTE_RELATION:
        if (IsProtectedRelation(entry->relid, entry->inh))
          is_protected = JudgeProtectedTable(query, index, entry, in_from, judgement);
        break;
      case RTE_SUBQUERY:
        is_protected = JudgeSubquery(entry, in_from, level, judgement);
        if (!in_from) sources.branch_protected = sources.branch_protected || is_protected;
        break;
      case RTE_CTE:
        is_protected = CteReturnsProtectedRows(level, entry);
        break;
      case RTE_FUNCTION:
        if (judgement->restricted) RefuseInlinableFunctions(entry);
        break;
      default:
        break;
    }
    if (is_protected && in_from)
      sources.protected_items = bms_add_member(sources.protected_items, index);
  }
  return sources;
}

struct SubLinkWalk {
  const Level* level;
  Judgement* judgement;
};

// Judges the queries of sublinks (subqueries in expressions): they may read
// protected tables only through private aggregates, and each such query is
// run once (MaterializedOnce).
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
      Require(walk->judgement, SubLinkRewrite(sublink));
    return JudgeSubLinks(sublink->testexpr, walk);
  }
  if (IsA(node, Query)) return false;
  return expression_tree_walker(node, DP_EXPRESSION_WALKER(JudgeSubLinks), walk);
}

void JudgeSubLinksOf(Query* query, const Level* level, Judgement* judgement) {
  SubLinkWalk walk{level, judgement};
  query_tree_walker(query, DP_EXPRESSION_WALKER(JudgeSubLinks), &walk, QTW_IGNORE_RC_SUBQUERIES);
}

// ---------------------------------------------------------------------------
// Rules on a restricted role's level that reads protected rows.
// ---------------------------------------------------------------------------

bool IsAggregationLevel(const Query* query) {
  return query->hasAggs || query->groupClause != NIL || query->groupingSets != NIL ||
         query->havingQual != nullptr;
}

void RefuseSetOperation() {
  Refuse(ERRCODE_INSUFFICIENT_PRIVILEGE, "set operations over protected rows are not allowed",
         "UNION, INTERSECT and EXCEPT repeat or compare protected rows.", kAggregateHint);
}

// Statements and clauses that reveal or repeat protected rows whatever the
// level's shape.
void RefuseUnsupportedClauses(const Query* query) {
  if (query->commandType != CMD_SELECT)
    Refuse(ERRCODE_INSUFFICIENT_PRIVILEGE,
           "restricted roles may not modify data using protected "
           "rows",
           "Its row counts and RETURNING would reveal the data.", kAggregateHint);
  if (query->rowMarks != NIL)
    Refuse(ERRCODE_INSUFFICIENT_PRIVILEGE, "FOR UPDATE/SHARE of protected rows is not allowed",
           "Locking rows reveals which exist.", kAggregateHint);
  if (query->hasSubLinks)
    Refuse(ERRCODE_INSUFFICIENT_PRIVILEGE,
           "subqueries in expressions over protected rows are "
           "not allowed",
           "They can make one protected row decide about others, or run once per row.",
           "Move the subquery to FROM, or compute it in an outer query.");
  if (query->hasWindowFuncs)
    Refuse(ERRCODE_INSUFFICIENT_PRIVILEGE, "window functions over protected rows are not allowed",
           "Every window frame would be an exact release of overlapping rows.", kAggregateHint);
  if (query->hasTargetSRFs)
    Refuse(ERRCODE_INSUFFICIENT_PRIVILEGE,
           "set-returning functions over protected rows are not "
           "allowed",
           "They repeat protected rows.", kAggregateHint);
  if (query->groupingSets != NIL)
    Refuse(ERRCODE_INSUFFICIENT_PRIVILEGE,
           "GROUPING SETS, ROLLUP and CUBE over protected rows "
           "are not supported",
           "Each grouping set would need its own partition selection.",
           "Run one query per grouping.");
}

// Conditions and join conditions run for every protected row.
void CheckJoinConditions(Query* query) {
  List* conditions = NIL;
  CollectConditions(reinterpret_cast<Node*>(query->jointree), &conditions);
  CheckRowExpression(FlatCopy(query, conditions), "WHERE or JOIN ... ON");
}

// A row level returns protected rows, for an outer level to aggregate.
void JudgeRowLevel(Query* query, const FromAnalysis& from) {
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
}

// Group keys are values of rows, evaluated for every row. Returns the items
// whose columns they use.
Bitmapset* CheckGroupKeys(Query* query) {
  Bitmapset* key_items = nullptr;
  ListCell* cell;
  foreach (cell, query->groupClause) {
    auto* clause = static_cast<SortGroupClause*>(lfirst(cell));
    Node* expression = FlatCopy(query, get_sortgroupclause_tle(clause, query->targetList)->expr);
    CheckRowExpression(expression, "GROUP BY");
    CheckGroupKey(expression, clause);
    key_items = bms_join(key_items, VarnosOf(expression));
  }
  return key_items;
}

// Whether the level's groups must pass partition selection. Any group
// exists because of protected rows and must, except in one shape: `public
// LEFT JOIN (protected ...) ON ...` as the whole FROM clause, grouped and
// filtered by columns of the public side only. Its rows are the public
// side's rows, each kept at least once, so its groups exist whatever the
// protected rows; a protected row moves only within the group of the one
// public row it meets. A protected table on the nullable side of an outer
// join in any other shape is refused.
bool GroupsNeedSelection(Query* query, const FromAnalysis& from, Bitmapset* key_items) {
  if (!from.protected_nullable) return query->groupClause != NIL;
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
  return false;
}

// A level that groups protected rows by protected keys and asks for no
// private aggregate (SELECT col FROM t GROUP BY col): its only answer is
// which keys exist, released by partition selection and charged for it. BI
// tools send exactly this in the background, with no user action: Metabase's
// field-values sync (SELECT "col" FROM "t" GROUP BY "col" ORDER BY "col" ASC
// LIMIT 1000) for every category column of every table, on every sync, and
// filter drop-downs. Each run would spend budget silently (issue 27), so it
// is refused before anything is charged, from the query's text alone; an
// analyst who wants the keys asks for them explicitly (and is charged) by
// writing the gate or a count.
[[noreturn]] void RefuseKeyListing() {
  Refuse(ERRCODE_INSUFFICIENT_PRIVILEGE,
         "a GROUP BY over protected rows without a private aggregate is not answered",
         "Listing which keys exist would be charged for group selection each time it runs, and "
         "BI tools send such listings in the background (Metabase's field-values sync, filter "
         "drop-downs); dp_agg spends no budget on a query that asks for no private answer.",
         "To list the keys and pay for it, ask explicitly: SELECT col FROM t GROUP BY col HAVING "
         "dp_agg.group_selection(1.0, 1e-6), or count them: SELECT col, dp_count(1.0) FROM t "
         "GROUP BY col.");
}

// PostgreSQL lets a level grouped by a table's primary key select, filter
// and order by the table's other columns (functional dependency, recorded in
// query->constraintDeps): each is read from one row of its group, outside
// any aggregate. Of the protected table that is an exact value of a
// protected row, shown with its group or deciding HAVING and the row order;
// with public keys declared on the key columns every group is released, and
// with it every row's other columns. Refused before any charge. A public
// table's primary key may carry its own columns (they are public).
void RefuseDependentColumns(Query* query, const FromAnalysis& from) {
  if (query->constraintDeps == NIL) return;
  const RangeTblEntry* entry = rt_fetch(from.protected_item, query->rtable);
  ListCell* cell;
  foreach (cell, query->constraintDeps) {
    Oid relation = InvalidOid;
    HeapTuple tuple = SearchSysCache1(CONSTROID, ObjectIdGetDatum(lfirst_oid(cell)));
    if (HeapTupleIsValid(tuple)) {
      relation = reinterpret_cast<Form_pg_constraint>(GETSTRUCT(tuple))->conrelid;
      ReleaseSysCache(tuple);
    }
    // Only a table read at this level can carry columns by its key: a
    // protected subquery or WITH query never does.
    if (OidIsValid(relation) && (entry->rtekind != RTE_RELATION || relation != entry->relid))
      continue;
    Refuse(ERRCODE_INSUFFICIENT_PRIVILEGE,
           "a column of protected rows that is neither a group key nor aggregated",
           "Grouping by the primary key lets PostgreSQL read the table's other columns from "
           "one row of each group: that row's exact value would be released; nothing was "
           "charged.",
           "Add the column to GROUP BY, or aggregate it (for example dp_avg(column, lower, "
           "upper, epsilon)).");
  }
}

// An aggregation level releases only private aggregates' answers and the
// keys of the groups that partition selection lets through, in key order.
void JudgeAggregationLevel(Query* query, const FromAnalysis& from, int max_groups,
                           bool calls_private, const PublicKeyPlan* public_keys,
                           Judgement* judgement) {
  Bitmapset* key_items = CheckGroupKeys(query);
  RefuseDependentColumns(query, from);
  // Groups of declared public keys exist whatever the rows (public_keys.h);
  // a listing of them charges nothing.
  const bool public_groups = public_keys != nullptr && public_keys->release_all;
  const bool gated = GroupsNeedSelection(query, from, key_items) && !public_groups;
  if (gated && !calls_private) RefuseKeyListing();
  CheckHavingExpression(query->havingQual, gated);
  if (public_groups)
    Require(judgement, PublicKeysRewrite(RewriteKind::kReleasePublicKeys, query, public_keys));
  if (gated) {
    Rewrite* selection = LevelRewrite(RewriteKind::kAddGroupSelection, query);
    selection->max_groups = max_groups;
    Require(judgement, selection);
  }
  // public LEFT JOIN protected (the shape GroupsNeedSelection accepts): a
  // public row without protected rows gives its aggregates no row, not a
  // NULL-extended one that a protected row would replace (query_rewrites.h).
  if (from.protected_nullable) {
    Rewrite* matched = LevelRewrite(RewriteKind::kAggregateMatchedRows, query);
    matched->protected_item = from.protected_item;
    Require(judgement, matched);
  }
  if (!TestFaultIs(TestFault::kHashGroupOrder))
    Require(judgement, LevelRewrite(RewriteKind::kOrderByGroupKeys, query));
}

// ---------------------------------------------------------------------------
// Privacy units (unit_rewrite.h).
// ---------------------------------------------------------------------------

const CommonTableExpr* CteOf(const Level* level, const RangeTblEntry* entry) {
  for (Index up = 0; up < entry->ctelevelsup && level != nullptr; ++up) level = level->parent;
  if (level == nullptr) return nullptr;
  ListCell* cell;
  foreach (cell, level->query->cteList) {
    auto* cte = static_cast<CommonTableExpr*>(lfirst(cell));
    if (strcmp(cte->ctename, entry->ctename) == 0) return cte;
  }
  return nullptr;
}

bool FindUnitGroupSample(Node* node, Oid* function) {
  if (node == nullptr) return false;
  if (IsA(node, WindowFunc) && reinterpret_cast<WindowFunc*>(node)->winfnoid == *function)
    return true;
  if (IsA(node, Query)) return false;  // judged as its own level
  return expression_tree_walker(node, DP_EXPRESSION_WALKER(FindUnitGroupSample), function);
}

// The marker of the rewrite's per-unit level (input_checks.cpp accepts
// aggregates below a private one only under it): never written by hand.
void RefuseUnitGroupSample(Query* query) {
  Oid function = UnitGroupSampleFunction();
  if (OidIsValid(function) && query_tree_walker(query, DP_EXPRESSION_WALKER(FindUnitGroupSample),
                                                &function, QTW_IGNORE_RC_SUBQUERIES))
    Refuse(ERRCODE_INSUFFICIENT_PRIVILEGE, "restricted roles may not call dp_agg.unit_group_sample",
           "Only dp_agg's privacy-unit rewrite uses it.", kAggregateHint);
}

// Whether a query (at any depth) calls the privacy-unit sampler, and
// whether it calls private aggregates.
struct SamplerUse {
  Oid sampler;
  bool calls_sampler;
  bool calls_private;
};

bool FindSamplerUse(Node* node, SamplerUse* use) {
  if (node == nullptr) return false;
  if (IsA(node, WindowFunc) && reinterpret_cast<WindowFunc*>(node)->winfnoid == use->sampler)
    use->calls_sampler = true;
  if (IsA(node, Aggref) && LookupPrivateAggregate(reinterpret_cast<Aggref*>(node)->aggfnoid))
    use->calls_private = true;
  if (IsA(node, Query))
    return query_tree_walker(reinterpret_cast<Query*>(node), DP_EXPRESSION_WALKER(FindSamplerUse),
                             use, 0);
  return expression_tree_walker(node, DP_EXPRESSION_WALKER(FindSamplerUse), use);
}

// Any role: the executor accepts aggregates below a private aggregate under
// the sampler (input_checks.cpp), so a query with private aggregates may
// not write it, whatever it partitions by (only the rewrite, which runs
// after the judge, puts it in). Alone it only marks random rows.
void RefuseSamplerBesidePrivateAggregates(Query* query) {
  SamplerUse use{UnitGroupSampleFunction(), false, false};
  if (!OidIsValid(use.sampler)) return;
  query_tree_walker(query, DP_EXPRESSION_WALKER(FindSamplerUse), &use, 0);
  if (use.calls_sampler && use.calls_private)
    Refuse(ERRCODE_FEATURE_NOT_SUPPORTED,
           "dp_agg.unit_group_sample may not be used in a query with private aggregates",
           "It is the marker of dp_agg's privacy-unit rewrite, under which the executor "
           "accepts aggregates below a private aggregate.",
           "Label the table's unit column privacy_unit and let dp_agg bound each unit.");
}

// Which unit table the level aggregates directly, and the rewrite that
// bounds each unit's contribution, or nullptr. A row level over a unit
// table is remembered; a private level over such rows is refused (the
// contribution is bounded only where the table is read).
Rewrite* JudgePrivacyUnits(Query* query, const Sources& sources, const Level* level,
                           Judgement* judgement) {
  Index unit_item = 0;
  AttrNumber unit_column = InvalidAttrNumber;
  bool indirect = false;
  Index index = 0;
  ListCell* cell;
  foreach (cell, query->rtable) {
    ++index;
    if (!bms_is_member(static_cast<int>(index), sources.items)) continue;
    auto* entry = static_cast<RangeTblEntry*>(lfirst(cell));
    if (entry->rtekind == RTE_RELATION) {
      const AttrNumber column = UnitColumnOfItem(query, index);
      if (column == InvalidAttrNumber) continue;
      if (unit_item != 0)
        Refuse(ERRCODE_FEATURE_NOT_SUPPORTED,
               "a query level may read only one table with a privacy unit column",
               "Joining two unit tables would mix two units' rows in one row.",
               "Aggregate each table in its own query.");
      unit_item = index;
      unit_column = column;
    } else if (entry->rtekind == RTE_SUBQUERY) {
      if (!list_member_ptr(judgement->unit_row_levels, entry->subquery)) continue;
      // A plain projection and filter of the unit table: the unit is carried
      // out of it and bounded here (unit_rewrite.h UnitSubquery).
      Index inner_item = 0;
      AttrNumber inner_column = InvalidAttrNumber;
      if (entry->lateral || !UnitSubquery(entry->subquery, &inner_item, &inner_column)) {
        indirect = true;
        continue;
      }
      if (unit_item != 0)
        Refuse(ERRCODE_FEATURE_NOT_SUPPORTED,
               "a query level may read only one table with a privacy unit column",
               "Joining two unit tables would mix two units' rows in one row.",
               "Aggregate each table in its own query.");
      unit_item = index;
      unit_column = InvalidAttrNumber;
    } else if (entry->rtekind == RTE_CTE) {
      const CommonTableExpr* cte = CteOf(level, entry);
      if (cte == nullptr || !list_member_ptr(judgement->unit_row_levels, cte->ctequery)) continue;
      // A WITH query of this level, referenced once, that is a plain
      // projection and filter of the unit table: inlined as a subquery and
      // bounded here (unit_rewrite.h UnitWithQuery).
      if (UnitWithQuery(query, entry) == nullptr) {
        indirect = true;
        continue;
      }
      if (unit_item != 0)
        Refuse(ERRCODE_FEATURE_NOT_SUPPORTED,
               "a query level may read only one table with a privacy unit column",
               "Joining two unit tables would mix two units' rows in one row.",
               "Aggregate each table in its own query.");
      unit_item = index;
      unit_column = InvalidAttrNumber;
    }
  }
  if (!IsAggregationLevel(query)) {
    if (unit_item != 0 || indirect)
      judgement->unit_row_levels = lappend(judgement->unit_row_levels, query);
    return nullptr;
  }
  // A level without private aggregates is bounded too when a restricted
  // role groups unit rows: its group keys are released by partition
  // selection, which must count units, not rows (a GROUP BY of keys alone
  // would otherwise release a key that one unit with many rows holds).
  // Built-in aggregates are refused to restricted roles by the level's
  // other rules.
  const bool grouped_keys_only = judgement->restricted && query->groupClause != NIL &&
                                 !query->hasAggs && (unit_item != 0 || indirect);
  if (!CheckAggregateCalls(query, false) && !grouped_keys_only) {
    // Its groups and built-in aggregates derive from unit rows: a private
    // aggregate above may not take them for rows of independent units.
    if (unit_item != 0 || indirect)
      judgement->unit_row_levels = lappend(judgement->unit_row_levels, query);
    return nullptr;
  }
  if (indirect)
    Refuse(ERRCODE_FEATURE_NOT_SUPPORTED,
           "private aggregates over rows of a privacy-unit table from this subquery or WITH "
           "query are not supported",
           "dp_agg bounds each unit's contribution in the query level that reads the table "
           "with the privacy unit column directly, or through a subquery in FROM that only "
           "filters, projects and inner-joins it to tables without a unit (no aggregates, "
           "DISTINCT, LIMIT, ORDER BY, set operations, window or set-returning functions, "
           "subqueries, WITH, outer joins or volatile functions).",
           "Move the table into the FROM clause of the level that calls the private "
           "aggregates.");
  if (unit_item == 0) return nullptr;
  CheckUnitLevel(query, unit_item, unit_column);
  if (TestFaultIs(TestFault::kSkipUnitBounding)) return nullptr;
  return PrivacyUnitsRewrite(query, unit_item, unit_column, max_groups_contributed);
}

// ---------------------------------------------------------------------------
// Levels.
// ---------------------------------------------------------------------------

// Judges one query level; returns whether it returns protected rows.
bool JudgeLevel(Query* query, const Level* parent, Judgement* judgement) {
  check_stack_depth();
  const Level level = JudgeWithQueries(query, parent, judgement);
  const bool restricted = judgement->restricted;
  if (restricted) {
    ListCell* cell;
    foreach (cell, CheckCatalogAccess(query))
      Require(judgement, EntryRewrite(RewriteKind::kMaskPlannerStatistics,
                                      static_cast<RangeTblEntry*>(lfirst(cell))));
  }
  if (restricted) RefuseUnitGroupSample(query);
  const Sources sources = JudgeSources(query, &level, judgement);
  if (restricted && judgement->reads_protected && query->cteList != NIL)
    Require(judgement, LevelRewrite(RewriteKind::kMaterializeWithQueries, query));
  JudgeSubLinksOf(query, &level, judgement);

  if (sources.branch_protected) {
    if (restricted) RefuseSetOperation();
    return true;
  }
  // Before the levels' other rewrites: they apply to the rewritten level.
  Rewrite* units = JudgePrivacyUnits(query, sources, &level, judgement);
  // Declared public keys: rows outside them are filtered out first, where
  // the level reads the table (before the privacy-unit rewrite moves the
  // WHERE into its per-unit level).
  List* outer = NIL;  // the enclosing levels, innermost first (their WITH queries)
  for (const Level* up = level.parent; up != nullptr; up = up->parent)
    outer = lappend(outer, up->query);
  const PublicKeyPlan* public_keys = restricted && IsAggregationLevel(query)
                                         ? PlanPublicKeys(query, outer, sources.protected_items)
                                         : nullptr;
  if (public_keys != nullptr)
    Require(judgement, PublicKeysRewrite(RewriteKind::kFilterToPublicKeys, query, public_keys));
  if (units != nullptr) {
    // The unit rewrite moves the level's WHERE, group keys and aggregate
    // arguments into its inner level, where they run on protected rows:
    // they get their total arithmetic first (the level's own total
    // arithmetic, last below, then reaches only its outer expressions).
    if (restricted && sources.protected_items != nullptr)
      Require(judgement, LevelRewrite(RewriteKind::kTotalArithmetic, query));
    Require(judgement, units);
  }
  if (sources.protected_items == nullptr) return false;

  const bool aggregation = IsAggregationLevel(query);
  const bool calls_private = CheckAggregateCalls(query, restricted);
  if (!restricted) {
    // Unrestricted roles may read protected rows; their private aggregates
    // must still meet the sensitivity rules.
    if (calls_private)
      CheckFrom(query, sources.items, sources.protected_items, judgement->materialized_entries,
                ERRCODE_FEATURE_NOT_SUPPORTED);
    return !aggregation;
  }

  RefuseUnsupportedClauses(query);
  if (!aggregation && parent == nullptr) RefuseProtectedRows();
  const FromAnalysis from =
      CheckFrom(query, sources.items, sources.protected_items, judgement->materialized_entries,
                ERRCODE_INSUFFICIENT_PRIVILEGE);
  CheckJoinConditions(query);
  if (!aggregation) {
    JudgeRowLevel(query, from);
    Require(judgement, LevelRewrite(RewriteKind::kTotalArithmetic, query));
    return true;  // protected rows: an outer level must aggregate them
  }
  JudgeAggregationLevel(query, from, units != nullptr ? units->max_groups : 1, calls_private,
                        public_keys, judgement);
  // Last for the level: its expressions are final (group selection added).
  Require(judgement, LevelRewrite(RewriteKind::kTotalArithmetic, query));
  return false;
}

// Access as the table owner, the way a view gives it, for exactly the
// tables of this validated query. A view's owner already checks access,
// unless the view belongs to a restricted role (a view of the analyst's
// own, judged here as part of this query).
void RequireOwnerAccess(Judgement* judgement) {
  ListCell* cell;
  foreach (cell, judgement->protected_entries) {
    auto* entry = static_cast<RangeTblEntry*>(lfirst(cell));
    if (OidIsValid(entry->checkAsUser) && !RoleIsRestricted(entry->checkAsUser)) continue;
    HeapTuple tuple = SearchSysCache1(RELOID, ObjectIdGetDatum(entry->relid));
    if (!HeapTupleIsValid(tuple)) elog(ERROR, "dp_agg: relation %u vanished", entry->relid);
    const Oid owner = reinterpret_cast<Form_pg_class>(GETSTRUCT(tuple))->relowner;
    ReleaseSysCache(tuple);
    Require(judgement, OwnerAccessRewrite(entry, owner));
  }
}

}  // namespace

Verdict JudgeQuery(Query* query) {
#ifdef USE_ASSERT_CHECKING
  Query* before = static_cast<Query*>(copyObjectImpl(query));
#endif
  Judgement judgement{RestrictedSession(), false, NIL, NIL, NIL, NIL};
  ResetRowExpressionCounts();
  if (judgement.restricted) RefusePartitionwiseAggregation();
  RefuseSamplerBesidePrivateAggregates(query);
  const bool returns_protected_rows = JudgeLevel(query, nullptr, &judgement);
  if (judgement.restricted && returns_protected_rows) RefuseProtectedRows();
  if (judgement.restricted) RequireOwnerAccess(&judgement);
#ifdef USE_ASSERT_CHECKING
  Assert(equal(before, query));  // the judge is a pure function of the query
#endif
  return Verdict{judgement.reads_protected, judgement.rewrites};
}

}  // namespace dp_pg
