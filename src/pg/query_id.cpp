// The query identifier of charged and judged statements (see query_id.h).
#include "query_id.h"

extern "C" {
#include "access/htup_details.h"
#include "access/transam.h"
#include "catalog/pg_class.h"
#include "nodes/nodeFuncs.h"
#include "parser/parse_node.h"
#include "utils/fmgroids.h"
}

#include "label_cache.h"
#include "restriction.h"

namespace dp_pg {

namespace {

// PostgreSQL's built-in functions that run SQL text or read a table through
// SPI (xml.c, tsvector_op.c, tsquery_rewrite.c): the statement they run may
// read a view calling a private aggregate, and is charged as part of the
// statement that called them.
bool RunsSql(Oid function) {
  switch (function) {
    case F_TABLE_TO_XML:
    case F_QUERY_TO_XML:
    case F_CURSOR_TO_XML:
    case F_TABLE_TO_XMLSCHEMA:
    case F_QUERY_TO_XMLSCHEMA:
    case F_CURSOR_TO_XMLSCHEMA:
    case F_TABLE_TO_XML_AND_XMLSCHEMA:
    case F_QUERY_TO_XML_AND_XMLSCHEMA:
    case F_SCHEMA_TO_XML:
    case F_SCHEMA_TO_XMLSCHEMA:
    case F_SCHEMA_TO_XML_AND_XMLSCHEMA:
    case F_DATABASE_TO_XML:
    case F_DATABASE_TO_XMLSCHEMA:
    case F_DATABASE_TO_XML_AND_XMLSCHEMA:
    case F_TS_REWRITE_TSQUERY_TEXT:
    case F_TS_STAT_TEXT:
    case F_TS_STAT_TEXT_TEXT:
      return true;
    default:
      return false;
  }
}

// A function the statement calls that is not one of PostgreSQL's own (every
// private aggregate, every user-defined function or operator, which may run
// statements of their own), or one of those that run SQL.
bool MayCharge(Oid function) {
  return function == InvalidOid || function >= FirstNormalObjectId || RunsSql(function);
}

bool HasRowSecurity(Oid relation) {
  HeapTuple tuple = SearchSysCache1(RELOID, ObjectIdGetDatum(relation));
  if (!HeapTupleIsValid(tuple)) return true;
  const bool row_security = reinterpret_cast<Form_pg_class>(GETSTRUCT(tuple))->relrowsecurity;
  ReleaseSysCache(tuple);
  return row_security;
}

// A value of a type that is not PostgreSQL's own (an enum, a domain, a
// composite or range type, an extension's type): PostgreSQL's built-in
// functions call functions chosen by such a type, any of which may run SQL --
// to_json and its kin its cast to json, record_in and the json_populate
// functions its domains' CHECK constraints. Every such value is a leaf (a
// column, constant or parameter) or the result of a call or coercion.
bool OfTypeNotBuiltIn(Node* node) {
  switch (nodeTag(node)) {
    case T_Var:
    case T_Const:
    case T_Param:
    case T_Aggref:
    case T_WindowFunc:
    case T_FuncExpr:
    case T_OpExpr:
    case T_DistinctExpr:
    case T_NullIfExpr:
    case T_SubscriptingRef:
    case T_FieldSelect:
    case T_RelabelType:
    case T_CoerceViaIO:
    case T_ArrayCoerceExpr:
    case T_ConvertRowtypeExpr:
    case T_RowExpr:
    case T_ArrayExpr:
      return exprType(node) >= FirstNormalObjectId;
    default:
      return false;
  }
}

bool LeadsToCharge(Node* node, void* context) {
  if (node == nullptr) return false;
  if (IsA(node, Query)) {
    auto* query = reinterpret_cast<Query*>(node);
    // INSERT, UPDATE, DELETE and MERGE fire triggers, evaluate defaults and
    // constraints; utility statements run anything (CALL, DO, EXECUTE).
    if (query->commandType != CMD_SELECT || query->utilityStmt != nullptr) return true;
    return query_tree_walker(query, DP_EXPRESSION_WALKER(LeadsToCharge), context,
                             QTW_EXAMINE_RTES_BEFORE);
  }
  if (OfTypeNotBuiltIn(node)) return true;
  switch (nodeTag(node)) {
    case T_RangeTblEntry: {
      const auto* entry = reinterpret_cast<RangeTblEntry*>(node);
      if (entry->rtekind != RTE_RELATION) return false;  // subqueries: walked as Query
      // Views (expanded by the rewriter, after this point), foreign tables,
      // materialized views: whatever they run is not visible here.
      if (entry->relkind != RELKIND_RELATION && entry->relkind != RELKIND_PARTITIONED_TABLE)
        return true;
      return IsProtectedRelation(entry->relid, entry->inh) ||
             LabelledPrivacyUnitColumn(entry->relid) != InvalidAttrNumber ||
             AnyUnitTableWithChildren() || HasRowSecurity(entry->relid);
    }
    case T_Aggref:
      if (MayCharge(reinterpret_cast<Aggref*>(node)->aggfnoid)) return true;
      break;
    case T_WindowFunc:
      if (MayCharge(reinterpret_cast<WindowFunc*>(node)->winfnoid)) return true;
      break;
    case T_FuncExpr:
      if (MayCharge(reinterpret_cast<FuncExpr*>(node)->funcid)) return true;
      break;
    case T_OpExpr:
    case T_DistinctExpr:
    case T_NullIfExpr:
      if (MayCharge(reinterpret_cast<OpExpr*>(node)->opfuncid)) return true;
      break;
    case T_ScalarArrayOpExpr:
      if (MayCharge(reinterpret_cast<ScalarArrayOpExpr*>(node)->opfuncid)) return true;
      break;
    case T_RowCompareExpr: {
      ListCell* cell;
      foreach (cell, reinterpret_cast<RowCompareExpr*>(node)->opnos)
        if (lfirst_oid(cell) >= FirstNormalObjectId) return true;
      break;
    }
    case T_CoerceToDomain:  // a domain's CHECK constraints may call anything
      return true;
    default:
      break;
  }
  return expression_tree_walker(node, DP_EXPRESSION_WALKER(LeadsToCharge), context);
}

}  // namespace

bool QueryMayLeadToCharge(Query* query) {
  return LeadsToCharge(reinterpret_cast<Node*>(query), nullptr);
}

JumbleState* IdentifyQueryDpAggMayCharge(ParseState* state, Query* query, JumbleState* jumble) {
  if (jumble != nullptr || query->queryId != UINT64CONST(0)) return jumble;
  if (compute_query_id == COMPUTE_QUERY_ID_OFF) return jumble;
  if (!(IsTransactionState() && RestrictedSession()) && !QueryMayLeadToCharge(query)) return jumble;
  // JumbleQuery requires IsQueryIdEnabled() (an assertion in builds with
  // assertions, where it would stop the server at every identified
  // statement): the identifier is asked for this statement alone, as a module
  // calling EnableQueryId() asks for every statement. Not left asked for if
  // it raises (out of memory, stack depth).
  const bool enabled = query_id_enabled;
  query_id_enabled = true;
  JumbleState* volatile computed = nullptr;
  PG_TRY();
  { computed = JumbleQuery(query, state->p_sourcetext); }
  PG_FINALLY();
  { query_id_enabled = enabled; }
  PG_END_TRY();
  return computed;
}

}  // namespace dp_pg
