// dp_agg on Citus: privacy units on distributed tables, on the analyst's
// query tree (units.h).
#include "units.h"

#include <cstdlib>
#include <cstring>

extern "C" {
#include "access/genam.h"
#include "access/table.h"
#include "catalog/dependency.h"
#include "catalog/namespace.h"
#include "catalog/pg_namespace.h"
#include "catalog/pg_type.h"
#include "commands/extension.h"
#include "nodes/makefuncs.h"
#include "optimizer/tlist.h"
#include "parser/parse_func.h"
#include "parser/parsetree.h"
#include "utils/datum.h"
#include "utils/fmgroids.h"
#include "utils/inval.h"
#include "utils/typcache.h"
#include "tcop/pquery.h"
#include "utils/rel.h"
#include "nodes/extensible.h"
}

#include "../unit_rewrite.h"
#include "catalog.h"
#include "wrappers.h"
namespace dp_pg {

namespace {

// --- privacy units on distributed tables ------------------------------------
//
// The privacy-unit rewrite (unit_rewrite.h) turns a private aggregation level
// over a unit table into an outer private level over a per-unit level,
//   SELECT keys, unit, <per-unit values>,
//          dp_agg.unit_group_sample(m) OVER (PARTITION BY unit)
//   FROM table ... GROUP BY unit, keys
// in which each unit is one bounded row per group and is kept in at most m
// groups. Its privacy argument needs the per-unit level to see ALL rows of a
// unit together. On Citus that level runs once per shard (Citus pushes it
// down because it groups and partitions by the distribution column), so it
// bounds each unit within one shard only, and a unit with rows in two shards
// would be two units: up to 2m groups, two rows per group. That cannot happen
// exactly when every unit's rows are in one shard, which holds when the
// table is hash-distributed by its unit column (a hash value maps to exactly
// one shard; a partitioned table's shard holds the same hash range in every
// partition). The per-shard per-unit levels together are then exactly the
// single-node per-unit level, and the outer level is split into partial
// states on the workers and the release on the coordinator like any
// row-level aggregate. Anything else (another distribution column, range or
// append distribution, whose shards may overlap) is refused before anything
// is charged, on the query tree (RefuseUnitNotDistributedByUnit, with
// guidance) and again on Citus's worker job when the coordinator charges
// (UnitJobGroups), so a plan cached before a redistribution is checked too.

bool IsUnitSampler(Node* node, void* context) {
  if (node == nullptr) return false;
  if (IsA(node, WindowFunc) &&
      reinterpret_cast<WindowFunc*>(node)->winfnoid == *static_cast<Oid*>(context))
    return true;
  if (IsA(node, Query)) return false;
  return expression_tree_walker(node, DP_EXPRESSION_WALKER(IsUnitSampler), context);
}

}  // namespace

// The per-unit level that the private aggregation level `query` reads: its
// only FROM item, a subquery with dp_agg.unit_group_sample. nullptr otherwise.
Query* PerUnitLevel(Query* query) {
  if (query->jointree == nullptr || list_length(query->jointree->fromlist) != 1) return nullptr;
  Node* item = static_cast<Node*>(linitial(query->jointree->fromlist));
  if (!IsA(item, RangeTblRef)) return nullptr;
  RangeTblEntry* entry = rt_fetch(reinterpret_cast<RangeTblRef*>(item)->rtindex, query->rtable);
  if (entry->rtekind != RTE_SUBQUERY || entry->subquery == nullptr) return nullptr;
  Query* level = entry->subquery;
  Oid sampler = UnitGroupSampleFunction();
  if (!level->hasWindowFuncs || !OidIsValid(sampler) ||
      !IsUnitSampler(reinterpret_cast<Node*>(level->targetList), &sampler))
    return nullptr;
  return level;
}

// The table column that column `column` of FROM item `item` of `query` is,
// through subqueries that pass it on as a plain column.
bool BaseColumn(Query* query, Index item, AttrNumber column, Oid* table, AttrNumber* table_column) {
  for (int depth = 0; depth < 64; ++depth) {
    if (item < 1 || item > static_cast<Index>(list_length(query->rtable))) return false;
    RangeTblEntry* entry = rt_fetch(item, query->rtable);
    if (entry->rtekind == RTE_RELATION) {
      *table = entry->relid;
      *table_column = column;
      return true;
    }
    if (entry->rtekind != RTE_SUBQUERY || entry->subquery == nullptr ||
        entry->subquery->setOperations != nullptr)
      return false;
    TargetEntry* output = get_tle_by_resno(entry->subquery->targetList, column);
    if (output == nullptr) return false;
    Node* expression = StripRelabel(reinterpret_cast<Node*>(output->expr));
    if (expression == nullptr || !IsA(expression, Var)) return false;
    const auto* var = reinterpret_cast<Var*>(expression);
    if (var->varlevelsup != 0) return false;
    query = entry->subquery;
    item = var->varno;
    column = var->varattno;
  }
  return false;
}

// The expression a per-unit level's window is partitioned by (the unit), or
// nullptr when it is not one expression of one window.
Node* UnitPartitionKey(Query* level) {
  if (list_length(level->windowClause) != 1) return nullptr;
  auto* window = static_cast<WindowClause*>(linitial(level->windowClause));
  if (list_length(window->partitionClause) != 1) return nullptr;
  auto* clause = static_cast<SortGroupClause*>(linitial(window->partitionClause));
  TargetEntry* entry = get_sortgroupclause_tle(clause, level->targetList);
  // The level aggregates per unit: the unit is one of its group keys.
  if (get_sortgroupref_clause_noerr(clause->tleSortGroupRef, level->groupClause) == nullptr)
    return nullptr;
  return StripRelabel(reinterpret_cast<Node*>(entry->expr));
}

// The table and column of a per-unit level's unit.
bool UnitOfLevel(Query* level, Oid* table, AttrNumber* column) {
  Node* key = UnitPartitionKey(level);
  if (key == nullptr || !IsA(key, Var) || reinterpret_cast<Var*>(key)->varlevelsup != 0)
    return false;
  const auto* var = reinterpret_cast<Var*>(key);
  return BaseColumn(level, var->varno, var->varattno, table, column);
}

namespace {

bool ReadsCitusTableAnywhere(Query* query) {
  ListCell* cell;
  foreach (cell, query->rtable) {
    auto* entry = static_cast<RangeTblEntry*>(lfirst(cell));
    if (entry->rtekind == RTE_RELATION) {
      char method = '\0';
      (void)DistributionColumn(entry->relid, &method);
      if (method != '\0' && method != 'n') return true;
    }
    if (entry->rtekind == RTE_SUBQUERY && entry->subquery != nullptr &&
        ReadsCitusTableAnywhere(entry->subquery))
      return true;
  }
  return false;
}

}  // namespace

// Whether the private aggregation level `query` reads the rewrite's per-unit
// level over a Citus distributed table (then it is split like a level that
// reads the table itself). Refuses, before anything is charged, a unit
// table that is not hash-distributed by its unit column (see above).
bool ReadsDistributedUnitLevel(Query* query) {
  Query* level = PerUnitLevel(query);
  if (level == nullptr) return false;
  Oid table = InvalidOid;
  AttrNumber unit = 0;
  if (!UnitOfLevel(level, &table, &unit)) {
    if (!ReadsCitusTableAnywhere(level)) return false;
    ereport(ERROR,
            (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
             errmsg("dp_agg cannot tell the privacy unit column of a Citus distributed table "
                    "in this query"),
             errdetail("Contributions are bounded per unit on the workers only when every "
                       "row of a unit is in one shard; the query is refused before anything "
                       "is charged."),
             errhint("Aggregate the unit table directly (a WHERE on its own columns, no "
                     "joins).")));
  }
  char method = '\0';
  const AttrNumber distribution = DistributionColumn(table, &method);
  // A table Citus does not know: as on one node.
  if (method == '\0') return false;
  if (method == 'h' && distribution == unit) return true;
  char* table_name = get_rel_name(table);
  char* unit_name = get_attname(table, unit, true);
  // Reference tables (and Citus's single-shard tables) hold every unit in one
  // placement, but Citus runs the whole query as one task, re-planned from
  // its text on the node of the placement, which dp_agg does not judge again
  // as its own privacy-unit rewrite: refused before anything is charged.
  if (method == 'n')
    ereport(
        ERROR,
        (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
         errmsg("dp_agg: privacy unit table %s is a Citus reference, single-shard or local table",
                table_name != nullptr ? table_name : "?"),
         errdetail("Private aggregates over privacy units run on Citus only for tables "
                   "hash-distributed by their unit column. The query is refused before "
                   "anything is charged."),
         errhint("Distribute the table by its privacy unit column: SELECT "
                 "undistribute_table('%s'); SELECT create_distributed_table('%s', '%s');",
                 table_name != nullptr ? table_name : "?", table_name != nullptr ? table_name : "?",
                 unit_name != nullptr ? unit_name : "?")));
  char* distribution_name = distribution > 0 ? get_attname(table, distribution, true) : nullptr;
  ereport(
      ERROR,
      (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
       errmsg("dp_agg: privacy unit table %s is not hash-distributed by its privacy unit "
              "column %s",
              table_name != nullptr ? table_name : "?", unit_name != nullptr ? unit_name : "?"),
       errdetail("It is distributed %s%s. On Citus each shard bounds the contributions of "
                 "the units it holds, which bounds a unit's whole contribution only when "
                 "all of its rows are in one shard. The query is refused before anything "
                 "is charged.",
                 method == 'h' ? "by column " : "by range or append on column ",
                 distribution_name != nullptr ? distribution_name : "?"),
       errhint("Redistribute the table by its privacy unit column: SELECT "
               "alter_distributed_table('%s', distribution_column := '%s'); (for a new "
               "table: SELECT create_distributed_table('%s', '%s');).",
               table_name != nullptr ? table_name : "?", unit_name != nullptr ? unit_name : "?",
               table_name != nullptr ? table_name : "?", unit_name != nullptr ? unit_name : "?")));
}

}  // namespace dp_pg
