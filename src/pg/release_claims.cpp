#include "release_claims.h"

#include <cerrno>
#include <csignal>
#include <cstring>

extern "C" {
#include "access/xact.h"
#include "storage/condition_variable.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/proc.h"
#include "storage/shmem.h"
#include "utils/timestamp.h"
#include "utils/wait_event.h"
}

namespace dp_pg {

namespace {

struct ClaimSlot {
  bool used;
  unsigned char key[kReleaseKeyBytes];
  pid_t owner_pid;
  int owner_procno;
  ConditionVariable given_up;  // broadcast when the claim is given up
};

struct ClaimTable {
  LWLock* lock;
  int num_slots;
  ClaimSlot slots[FLEXIBLE_ARRAY_MEMBER];
};

ClaimTable* claims = nullptr;

// Two per backend: a query that computes a release may run a nested query
// that computes another one (a function in its select list).
int SlotCount() { return 2 * MaxBackends; }

Size TableSize() {
  return add_size(offsetof(ClaimTable, slots), mul_size(SlotCount(), sizeof(ClaimSlot)));
}

void ClaimsShmemRequest() {
  RequestAddinShmemSpace(TableSize());
  RequestNamedLWLockTranche("dp_agg_release_claims", 1);
}

void ClaimsShmemStartup() {
  LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
  bool found = false;
  claims = static_cast<ClaimTable*>(ShmemInitStruct("dp_agg release claims", TableSize(), &found));
  if (!found) {
    std::memset(claims, 0, TableSize());
    claims->lock = &(GetNamedLWLockTranche("dp_agg_release_claims"))->lock;
    claims->num_slots = SlotCount();
    for (int i = 0; i < claims->num_slots; ++i) ConditionVariableInit(&claims->slots[i].given_up);
  }
  LWLockRelease(AddinShmemInitLock);
}

// This backend's claims, with the subtransaction that made each, so that an
// abort gives up exactly the claims of what it undoes.
constexpr int kMaxOwnClaims = 32;
struct OwnClaim {
  int slot;
  SubTransactionId subtransaction;
};
OwnClaim own_claims[kMaxOwnClaims];
int num_own_claims = 0;
bool callbacks_registered = false;

// Whether the owner of `slot` is gone: its process no longer exists, or its
// PGPROC serves another process now. Caller holds the lock.
bool OwnerIsGone(const ClaimSlot& slot) {
  if (slot.owner_pid == MyProcPid) return false;
  if (kill(slot.owner_pid, 0) != 0 && errno == ESRCH) return true;
  return slot.owner_procno < 0 || slot.owner_procno >= static_cast<int>(ProcGlobal->allProcCount) ||
         ProcGlobal->allProcs[slot.owner_procno].pid != slot.owner_pid;
}

// Frees `slot` if this backend owns it and wakes its waiters.
void FreeOwnSlot(int slot) {
  bool freed = false;
  LWLockAcquire(claims->lock, LW_EXCLUSIVE);
  ClaimSlot& claim = claims->slots[slot];
  if (claim.used && claim.owner_pid == MyProcPid) {
    claim.used = false;
    claim.owner_pid = 0;
    claim.owner_procno = -1;
    freed = true;
  }
  LWLockRelease(claims->lock);
  if (freed) ConditionVariableBroadcast(&claim.given_up);
}

void ForgetOwnClaim(int index) {
  own_claims[index] = own_claims[num_own_claims - 1];
  --num_own_claims;
}

void GiveUpAll() {
  while (num_own_claims > 0) {
    const int slot = own_claims[num_own_claims - 1].slot;
    --num_own_claims;
    FreeOwnSlot(slot);
  }
}

void OnTransactionEnd(XactEvent event, void*) {
  switch (event) {
    case XACT_EVENT_COMMIT:
    case XACT_EVENT_ABORT:
    case XACT_EVENT_PREPARE:
    case XACT_EVENT_PARALLEL_COMMIT:
    case XACT_EVENT_PARALLEL_ABORT:
      GiveUpAll();
      break;
    default:
      break;
  }
}

// A subtransaction that aborts gives up the claims made in it or in the
// subtransactions committed into it (their ids are larger: every
// subtransaction started after it and still counted is its descendant).
void OnSubtransactionEnd(SubXactEvent event, SubTransactionId subtransaction, SubTransactionId,
                         void*) {
  if (event != SUBXACT_EVENT_ABORT_SUB) return;
  for (int i = num_own_claims - 1; i >= 0; --i) {
    if (own_claims[i].subtransaction < subtransaction) continue;
    const int slot = own_claims[i].slot;
    ForgetOwnClaim(i);
    FreeOwnSlot(slot);
  }
}

void OnProcessExit(int, Datum) {
  if (claims != nullptr) GiveUpAll();
}

void RegisterCallbacks() {
  if (callbacks_registered) return;
  RegisterXactCallback(OnTransactionEnd, nullptr);
  RegisterSubXactCallback(OnSubtransactionEnd, nullptr);
  before_shmem_exit(OnProcessExit, 0);
  callbacks_registered = true;
}

}  // namespace

void RequestClaimsSharedMemory() { ClaimsShmemRequest(); }

void StartClaimsSharedMemory() { ClaimsShmemStartup(); }

ClaimResult TryClaimRelease(const unsigned char* key, int* slot) {
  if (claims == nullptr || num_own_claims >= kMaxOwnClaims) return ClaimResult::kTableFull;
  RegisterCallbacks();
  LWLockAcquire(claims->lock, LW_EXCLUSIVE);
  int free_slot = -1;
  for (int i = 0; i < claims->num_slots; ++i) {
    ClaimSlot& claim = claims->slots[i];
    if (!claim.used) {
      if (free_slot < 0) free_slot = i;
      continue;
    }
    if (std::memcmp(claim.key, key, kReleaseKeyBytes) != 0) continue;
    if (claim.owner_pid == MyProcPid) {
      LWLockRelease(claims->lock);
      *slot = i;
      return ClaimResult::kHeldByMe;
    }
    if (!OwnerIsGone(claim)) {
      LWLockRelease(claims->lock);
      *slot = i;
      return ClaimResult::kHeldByOther;
    }
    // A stale claim: its owner died without giving it up. Taken over.
    free_slot = i;
    break;
  }
  if (free_slot < 0) {
    LWLockRelease(claims->lock);
    return ClaimResult::kTableFull;
  }
  ClaimSlot& claim = claims->slots[free_slot];
  claim.used = true;
  std::memcpy(claim.key, key, kReleaseKeyBytes);
  claim.owner_pid = MyProcPid;
  claim.owner_procno = MyProc->pgprocno;
  LWLockRelease(claims->lock);
  own_claims[num_own_claims++] = OwnClaim{free_slot, GetCurrentSubTransactionId()};
  *slot = free_slot;
  return ClaimResult::kClaimed;
}

bool WaitForClaimRelease(int slot, const unsigned char* key, TimestampTz deadline) {
  ClaimSlot& claim = claims->slots[slot];
  ConditionVariablePrepareToSleep(&claim.given_up);
  bool given_up = false;
  for (;;) {
    LWLockAcquire(claims->lock, LW_SHARED);
    given_up =
        !claim.used || std::memcmp(claim.key, key, kReleaseKeyBytes) != 0 || OwnerIsGone(claim);
    LWLockRelease(claims->lock);
    if (given_up) break;
    const long remaining = TimestampDifferenceMilliseconds(GetCurrentTimestamp(), deadline);
    if (remaining <= 0) break;
    // Woken by the broadcast; the timeout also notices an owner that died.
    (void)ConditionVariableTimedSleep(&claim.given_up, Min(remaining, 1000L), PG_WAIT_EXTENSION);
  }
  ConditionVariableCancelSleep();
  return given_up;
}

void GiveUpClaim(int slot) {
  for (int i = 0; i < num_own_claims; ++i) {
    if (own_claims[i].slot != slot) continue;
    ForgetOwnClaim(i);
    FreeOwnSlot(slot);
    return;
  }
}

}  // namespace dp_pg
