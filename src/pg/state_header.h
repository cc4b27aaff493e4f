// What the three state types (aggregate_state, quantile_state,
// selection_state) share: their header, the checks on a state read from a
// tuple, and the rules of their combine functions.
#ifndef DP_AGG_PG_STATE_HEADER_H
#define DP_AGG_PG_STATE_HEADER_H

#include <cstdint>

#include "pg_includes.h"

namespace dp_pg {

// The first fields of every state type (each declares them in this order).
struct StateHeader {
  std::int32_t varlena_header;  // set with SET_VARSIZE; never touch directly
  std::uint8_t format_version;
  std::uint8_t initialized;  // parameters present (set by the executor hook)
};

// A private, detoasted copy of state argument `argument` (which may come
// from a tuple): ERROR XX001 (data_corrupted) unless it is
// non-NULL, at least `minimum_size` bytes and of format `version`.
void* ReadStateCopy(FunctionCallInfo fcinfo, int argument, Size minimum_size, std::uint8_t version,
                    const char* type_name);

// What a combine function does with its two states.
enum class CombineStep {
  kKeepInto,  // the partial state has no parameters (saw no call): nothing to add
  kAdoptPartial,  // the combining step's own 'uninitialized' state: take the partial's parameters
  kMerge,  // both have parameters, which must be the same (RequireSameParameters)
};
CombineStep DecideCombineStep(const StateHeader& into, const StateHeader& partial);

// Two partial states of one call site always carry the same parameters;
// anything else is an internal error.
void RequireSameParameters(bool same, const char* type_name);

}  // namespace dp_pg

#endif  // DP_AGG_PG_STATE_HEADER_H
