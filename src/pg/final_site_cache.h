// The per-call-site cache of a private aggregate's final function: its
// plans, built once per call site when the query starts (site_plans.h) and
// kept in fn_extra, so that every group is released with the same work and
// no group pays for building them. Under Citus the cache is kept with the
// call site's prepared state instead (citus/adapter.h CitusFinalCacheSlot):
// coord_combine_agg looks the final function up again for every group.
//
// The cache lives in the function's memory context and is never destroyed:
// its type must be trivially destructible (its fields are read across calls
// that may raise a PostgreSQL ERROR) and at most 16-byte aligned (int128).
// Each cache type names itself with a tag, stored in front of it, so that a
// slot filled for one final function is never read as another's cache.
#ifndef DP_AGG_PG_FINAL_SITE_CACHE_H
#define DP_AGG_PG_FINAL_SITE_CACHE_H

#include <cstdint>
#include <new>
#include <type_traits>

#include "citus/adapter.h"
#include "pg_includes.h"

namespace dp_pg {

// The cache in `*slot`, created in `context` when the slot is empty.
// created_in: set to `context` when this call created it (left alone
// otherwise). A slot holding another type's cache is an internal error.
template <typename Cache>
Cache* SiteCacheIn(void** slot, MemoryContext context, MemoryContext* created_in = nullptr) {
  static_assert(std::is_trivially_destructible_v<Cache>, "a final site cache is never destroyed");
  static_assert(alignof(Cache) <= 16, "a final site cache is 16-byte aligned");
  static_assert(Cache::kTag != 0, "a final site cache names itself");
  if (*slot == nullptr) {
    void* raw = MemoryContextAllocZero(context, sizeof(Cache) + 32);
    auto* aligned = reinterpret_cast<char*>((reinterpret_cast<std::uintptr_t>(raw) + 15) &
                                            ~static_cast<std::uintptr_t>(15));
    *reinterpret_cast<std::uint32_t*>(aligned) = Cache::kTag;
    *slot = new (aligned + 16) Cache();
    if (created_in != nullptr) *created_in = context;
  }
  if (*reinterpret_cast<const std::uint32_t*>(static_cast<char*>(*slot) - 16) != Cache::kTag)
    ereport(ERROR, (errcode(ERRCODE_INTERNAL_ERROR),
                    errmsg("dp_agg final function found another function's plans")));
  return static_cast<Cache*>(*slot);
}

// The cache of the final function being called (fn_extra, or the Citus
// call site's slot).
template <typename Cache>
Cache* FinalSiteCache(FunctionCallInfo fcinfo, MemoryContext* created_in = nullptr) {
  void** slot = &fcinfo->flinfo->fn_extra;
  MemoryContext context = fcinfo->flinfo->fn_mcxt;
  if (*slot == nullptr) {
    if (void** site_slot = CitusFinalCacheSlot(fcinfo, &context)) slot = site_slot;
  }
  return SiteCacheIn<Cache>(slot, context, created_in);
}

}  // namespace dp_pg

#endif  // DP_AGG_PG_FINAL_SITE_CACHE_H
