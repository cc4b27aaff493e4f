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
#include "utils/typcache.h"
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

namespace {

void PrepareChargePlan() {
  if (charge_plan != nullptr) return;
  Oid types[7] = {OIDOID, INT8OID, NUMERICOID, NUMERICOID, NUMERICOID, NUMERICOID, NAMEOID};
  SPIPlanPtr plan = SPI_prepare(kChargeSql, 7, types);
  if (plan == nullptr)
    elog(ERROR, "dp_agg: could not prepare the charge: %s", SPI_result_code_string(SPI_result));
  SPI_keepplan(plan);
  charge_plan = plan;
}

// The four amounts of a charge, in kChargeSql's order ($3 .. $6).
constexpr int kAmounts = 4;

void AmountsOf(const ledger_queue::ChargeRequest& request, Datum* amounts) {
  amounts[0] = NumericOf(request.epsilon);
  amounts[1] = NumericOf(request.delta);
  amounts[2] = NumericOf(request.rho);
  amounts[3] = NumericOf(request.zcdp_delta);
}

// Runs kChargeSql for `amounts` (the budget of `request`'s role): false if
// no row was charged (no budget of this cluster that does not renew and
// admits it), else true with SPI_tuptable's one row.
bool ChargeBudgetRow(const ledger_queue::ChargeRequest& request, const Datum* amounts, Datum role) {
  PrepareChargePlan();
  const Datum cluster = Int64GetDatum(static_cast<int64>(GetSystemIdentifier()));
  Datum arguments[7] = {ObjectIdGetDatum(request.role_oid),
                        cluster,
                        amounts[0],
                        amounts[1],
                        amounts[2],
                        amounts[3],
                        role};
  const int result = SPI_execute_plan(charge_plan, arguments, nullptr, false, 0);
  if (result != SPI_OK_UPDATE_RETURNING)
    elog(ERROR, "dp_agg: the charge failed: %s", SPI_result_code_string(result));
  if (SPI_processed == 0) return false;
  if (SPI_processed != 1)
    elog(ERROR, "dp_agg: the charge changed %llu budgets",
         static_cast<unsigned long long>(SPI_processed));
  return true;
}

// The ledger row of dp_agg.apply_charge's append_ledger_entry('charge',
// role_oid, role, role, session_role, epsilon, delta, rho, zcdp_delta,
// now_budget, true, query_id, aggregates, left(query, 1000)), with `budget`
// the role's budget row right after this charge.
void AppendChargeEntry(const ledger_queue::ChargeRequest& request, const Datum* amounts, Datum role,
                       HeapTupleHeader budget) {
  Datum values[kEntryCount];
  bool nulls[kEntryCount];
  for (int i = 0; i < kEntryCount; ++i) nulls[i] = true;
  const auto set = [&](EntryField field, Datum value) {
    values[field] = value;
    nulls[field] = false;
  };
  set(kKind, CStringGetTextDatum("charge"));
  set(kRoleOid, ObjectIdGetDatum(request.role_oid));
  set(kRoleName, role);
  set(kSessionUserName, role);
  set(kCurrentUserName, NameOf(request.current_user_name));
  set(kEpsilon, amounts[0]);
  set(kDelta, amounts[1]);
  set(kRho, amounts[2]);
  set(kZcdpDelta, amounts[3]);
  if (request.query_id != 0) set(kQueryId, Int64GetDatum(request.query_id));
  set(kAggregates, ledger_queue::ValidTextDatum(request.aggregates));
  set(kQuery, DirectFunctionCall2(text_left, ledger_queue::ValidTextDatum(request.query_text),
                                  Int32GetDatum(1000)));
  AppendLedgerEntry(values, nulls, budget, true);
}

// kChargeSql's RETURNING columns 2 .. 10, in the request's answer fields.
constexpr int kAnswerFields = 9;
char* AnswerField(ledger_queue::ChargeRequest* request, int i) {
  char* fields[kAnswerFields] = {
      request->budget_kind, request->epsilon_total,    request->epsilon_spent,
      request->delta_total, request->delta_spent,      request->rho_total,
      request->rho_spent,   request->zcdp_delta_total, request->zcdp_delta_spent};
  return fields[i];
}
std::size_t AnswerFieldSize(const ledger_queue::ChargeRequest* request, int i) {
  return i == 0 ? sizeof request->budget_kind : ledger_queue::kNumberText;
}

// The spent columns of dp_agg.role_budget, in AmountsOf's order, and their
// indexes in the RETURNING's answer fields.
constexpr const char* kSpentColumns[kAmounts] = {"epsilon_spent", "delta_spent", "rho_spent",
                                                 "zcdp_delta_spent"};
constexpr int kSpentAnswer[kAmounts] = {2, 4, 6, 8};

// The number of digits after the point of a numeric's text (numeric_out:
// its display scale).
int DisplayScale(const char* text) noexcept {
  const char* point = std::strchr(text, '.');
  return point == nullptr ? 0 : static_cast<int>(std::strlen(point + 1));
}

}  // namespace

bool ChargeWithoutRenewal(ledger_queue::ChargeRequest* request) {
  Datum amounts[kAmounts];
  AmountsOf(*request, amounts);
  const Datum role = NameOf(request->role_name);
  if (!ChargeBudgetRow(*request, amounts, role)) return false;
  HeapTuple row = SPI_tuptable->vals[0];
  TupleDesc description = SPI_tuptable->tupdesc;
  bool budget_null = true;
  const Datum budget = SPI_getbinval(row, description, 1, &budget_null);
  if (budget_null) elog(ERROR, "dp_agg: the charge returned no budget row");
  AppendChargeEntry(*request, amounts, role, DatumGetHeapTupleHeader(budget));
  request->outcome = ledger_queue::kCharged;
  for (int i = 0; i < kAnswerFields; ++i)
    ledger_queue::CopyText(AnswerField(request, i), AnswerFieldSize(request, i),
                           SPI_getvalue(row, description, i + 2));
  return true;
}

bool CanChargeTogether(const ledger_queue::ChargeRequest& first,
                       const ledger_queue::ChargeRequest& other) noexcept {
  if (first.reuse || other.reuse || first.role_oid != other.role_oid ||
      std::strcmp(first.role_name, other.role_name) != 0)
    return false;
  const char* first_amounts[kAmounts] = {first.epsilon, first.delta, first.rho, first.zcdp_delta};
  const char* other_amounts[kAmounts] = {other.epsilon, other.delta, other.rho, other.zcdp_delta};
  for (int j = 0; j < kAmounts; ++j)
    if (DisplayScale(first_amounts[j]) != DisplayScale(other_amounts[j])) return false;
  return true;
}

bool ChargeTogether(ledger_queue::ChargeRequest** requests, int count) {
  // Each request's amounts, and their sums in the order the requests would
  // be charged one by one.
  auto* amounts = static_cast<Datum*>(palloc(sizeof(Datum) * kAmounts * count));
  Datum totals[kAmounts];
  for (int k = 0; k < count; ++k) {
    AmountsOf(*requests[k], &amounts[k * kAmounts]);
    for (int j = 0; j < kAmounts; ++j)
      totals[j] = k == 0 ? amounts[j]
                         : DirectFunctionCall2(numeric_add, totals[j], amounts[k * kAmounts + j]);
  }
  const Datum role = NameOf(requests[0]->role_name);
  // The amounts are not negative, so the sum fits exactly when every prefix
  // does: one by one, every request would have been admitted in turn.
  if (!ChargeBudgetRow(*requests[0], totals, role)) return false;
  HeapTuple row = SPI_tuptable->vals[0];
  TupleDesc description = SPI_tuptable->tupdesc;
  bool budget_null = true;
  const Datum budget = SPI_getbinval(row, description, 1, &budget_null);
  if (budget_null) elog(ERROR, "dp_agg: the charge returned no budget row");
  char* answers[kAnswerFields];
  for (int i = 0; i < kAnswerFields; ++i) answers[i] = SPI_getvalue(row, description, i + 2);

  // The budget row after the whole group, deformed, and its spent columns.
  HeapTupleHeader final_header = DatumGetHeapTupleHeader(budget);
  TupleDesc row_type = lookup_rowtype_tupdesc_copy(HeapTupleHeaderGetTypeId(final_header),
                                                   HeapTupleHeaderGetTypMod(final_header));
  HeapTupleData final_row;
  final_row.t_len = HeapTupleHeaderGetDatumLength(final_header);
  ItemPointerSetInvalid(&final_row.t_self);
  final_row.t_tableOid = InvalidOid;
  final_row.t_data = final_header;
  auto* columns = static_cast<Datum*>(palloc(sizeof(Datum) * row_type->natts));
  auto* column_nulls = static_cast<bool*>(palloc(sizeof(bool) * row_type->natts));
  heap_deform_tuple(&final_row, row_type, columns, column_nulls);
  int spent_column[kAmounts];
  Datum spent[kAmounts];
  for (int j = 0; j < kAmounts; ++j) {
    spent_column[j] = -1;
    for (int a = 0; a < row_type->natts; ++a) {
      const Form_pg_attribute attribute = TupleDescAttr(row_type, a);
      if (!attribute->attisdropped &&
          std::strcmp(NameStr(attribute->attname), kSpentColumns[j]) == 0)
        spent_column[j] = a;
    }
    if (spent_column[j] < 0 || column_nulls[spent_column[j]])
      elog(ERROR, "dp_agg: the budget row has no %s", kSpentColumns[j]);
    // What the row had spent before the group. Its value is exact (numeric
    // arithmetic); its display scale is the final one, and every amount of
    // the group has the same display scale (CanChargeTogether), so every
    // partial sum below has the value and display scale, i.e. the text and
    // the digest, of the row that charging one by one would have written:
    // scale(before + a1 + .. + ak) = max(scale(before), s) = scale(final).
    spent[j] = DirectFunctionCall2(numeric_sub, columns[spent_column[j]], totals[j]);
  }

  for (int k = 0; k < count; ++k) {
    for (int j = 0; j < kAmounts; ++j) {
      spent[j] = DirectFunctionCall2(numeric_add, spent[j], amounts[k * kAmounts + j]);
      columns[spent_column[j]] = spent[j];
    }
    HeapTuple after = heap_form_tuple(row_type, columns, column_nulls);
    HeapTupleHeader after_header =
        DatumGetHeapTupleHeader(heap_copy_tuple_as_datum(after, row_type));
    AppendChargeEntry(*requests[k], &amounts[k * kAmounts], role, after_header);
    ledger_queue::ChargeRequest* request = requests[k];
    request->outcome = ledger_queue::kCharged;
    for (int i = 0; i < kAnswerFields; ++i)
      ledger_queue::CopyText(AnswerField(request, i), AnswerFieldSize(request, i), answers[i]);
    for (int j = 0; j < kAmounts; ++j)
      ledger_queue::CopyText(AnswerField(request, kSpentAnswer[j]), ledger_queue::kNumberText,
                             DatumGetCString(DirectFunctionCall1(numeric_out, spent[j])));
  }
  // The last partial sums are the row that the UPDATE wrote: the same text.
  for (int j = 0; j < kAmounts; ++j) {
    const char* written = answers[kSpentAnswer[j]];
    const char* summed = DatumGetCString(DirectFunctionCall1(numeric_out, spent[j]));
    if (written == nullptr || std::strcmp(written, summed) != 0)
      elog(ERROR, "dp_agg: the group's charges sum to %s %s, the budget row has %s", summed,
           kSpentColumns[j], written != nullptr ? written : "NULL");
  }
  return true;
}

}  // namespace dp_pg
