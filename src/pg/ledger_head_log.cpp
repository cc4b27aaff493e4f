// The ledger writer's LOG lines of the chain head (see ledger_head_log.h).
#include "ledger_head_log.h"

#include <cstring>

#include "../core/ledger_chain.h"

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

void NoteLedgerHeadWritten(int64 seq, const bytea* hash) {
  noted.valid = false;
  if (hash == nullptr || VARSIZE_ANY_EXHDR(hash) != dp::kChainDigestBytes) return;
  noted.seq = seq;
  dp::HexEncode(reinterpret_cast<const unsigned char*>(VARDATA_ANY(hash)), dp::kChainDigestBytes,
                noted.hash);
  noted.valid = true;
  if (database_name[0] == '\0') {
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
