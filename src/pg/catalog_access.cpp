#include "catalog_access.h"

extern "C" {
#include "access/sysattr.h"
#include "access/table.h"
#include "catalog/pg_class.h"
#include "catalog/pg_namespace.h"
#include "lib/stringinfo.h"
#include "parser/analyze.h"
#include "parser/parser.h"
#include "utils/rel.h"
}

#include <cstring>

#include "refusal.h"
#include "restriction.h"

namespace dp_pg {

namespace {

bool IsStatisticsFunction(Oid function) {
  const char* name = get_func_name(function);
  if (name == nullptr) return false;
  // Activity statistics in any schema (pg_stat_statements and the like).
  if (strncmp(name, "pg_stat_", 8) == 0) return true;
  if (function >= FirstNormalObjectId || get_func_namespace(function) != PG_CATALOG_NAMESPACE)
    return false;
  static const char* const kSizeFunctions[] = {"pg_relation_size",       "pg_table_size",
                                               "pg_total_relation_size", "pg_indexes_size",
                                               "pg_database_size",       "pg_tablespace_size"};
  for (const char* size_function : kSizeFunctions)
    if (strcmp(name, size_function) == 0) return true;
  return false;
}

bool IsBuiltinSetConfig(Oid function) {
  return function < FirstNormalObjectId && get_func_namespace(function) == PG_CATALOG_NAMESPACE &&
         strcmp(get_func_name(function), "set_config") == 0;
}

// Walks the expressions of one level for calls of statistics functions and
// of set_config(). Reads an operator's function without caching it in the
// node (set_opfuncid would write into the query).
bool CheckCalledFunctions(Node* node, void* context) {
  if (node == nullptr) return false;
  if (IsA(node, Query)) return false;  // sublinks are judged as levels of their own
  Oid function = InvalidOid;
  if (IsA(node, FuncExpr)) function = reinterpret_cast<FuncExpr*>(node)->funcid;
  if (IsA(node, OpExpr)) {
    const auto* operation = reinterpret_cast<OpExpr*>(node);
    function = OidIsValid(operation->opfuncid) ? operation->opfuncid : get_opcode(operation->opno);
  }
  // set_config() is SET by another name.
  if (IsA(node, FuncExpr) && IsBuiltinSetConfig(function)) {
    Node* name = static_cast<Node*>(linitial(reinterpret_cast<FuncExpr*>(node)->args));
    if (!IsA(name, Const) || reinterpret_cast<Const*>(name)->constisnull ||
        !IsAnalystSetting(TextDatumGetCString(reinterpret_cast<Const*>(name)->constvalue)))
      Refuse(ERRCODE_INSUFFICIENT_PRIVILEGE, "restricted roles may not change this setting",
             "Planner, debugging and dp_agg's own settings show or change how protected rows "
             "are read.",
             "Only client settings, dp_agg.group_selection_epsilon/_delta, "
             "dp_agg.max_groups_contributed and dp_agg.release_cache_period may be changed, "
             "named by a constant.");
  }
  if (OidIsValid(function) && IsStatisticsFunction(function)) {
    char rule[256];
    snprintf(rule, sizeof rule, "restricted roles may not call %s", get_func_name(function));
    Refuse(ERRCODE_INSUFFICIENT_PRIVILEGE, rule,
           "Table sizes and activity statistics reveal how many rows a table holds.",
           "Estimate row counts with dp_count.");
  }
  return expression_tree_walker(node, DP_EXPRESSION_WALKER(CheckCalledFunctions), context);
}

// By name, in any schema: extensions such as pg_stat_statements put their
// views elsewhere.
bool IsStatisticsRelation(Oid relation) {
  const char* name = get_rel_name(relation);
  if (name == nullptr) return false;
  return strcmp(name, "pg_statistic") == 0 || strcmp(name, "pg_statistic_ext_data") == 0 ||
         strcmp(name, "pg_stats") == 0 || strcmp(name, "pg_stats_ext") == 0 ||
         strcmp(name, "pg_stats_ext_exprs") == 0 || strncmp(name, "pg_stat_", 8) == 0 ||
         strncmp(name, "pg_statio_", 10) == 0;
}

// Whether the query reads `column` of `entry` (directly or as a whole row).
bool SelectsColumn(const RangeTblEntry* entry, AttrNumber column) {
  return bms_is_member(column - FirstLowInvalidHeapAttributeNumber, entry->selectedCols) ||
         bms_is_member(0 - FirstLowInvalidHeapAttributeNumber, entry->selectedCols);
}

// Whether the query reads a system column (ctid, xmin, ...) of `entry`.
bool SelectsSystemColumn(const RangeTblEntry* entry) {
  int member = -1;
  while ((member = bms_next_member(entry->selectedCols, member)) >= 0) {
    if (member + FirstLowInvalidHeapAttributeNumber < 0) return true;
  }
  return false;
}

}  // namespace

void MaskPlannerStatistics(RangeTblEntry* entry) {
  // pg_class's columns in their order (Vars of the query refer to them by
  // number), the three statistics replaced by constants of the same types.
  StringInfoData sql;
  initStringInfo(&sql);
  appendStringInfoString(&sql, "SELECT ");
  Relation relation = table_open(RelationRelationId, AccessShareLock);
  TupleDesc description = RelationGetDescr(relation);
  for (int i = 0; i < description->natts; ++i) {
    const Form_pg_attribute attribute = TupleDescAttr(description, i);
    if (i > 0) appendStringInfoString(&sql, ", ");
    const char* name = quote_identifier(NameStr(attribute->attname));
    switch (attribute->attnum) {
      case Anum_pg_class_reltuples:
        appendStringInfo(&sql, "(-1)::pg_catalog.float4 AS %s", name);
        break;
      case Anum_pg_class_relpages:
      case Anum_pg_class_relallvisible:
        appendStringInfo(&sql, "0::pg_catalog.int4 AS %s", name);
        break;
      default:
        appendStringInfo(&sql, "c.%s", name);
    }
  }
  table_close(relation, AccessShareLock);
  appendStringInfoString(&sql, " FROM pg_catalog.pg_class c");
  List* raw = raw_parser(sql.data, RAW_PARSE_DEFAULT);
  Query* masked = parse_analyze_fixedparams(static_cast<RawStmt*>(linitial(raw)), sql.data, nullptr,
                                            0, nullptr);
  entry->rtekind = RTE_SUBQUERY;
  entry->subquery = masked;
  entry->security_barrier = false;
  entry->relid = InvalidOid;
  entry->relkind = 0;
  entry->rellockmode = NoLock;
  entry->inh = false;
  entry->requiredPerms = 0;
  entry->checkAsUser = InvalidOid;
  entry->selectedCols = nullptr;
  entry->insertedCols = nullptr;
  entry->updatedCols = nullptr;
  entry->extraUpdatedCols = nullptr;
}

List* CheckCatalogAccess(Query* query) {
  List* masked = NIL;
  ListCell* cell;
  foreach (cell, query->rtable) {
    const auto* entry = static_cast<RangeTblEntry*>(lfirst(cell));
    if (entry->rtekind != RTE_RELATION) continue;
    if (IsStatisticsRelation(entry->relid)) {
      char rule[256];
      snprintf(rule, sizeof rule, "restricted roles may not read %s", get_rel_name(entry->relid));
      Refuse(ERRCODE_INSUFFICIENT_PRIVILEGE, rule,
             "Planner statistics and activity counters describe the data of protected tables.",
             "Estimate what you need with dp_agg's private aggregates.");
    }
    if (entry->relid == RelationRelationId && (SelectsColumn(entry, Anum_pg_class_reltuples) ||
                                               SelectsColumn(entry, Anum_pg_class_relpages) ||
                                               SelectsColumn(entry, Anum_pg_class_relallvisible))) {
      // Masked rather than refused: drivers' catalog queries (JDBC
      // getIndexInfo) select them along with what they need.
      if (SelectsSystemColumn(entry) || entry->tablesample != nullptr)
        Refuse(ERRCODE_INSUFFICIENT_PRIVILEGE,
               "restricted roles may not read pg_class.reltuples, relpages or relallvisible "
               "together with a system column or TABLESAMPLE",
               "They estimate how many rows a table holds; dp_agg masks them only in plain "
               "reads of pg_class.",
               "Select the columns of pg_class by name; estimate row counts with dp_count.");
      masked = lappend(masked, const_cast<RangeTblEntry*>(entry));
    }
  }
  query_tree_walker(query, DP_EXPRESSION_WALKER(CheckCalledFunctions), nullptr,
                    QTW_IGNORE_RC_SUBQUERIES);
  return masked;
}

}  // namespace dp_pg
