// The ledger's canonical records and their digests (see ledger_records.h).
#include "ledger_records.h"

#include <cstring>

#include "../core/ledger_chain.h"
#include "error_boundary.h"

extern "C" {
#include "access/heapam.h"
#include "access/xlog.h"
#include "access/htup_details.h"
#include "access/tableam.h"
#include "catalog/namespace.h"
#include "catalog/pg_am.h"
#include "commands/dbcommands.h"
#include "commands/sequence.h"
#include "commands/trigger.h"
#include "datatype/timestamp.h"
#include "executor/spi.h"
#include "storage/ipc.h"
#include "storage/lmgr.h"
#include "storage/proc.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"
#include "utils/fmgroids.h"
#include "utils/typcache.h"
}

namespace dp_pg {

namespace {

constexpr const char* kEntryTag = "dp_agg ledger entry v1";
constexpr Field kBudgetFields[] = {{"role_oid", OIDOID},
                                   {"system_identifier", INT8OID},
                                   {"role_name", NAMEOID},
                                   {"budget_kind", TEXTOID},
                                   {"epsilon_total", NUMERICOID},
                                   {"epsilon_spent", NUMERICOID},
                                   {"delta_total", NUMERICOID},
                                   {"delta_spent", NUMERICOID},
                                   {"rho_total", NUMERICOID},
                                   {"rho_spent", NUMERICOID},
                                   {"zcdp_delta_total", NUMERICOID},
                                   {"zcdp_delta_spent", NUMERICOID},
                                   {"epsilon_delta_binding", BOOLOID},
                                   {"zcdp_binding", BOOLOID},
                                   {"updated_at", TIMESTAMPTZOID},
                                   {"reattached_from", TEXTARRAYOID}};
constexpr int kBudgetCount = sizeof kBudgetFields / sizeof kBudgetFields[0];
// 0.2.0, budgets that renew (src/sql/48_budget_renewal.sql): the v1 fields,
// then these.
constexpr const char* kBudgetRenewalTag = "dp_agg budget v2";
constexpr Field kRenewalFields[] = {
    {"renew_every", INTERVALOID}, {"renew_from", TIMESTAMPTZOID}, {"period_start", TIMESTAMPTZOID}};
constexpr int kRenewalCount = sizeof kRenewalFields / sizeof kRenewalFields[0];

char* HexText(const unsigned char* bytes, std::size_t length) {
  char* text = static_cast<char*>(palloc(2 * length + 1));
  dp::HexEncode(bytes, length, text);
  return text;
}

// The canonical text of `value` (core/ledger_chain.h): the same bytes in
// every session, whatever its settings (DateStyle, TimeZone, extra_float_digits,
// bytea_output, lc_*): numerics as the numeric's own text (its digits and
// display scale), timestamps as integer microseconds since 1970-01-01 00:00
// UTC, booleans as t or f, bytea as lower-case hex, names and text as their
// bytes in the database encoding. palloc'd.
dp::RecordField CanonicalField(const char* name, Datum value, bool is_null, Oid type) {
  dp::RecordField field{name, nullptr, 0};
  if (is_null) return field;
  const char* out = nullptr;
  switch (type) {
    case NUMERICOID:
      out = DatumGetCString(DirectFunctionCall1(numeric_out, value));
      break;
    case INT8OID:
      out = DatumGetCString(DirectFunctionCall1(int8out, value));
      break;
    case OIDOID:
      out = DatumGetCString(DirectFunctionCall1(oidout, value));
      break;
    case BOOLOID:
      out = DatumGetBool(value) ? "t" : "f";
      break;
    case NAMEOID:
      out = pstrdup(NameStr(*DatumGetName(value)));
      break;
    case TEXTOID: {
      const text* content = DatumGetTextPP(value);
      field.value = VARDATA_ANY(content);
      field.length = VARSIZE_ANY_EXHDR(content);
      return field;
    }
    case BYTEAOID: {
      const bytea* content = DatumGetByteaPP(value);
      out = HexText(reinterpret_cast<const unsigned char*>(VARDATA_ANY(content)),
                    VARSIZE_ANY_EXHDR(content));
      break;
    }
    case TIMESTAMPTZOID: {
      const TimestampTz stamp = DatumGetTimestampTz(value);
      if (TIMESTAMP_IS_NOBEGIN(stamp)) {
        out = "-infinity";
      } else if (TIMESTAMP_IS_NOEND(stamp)) {
        out = "infinity";
      } else {
        // PostgreSQL counts from 2000-01-01; no finite timestamp overflows here.
        const int64 unix_micros =
            stamp + static_cast<int64>(POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * USECS_PER_DAY;
        out = psprintf(INT64_FORMAT, unix_micros);
      }
      break;
    }
    case INTERVALOID: {  // months, days and microseconds, as integers (no IntervalStyle)
      const Interval* span = DatumGetIntervalP(value);
      out = psprintf("%d:%d:" INT64_FORMAT, span->month, span->day, span->time);
      break;
    }
    case TEXTARRAYOID:  // PostgreSQL's text form, which no setting changes
      out = OidOutputFunctionCall(F_ARRAY_OUT, value);
      break;
    default:
      ereport(ERROR,
              (errcode(ERRCODE_DATATYPE_MISMATCH),
               errmsg("dp_agg cannot hash column \"%s\" of type %s", name, format_type_be(type)),
               errdetail("The ledger's columns were changed outside dp_agg's scripts.")));
  }
  field.value = out;
  field.length = std::strlen(out);
  return field;
}

}  // namespace

// Reads the columns named by `fields` (of their types) from `tuple`, in
// order. Raises an ERROR if one is missing or of another type (the table
// was altered).
void TupleValues(HeapTuple tuple, TupleDesc description, const Field* fields, int count,
                 Datum* values, bool* nulls, const char* table) {
  for (int i = 0; i < count; ++i) {
    int column = -1;
    for (int a = 0; a < description->natts; ++a) {
      const Form_pg_attribute attribute = TupleDescAttr(description, a);
      if (!attribute->attisdropped &&
          std::strcmp(NameStr(attribute->attname), fields[i].name) == 0) {
        column = a;
        break;
      }
    }
    if (column < 0 || TupleDescAttr(description, column)->atttypid != fields[i].type)
      ereport(ERROR, (errcode(ERRCODE_UNDEFINED_COLUMN),
                      errmsg("dp_agg.%s has no column \"%s\" of type %s", table, fields[i].name,
                             format_type_be(fields[i].type)),
                      errdetail("The ledger's tables were changed outside dp_agg's scripts.")));
    values[i] = heap_getattr(tuple, column + 1, description, &nulls[i]);
  }
}

// The same, from a composite datum.
void CompositeValues(HeapTupleHeader row, const Field* fields, int count, Datum* values,
                     bool* nulls, const char* table) {
  TupleDesc description =
      lookup_rowtype_tupdesc(HeapTupleHeaderGetTypeId(row), HeapTupleHeaderGetTypMod(row));
  HeapTupleData tuple;
  tuple.t_len = HeapTupleHeaderGetDatumLength(row);
  ItemPointerSetInvalid(&tuple.t_self);
  tuple.t_tableOid = InvalidOid;
  tuple.t_data = row;
  TupleValues(&tuple, description, fields, count, values, nulls, table);
  ReleaseTupleDesc(description);
}

namespace {

// The renewal columns of a budget row (kRenewalFields), NULL where the row
// type has no such column (a role_budget of before 0.2.0's renewals, during
// the upgrade script). Returns how many are not NULL.
int RenewalValues(HeapTupleHeader row, Datum* values, bool* nulls) {
  TupleDesc description =
      lookup_rowtype_tupdesc(HeapTupleHeaderGetTypeId(row), HeapTupleHeaderGetTypMod(row));
  HeapTupleData tuple;
  tuple.t_len = HeapTupleHeaderGetDatumLength(row);
  ItemPointerSetInvalid(&tuple.t_self);
  tuple.t_tableOid = InvalidOid;
  tuple.t_data = row;
  int present = 0;
  for (int i = 0; i < kRenewalCount; ++i) {
    values[i] = (Datum)0;
    nulls[i] = true;
    for (int a = 0; a < description->natts; ++a) {
      const Form_pg_attribute attribute = TupleDescAttr(description, a);
      if (attribute->attisdropped ||
          std::strcmp(NameStr(attribute->attname), kRenewalFields[i].name) != 0)
        continue;
      if (attribute->atttypid != kRenewalFields[i].type)
        ereport(ERROR, (errcode(ERRCODE_UNDEFINED_COLUMN),
                        errmsg("dp_agg.role_budget has no column \"%s\" of type %s",
                               kRenewalFields[i].name, format_type_be(kRenewalFields[i].type)),
                        errdetail("The ledger's tables were changed outside dp_agg's scripts.")));
      values[i] = heap_getattr(&tuple, a + 1, description, &nulls[i]);
      break;
    }
    if (!nulls[i]) ++present;
  }
  ReleaseTupleDesc(description);
  return present;
}

bytea* DigestOf(const char* tag, const dp::RecordField* fields, int count) {
  unsigned char digest[dp::kChainDigestBytes];
  const bool hashed = CallCore([&] { return dp::RecordDigest(tag, fields, count, digest); });
  if (!hashed)
    ereport(ERROR, (errcode(ERRCODE_SYSTEM_ERROR),
                    errmsg("dp_agg could not compute a SHA-256 digest (OpenSSL failed)")));
  bytea* result = static_cast<bytea*>(palloc(VARHDRSZ + dp::kChainDigestBytes));
  SET_VARSIZE(result, VARHDRSZ + dp::kChainDigestBytes);
  std::memcpy(VARDATA(result), digest, dp::kChainDigestBytes);
  return result;
}

bytea* BudgetDigest(HeapTupleHeader budget) {
  Datum values[kBudgetCount + kRenewalCount];
  bool nulls[kBudgetCount + kRenewalCount];
  CompositeValues(budget, kBudgetFields, kBudgetCount, values, nulls, "role_budget");
  dp::RecordField fields[kBudgetCount + kRenewalCount];
  for (int i = 0; i < kBudgetCount; ++i)
    fields[i] = CanonicalField(kBudgetFields[i].name, values[i], nulls[i], kBudgetFields[i].type);
  // A budget that renews (or a row with any renewal column set) has the v2
  // record, with the renewal columns; every other keeps its v1 digest.
  const int renewal = RenewalValues(budget, values + kBudgetCount, nulls + kBudgetCount);
  if (renewal == 0) return DigestOf(kBudgetTag, fields, kBudgetCount);
  for (int i = 0; i < kRenewalCount; ++i)
    fields[kBudgetCount + i] = CanonicalField(kRenewalFields[i].name, values[kBudgetCount + i],
                                              nulls[kBudgetCount + i], kRenewalFields[i].type);
  return DigestOf(kBudgetRenewalTag, fields, kBudgetCount + kRenewalCount);
}

}  // namespace

// SHA-256 of an entry's canonical record (values in kEntryFields order) and
// of `previous` (the previous entry's hash; nullptr for the first entry).
bytea* EntryHash(const bytea* previous, const Datum* values, const bool* nulls) {
  dp::RecordField fields[kEntryCount + 1];
  fields[0] = dp::RecordField{"previous", nullptr, 0};
  if (previous != nullptr) {
    const char* hex = HexText(reinterpret_cast<const unsigned char*>(VARDATA_ANY(previous)),
                              VARSIZE_ANY_EXHDR(previous));
    fields[0] = dp::RecordField{"previous", hex, std::strlen(hex)};
  }
  for (int i = 0; i < kEntryCount; ++i)
    fields[i + 1] = CanonicalField(kEntryFields[i].name, values[i], nulls[i], kEntryFields[i].type);
  return DigestOf(kEntryTag, fields, kEntryCount + 1);
}

bytea* BudgetRecordDigest(HeapTupleHeader budget) { return BudgetDigest(budget); }

}  // namespace dp_pg

extern "C" {

// dp_agg.ledger_entry_hash(previous, entry): SHA-256 of the canonical record
// of `entry` (every column but entry_hash) and of `previous`, the hash of the
// entry before it (NULL for the first entry). What dp_agg.verify_ledger
// recomputes; the same code as the chain's.
PG_FUNCTION_INFO_V1(dp_agg_ledger_entry_hash);
Datum dp_agg_ledger_entry_hash(PG_FUNCTION_ARGS) {
  if (PG_ARGISNULL(1)) PG_RETURN_NULL();
  Datum values[dp_pg::kEntryCount];
  bool nulls[dp_pg::kEntryCount];
  dp_pg::CompositeValues(PG_GETARG_HEAPTUPLEHEADER(1), dp_pg::kEntryFields, dp_pg::kEntryCount,
                         values, nulls, "ledger_entry");
  PG_RETURN_BYTEA_P(
      dp_pg::EntryHash(PG_ARGISNULL(0) ? nullptr : PG_GETARG_BYTEA_PP(0), values, nulls));
}

// dp_agg.budget_digest(budget): SHA-256 of the canonical record of a
// dp_agg.role_budget row (every column).
PG_FUNCTION_INFO_V1(dp_agg_budget_digest);
Datum dp_agg_budget_digest(PG_FUNCTION_ARGS) {
  PG_RETURN_BYTEA_P(dp_pg::BudgetDigest(PG_GETARG_HEAPTUPLEHEADER(0)));
}

}  // extern "C"
