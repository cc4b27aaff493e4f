// The tamper-evident ledger's C functions (see ledger_chain.h).
#include "ledger_chain.h"

#include <cstring>

#include "../core/ledger_chain.h"
#include "error_boundary.h"

extern "C" {
#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/tableam.h"
#include "catalog/namespace.h"
#include "catalog/pg_am.h"
#include "commands/dbcommands.h"
#include "datatype/timestamp.h"
#include "storage/ipc.h"
#include "storage/lmgr.h"
#include "storage/proc.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"
#include "utils/typcache.h"
}

namespace dp_pg {

namespace {

// The fields of each record, in order (core/ledger_chain.h). A new column
// of these tables needs a new version of the record (a new tag): the hashes
// of existing rows must never change.
constexpr const char* kEntryTag = "dp_agg ledger entry v1";
constexpr const char* kEntryFields[] = {"seq",
                                        "id",
                                        "recorded_at",
                                        "kind",
                                        "role_oid",
                                        "role_name",
                                        "session_user_name",
                                        "current_user_name",
                                        "epsilon",
                                        "delta",
                                        "rho",
                                        "zcdp_delta",
                                        "query_id",
                                        "aggregates",
                                        "query",
                                        "budget_digest"};
constexpr const char* kBudgetTag = "dp_agg budget v1";
constexpr const char* kBudgetFields[] = {
    "role_oid",      "role_name",        "budget_kind",      "epsilon_total",
    "epsilon_spent", "delta_total",      "delta_spent",      "rho_total",
    "rho_spent",     "zcdp_delta_total", "zcdp_delta_spent", "epsilon_delta_binding",
    "zcdp_binding",  "updated_at"};

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

// Fills fields[0..count) with the canonical fields of `row` named `names`.
// Raises an ERROR if a column is missing (the table was altered).
void RowFields(HeapTupleHeader row, const char* const* names, int count, dp::RecordField* fields,
               const char* table) {
  const Oid type = HeapTupleHeaderGetTypeId(row);
  const int32 typmod = HeapTupleHeaderGetTypMod(row);
  TupleDesc description = lookup_rowtype_tupdesc(type, typmod);
  HeapTupleData tuple;
  tuple.t_len = HeapTupleHeaderGetDatumLength(row);
  ItemPointerSetInvalid(&tuple.t_self);
  tuple.t_tableOid = InvalidOid;
  tuple.t_data = row;
  for (int i = 0; i < count; ++i) {
    int column = -1;
    for (int a = 0; a < description->natts; ++a) {
      const Form_pg_attribute attribute = TupleDescAttr(description, a);
      if (!attribute->attisdropped && std::strcmp(NameStr(attribute->attname), names[i]) == 0) {
        column = a;
        break;
      }
    }
    if (column < 0)
      ereport(ERROR, (errcode(ERRCODE_UNDEFINED_COLUMN),
                      errmsg("dp_agg.%s has no column \"%s\"", table, names[i]),
                      errdetail("The ledger's tables were changed outside dp_agg's scripts.")));
    bool is_null = false;
    const Datum value = heap_getattr(&tuple, column + 1, description, &is_null);
    fields[i] =
        CanonicalField(names[i], value, is_null, TupleDescAttr(description, column)->atttypid);
  }
  ReleaseTupleDesc(description);
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

// Ledger rows whose chaining waits for the end of this transaction
// (dp_agg.defer_chaining): their ids, in TopTransactionContext.
struct DeferredChaining {
  LocalTransactionId transaction;
  int64* ids;
  int count;
  int capacity;
};
DeferredChaining deferred{InvalidLocalTransactionId, nullptr, 0, 0};

void ForgetOtherTransactions() {
  if (deferred.transaction != MyProc->lxid) deferred = {MyProc->lxid, nullptr, 0, 0};
}

// The chain head as the ledger writer last read it, and as it last logged it.
struct Head {
  bool valid;
  int64 seq;
  char hash[2 * dp::kChainDigestBytes + 1];
};
Head noted{};
Head pending{};
Head logged{};
TimestampTz last_logged = 0;
bool exit_callback_registered = false;
char database_name[NAMEDATALEN];
constexpr long kHeadLogIntervalMs = 1000;

bool SameHead(const Head& a, const Head& b) {
  return a.valid == b.valid && a.seq == b.seq && std::strcmp(a.hash, b.hash) == 0;
}

void LogHead(const Head& head) {
  ereport(LOG, (errmsg("dp_agg ledger head of database \"%s\": entry " INT64_FORMAT ", hash %s",
                       database_name, head.seq, head.hash),
                errhidestmt(true), errhidecontext(true)));
}

void LogPendingHeadAtExit(int, Datum) {
  if (pending.valid && !SameHead(pending, logged)) LogHead(pending);
}

}  // namespace

void NoteLedgerHead() {
  noted.valid = false;
  const Oid schema = get_namespace_oid("dp_agg", true);
  if (!OidIsValid(schema)) return;
  const Oid head = get_relname_relid("ledger_head", schema);
  if (!OidIsValid(head) || !ConditionalLockRelationOid(head, AccessShareLock)) return;
  Relation relation = table_open(head, NoLock);
  const AttrNumber seq_column = get_attnum(head, "seq");
  const AttrNumber hash_column = get_attnum(head, "entry_hash");
  if (relation->rd_rel->relkind != RELKIND_RELATION ||
      relation->rd_rel->relam != HEAP_TABLE_AM_OID || seq_column == InvalidAttrNumber ||
      hash_column == InvalidAttrNumber) {
    table_close(relation, NoLock);
    return;
  }
  CommandCounterIncrement();
  Snapshot snapshot = RegisterSnapshot(GetLatestSnapshot());
  TableScanDesc scan = table_beginscan(relation, snapshot, 0, nullptr);
  HeapTuple tuple = heap_getnext(scan, ForwardScanDirection);
  if (tuple != nullptr) {
    bool seq_null = true;
    bool hash_null = true;
    const Datum seq = heap_getattr(tuple, seq_column, RelationGetDescr(relation), &seq_null);
    const Datum hash = heap_getattr(tuple, hash_column, RelationGetDescr(relation), &hash_null);
    if (!seq_null && !hash_null) {
      const bytea* bytes = DatumGetByteaPP(hash);
      if (VARSIZE_ANY_EXHDR(bytes) == dp::kChainDigestBytes) {
        noted.seq = DatumGetInt64(seq);
        dp::HexEncode(reinterpret_cast<const unsigned char*>(VARDATA_ANY(bytes)),
                      dp::kChainDigestBytes, noted.hash);
        noted.valid = true;
      }
    }
  }
  table_endscan(scan);
  UnregisterSnapshot(snapshot);
  table_close(relation, NoLock);
  if (noted.valid && database_name[0] == '\0') {
    const char* name = get_database_name(MyDatabaseId);
    strlcpy(database_name, name != nullptr ? name : "?", sizeof database_name);
  }
}

void LedgerHeadCommitted() {
  if (!noted.valid) return;
  pending = noted;
  noted.valid = false;
  if (!exit_callback_registered) {
    before_shmem_exit(LogPendingHeadAtExit, 0);
    exit_callback_registered = true;
  }
  if (SameHead(pending, logged)) return;
  const TimestampTz now = GetCurrentTimestamp();
  if (logged.valid && TimestampDifferenceMilliseconds(last_logged, now) < kHeadLogIntervalMs)
    return;
  LogHead(pending);
  logged = pending;
  last_logged = now;
}

void ForgetLedgerHead() { noted.valid = false; }

}  // namespace dp_pg

extern "C" {

// dp_agg.ledger_entry_hash(previous, entry): SHA-256 of the canonical record
// of `entry` (every column but entry_hash) and of `previous`, the hash of the
// entry before it (NULL for the first entry).
PG_FUNCTION_INFO_V1(dp_agg_ledger_entry_hash);
Datum dp_agg_ledger_entry_hash(PG_FUNCTION_ARGS) {
  if (PG_ARGISNULL(1)) PG_RETURN_NULL();
  constexpr int kCount = sizeof dp_pg::kEntryFields / sizeof dp_pg::kEntryFields[0];
  dp::RecordField fields[kCount + 1];
  fields[0] = dp::RecordField{"previous", nullptr, 0};
  if (!PG_ARGISNULL(0)) {
    const bytea* previous = PG_GETARG_BYTEA_PP(0);
    const char* hex = dp_pg::HexText(reinterpret_cast<const unsigned char*>(VARDATA_ANY(previous)),
                                     VARSIZE_ANY_EXHDR(previous));
    fields[0] = dp::RecordField{"previous", hex, std::strlen(hex)};
  }
  dp_pg::RowFields(PG_GETARG_HEAPTUPLEHEADER(1), dp_pg::kEntryFields, kCount, fields + 1,
                   "ledger_entry");
  PG_RETURN_BYTEA_P(dp_pg::DigestOf(dp_pg::kEntryTag, fields, kCount + 1));
}

// dp_agg.budget_digest(budget): SHA-256 of the canonical record of a
// dp_agg.role_budget row (every column).
PG_FUNCTION_INFO_V1(dp_agg_budget_digest);
Datum dp_agg_budget_digest(PG_FUNCTION_ARGS) {
  constexpr int kCount = sizeof dp_pg::kBudgetFields / sizeof dp_pg::kBudgetFields[0];
  dp::RecordField fields[kCount];
  dp_pg::RowFields(PG_GETARG_HEAPTUPLEHEADER(0), dp_pg::kBudgetFields, kCount, fields,
                   "role_budget");
  PG_RETURN_BYTEA_P(dp_pg::DigestOf(dp_pg::kBudgetTag, fields, kCount));
}

// dp_agg.defer_chaining(id): the ledger row `id`, inserted by dp_agg's own
// function in this transaction without seq and hash, is chained when the
// transaction commits (the deferred trigger dp_agg.chain_deferred_entry), so
// that an administrator's open transaction never holds the chain head (and
// with it every charge of the database).
PG_FUNCTION_INFO_V1(dp_agg_defer_chaining);
Datum dp_agg_defer_chaining(PG_FUNCTION_ARGS) {
  const int64 id = PG_GETARG_INT64(0);
  dp_pg::ForgetOtherTransactions();
  dp_pg::DeferredChaining& deferred = dp_pg::deferred;
  if (deferred.count == deferred.capacity) {
    const int capacity = deferred.capacity == 0 ? 8 : 2 * deferred.capacity;
    deferred.ids = static_cast<int64*>(
        deferred.ids == nullptr
            ? MemoryContextAlloc(TopTransactionContext, sizeof(int64) * capacity)
            : repalloc(deferred.ids, sizeof(int64) * capacity));
    deferred.capacity = capacity;
  }
  deferred.ids[deferred.count++] = id;
  PG_RETURN_VOID();
}

// dp_agg.chaining_deferred(id): whether dp_agg's own function inserted the
// ledger row `id` in this transaction for chaining at commit. Any other row
// without seq was inserted outside dp_agg's functions.
PG_FUNCTION_INFO_V1(dp_agg_chaining_deferred);
Datum dp_agg_chaining_deferred(PG_FUNCTION_ARGS) {
  const int64 id = PG_GETARG_INT64(0);
  dp_pg::ForgetOtherTransactions();
  for (int i = 0; i < dp_pg::deferred.count; ++i)
    if (dp_pg::deferred.ids[i] == id) PG_RETURN_BOOL(true);
  PG_RETURN_BOOL(false);
}

}  // extern "C"
