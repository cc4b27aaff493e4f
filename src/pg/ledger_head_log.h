// The ledger writer's LOG lines of the chain head (README "A tamper-evident
// ledger"): an outside copy of the server log anchors the hash chain of
// ledger_chain.h, so that a rewrite of the ledger with its head shows.
#ifndef DP_AGG_PG_LEDGER_HEAD_LOG_H
#define DP_AGG_PG_LEDGER_HEAD_LOG_H

#include "pg_includes.h"

namespace dp_pg {

// The ledger writer, inside the transaction of a batch, after applying it:
// reads the chain head (nothing if it cannot without waiting).
void NoteLedgerHead();

// The same, for a batch that wrote the head itself (FinishBatchChaining):
// what the row holds now, without reading it again.
void NoteLedgerHeadWritten(int64 seq, const bytea* hash);

// The ledger writer, after the batch committed: logs the head read by
// NoteLedgerHead at LOG level if it moved, at most once a second; a head not
// yet logged is logged when the writer exits.
void LedgerHeadCommitted();

// The writer's batch failed: what NoteLedgerHead read was not committed.
void ForgetLedgerHead();

}  // namespace dp_pg

#endif  // DP_AGG_PG_LEDGER_HEAD_LOG_H
