#include "cost_probe.h"

extern "C" {
#include "parser/analyze.h"
#include "utils/datum.h"
#include "tcop/pquery.h"
#include "tcop/tcopprot.h"
#include "utils/snapmgr.h"
}

namespace dp_pg {

namespace {

CostProbe* pending_probe = nullptr;

void RefuseProbe(const char* message, const char* detail) {
  ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE), errmsg("%s", message),
                  errdetail("%s", detail)));
}

}  // namespace

CostProbe* TakeCostProbe(QueryDesc* query) {
  CostProbe* probe = pending_probe;
  if (probe == nullptr || probe->query != query) return nullptr;
  pending_probe = nullptr;
  return probe;
}

void RecordCostProbe(CostProbe* probe, QueryCost* cost) {
  MemoryContext previous = MemoryContextSwitchTo(probe->context);
  probe->epsilon = datumCopy(cost->epsilon, false, -1);
  probe->delta = datumCopy(cost->delta, false, -1);
  probe->rho = datumCopy(cost->rho, false, -1);
  probe->zcdp_delta = datumCopy(cost->zcdp_delta, false, -1);
  probe->description = pstrdup(cost->description.data);
  probe->sites = cost->sites;
  probe->measured = true;
  MemoryContextSwitchTo(previous);
  pfree(cost->description.data);
}

}  // namespace dp_pg

extern "C" {

// query_cost(query text, OUT epsilon numeric, OUT delta numeric,
//            OUT aggregates text, OUT rho numeric, OUT zcdp_delta numeric)
PG_FUNCTION_INFO_V1(dp_agg_query_cost);
Datum dp_agg_query_cost(PG_FUNCTION_ARGS) {
  using dp_pg::CostProbe;
  if (PG_ARGISNULL(0))
    ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
                    errmsg("dp_agg.query_cost needs the text of a query, not NULL")));
  const char* query_text = text_to_cstring(PG_GETARG_TEXT_PP(0));
  TupleDesc description = nullptr;
  if (get_call_result_type(fcinfo, nullptr, &description) != TYPEFUNC_COMPOSITE)
    elog(ERROR, "dp_agg.query_cost: return type must be a row type");
  description = BlessTupleDesc(description);

  List* raw = pg_parse_query(query_text);
  if (list_length(raw) != 1)
    dp_pg::RefuseProbe("dp_agg.query_cost takes exactly one statement",
                       "Pass the text of one SELECT statement, without a trailing second one.");
  List* queries = pg_analyze_and_rewrite_fixedparams(static_cast<RawStmt*>(linitial(raw)),
                                                     query_text, nullptr, 0, nullptr);
  if (list_length(queries) != 1)
    dp_pg::RefuseProbe("dp_agg.query_cost takes one SELECT statement",
                       "The statement was rewritten into several; only a plain SELECT can be "
                       "costed.");
  Query* query = static_cast<Query*>(linitial(queries));
  if (query->commandType != CMD_SELECT || query->utilityStmt != nullptr || query->hasModifyingCTE ||
      query->rowMarks != NIL)
    dp_pg::RefuseProbe("dp_agg.query_cost takes one SELECT statement",
                       "Only a plain SELECT (no INSERT/UPDATE/DELETE, SELECT INTO, "
                       "data-modifying WITH or FOR UPDATE) can be costed; nothing was run.");
  List* planned = pg_plan_queries(queries, query_text, CURSOR_OPT_PARALLEL_OK, nullptr);
  PlannedStmt* statement = linitial_node(PlannedStmt, planned);

  CostProbe probe;
  probe.context = CurrentMemoryContext;
  probe.measured = false;
  probe.sites = 0;
  probe.description = nullptr;
  PushCopiedSnapshot(GetActiveSnapshot());
  UpdateActiveSnapshotCommandId();
  QueryDesc* query_description =
      CreateQueryDesc(statement, query_text, GetActiveSnapshot(), InvalidSnapshot, None_Receiver,
                      nullptr, nullptr, 0);
  probe.query = query_description;
  // Started as for a real run (an EXPLAIN-only start would be refused to a
  // restricted role, and checks less), but never run: no row is read.
  dp_pg::pending_probe = &probe;
  PG_TRY();
  { ExecutorStart(query_description, 0); }
  PG_FINALLY();
  { dp_pg::pending_probe = nullptr; }
  PG_END_TRY();
  ExecutorFinish(query_description);
  ExecutorEnd(query_description);
  FreeQueryDesc(query_description);
  PopActiveSnapshot();
  if (!probe.measured)
    ereport(ERROR, (errcode(ERRCODE_INTERNAL_ERROR),
                    errmsg("dp_agg.query_cost: the executor hook did not measure the query")));

  Datum values[5] = {probe.epsilon, probe.delta,
                     CStringGetTextDatum(probe.description != nullptr ? probe.description : ""),
                     probe.rho, probe.zcdp_delta};
  bool nulls[5] = {false, false, false, false, false};
  PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(description, values, nulls)));
}

}  // extern "C"
