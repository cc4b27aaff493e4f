// The per-call-site cache of a private aggregate's final function: its
// plans, computed once per call site and kept in fn_extra, so that every
// group is released with the same work. Under Citus the cache is kept with
// the call site's prepared state instead (citus/adapter.h
// CitusFinalCacheSlot): coord_combine_agg looks the final function up again
// for every group.
//
// The cache lives in the function's memory context and is never destroyed:
// its type must be trivially destructible (its fields are read across calls
// that may raise a PostgreSQL ERROR) and at most 16-byte aligned (int128).
#ifndef DP_AGG_PG_FINAL_SITE_CACHE_H
#define DP_AGG_PG_FINAL_SITE_CACHE_H

#include <cstdint>
#include <new>
#include <type_traits>

#include "citus/adapter.h"
#include "pg_includes.h"

namespace dp_pg {

// created_in: set to the memory context of the cache when this call created
// it (left alone otherwise).
template <typename Cache>
Cache* FinalSiteCache(FunctionCallInfo fcinfo, MemoryContext* created_in = nullptr) {
  static_assert(std::is_trivially_destructible_v<Cache>, "a final site cache is never destroyed");
  static_assert(alignof(Cache) <= 16, "a final site cache is 16-byte aligned");
  void** slot = &fcinfo->flinfo->fn_extra;
  MemoryContext context = fcinfo->flinfo->fn_mcxt;
  if (*slot == nullptr) {
    if (void** site_slot = CitusFinalCacheSlot(fcinfo, &context)) slot = site_slot;
  }
  if (*slot == nullptr) {
    void* raw = MemoryContextAllocZero(context, sizeof(Cache) + 16);
    void* aligned = reinterpret_cast<void*>((reinterpret_cast<std::uintptr_t>(raw) + 15) &
                                            ~static_cast<std::uintptr_t>(15));
    *slot = new (aligned) Cache();
    if (created_in != nullptr) *created_in = context;
  }
  return static_cast<Cache*>(*slot);
}

}  // namespace dp_pg

#endif  // DP_AGG_PG_FINAL_SITE_CACHE_H
