// The tamper-evident ledger (README "A tamper-evident ledger"): every row of
// dp_agg.ledger_entry carries a gapless sequence number (seq) and a SHA-256
// hash of its canonical content and of the hash of the entry before it
// (core/ledger_chain.h); dp_agg.ledger_head keeps the last seq and hash where
// a TRUNCATE of the ledger does not reach, and dp_agg.verify_ledger()
// recomputes the chain and compares the budgets with it
// (src/sql/45_ledger_integrity.sql).
//
// This file holds the SQL-callable C functions of the chain (appending and
// chaining entries, the deferred-chaining registry) and the triggers that keep
// the ledger append-only. The canonical records and their hashes are
// ledger_records.h's, the ledger writer's logging of the chain head
// ledger_head_log.h's; the database label that guards DROP DATABASE is
// drop_guard.h's.
#ifndef DP_AGG_PG_LEDGER_CHAIN_H
#define DP_AGG_PG_LEDGER_CHAIN_H

#include "pg_includes.h"

namespace dp_pg {

// Whether this backend chained a ledger entry in its current transaction,
// which then holds the chain head's row lock until it ends (an
// administrator's change chained early, by SET CONSTRAINTS ALL IMMEDIATE): a
// private query in it would wait for the writer, which waits for it.
bool ChainedInThisTransaction();

// Appends one ledger entry, as dp_agg.append_ledger_entry does (every write
// of the ledger goes through here): `values` and `nulls` are indexed by
// ledger_records.h's EntryField, with the id, recorded_at, budget digest and
// seq filled in here (and system_identifier when null: this cluster's).
// `budget` is the role's budget row right after the change (nullptr: none).
// chain_now: chained at once under the chain head's row lock (the ledger
// writer's charges); else at commit (an administrator's changes).
void AppendLedgerEntry(Datum* values, bool* nulls, HeapTupleHeader budget, bool chain_now);

// The ledger writer's batch (ledger_writer.cpp: one transaction, a
// subtransaction per charge or group of charges): between BeginBatchChaining
// and FinishBatchChaining, entries chained at once take the chain head from
// memory, locked once (by BeginBatchChaining, at the top level, when that
// needs no wait; else by the first entry), and the head row is written once,
// by FinishBatchChaining, before the commit; the entries, their seq and
// hashes are those of chaining one by one. After each subtransaction, the
// writer calls KeepBatchChaining if it was kept (released) and
// ForgetBatchChaining if it was rolled back; AbandonBatchChaining when the
// transaction fails.
void BeginBatchChaining();
void KeepBatchChaining();
void ForgetBatchChaining();
// FinishBatchChaining: true, with the head it wrote (its hash allocated in
// TopTransactionContext), if the batch advanced it.
bool FinishBatchChaining(int64* seq, const bytea** hash);
void AbandonBatchChaining();

// Raises PostgreSQL's trigger-protocol error (39P01, as plpgsql's "trigger
// functions can only be called as triggers"), never XX000, when one of the
// ledger's trigger functions (`name`) is called as a plain function.
void RequireTriggerCall(FunctionCallInfo fcinfo, const char* name);

}  // namespace dp_pg

#endif  // DP_AGG_PG_LEDGER_CHAIN_H
