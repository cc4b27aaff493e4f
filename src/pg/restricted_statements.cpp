// What a restricted role may run besides planned queries: the utility
// statements on dp_agg's list, the settings it may change, and no EXPLAIN of
// a plan that reads protected tables (declared in restriction.h). After
// GRANT, ALTER and CREATE statements the GRANT invariant is checked again
// (grant_invariant.h).
#include "restriction.h"

#include "grant_invariant.h"
#include "protected_tables.h"

extern "C" {
#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/dependency.h"
#include "catalog/namespace.h"
#include "catalog/pg_attrdef.h"
#include "catalog/pg_authid.h"
#include "catalog/pg_class.h"
#include "catalog/pg_database.h"
#include "catalog/pg_depend.h"
#include "catalog/partition.h"
#include "catalog/pg_inherits.h"
#include "catalog/pg_namespace.h"
#include "catalog/pg_seclabel.h"
#include "catalog/pg_shseclabel.h"
#include "commands/seclabel.h"
#include "libpq/auth.h"
#include "libpq/libpq-be.h"
#include "nodes/parsenodes.h"
#include "storage/proc.h"
#include "tcop/utility.h"
#include "utils/acl.h"
#include "utils/fmgroids.h"
#include "utils/guc.h"
#include "utils/guc_tables.h"
#include "utils/rel.h"
}

namespace dp_pg {

namespace {

// ---------------------------------------------------------------------------
// Utility statements. A restricted role may run only those on this list;
// everything else is refused by name. Statements that contain a query (COPY
// (query), CREATE TABLE AS, DECLARE CURSOR, EXPLAIN, PREPARE/EXECUTE) have
// it planned, so the query rules judge it there.
// ---------------------------------------------------------------------------

int explain_depth = 0;  // > 0 while an EXPLAIN statement runs

[[noreturn]] void RefuseUtility(Node* statement, const char* why) {
  ereport(ERROR, (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
                  errmsg("dp_agg: restricted roles may not run %s",
                         GetCommandTagName(CreateCommandTag(statement))),
                  errdetail("%s", why),
                  errhint("Restricted roles read protected tables only through dp_agg's "
                          "differentially private aggregates.")));
  pg_unreachable();
}

void CheckUtilityForRestrictedRole(Node* statement) {
  switch (nodeTag(statement)) {
    case T_TransactionStmt:
    case T_VariableShowStmt:
    case T_PrepareStmt:
    case T_ExecuteStmt:
    case T_DeallocateStmt:
    case T_DeclareCursorStmt:
    case T_FetchStmt:
    case T_ClosePortalStmt:
    case T_DiscardStmt:
    // LISTEN is not allowed: NOTIFY payloads are whatever the application
    // sends (a trigger may send row_to_json(NEW) of a protected table).
    case T_UnlistenStmt:
    case T_NotifyStmt:
    case T_ExplainStmt:
    case T_CreateTableAsStmt:
    case T_CreateStmt:
    case T_ViewStmt:
    case T_DropStmt:
    case T_DoStmt:
    case T_CallStmt:
      return;
    case T_VariableSetStmt: {
      const auto* set = reinterpret_cast<VariableSetStmt*>(statement);
      // RESET returns to what the administrator configured; SET TRANSACTION
      // and SET SESSION CHARACTERISTICS are VAR_SET_MULTI.
      if (set->kind == VAR_RESET_ALL || set->kind == VAR_RESET || set->kind == VAR_SET_MULTI)
        return;
      if (set->name != nullptr && IsAnalystSetting(set->name)) return;
      RefuseUtility(statement,
                    "Restricted roles may change only client settings (DateStyle, "
                    "search_path, statement_timeout, ...) and "
                    "dp_agg.group_selection_epsilon/_delta, "
                    "dp_agg.max_groups_contributed, dp_agg.release_cache_period: planner "
                    "and debugging "
                    "settings show or change how protected rows are read.");
    }
    case T_CopyStmt: {
      const auto* copy = reinterpret_cast<CopyStmt*>(statement);
      if (copy->relation == nullptr) return;  // COPY (query): the query is judged when planned
      const Oid relation = RangeVarGetRelid(copy->relation, NoLock, true);
      if (OidIsValid(relation) && IsProtectedRelation(relation, true))
        RefuseUtility(statement, "COPY of a protected table copies its rows.");
      if (OidIsValid(relation) && get_rel_namespace(relation) == PG_CATALOG_NAMESPACE)
        RefuseUtility(statement,
                      "COPY of a system catalog is not judged like a query; "
                      "catalogs such as pg_class hold row counts (select them "
                      "instead).");
      return;
    }
    case T_LoadStmt:
      RefuseUtility(statement, "Loading libraries could change how queries run.");
    default:
      RefuseUtility(statement,
                    "It is not on dp_agg's list of statements that cannot read "
                    "protected data.");
  }
}

}  // namespace

void RunUtilityForRestrictedRoles(PlannedStmt* statement, const char* query_string,
                                  bool read_only_tree, ProcessUtilityContext context,
                                  ParamListInfo params, QueryEnvironment* environment,
                                  DestReceiver* destination, QueryCompletion* completion,
                                  ProcessUtility_hook_type next) {
  Node* parse_tree = statement->utilityStmt;
  // Sub-commands (the index of a PRIMARY KEY in CREATE TABLE) belong to a
  // statement that was already allowed.
  const bool restricted =
      context != PROCESS_UTILITY_SUBCOMMAND && IsTransactionState() && RestrictedSession();
  if (restricted) CheckUtilityForRestrictedRole(parse_tree);
  if (IsA(parse_tree, ExplainStmt)) {
    const int depth = explain_depth;
    PG_TRY();
    {
      ++explain_depth;
      next(statement, query_string, read_only_tree, context, params, environment, destination,
           completion);
    }
    PG_FINALLY();
    { explain_depth = depth; }
    PG_END_TRY();
    return;
  }
  next(statement, query_string, read_only_tree, context, params, environment, destination,
       completion);
  if (IsA(parse_tree, VariableSetStmt) || IsA(parse_tree, DiscardStmt))
    JudgeSessionAfterSettingsChange();
  // A GRANT of a table or sequence privilege or of role membership, or a
  // new owner, must not hand a restricted role direct access to a protected
  // table or to a sequence that counts its rows (ALTER/CREATE SEQUENCE ...
  // OWNED BY, ALTER TABLE ... ADD COLUMN of a serial or identity column).
  if (IsA(parse_tree, GrantStmt) || IsA(parse_tree, GrantRoleStmt) ||
      IsA(parse_tree, AlterOwnerStmt) || IsA(parse_tree, AlterTableStmt) ||
      IsA(parse_tree, AlterDefaultPrivilegesStmt) || IsA(parse_tree, AlterSeqStmt) ||
      IsA(parse_tree, CreateSeqStmt) ||
      // A new partition or inheritance child of a protected table carries
      // the default privileges of its creator.
      IsA(parse_tree, CreateStmt) || IsA(parse_tree, CreateForeignTableStmt)) {
    CommandCounterIncrement();
    // CREATE [FOREIGN] TABLE ... INHERITS and ALTER TABLE ... INHERIT make
    // children.
    if (IsA(parse_tree, CreateStmt) || IsA(parse_tree, CreateForeignTableStmt) ||
        IsA(parse_tree, AlterTableStmt)) {
      PropagateProtection(InvalidOid);
      CommandCounterIncrement();
    }
    CheckRestrictionInvariant(InvalidOid, InvalidOid);
  }
}

namespace {

bool PlanReadsProtectedTable(PlannedStmt* plan) {
  ListCell* cell;
  foreach (cell, plan->rtable) {
    const auto* entry = static_cast<RangeTblEntry*>(lfirst(cell));
    if (entry->rtekind == RTE_RELATION && IsProtectedRelation(entry->relid, entry->inh))
      return true;
  }
  return false;
}

}  // namespace

void CheckExecutionForRestrictedRole(QueryDesc* query, int flags) {
  const bool explaining = explain_depth > 0 || (flags & EXEC_FLAG_EXPLAIN_ONLY) != 0;
  if (!explaining || !RestrictedSession()) return;
  if (PlanReadsProtectedTable(query->plannedstmt))
    ereport(ERROR, (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
                    errmsg("dp_agg: restricted roles may not EXPLAIN queries on protected tables"),
                    errdetail("A plan shows row counts and row estimates of the data."),
                    errhint("Run the query itself; its differentially private answers are the only "
                            "output about protected tables.")));
}

bool IsAnalystSetting(const char* name) {
  static const char* const kAllowed[] = {"application_name",
                                         "extra_float_digits",
                                         "datestyle",
                                         "intervalstyle",
                                         "timezone",
                                         "client_encoding",
                                         "search_path",
                                         "statement_timeout",
                                         "lock_timeout",
                                         "idle_in_transaction_session_timeout",
                                         "idle_session_timeout",
                                         "standard_conforming_strings",
                                         "bytea_output",
                                         "client_min_messages",
                                         "transaction_isolation",
                                         "transaction_read_only",
                                         "transaction_deferrable",
                                         "default_transaction_isolation",
                                         "default_transaction_read_only",
                                         "default_transaction_deferrable",
                                         "plan_cache_mode",
                                         "role",
                                         "lc_monetary",
                                         "lc_numeric",
                                         "lc_time",
                                         "xmlbinary",
                                         "xmloption",
                                         "dp_agg.group_selection_epsilon",
                                         "dp_agg.group_selection_delta",
                                         "dp_agg.max_groups_contributed",
                                         "dp_agg.release_cache_period"};
  if (name == nullptr) return false;
  for (const char* allowed : kAllowed)
    if (pg_strcasecmp(name, allowed) == 0) return true;
  return false;
}

}  // namespace dp_pg
