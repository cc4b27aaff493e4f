// The release cache's claims: which session is computing the release of a
// question right now (release_cache.h).
//
// Two sessions of one role asking the same question at the same time must
// not both pay for it and get two different answers: the first one to miss
// the stored releases claims the question's key here, in a fixed-size table
// in shared memory, before it is charged; a second one that finds the key
// claimed waits (bounded by dp_agg.charge_timeout) on the claim's condition
// variable until the owner has stored its rows or given up, and then looks
// at the stored releases again: it reuses the owner's rows, free, or claims
// the key itself and pays. A claim is given up when the owner stores its
// release, when its query ends (ExecutorEnd), when its transaction or the
// subtransaction that claimed it aborts (error, cancel), and when its
// process exits; a claim whose owner process is gone (crash) is stale and
// taken over. A crash of a backend restarts the server, which starts with
// an empty table.
#ifndef DP_AGG_PG_RELEASE_CLAIMS_H
#define DP_AGG_PG_RELEASE_CLAIMS_H

#include "pg_includes.h"

namespace dp_pg {

constexpr int kReleaseKeyBytes = 32;  // SHA-256

enum class ClaimResult {
  kClaimed,  // this backend owns the key now (*slot)
  kHeldByOther,  // another live backend owns it (*slot: wait on it)
  kHeldByMe,  // this backend owns it already (a nested execution of the same question)
  kTableFull,  // no free slot: nothing claimed
};

// The claims' shared memory: requested and attached from the shmem_request
// and shmem_startup hooks (hooks.cpp).
void RequestClaimsSharedMemory();
void StartClaimsSharedMemory();

// Claims `key` for this backend unless a live backend holds it.
ClaimResult TryClaimRelease(const unsigned char* key, int* slot);

// Waits until the claim of `key` in `slot` is given up, at most until
// `deadline`. Returns false on timeout. Interrupts are honoured.
bool WaitForClaimRelease(int slot, const unsigned char* key, TimestampTz deadline);

// Gives up this backend's claim in `slot` (no-op if it is not ours any
// more) and wakes its waiters.
void GiveUpClaim(int slot);

}  // namespace dp_pg

#endif  // DP_AGG_PG_RELEASE_CLAIMS_H
