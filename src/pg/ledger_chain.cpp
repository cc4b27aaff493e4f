// The tamper-evident ledger's chain: appending entries, chaining them, and
// the triggers that keep the ledger append-only (see ledger_chain.h).
#include "ledger_chain.h"

#include <cstring>

#include "drop_guard.h"
#include "ledger_records.h"
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
#include "nodes/makefuncs.h"
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
enum Statement {
  kLockHead,
  kCreateHead,
  kAnyChained,
  kAdvanceHead,
  kInsertEntry,
  kChainEntry,
  kTryLockHead
};
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
    "WHERE id OPERATOR(pg_catalog.=) $3 AND seq IS NULL",
    "SELECT seq, entry_hash FROM dp_agg.ledger_head FOR UPDATE SKIP LOCKED"};
SPIPlanPtr plans[7] = {};

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

// Inserts the ledger row `values` (kEntryFields order) with entry_hash
// `hash` (nullptr: not chained yet).
void InsertEntry(const Datum* values, const bool* nulls, bytea* hash) {
  Datum arguments[kEntryCount + 1];
  char argument_nulls[kEntryCount + 1];
  for (int i = 0; i < kEntryCount; ++i) {
    arguments[i] = values[i];
    argument_nulls[i] = nulls[i] ? 'n' : ' ';
  }
  arguments[kEntryCount] = PointerGetDatum(hash);
  argument_nulls[kEntryCount] = hash != nullptr ? ' ' : 'n';
  Execute(kInsertEntry, arguments, argument_nulls, 1);
}

// The ledger writer's batch (ledger_chain.h, BeginBatchChaining): the chain
// head as this transaction has advanced it, kept in memory and written to
// dp_agg.ledger_head once, before commit. The head's row stays locked from
// the first entry of the batch to the commit (a row lock taken in a
// subtransaction that was kept is held by the transaction), so nobody else
// chains meanwhile. `sub` is the head as the current subtransaction (one
// charge) has it; it becomes the batch's head only if that subtransaction is
// kept (KeepBatchChaining), so that a charge rolled back leaves no gap.
struct BatchHead {
  bool active;
  bool known;  // the head, locked and read by a kept subtransaction
  bool dirty;  // advanced since: written by FinishBatchChaining
  int64 seq;
  bytea* hash;  // TopTransactionContext; nullptr before the first entry
  bool sub_valid;
  bool sub_dirty;
  int64 sub_seq;
  bytea* sub_hash;
};
BatchHead batch{};

bytea* KeptHash(const bytea* hash) {
  if (hash == nullptr) return nullptr;
  const std::size_t size = VARSIZE_ANY(hash);
  auto* copy = static_cast<bytea*>(MemoryContextAlloc(TopTransactionContext, size));
  std::memcpy(copy, hash, size);
  return copy;
}

// Locks the chain head's row (creating it, seq 0, before the first entry)
// and reads it. Caller is connected to SPI. The table is locked first in the
// mode that advancing the head needs (ROW EXCLUSIVE), so that the head's
// UPDATE (AdvanceHead; for the ledger writer, FinishBatchChaining in the
// batch's top-level transaction) never waits for a table lock: a wait here,
// in the writer's charge subtransaction, defers the charge (lock_timeout),
// whereas one at the batch's top level failed every charge of the batch.
void LockHead(int64* head_seq, const bytea** head_hash) {
  (void)RangeVarGetRelid(makeRangeVar(pstrdup("dp_agg"), pstrdup("ledger_head"), -1),
                         RowExclusiveLock, true);
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
  *head_seq =
      DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &seq_null));
  const Datum hash = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &hash_null);
  *head_hash = hash_null ? nullptr : DatumGetByteaPP(hash);
}

void AdvanceHead(int64 seq, bytea* hash) {
  Datum head[2] = {Int64GetDatum(seq), PointerGetDatum(hash)};
  head_advancing_to = seq;
  PG_TRY();
  { Execute(kAdvanceHead, head, nullptr, 1); }
  PG_FINALLY();
  { head_advancing_to = 0; }
  PG_END_TRY();
}

// Chains the entry `values` (kEntryFields order; its seq is set here) after
// the chain head, under the head's row lock, and advances the head: inserts
// the row, or, with `inserted`, sets seq and entry_hash of the row of that
// id already there (appended earlier in this transaction). In the writer's
// batch the head is advanced in memory (BatchHead). Caller is connected to
// SPI.
void Chain(Datum* values, bool* nulls, bool inserted) {
  int64 head_seq = 0;
  const bytea* previous = nullptr;
  if (batch.active && batch.sub_valid) {
    head_seq = batch.sub_seq;
    previous = batch.sub_hash;
  } else if (batch.active && batch.known) {
    head_seq = batch.seq;
    previous = batch.hash;
  } else {
    LockHead(&head_seq, &previous);
    if (batch.active) {
      batch.sub_valid = true;
      batch.sub_dirty = false;
      batch.sub_seq = head_seq;
      batch.sub_hash = KeptHash(previous);
    }
  }
  chained_transaction = MyProc->lxid;
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
    InsertEntry(values, nulls, hash);
  }
  if (batch.active) {
    batch.sub_valid = true;
    batch.sub_dirty = true;
    batch.sub_seq = seq;
    batch.sub_hash = KeptHash(hash);
  } else {
    AdvanceHead(seq, hash);
  }
  LabelDatabaseAsHoldingLedger(true);
}

}  // namespace

bool ChainedInThisTransaction() { return chained_transaction == MyProc->lxid; }

void BeginBatchChaining() {
  batch = BatchHead{};
  batch.active = true;
  // The head's row locked here, by the batch's top-level transaction, which
  // also writes it (FinishBatchChaining): locked in the first charge's
  // subtransaction instead, the row's lock and update were by two
  // transaction ids, a MultiXact for every batch that every later reader of
  // the row had to resolve. SKIP LOCKED never waits and never fails for a
  // lock: a head that another transaction holds (or none yet, or a 0.1.0
  // ledger without one) is left to the first charge, as before. Nor does
  // the table's lock wait (an administrator's LOCK TABLE, VACUUM FULL or
  // ALTER TABLE): in this top-level transaction a lock timeout failed every
  // charge of the batch; taken conditionally, in the mode the head's UPDATE
  // needs (FinishBatchChaining), else left to the first charge (LockHead).
  const Oid schema = get_namespace_oid("dp_agg", true);
  const Oid head = OidIsValid(schema) ? get_relname_relid("ledger_head", schema) : InvalidOid;
  if (!OidIsValid(head) || !ConditionalLockRelationOid(head, RowExclusiveLock)) return;
  if (SPI_connect() != SPI_OK_CONNECT) elog(ERROR, "dp_agg: SPI_connect failed");
  Execute(kTryLockHead, nullptr, nullptr, -1);
  if (SPI_processed == 1) {
    bool seq_null = true;
    bool hash_null = true;
    const Datum seq = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &seq_null);
    const Datum hash = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &hash_null);
    if (!seq_null) {
      batch.known = true;
      batch.seq = DatumGetInt64(seq);
      batch.hash = hash_null ? nullptr : KeptHash(DatumGetByteaPP(hash));
      chained_transaction = MyProc->lxid;
    }
  }
  SPI_finish();
}

void KeepBatchChaining() {
  if (!batch.active || !batch.sub_valid) return;
  batch.known = true;
  batch.dirty = batch.dirty || batch.sub_dirty;
  batch.seq = batch.sub_seq;
  batch.hash = batch.sub_hash;
  batch.sub_valid = false;
  batch.sub_dirty = false;
}

void ForgetBatchChaining() {
  batch.sub_valid = false;
  batch.sub_dirty = false;
}

bool FinishBatchChaining(int64* seq, const bytea** hash) {
  const BatchHead finished = batch;
  batch = BatchHead{};
  if (!finished.dirty) return false;
  if (SPI_connect() != SPI_OK_CONNECT) elog(ERROR, "dp_agg: SPI_connect failed");
  AdvanceHead(finished.seq, finished.hash);
  SPI_finish();
  *seq = finished.seq;
  *hash = finished.hash;
  return true;
}

void AbandonBatchChaining() { batch = BatchHead{}; }

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

// (ledger_chain.h)
void AppendLedgerEntry(Datum* values, bool* nulls, HeapTupleHeader budget, bool chain_now) {
  // A budget row (role_oid is NOT NULL in every real one).
  if (budget != nullptr) {
    bool no_role = true;
    (void)GetAttributeByName(budget, "role_oid", &no_role);
    if (!no_role) {
      values[kBudgetDigest] = PointerGetDatum(BudgetRecordDigest(budget));
      nulls[kBudgetDigest] = false;
    }
  }
  values[kId] = DirectFunctionCall1(nextval, CStringGetTextDatum("dp_agg.ledger_entry_id_seq"));
  nulls[kId] = false;
  values[kRecordedAt] = TimestampTzGetDatum(GetCurrentTransactionStartTimestamp());
  nulls[kRecordedAt] = false;
  if (nulls[kSystemIdentifier]) {
    values[kSystemIdentifier] = Int64GetDatum(static_cast<int64>(GetSystemIdentifier()));
    nulls[kSystemIdentifier] = false;
  }
  if (SPI_connect() != SPI_OK_CONNECT) elog(ERROR, "dp_agg: SPI_connect failed");
  if (chain_now) {
    Chain(values, nulls, false);
  } else {
    // Registered before the INSERT: under SET CONSTRAINTS ALL IMMEDIATE the
    // chaining trigger fires at the end of the INSERT itself, and refused
    // the row as one inserted outside dp_agg's functions.
    DeferChaining(DatumGetInt64(values[kId]));
    InsertEntry(values, nulls, nullptr);
  }
  SPI_finish();
}

}  // namespace dp_pg

extern "C" {

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
  // The cluster whose role OIDs these are: this one (dp_agg.system_identifier())
  // unless given.
  if (PG_NARGS() > 14) take(dp_pg::kSystemIdentifier, 14);
  const bool chain_now = !PG_ARGISNULL(10) && PG_GETARG_BOOL(10);
  dp_pg::AppendLedgerEntry(values, nulls, PG_ARGISNULL(9) ? nullptr : PG_GETARG_HEAPTUPLEHEADER(9),
                           chain_now);
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
