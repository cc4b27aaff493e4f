// The transition state shared by dp_count, dp_sum and dp_avg.
//
// It is a real SQL type (dp_agg.aggregate_state, with text input and output)
// rather than `internal`: Citus pushes partial aggregation to its workers only
// for aggregates with a combine function and a non-pseudo transition type, and
// moves partial states between nodes as text. It is a fixed-size varlena that
// the transition functions update in place inside the aggregate memory
// context, so it costs no more per row than an `internal` state would.
//
// The public parameters (epsilon, bounds, fixed-point format) are written
// into the initial state by the executor hook before the first row is read
// (see call_sites.cpp); the state then only accumulates the row count and the
// exact sum of clamped values.
#ifndef DP_AGG_PG_AGGREGATE_STATE_H
#define DP_AGG_PG_AGGREGATE_STATE_H

#include <cstdint>
#include <cstring>

#include "../core/grid_value.h"
#include "../core/random_source.h"
#include "pg_includes.h"

namespace dp_pg {

// How the values of the aggregated column become fixed-point units.
enum class ValueKind : std::uint8_t {
  kNone = 0,  // dp_count: values are only counted
  kInteger = 1,  // smallint, integer, bigint: the integers themselves (unit 2^0)
  kFloat = 2,  // real, double precision, numeric: via double, unit 2^unit_exponent
};

inline constexpr std::uint8_t kStateFormatVersion = 1;

// Starts with the fields of StateHeader (state_header.h).
struct AggregateState {
  std::int32_t varlena_header;  // set with SET_VARSIZE; never touch directly
  std::uint8_t format_version;
  std::uint8_t initialized;  // parameters present (set by the executor hook)
  std::uint8_t value_kind;  // ValueKind
  std::uint8_t skip_clamping;  // test fault only (dp_agg.insecure_test_fault)
  std::int32_t unit_exponent;
  std::int64_t count;  // rows that contributed (non-NULL, not NaN)
  std::uint64_t sum_low;  // exact sum of clamped units, an int128 kept as
  std::int64_t sum_high;  // two halves: palloc only guarantees 8-byte alignment
  double epsilon;
  double lower;  // public bounds, as doubles for clamping
  double upper;
  std::int64_t lower_units;  // the same bounds in units
  std::int64_t upper_units;
  double unit_scale;  // dp::UnitScale(unit_exponent), precomputed for the row loop
  double delta;  // 0: Laplace (epsilon-DP); > 0: discrete Gaussian, (epsilon, delta)
  double confidence;  // interval aggregates only: the level of the interval
};

inline dp::int128 GetSum(const AggregateState* state) {
  return static_cast<dp::int128>((static_cast<dp::uint128>(state->sum_high) << 64) |
                                 state->sum_low);
}

inline void SetSum(AggregateState* state, dp::int128 sum) {
  state->sum_low = static_cast<std::uint64_t>(sum);
  state->sum_high = static_cast<std::int64_t>(sum >> 64);
}

// A palloc'd state in CurrentMemoryContext, all zero but for its header.
AggregateState* NewAggregateState();

// A read-only state argument of dp_count/sum/avg (final functions; the second
// combine input, which may come from a tuple). Copies it out so alignment
// never matters.
void ReadState(FunctionCallInfo fcinfo, int argument, AggregateState* out);

// The support functions of every private aggregate (dp_count/sum/avg,
// dp_percentile, dp_select) run only inside an aggregate: their states hold
// exact sums and counts, which must never be read out directly.
void RequireAggregateContext(FunctionCallInfo fcinfo, const char* function);

// The numeric whose value is exactly `value` (every binary fraction has a
// finite decimal expansion), and the numeric of a finite double, exactly.
Datum ExactNumeric(const dp::GridValue& value);
Datum ExactNumericFromDouble(double value);

}  // namespace dp_pg

#endif  // DP_AGG_PG_AGGREGATE_STATE_H
