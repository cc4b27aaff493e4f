// Why this file stays although SQL no longer reaches QuantileGrid (dp_median
// and dp_percentile release through continuous_quantile.h since issue 25):
// CheckFraction and ToDyadic below are the one check and exact form of a
// quantile's fraction, used by continuous_quantile.cpp and the pg layer; and
// QuantileGrid is the fixed-grid baseline that test/bench/accuracy_bench.cpp
// measures the lattice mechanism against (BENCHMARKS.md "Quantiles"), with
// its unit tests (test/unit/quantile_test.cpp) and the privacy audit's bin
// count (test/audit/dp_audit/constants.py). Delete QuantileGrid together
// with that comparison, not before.
//
// Private quantiles (dp_median, dp_quantile) over a fixed public grid: the
// exponential mechanism for quantiles (A. Smith, "Privacy-preserving
// statistical estimation with optimal convergence rates", STOC 2011), with a
// data-independent set of candidates so that the state has a fixed size, and
// with permute-and-flip (selection.h) as the selection step.
//
// Grid. [lower, upper] is cut into B bins of equal width (B public, fixed
// before any row is seen; default 1024, at most 65536). Values are clamped to
// [lower, upper], mapped exactly to the fixed-point units of grid_value.h
// (2^unit_exponent, chosen from the bounds alone; at least 2^61 units across
// the larger bound), and value p units above `lower` goes to bin
//     floor(p B / W)   (B - 1 for p = W),   W = upper - lower in units,
// i.e. bin i holds the units [e_i, e_{i+1}) with e_j = ceil(j W / B), the
// last bin also holding `upper`. Integer arithmetic only: the bin of a value
// and the edges used for the answer agree exactly. The state is the vector of
// B per-bin counts (8 B each): its size never depends on the data, and it
// merges by addition, so parallel and distributed plans compute the same
// histogram as a serial one.
//
// Candidates and utility. The candidates are the B bins. With n rows and
// C_i = number of rows in bins below i, bin i covers the ranks
// [C_i, C_{i+1}], and its utility is minus the distance of the target rank
// f n from that interval:
//     u(i) = -max(0, C_i - f n, f n - C_{i+1}).
// The bins that contain the f-quantile have utility 0. Unlike utilities
// defined at single points, a bin holding many equal values still spans their
// ranks, so data concentrated in one bin selects that bin.
//
// Sensitivity 1 under adding or removing one row (in rows). Adding a row x
// raises n by 1, hence f n by f in [0, 1], and raises each C_j by 0 or 1
// (by [x lies in a bin below j]). So C_i - f n changes by a - f with a in
// {0, 1}, and f n - C_{i+1} by f - b with b in {0, 1}: both by at most 1 in
// absolute value, as does the constant 0. The maximum of quantities that each
// change by at most 1 changes by at most 1, so |u(i) - u'(i)| <= 1 for every
// bin; removing a row is the reverse. The utility is NOT monotonic: adding a
// row above bin i leaves C_i and C_{i+1} alone and raises f n, which lowers
// the utility of bins below the target and raises that of bins above it. So
// permute-and-flip runs with exp(-epsilon gap / 2) (the non-monotonic rule).
//
// Exact utilities. f is a double, taken as its exact binary value M 2^-K.
// Utilities are kept in units of 2^-K rows (sensitivity 2^K units), so f n
// and every utility are exact integers. K is at most 64: a fraction with
// more than 64 fractional bits (only f < 2^-12 can have them) is rounded to
// the nearest multiple of 2^-64 first. That changes the target rank by less
// than n 2^-65 rows; it is a function of the public f alone, so the privacy
// argument is untouched.
//
// Answer. The released value is the midpoint of the chosen bin,
// (e_i + e_{i+1}) / 2 in units (exact in half units), converted to the
// nearest double and clamped to [lower, upper]. It is a deterministic
// function of the chosen bin and the public bounds, i.e. post-processing of
// an epsilon-DP selection: no float computed from the data ever reaches the
// output (Mironov, CCS 2012), and the answer always lies in [lower, upper],
// also for zero rows (then every bin has utility 0 and the choice is
// uniform). Accuracy: within half a bin width of a bin that contains the
// quantile, with probability falling exponentially in epsilon times the
// distance in rows.
//
// Privacy of Release: epsilon-DP (add/remove one row) by the permute-and-flip
// theorem in selection.h with Delta = 1 row, plus post-processing. Rows with
// a NaN value are ignored (a public rule applied row by row).
#ifndef DP_AGG_CORE_QUANTILE_H
#define DP_AGG_CORE_QUANTILE_H

#include <cstddef>
#include <cstdint>
#include <vector>

#include "random_source.h"

namespace dp {

inline constexpr std::size_t kDefaultQuantileBins = 1024;
inline constexpr std::size_t kMaxQuantileBins = 65536;
inline constexpr double kMedianFraction = 0.5;

// Scores of the B bins in units of 2^-fraction_bits rows, and their
// sensitivity in the same units (2^fraction_bits, i.e. one row).
struct QuantileUtility {
  std::vector<int128> scores;
  uint128 sensitivity = 1;
  int fraction_bits = 0;
};

// fraction in [0, 1] as numerator / 2^bits with bits <= 64: exact unless
// the fraction has more than 64 fractional bits, then rounded to the nearest
// multiple of 2^-64, ties to even (see "Exact utilities" above).
// Throws InvalidParameter unless 0 <= fraction <= 1 (NaN included): the one
// check of a quantile's fraction in the core, for the grid and Smith mechanisms.
void CheckFraction(double fraction);

struct DyadicFraction {
  uint128 numerator = 0;
  int bits = 0;
};
DyadicFraction ToDyadic(double fraction);

class QuantileGrid {
 public:
  // Throws InvalidParameter unless lower and upper are finite with
  // lower <= upper and 1 <= bins <= kMaxQuantileBins. lower == upper is
  // allowed: every release then returns lower.
  QuantileGrid(double lower, double upper, std::size_t bins = kDefaultQuantileBins);

  // Adds one row: NaN is ignored, anything else (infinities included) is
  // clamped to [lower, upper]. Throws std::overflow_error past 2^63 - 1 rows.
  void Add(double value);

  // Adds the rows of `other`, which must have the same bounds and bin count
  // (std::invalid_argument otherwise).
  void Merge(const QuantileGrid& other);

  // The epsilon-DP estimate of the `fraction` quantile, in [lower, upper].
  // Throws InvalidParameter unless 0 <= fraction <= 1 and epsilon is finite
  // and positive (the caller also applies ValidateEpsilon's limits).
  double Release(double fraction, double epsilon, RandomSource& rng) const;
  double ReleaseMedian(double epsilon, RandomSource& rng) const {
    return Release(kMedianFraction, epsilon, rng);
  }

  // The utilities Release selects with (exposed for tests).
  QuantileUtility Utility(double fraction) const;

  // The grid. BinIndex(value) is the bin Add puts a non-NaN value in;
  // EdgeValue(j), 0 <= j <= bins, is the nearest double to edge e_j (clamped
  // to the bounds); BinPoint(i) is the value released when bin i is chosen.
  std::size_t BinIndex(double value) const noexcept;
  double EdgeValue(std::size_t j) const;
  double BinPoint(std::size_t bin) const;

  // For serialisation: the bounds, bin count and per-bin counts determine the
  // state completely; everything else is recomputed from the bounds.
  double lower() const { return lower_; }
  double upper() const { return upper_; }
  std::size_t bins() const { return counts_.size(); }
  const std::vector<std::int64_t>& counts() const { return counts_; }
  std::int64_t total() const { return total_; }
  // Replaces the counts; std::invalid_argument unless there are bins() of
  // them, none negative, with a total below 2^63.
  void RestoreCounts(const std::vector<std::int64_t>& counts);

 private:
  std::uint64_t EdgeUnits(std::size_t j) const;  // e_j, in units above lower

  double lower_;
  double upper_;
  int unit_exponent_ = 0;
  double unit_scale_ = 0;
  std::int64_t lower_units_ = 0;
  std::uint64_t width_units_ = 0;  // W
  std::vector<std::int64_t> counts_;
  std::int64_t total_ = 0;
};

}  // namespace dp

#endif  // DP_AGG_CORE_QUANTILE_H
