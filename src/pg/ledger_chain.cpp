// The tamper-evident ledger's C functions (see ledger_chain.h).
#include "ledger_chain.h"

#include <cstring>

#include "../core/ledger_chain.h"
#include "drop_guard.h"
#include "error_boundary.h"
#include "sqlstates.h"

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

// The fields of each record, in order, with their column types
// (core/ledger_chain.h). A new column of these tables needs a new version of
// the record (a new tag): the hashes of existing rows must never change.
struct Field {
  const char* name;
  Oid type;
};
constexpr const char* kEntryTag = "dp_agg ledger entry v1";
constexpr Field kEntryFields[] = {{"seq", INT8OID},
                                  {"id", INT8OID},
                                  {"recorded_at", TIMESTAMPTZOID},
                                  {"kind", TEXTOID},
                                  {"role_oid", OIDOID},
                                  {"system_identifier", INT8OID},
                                  {"role_name", NAMEOID},
                                  {"session_user_name", NAMEOID},
                                  {"current_user_name", NAMEOID},
                                  {"epsilon", NUMERICOID},
                                  {"delta", NUMERICOID},
                                  {"rho", NUMERICOID},
                                  {"zcdp_delta", NUMERICOID},
                                  {"query_id", INT8OID},
                                  {"aggregates", TEXTOID},
                                  {"query", TEXTOID},
                                  {"budget_digest", BYTEAOID}};
constexpr int kEntryCount = sizeof kEntryFields / sizeof kEntryFields[0];
enum EntryField {
  kSeq,
  kId,
  kRecordedAt,
  kKind,
  kRoleOid,
  kSystemIdentifier,
  kRoleName,
  kSessionUserName,
  kCurrentUserName,
  kEpsilon,
  kDelta,
  kRho,
  kZcdpDelta,
  kQueryId,
  kAggregates,
  kQuery,
  kBudgetDigest
};
constexpr const char* kBudgetTag = "dp_agg budget v1";
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

// Ledger rows that dp_agg's own functions appended in this transaction
// without chaining them (an administrator's changes): their ids, in
// TopTransactionContext. Only these are chained at commit.
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

void DeferChaining(int64 id) {
  ForgetOtherTransactions();
  if (deferred.count == deferred.capacity) {
    const int capacity = deferred.capacity == 0 ? 8 : 2 * deferred.capacity;
    deferred.ids = static_cast<int64*>(
        deferred.ids == nullptr
            ? MemoryContextAlloc(TopTransactionContext, sizeof(int64) * capacity)
            : repalloc(deferred.ids, sizeof(int64) * capacity));
    deferred.capacity = capacity;
  }
  deferred.ids[deferred.count++] = id;
}

bool ChainingDeferred(int64 id) {
  ForgetOtherTransactions();
  for (int i = 0; i < deferred.count; ++i)
    if (deferred.ids[i] == id) return true;
  return false;
}

// The transaction in which this backend last chained an entry.
LocalTransactionId chained_transaction = InvalidLocalTransactionId;

// What the guard triggers let through: the head's advance to this seq, and
// the chaining of this ledger row, while this file's code does them (0: none).
int64 head_advancing_to = 0;
int64 entry_being_chained = 0;

[[noreturn]] void RefuseChange(const char* detail) {
  ereport(ERROR, (errcode(ERRCODE_DP_AGG_LEDGER_APPEND_ONLY),
                  errmsg("the privacy ledger is append-only"), errdetail("%s", detail),
                  errhint("dp_agg.verify_ledger() checks the ledger. To remove it with its "
                          "database or extension, see README \"Removing dp_agg\".")));
}

// The statements of the chain, prepared once per backend.
enum Statement { kLockHead, kCreateHead, kAnyChained, kAdvanceHead, kInsertEntry, kChainEntry };
constexpr const char* kStatements[] = {
    "SELECT seq, entry_hash FROM dp_agg.ledger_head FOR UPDATE",
    "INSERT INTO dp_agg.ledger_head (seq, entry_hash) VALUES (0, NULL) ON CONFLICT DO NOTHING",
    "SELECT EXISTS (SELECT 1 FROM dp_agg.ledger_entry WHERE seq IS NOT NULL)",
    "UPDATE dp_agg.ledger_head SET seq = $1, entry_hash = $2",
    "INSERT INTO dp_agg.ledger_entry (seq, id, recorded_at, kind, role_oid, "
    "system_identifier, role_name, session_user_name, current_user_name, epsilon, delta, rho, "
    "zcdp_delta, query_id, aggregates, query, budget_digest, entry_hash) "
    "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)",
    "UPDATE dp_agg.ledger_entry SET seq = $1, entry_hash = $2 "
    "WHERE id OPERATOR(pg_catalog.=) $3 AND seq IS NULL"};
SPIPlanPtr plans[6] = {};

SPIPlanPtr Plan(Statement statement) {
  if (plans[statement] != nullptr) return plans[statement];
  Oid types[kEntryCount + 1];
  int count = 0;
  switch (statement) {
    case kAdvanceHead:
      types[0] = INT8OID;
      types[1] = BYTEAOID;
      count = 2;
      break;
    case kInsertEntry:
      for (int i = 0; i < kEntryCount; ++i) types[i] = kEntryFields[i].type;
      types[kEntryCount] = BYTEAOID;
      count = kEntryCount + 1;
      break;
    case kChainEntry:
      types[0] = INT8OID;
      types[1] = BYTEAOID;
      types[2] = INT8OID;
      count = 3;
      break;
    default:
      break;
  }
  SPIPlanPtr plan = SPI_prepare(kStatements[statement], count, types);
  if (plan == nullptr)
    elog(ERROR, "dp_agg: could not prepare \"%s\": %s", kStatements[statement],
         SPI_result_code_string(SPI_result));
  SPI_keepplan(plan);
  plans[statement] = plan;
  return plan;
}

void Execute(Statement statement, Datum* values, const char* nulls, int expected) {
  const int result = SPI_execute_plan(Plan(statement), values, nulls, false, 0);
  if (result < 0 || (expected >= 0 && SPI_processed != static_cast<uint64>(expected)))
    elog(ERROR, "dp_agg: \"%s\" failed (%s, %llu rows)", kStatements[statement],
         SPI_result_code_string(result), static_cast<unsigned long long>(SPI_processed));
}

// Chains the entry `values` (kEntryFields order; its seq is set here) after
// the chain head, under the head's row lock, and advances the head: inserts
// the row, or, with `inserted`, sets seq and entry_hash of the row of that
// id already there (appended earlier in this transaction). Caller is
// connected to SPI.
void Chain(Datum* values, bool* nulls, bool inserted) {
  Execute(kLockHead, nullptr, nullptr, -1);
  chained_transaction = MyProc->lxid;
  if (SPI_processed == 0) {
    Execute(kAnyChained, nullptr, nullptr, 1);
    bool is_null = true;
    if (DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &is_null)))
      ereport(ERROR, (errcode(ERRCODE_DP_AGG_LEDGER_APPEND_ONLY),
                      errmsg("the chain head of the privacy ledger is missing"),
                      errdetail("dp_agg.ledger_head has no row although dp_agg.ledger_entry "
                                "has chained rows (the ledger was restored without it, or it "
                                "was emptied outside dp_agg's functions), so no entry can be "
                                "chained; nothing was recorded."),
                      errhint("Restore dp_agg.ledger_head with the ledger; or check the ledger "
                              "(SELECT * FROM dp_agg.verify_ledger()) and, if its entries are "
                              "all there, set the head to the last one: INSERT INTO "
                              "dp_agg.ledger_head (seq, entry_hash) SELECT seq, entry_hash FROM "
                              "dp_agg.ledger_entry ORDER BY seq DESC LIMIT 1.")));
    Execute(kCreateHead, nullptr, nullptr, -1);
    Execute(kLockHead, nullptr, nullptr, 1);
  }
  bool seq_null = true;
  bool hash_null = true;
  const int64 head_seq =
      DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &seq_null));
  const Datum head_hash =
      SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &hash_null);
  const bytea* previous = hash_null ? nullptr : DatumGetByteaPP(head_hash);
  const int64 seq = head_seq + 1;
  values[kSeq] = Int64GetDatum(seq);
  nulls[kSeq] = false;
  bytea* hash = EntryHash(previous, values, nulls);
  if (inserted) {
    Datum arguments[3] = {Int64GetDatum(seq), PointerGetDatum(hash), values[kId]};
    entry_being_chained = DatumGetInt64(values[kId]);
    PG_TRY();
    { Execute(kChainEntry, arguments, nullptr, 1); }
    PG_FINALLY();
    { entry_being_chained = 0; }
    PG_END_TRY();
  } else {
    Datum arguments[kEntryCount + 1];
    char argument_nulls[kEntryCount + 1];
    for (int i = 0; i < kEntryCount; ++i) {
      arguments[i] = values[i];
      argument_nulls[i] = nulls[i] ? 'n' : ' ';
    }
    arguments[kEntryCount] = PointerGetDatum(hash);
    argument_nulls[kEntryCount] = ' ';
    Execute(kInsertEntry, arguments, argument_nulls, 1);
  }
  Datum head[2] = {Int64GetDatum(seq), PointerGetDatum(hash)};
  head_advancing_to = seq;
  PG_TRY();
  { Execute(kAdvanceHead, head, nullptr, 1); }
  PG_FINALLY();
  { head_advancing_to = 0; }
  PG_END_TRY();
  LabelDatabaseAsHoldingLedger(true);
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

bytea* BudgetRecordDigest(HeapTupleHeader budget) { return BudgetDigest(budget); }

bool ChainedInThisTransaction() { return chained_transaction == MyProc->lxid; }

// A trigger function called as a plain function (SELECT dp_agg.guard_...())
// gets PostgreSQL's own SQLSTATE for that mistake (39P01, as plpgsql's
// "trigger functions can only be called as triggers"), never XX000.
void RequireTriggerCall(FunctionCallInfo fcinfo, const char* name) {
  if (!CALLED_AS_TRIGGER(fcinfo))
    ereport(ERROR, (errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
                    errmsg("%s can only be called as a trigger", name),
                    errdetail("It guards or chains dp_agg's ledger tables; it is not meant to be "
                              "called directly.")));
}

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

// dp_agg.append_ledger_entry(kind, role_oid, role_name, session_user_name,
// current_user_name, epsilon, delta, rho, zcdp_delta, budget, chain_now
// [, query_id, aggregates, query, system_identifier]): appends one ledger row; every write of
// the ledger goes through here. `budget` is the role's budget row right
// after the change (NULL when it has none): its digest is recorded with the
// entry. The ledger writer's charges are chained at once (chain_now); an
// administrator's changes when their transaction commits (the deferred
// trigger below), so that an open administrative transaction never holds
// the chain head, which every charge of the database needs.
PG_FUNCTION_INFO_V1(dp_agg_append_ledger_entry);
Datum dp_agg_append_ledger_entry(PG_FUNCTION_ARGS) {
  using dp_pg::EntryField;
  Datum values[dp_pg::kEntryCount];
  bool nulls[dp_pg::kEntryCount];
  for (int i = 0; i < dp_pg::kEntryCount; ++i) nulls[i] = true;
  const auto take = [&](EntryField field, int argument) {
    nulls[field] = PG_ARGISNULL(argument);
    values[field] = nulls[field] ? Datum(0) : PG_GETARG_DATUM(argument);
  };
  take(dp_pg::kKind, 0);
  take(dp_pg::kRoleOid, 1);
  take(dp_pg::kRoleName, 2);
  take(dp_pg::kSessionUserName, 3);
  take(dp_pg::kCurrentUserName, 4);
  take(dp_pg::kEpsilon, 5);
  take(dp_pg::kDelta, 6);
  take(dp_pg::kRho, 7);
  take(dp_pg::kZcdpDelta, 8);
  if (PG_NARGS() > 11) take(dp_pg::kQueryId, 11);
  if (PG_NARGS() > 12) take(dp_pg::kAggregates, 12);
  if (PG_NARGS() > 13) take(dp_pg::kQuery, 13);
  const bool chain_now = !PG_ARGISNULL(10) && PG_GETARG_BOOL(10);
  // A budget row (role_oid is NOT NULL in every real one).
  if (!PG_ARGISNULL(9)) {
    HeapTupleHeader budget = PG_GETARG_HEAPTUPLEHEADER(9);
    bool no_role = true;
    (void)GetAttributeByName(budget, "role_oid", &no_role);
    if (!no_role) {
      values[dp_pg::kBudgetDigest] = PointerGetDatum(dp_pg::BudgetDigest(budget));
      nulls[dp_pg::kBudgetDigest] = false;
    }
  }
  values[dp_pg::kId] =
      DirectFunctionCall1(nextval, CStringGetTextDatum("dp_agg.ledger_entry_id_seq"));
  nulls[dp_pg::kId] = false;
  values[dp_pg::kRecordedAt] = TimestampTzGetDatum(GetCurrentTransactionStartTimestamp());
  nulls[dp_pg::kRecordedAt] = false;
  // The cluster whose role OIDs these are: this one (dp_agg.system_identifier())
  // unless given.
  values[dp_pg::kSystemIdentifier] = PG_NARGS() > 14 && !PG_ARGISNULL(14)
                                         ? PG_GETARG_DATUM(14)
                                         : Int64GetDatum(static_cast<int64>(GetSystemIdentifier()));
  nulls[dp_pg::kSystemIdentifier] = false;
  if (SPI_connect() != SPI_OK_CONNECT) elog(ERROR, "dp_agg: SPI_connect failed");
  if (chain_now) {
    dp_pg::Chain(values, nulls, false);
  } else {
    Datum arguments[dp_pg::kEntryCount + 1];
    char argument_nulls[dp_pg::kEntryCount + 1];
    for (int i = 0; i < dp_pg::kEntryCount; ++i) {
      arguments[i] = values[i];
      argument_nulls[i] = nulls[i] ? 'n' : ' ';
    }
    arguments[dp_pg::kEntryCount] = Datum(0);
    argument_nulls[dp_pg::kEntryCount] = 'n';
    dp_pg::Execute(dp_pg::kInsertEntry, arguments, argument_nulls, 1);
    dp_pg::DeferChaining(DatumGetInt64(values[dp_pg::kId]));
  }
  SPI_finish();
  PG_RETURN_VOID();
}

// Trigger (deferred, at commit, AFTER INSERT of a row without seq): chains
// the rows this transaction's administrative functions appended. Any other
// row without seq was inserted outside dp_agg's functions: the commit is
// refused.
PG_FUNCTION_INFO_V1(dp_agg_chain_deferred_entry);
Datum dp_agg_chain_deferred_entry(PG_FUNCTION_ARGS) {
  dp_pg::RequireTriggerCall(fcinfo, "dp_agg.chain_deferred_entry");
  const auto* trigger = reinterpret_cast<TriggerData*>(fcinfo->context);
  Datum values[dp_pg::kEntryCount];
  bool nulls[dp_pg::kEntryCount];
  dp_pg::TupleValues(trigger->tg_trigtuple, RelationGetDescr(trigger->tg_relation),
                     dp_pg::kEntryFields, dp_pg::kEntryCount, values, nulls, "ledger_entry");
  const int64 id = nulls[dp_pg::kId] ? 0 : DatumGetInt64(values[dp_pg::kId]);
  if (!nulls[dp_pg::kSeq]) return PointerGetDatum(nullptr);  // chained already
  if (!dp_pg::ChainingDeferred(id))
    ereport(ERROR, (errcode(ERRCODE_DP_AGG_LEDGER_APPEND_ONLY),
                    errmsg("rows of the privacy ledger are appended by dp_agg's functions only"),
                    errdetail("This transaction inserted row id " INT64_FORMAT
                              " into dp_agg.ledger_entry without chaining it; nothing of the "
                              "transaction is kept.",
                              id),
                    errhint("Budgets change through dp_agg.set_budget, add_budget, reset_spent, "
                            "revoke_budget and set_budget_zcdp; charges are recorded by the "
                            "ledger writer.")));
  if (SPI_connect() != SPI_OK_CONNECT) elog(ERROR, "dp_agg: SPI_connect failed");
  dp_pg::Chain(values, nulls, true);
  SPI_finish();
  return PointerGetDatum(nullptr);
}

// Trigger (BEFORE UPDATE of a ledger row): only the chaining of a row
// appended in this transaction, by Chain.
PG_FUNCTION_INFO_V1(dp_agg_guard_ledger_entry);
Datum dp_agg_guard_ledger_entry(PG_FUNCTION_ARGS) {
  dp_pg::RequireTriggerCall(fcinfo, "dp_agg.guard_ledger_entry");
  const auto* trigger = reinterpret_cast<TriggerData*>(fcinfo->context);
  if (dp_pg::entry_being_chained != 0) {
    bool is_null = true;
    const Datum id =
        heap_getattr(trigger->tg_trigtuple, 1, RelationGetDescr(trigger->tg_relation), &is_null);
    // (column 1 is id in every version of the table)
    if (!is_null && DatumGetInt64(id) == dp_pg::entry_being_chained)
      return PointerGetDatum(trigger->tg_newtuple);
  }
  dp_pg::RefuseChange("UPDATE of dp_agg.ledger_entry is refused: its rows are never changed.");
}

// Trigger (BEFORE UPDATE of the chain head): only its advance by Chain.
PG_FUNCTION_INFO_V1(dp_agg_guard_ledger_head);
Datum dp_agg_guard_ledger_head(PG_FUNCTION_ARGS) {
  dp_pg::RequireTriggerCall(fcinfo, "dp_agg.guard_ledger_head");
  const auto* trigger = reinterpret_cast<TriggerData*>(fcinfo->context);
  if (dp_pg::head_advancing_to != 0) return PointerGetDatum(trigger->tg_newtuple);
  dp_pg::RefuseChange(
      "UPDATE of dp_agg.ledger_head is refused: the chain head only advances with the entries "
      "dp_agg appends.");
}

}  // extern "C"
