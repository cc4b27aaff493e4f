// The ledger writer's common charge in C (ledger_fast_charge.h).
#include "ledger_fast_charge.h"

#include <cstring>

#include "ledger_chain.h"
#include "ledger_records.h"

extern "C" {
#include "access/htup_details.h"
#include "access/xlog.h"
#include "executor/spi.h"
#include "mb/pg_wchar.h"
#include "utils/builtins.h"
}

namespace dp_pg {
namespace {

// dp_agg.apply_charge's UPDATE (src/sql/40_budgets_ledger.sql), for a budget
// that does not renew: a renewing one may have to start its new period first
// (dp_agg.renew_budget_if_due), which apply_charge does. The condition is
// checked again on the row's latest version if a concurrent transaction
// changed it (READ COMMITTED), so a budget that was given a renewal schedule
// meanwhile is left to apply_charge too. `RETURNING b` is the budget row
// right after the charge, whose digest the ledger row records.
constexpr const char* kChargeSql =
    "UPDATE dp_agg.role_budget b "
    "SET epsilon_spent = b.epsilon_spent + $3, delta_spent = b.delta_spent + $4, "
    "rho_spent = b.rho_spent + $5, zcdp_delta_spent = b.zcdp_delta_spent + $6, role_name = $7 "
    "WHERE b.role_oid = $1 AND b.system_identifier = $2 AND b.renew_every IS NULL "
    "AND b.budget_kind IN ('epsilon_delta', 'zcdp') "
    "AND CASE WHEN b.budget_kind = 'epsilon_delta' OR b.epsilon_delta_binding THEN "
    "b.epsilon_spent + $3 <= b.epsilon_total AND b.delta_spent + $4 <= b.delta_total "
    "ELSE true END "
    "AND CASE WHEN b.budget_kind = 'zcdp' OR b.zcdp_binding THEN "
    "b.rho_spent + $5 <= b.rho_total AND b.zcdp_delta_spent + $6 <= b.zcdp_delta_total "
    "ELSE true END "
    "RETURNING b, b.budget_kind, b.epsilon_total::text, b.epsilon_spent::text, "
    "b.delta_total::text, b.delta_spent::text, b.rho_total::text, b.rho_spent::text, "
    "b.zcdp_delta_total::text, b.zcdp_delta_spent::text";

// Prepared once per writer: a writer lives in one database, and the plan
// cache replans it after a change of the table (ALTER EXTENSION UPDATE).
SPIPlanPtr charge_plan = nullptr;

Datum NumericOf(const char* text) {
  return DirectFunctionCall3(numeric_in, CStringGetDatum(text), ObjectIdGetDatum(InvalidOid),
                             Int32GetDatum(-1));
}

Datum NameOf(const char* text) { return DirectFunctionCall1(namein, CStringGetDatum(text)); }

}  // namespace

bool ChargeWithoutRenewal(ledger_queue::ChargeRequest* request) {
  using ledger_queue::kNumberText;
  if (charge_plan == nullptr) {
    Oid types[7] = {OIDOID, INT8OID, NUMERICOID, NUMERICOID, NUMERICOID, NUMERICOID, NAMEOID};
    SPIPlanPtr plan = SPI_prepare(kChargeSql, 7, types);
    if (plan == nullptr)
      elog(ERROR, "dp_agg: could not prepare the charge: %s", SPI_result_code_string(SPI_result));
    SPI_keepplan(plan);
    charge_plan = plan;
  }
  const Datum epsilon = NumericOf(request->epsilon);
  const Datum delta = NumericOf(request->delta);
  const Datum rho = NumericOf(request->rho);
  const Datum zcdp_delta = NumericOf(request->zcdp_delta);
  const Datum role = NameOf(request->role_name);
  const Datum cluster = Int64GetDatum(static_cast<int64>(GetSystemIdentifier()));
  Datum arguments[7] = {
      ObjectIdGetDatum(request->role_oid), cluster, epsilon, delta, rho, zcdp_delta, role};
  const int result = SPI_execute_plan(charge_plan, arguments, nullptr, false, 0);
  if (result != SPI_OK_UPDATE_RETURNING)
    elog(ERROR, "dp_agg: the charge failed: %s", SPI_result_code_string(result));
  if (SPI_processed == 0) return false;
  if (SPI_processed != 1)
    elog(ERROR, "dp_agg: the charge changed %llu budgets",
         static_cast<unsigned long long>(SPI_processed));
  HeapTuple row = SPI_tuptable->vals[0];
  TupleDesc description = SPI_tuptable->tupdesc;
  bool budget_null = true;
  const Datum budget = SPI_getbinval(row, description, 1, &budget_null);
  if (budget_null) elog(ERROR, "dp_agg: the charge returned no budget row");

  // The ledger row of dp_agg.apply_charge's append_ledger_entry('charge',
  // role_oid, role, role, session_role, epsilon, delta, rho, zcdp_delta,
  // now_budget, true, query_id, aggregates, left(query, 1000)).
  Datum values[kEntryCount];
  bool nulls[kEntryCount];
  for (int i = 0; i < kEntryCount; ++i) nulls[i] = true;
  const auto set = [&](EntryField field, Datum value) {
    values[field] = value;
    nulls[field] = false;
  };
  set(kKind, CStringGetTextDatum("charge"));
  set(kRoleOid, ObjectIdGetDatum(request->role_oid));
  set(kRoleName, role);
  set(kSessionUserName, role);
  set(kCurrentUserName, NameOf(request->current_user_name));
  set(kEpsilon, epsilon);
  set(kDelta, delta);
  set(kRho, rho);
  set(kZcdpDelta, zcdp_delta);
  if (request->query_id != 0) set(kQueryId, Int64GetDatum(request->query_id));
  set(kAggregates, ledger_queue::ValidTextDatum(request->aggregates));
  set(kQuery, DirectFunctionCall2(text_left, ledger_queue::ValidTextDatum(request->query_text),
                                  Int32GetDatum(1000)));
  AppendLedgerEntry(values, nulls, DatumGetHeapTupleHeader(budget), true);

  request->outcome = ledger_queue::kCharged;
  char* fields[9] = {request->budget_kind, request->epsilon_total,    request->epsilon_spent,
                     request->delta_total, request->delta_spent,      request->rho_total,
                     request->rho_spent,   request->zcdp_delta_total, request->zcdp_delta_spent};
  for (int i = 0; i < 9; ++i) {
    const std::size_t size = i == 0 ? sizeof request->budget_kind : kNumberText;
    ledger_queue::CopyText(fields[i], size, SPI_getvalue(row, description, i + 2));
  }
  return true;
}

}  // namespace dp_pg
