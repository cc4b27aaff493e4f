// The release cache's durable store (release_cache.h): the rows released
// for a question in a period, one file per question and role, kept outside
// tables as pg_stat_statements keeps its file, so that neither the analyst's
// ROLLBACK nor a server restart undoes them (what was released stays
// released).
//
//   $PGDATA/dp_agg/release_cache/<session user OID>/<key, 64 hex digits>
//
// A file is written under a temporary name, flushed to disk, renamed over
// the entry and its directory flushed (durable_rename), all before the
// first row is returned to the client; readers see the old entry or the new
// one, never a part. It holds a header (database, roles, period, when it was
// stored, the query text for administrators, the result's column types and
// a reuse counter), the rows as minimal tuples whose values are detoasted
// (exact binary values, no text formatting, no pointer into a table), and a
// CRC-32C over everything but the counter.
//
// Bounded per role: after a store, the role's entries of past periods are
// removed and, beyond dp_agg.release_cache_max_entries, its oldest ones.
// Per role and not for the whole server, so that whether an entry of one
// role is still there never depends on what other roles asked (a shared
// bound would let an analyst count another analyst's queries). An evicted
// question is simply released again, and charged.
#ifndef DP_AGG_PG_RELEASE_STORE_H
#define DP_AGG_PG_RELEASE_STORE_H

#include "pg_includes.h"
#include "release_claims.h"

extern "C" {
#include "utils/tuplestore.h"
}

namespace dp_pg {

// What identifies an entry and the period it belongs to.
struct StoredReleaseId {
  const unsigned char* key;  // kReleaseKeyBytes
  Oid role;  // the session user: the entry's directory
  int period_seconds;
  int64 period_index;  // floor(Unix time / period_seconds)
};

// floor(Unix time now / period_seconds): the period a release made now
// belongs to (a public clock, aligned to the epoch).
int64 PeriodIndexNow(int period_seconds);

// Loads the rows stored for `id` in its period into `rows` (through
// `slot`, a minimal-tuple slot of `description`), when there is such an
// entry and its columns have the types of `description`; `rows` nullptr
// only checks. An entry of a past period is removed. Returns whether it
// was found.
bool LoadStoredRelease(const StoredReleaseId& id, TupleDesc description, Tuplestorestate* rows,
                       TupleTableSlot* slot);

// Counts one reuse of the entry in its header (not flushed to disk: the
// count is for administrators, not part of any guarantee).
void CountStoredReuse(const StoredReleaseId& id);

// Stores `rows` (read through `slot` from the start; the read position is
// left at the end) as the entry of `id`, durably, then bounds the role's
// entries. Returns false, with a WARNING, if the entry could not be written
// (the rows are still released once: only a later reuse is lost).
bool StoreRelease(const StoredReleaseId& id, const char* query_text, TupleDesc description,
                  Tuplestorestate* rows, TupleTableSlot* slot);

// An entry as administrators see it (dp_agg.release_cache).
struct StoredReleaseInfo {
  Oid role;
  Oid current_user;
  TimestampTz period_start;
  TimestampTz period_end;
  TimestampTz stored_at;
  int64 rows;
  int64 bytes;  // the file's size
  int64 times_reused;
  const char* query;  // NUL-terminated, valid during the visit
};
using StoredReleaseVisitor = void (*)(const StoredReleaseInfo& entry, void* context);

// Visits the entries of this database whose period is the current one, of
// every role (or only of `role` when it is valid).
void VisitStoredReleases(Oid role, StoredReleaseVisitor visit, void* context);

// Removes the entries of this database, of every role (or only of `role`);
// returns how many were removed.
int64 RemoveStoredReleases(Oid role);

}  // namespace dp_pg

#endif  // DP_AGG_PG_RELEASE_STORE_H
