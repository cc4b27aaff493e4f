#include "quantile.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <string>

#include "grid_value.h"
#include "parameters.h"
#include "selection.h"

namespace dp {

void CheckFraction(double fraction) {
  if (!(fraction >= 0.0 && fraction <= 1.0)) {  // also rejects NaN
    char message[128];
    std::snprintf(message, sizeof message, "quantile fraction must lie in [0, 1], not %g",
                  fraction);
    throw InvalidParameter(message,
                           "The fraction selects the quantile: 0.5 is the median, 0.9 the 90th "
                           "percentile.");
  }
}

namespace {

constexpr std::int64_t kInt64Max = std::numeric_limits<std::int64_t>::max();

}  // namespace

DyadicFraction ToDyadic(double fraction) {
  DyadicFraction result;
  if (fraction == 0.0) return result;
  int exponent = 0;
  const double mantissa = std::frexp(fraction, &exponent);  // in [0.5, 1)
  std::uint64_t m = static_cast<std::uint64_t>(std::ldexp(mantissa, 53));  // exact
  int bits = 53 - exponent;  // fraction = m 2^-bits; exponent <= 1, so bits >= 52
  while (bits > 0 && (m & 1U) == 0) {
    m >>= 1;
    --bits;
  }
  if (bits > 64) {
    const int drop = bits - 64;
    if (drop > 60) {
      m = 0;  // m < 2^53 <= 2^(drop - 7): rounds to 0
    } else {
      const std::uint64_t rest = m & ((std::uint64_t{1} << drop) - 1);
      const std::uint64_t half = std::uint64_t{1} << (drop - 1);
      m >>= drop;
      if (rest > half || (rest == half && (m & 1U) != 0)) ++m;
    }
    bits = 64;
    while (bits > 0 && m != 0 && (m & 1U) == 0) {
      m >>= 1;
      --bits;
    }
    if (m == 0) bits = 0;
  }
  result.numerator = m;
  result.bits = bits;
  return result;
}

QuantileGrid::QuantileGrid(double lower, double upper, std::size_t bins)
    : lower_(lower), upper_(upper) {
  ValidateBounds(lower, upper);
  if (bins < 1 || bins > kMaxQuantileBins)
    throw InvalidParameter("the number of quantile bins must lie in [1, " +
                               std::to_string(kMaxQuantileBins) + "], not " + std::to_string(bins),
                           "The bins are a fixed public grid over [lower, upper].");
  unit_exponent_ = ChooseUnitExponent(lower, upper);
  unit_scale_ = UnitScale(unit_exponent_);
  lower_units_ = ToUnits(lower, unit_exponent_, unit_scale_);
  const std::int64_t upper_units = ToUnits(upper, unit_exponent_, unit_scale_);
  // Both are at most 2^62 in magnitude, so W <= 2^63.
  width_units_ = static_cast<std::uint64_t>(upper_units) - static_cast<std::uint64_t>(lower_units_);
  counts_.assign(bins, 0);
}

std::size_t QuantileGrid::BinIndex(double value) const noexcept {
  if (width_units_ == 0) return 0;
  const double clamped = std::min(std::max(value, lower_), upper_);
  // ToUnits is monotone, so lower <= clamped <= upper gives 0 <= p <= W.
  const std::uint64_t p =
      static_cast<std::uint64_t>(ToUnits(clamped, unit_exponent_, unit_scale_)) -
      static_cast<std::uint64_t>(lower_units_);
  const uint128 bin = (uint128{p} * counts_.size()) / width_units_;  // < 2^63 * 2^17
  return bin >= counts_.size() ? counts_.size() - 1 : static_cast<std::size_t>(bin);
}

void QuantileGrid::Add(double value) {
  if (std::isnan(value)) return;
  if (total_ == kInt64Max) throw std::overflow_error("quantile state: too many rows");
  ++counts_[BinIndex(value)];
  ++total_;
}

void QuantileGrid::Merge(const QuantileGrid& other) {
  if (other.lower_ != lower_ || other.upper_ != upper_ || other.counts_.size() != counts_.size())
    throw std::invalid_argument("quantile states with different grids cannot be merged");
  if (other.total_ > kInt64Max - total_) throw std::overflow_error("quantile state: too many rows");
  for (std::size_t i = 0; i < counts_.size(); ++i) counts_[i] += other.counts_[i];
  total_ += other.total_;
}

void QuantileGrid::RestoreCounts(const std::vector<std::int64_t>& counts) {
  if (counts.size() != counts_.size())
    throw std::invalid_argument("quantile state: wrong number of bins");
  std::int64_t total = 0;
  for (const std::int64_t count : counts) {
    if (count < 0) throw std::invalid_argument("quantile state: negative count");
    if (count > kInt64Max - total) throw std::invalid_argument("quantile state: total overflows");
    total += count;
  }
  counts_ = counts;
  total_ = total;
}

std::uint64_t QuantileGrid::EdgeUnits(std::size_t j) const {
  // ceil(j W / B) <= W
  const uint128 product = uint128{width_units_} * j;
  const std::size_t bins = counts_.size();
  return static_cast<std::uint64_t>(product / bins + (product % bins != 0 ? 1 : 0));
}

double QuantileGrid::EdgeValue(std::size_t j) const {
  if (j > counts_.size()) throw std::out_of_range("quantile grid: no such edge");
  if (j == 0) return lower_;
  if (j == counts_.size()) return upper_;
  const double value = ToDouble({int128{lower_units_} + int128{EdgeUnits(j)}, unit_exponent_});
  return std::min(std::max(value, lower_), upper_);
}

double QuantileGrid::BinPoint(std::size_t bin) const {
  if (bin >= counts_.size()) throw std::out_of_range("quantile grid: no such bin");
  if (width_units_ == 0) return lower_;
  // (e_i + e_{i+1}) / 2 above lower, in half units: exact.
  const int128 twice =
      2 * int128{lower_units_} + int128{EdgeUnits(bin)} + int128{EdgeUnits(bin + 1)};
  const double value = ToDouble({twice, unit_exponent_ - 1});
  return std::min(std::max(value, lower_), upper_);
}

QuantileUtility QuantileGrid::Utility(double fraction) const {
  CheckFraction(fraction);
  const DyadicFraction f = ToDyadic(fraction);
  QuantileUtility utility;
  utility.fraction_bits = f.bits;
  utility.sensitivity = uint128{1} << f.bits;
  // Everything in units of 2^-bits rows: target = f n < 2^64 2^63, and the
  // rank bounds C 2^bits <= n 2^64 < 2^127, so nothing overflows.
  const uint128 target = f.numerator * static_cast<uint128>(total_);
  utility.scores.reserve(counts_.size());
  uint128 below = 0;  // C_i, rows in bins below i
  for (const std::int64_t count : counts_) {
    const uint128 low = below << f.bits;
    below += static_cast<uint128>(count);
    const uint128 high = below << f.bits;
    const uint128 distance = target < low ? low - target : (target > high ? target - high : 0);
    utility.scores.push_back(-static_cast<int128>(distance));
  }
  return utility;
}

double QuantileGrid::Release(double fraction, double epsilon, RandomSource& rng) const {
  // Parameter checks first, for every state alike: an error must not depend
  // on the data.
  CheckFraction(fraction);
  ValidateEpsilonIsPositive(epsilon);
  if (width_units_ == 0) return lower_;  // lower == upper: the answer is public
  const QuantileUtility utility = Utility(fraction);
  const SelectionScale scale = PlanSelection(utility.sensitivity, epsilon, /*monotonic=*/false);
  return BinPoint(PermuteAndFlip(utility.scores, scale, rng));
}

}  // namespace dp
