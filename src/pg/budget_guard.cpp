// A budget changes only from the state its ledger recorded (review 28).
//
// Every ledger entry records the digest of its role's budget row right after
// the change (budget_digest), and dp_agg.verify_ledger compares each budget
// with the digest of its last entry. A row changed outside dp_agg's functions
// (an UPDATE of its totals, kind or binding certificates; spent amounts are
// also checked against the charges) was reported only until the role's next
// charge or administrative change, which recorded the changed row as its
// new state: the change then passed for a recorded one. This trigger
// (BEFORE UPDATE of dp_agg.role_budget, also under session_replication_role
// = replica) refuses to change a budget that is not the one its last ledger
// entry recorded, or that no ledger entry records although its role has
// none at all (a budget created outside dp_agg's functions): nothing is
// charged or changed, and the refusal says how to recover. Budgets whose
// ledger rows predate budget digests (0.1.0) are not checked.
#include <cstring>

#include "error_boundary.h"
#include "ledger_chain.h"
#include "ledger_records.h"
#include "sqlstates.h"

extern "C" {
#include "commands/trigger.h"
#include "executor/spi.h"
#include "access/htup_details.h"
#include "utils/builtins.h"
}

namespace dp_pg {
namespace {

// The digest of the key's last ledger entry that recorded one, and whether
// the key has any ledger entry at all. Per key, ledger ids follow the order
// of the budget's changes (each change holds the budget's row lock until its
// transaction ends), so the last id is the last change, chained or not yet.
constexpr const char* kLastRecordSql =
    "SELECT e.budget_digest FROM dp_agg.ledger_entry e "
    "WHERE e.role_oid OPERATOR(pg_catalog.=) $1 "
    "AND e.system_identifier OPERATOR(pg_catalog.=) $2 AND e.budget_digest IS NOT NULL "
    "ORDER BY e.id DESC LIMIT 1";
constexpr const char* kAnyEntrySql =
    "SELECT EXISTS (SELECT 1 FROM dp_agg.ledger_entry e "
    "WHERE e.role_oid OPERATOR(pg_catalog.=) $1 "
    "AND e.system_identifier OPERATOR(pg_catalog.=) $2)";
SPIPlanPtr last_record_plan = nullptr;
SPIPlanPtr any_entry_plan = nullptr;

SPIPlanPtr Prepared(SPIPlanPtr* plan, const char* sql) {
  if (*plan != nullptr) return *plan;
  Oid types[2] = {OIDOID, INT8OID};
  SPIPlanPtr prepared = SPI_prepare(sql, 2, types);
  if (prepared == nullptr)
    elog(ERROR, "dp_agg: could not prepare \"%s\": %s", sql, SPI_result_code_string(SPI_result));
  SPI_keepplan(prepared);
  *plan = prepared;
  return prepared;
}

[[noreturn]] void RefuseUnrecorded(const char* role_name, const char* detail) {
  ereport(ERROR,
          (errcode(ERRCODE_DP_AGG_LEDGER_APPEND_ONLY),
           errmsg("the privacy budget of role \"%s\" was changed outside dp_agg's functions",
                  role_name),
           errdetail("%s No charge or change of it is recorded until it is resolved; nothing "
                     "was recorded.",
                     detail),
           errhint("SELECT * FROM dp_agg.verify_ledger() shows what differs. Restore the budget "
                   "as its ledger recorded it (from a backup), or remove it with "
                   "dp_agg.revoke_budget(role), which the ledger records, and set it again.")));
}

}  // namespace
}  // namespace dp_pg

extern "C" {

// Trigger (BEFORE UPDATE of dp_agg.role_budget, FOR EACH ROW): the row being
// changed must be the one its last ledger entry recorded.
PG_FUNCTION_INFO_V1(dp_agg_guard_budget_record);
Datum dp_agg_guard_budget_record(PG_FUNCTION_ARGS) {
  dp_pg::RequireTriggerCall(fcinfo, "dp_agg.guard_budget_record");
  const auto* trigger = reinterpret_cast<TriggerData*>(fcinfo->context);
  HeapTuple old_row = trigger->tg_trigtuple;
  TupleDesc description = RelationGetDescr(trigger->tg_relation);
  bool oid_null = true;
  bool cluster_null = true;
  bool name_null = true;
  const Datum role_oid =
      heap_getattr(old_row, SPI_fnumber(description, "role_oid"), description, &oid_null);
  const Datum cluster = heap_getattr(old_row, SPI_fnumber(description, "system_identifier"),
                                     description, &cluster_null);
  const Datum role_name =
      heap_getattr(old_row, SPI_fnumber(description, "role_name"), description, &name_null);
  if (oid_null || cluster_null) return PointerGetDatum(trigger->tg_newtuple);
  const char* name = name_null ? "?" : pstrdup(NameStr(*DatumGetName(role_name)));
  // The row's digest, from its composite form (what append_ledger_entry gets).
  const bytea* digest = dp_pg::BudgetRecordDigest(
      DatumGetHeapTupleHeader(heap_copy_tuple_as_datum(old_row, description)));

  if (SPI_connect() != SPI_OK_CONNECT) elog(ERROR, "dp_agg: SPI_connect failed");
  // The lookups run with a new snapshot (read_only false: READ COMMITTED takes
  // one per query), not the UPDATE's: the row lock this trigger fires under
  // may have been waited for while the ledger writer charged the role, and
  // the UPDATE then changes the charged row (EvalPlanQual) whose ledger entry
  // the statement's older snapshot cannot see, which refused an honest
  // reset_spent during the audit's charges. Charges of the role that are
  // committed now are all visible; none can commit meanwhile (the row lock).
  Datum arguments[2] = {role_oid, cluster};
  int result = SPI_execute_plan(dp_pg::Prepared(&dp_pg::last_record_plan, dp_pg::kLastRecordSql),
                                arguments, nullptr, false, 1);
  if (result != SPI_OK_SELECT) elog(ERROR, "dp_agg: the budget's last ledger record: %d", result);
  if (SPI_processed == 1) {
    bool is_null = true;
    const Datum recorded = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &is_null);
    const bytea* bytes = DatumGetByteaPP(recorded);
    if (VARSIZE_ANY_EXHDR(bytes) != VARSIZE_ANY_EXHDR(digest) ||
        std::memcmp(VARDATA_ANY(bytes), VARDATA_ANY(digest), VARSIZE_ANY_EXHDR(digest)) != 0)
      dp_pg::RefuseUnrecorded(name, "It is not the budget that its last ledger row recorded.");
  } else {
    result = SPI_execute_plan(dp_pg::Prepared(&dp_pg::any_entry_plan, dp_pg::kAnyEntrySql),
                              arguments, nullptr, false, 1);
    if (result != SPI_OK_SELECT) elog(ERROR, "dp_agg: the budget's ledger rows: %d", result);
    bool is_null = true;
    if (!DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &is_null)))
      dp_pg::RefuseUnrecorded(name,
                              "No ledger row records it: it was created outside "
                              "dp_agg's functions.");
  }
  SPI_finish();
  return PointerGetDatum(trigger->tg_newtuple);
}

}  // extern "C"
