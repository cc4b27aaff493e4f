// dp_agg.unit_group_sample(max_groups) OVER (PARTITION BY unit): which
// groups each privacy unit keeps (unit_rewrite.h), drawn from the noise
// source.
#include <cstdint>

#include "pg_includes.h"

extern "C" {
#include "windowapi.h"
}

#include "../core/random_source.h"
#include "error_boundary.h"
#include "settings.h"

namespace {

// Partitions with at most this many groups to keep are sampled by Floyd's
// algorithm (R. W. Floyd, in J. Bentley, "Programming Pearls: A sample of
// brilliance", CACM 30(9), 1987): max_groups draws per unit, positions kept
// in the partition's memory. Larger max_groups use selection sampling (D.
// Knuth, TAOCP vol. 2, 3.4.2, Algorithm S): one draw per row, no memory.
// Both give every subset of max_groups of the partition's rows the same
// probability, whatever the order of the rows.
constexpr int kFloydMaxGroups = 64;

struct FloydSample {
  int count;  // 0 until drawn
  int64 positions[kFloydMaxGroups];
};

struct SelectionSample {
  int64 decided;  // rows decided so far: the next row's position
  int64 selected;  // rows kept so far
};

}  // namespace

extern "C" {

PG_FUNCTION_INFO_V1(dp_unit_group_sample);

// dp_agg.unit_group_sample(max_groups) OVER (PARTITION BY unit): true for a
// uniformly random subset of min(max_groups, rows) rows of the partition,
// drawn from the noise source (OpenSSL's CSPRNG unless a superuser set the
// test seed) once per partition and query, so that which groups a unit
// keeps depends on nothing an analyst sees or chooses.
Datum dp_unit_group_sample(PG_FUNCTION_ARGS) {
  WindowObject window = PG_WINDOW_OBJECT();
  bool is_null = false;
  const Datum argument = WinGetFuncArgCurrent(window, 0, &is_null);
  const int max_groups = is_null ? 0 : DatumGetInt32(argument);
  if (max_groups < 1)
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("dp_agg.unit_group_sample needs max_groups >= 1")));
  const int64 rows = WinGetPartitionRowCount(window);
  const int64 position = WinGetCurrentPosition(window);
  if (rows <= max_groups) PG_RETURN_BOOL(true);
  if (max_groups <= kFloydMaxGroups) {
    auto* sample =
        static_cast<FloydSample*>(WinGetPartitionLocalMemory(window, sizeof(FloydSample)));
    if (sample->count == 0) {
      // Floyd: for j = rows - m .. rows - 1, add a uniform t in [0, j], or j
      // itself if t is already in the sample.
      FloydSample drawn = dp_pg::CallCore([rows, max_groups] {
        FloydSample result{};
        dp::RandomSource& source = dp_pg::NoiseSource();
        for (int64 j = rows - max_groups; j < rows; ++j) {
          const auto t = static_cast<int64>(source.UniformBelow(static_cast<std::uint64_t>(j) + 1));
          bool present = false;
          for (int k = 0; k < result.count; ++k) present = present || result.positions[k] == t;
          result.positions[result.count++] = present ? j : t;
        }
        return result;
      });
      *sample = drawn;
    }
    bool kept = false;
    for (int k = 0; k < sample->count; ++k) kept = kept || sample->positions[k] == position;
    PG_RETURN_BOOL(kept);
  }
  // Algorithm S: the row at position p is kept with probability
  // (m - selected) / (rows - p); WindowAgg visits a partition's rows in order.
  auto* sample =
      static_cast<SelectionSample*>(WinGetPartitionLocalMemory(window, sizeof(SelectionSample)));
  if (sample->decided != position)
    elog(ERROR, "dp_agg: unit_group_sample visited rows out of order");
  const int64 remaining = rows - position;
  const int64 wanted = max_groups - sample->selected;
  const bool kept = dp_pg::CallCore([remaining, wanted] {
    return static_cast<int64>(
               dp_pg::NoiseSource().UniformBelow(static_cast<std::uint64_t>(remaining))) < wanted;
  });
  sample->decided += 1;
  sample->selected += kept ? 1 : 0;
  PG_RETURN_BOOL(kept);
}

}  // extern "C"
