// Private quantiles without a grid floor: Smith's exponential mechanism over
// the whole range between the bounds (A. Smith, "Privacy-preserving
// statistical estimation with optimal convergence rates", STOC 2011; the
// mechanism behind OpenDP's and Google's quantiles), sampled exactly.
//
// Output space. The candidates are the points of the fixed-point lattice of
// grid_value.h between the bounds: integers y in [L, U] (units of
// 2^unit_exponent, chosen from the public bounds alone; up to 2^63 points,
// i.e. a resolution of 2^-62 of the larger bound). The lattice is public and
// data-independent, so this is the exponential mechanism (McSherry & Talwar
// 2007) over a finite public set with the uniform base measure: Smith's
// continuous mechanism restricted to a lattice far finer than any noise.
//
// Utility. Rows are clamped to [lower, upper] and mapped to the lattice
// (monotone rounding, a public per-row rule). For a candidate y let
// below(y) = #{rows < y} and upto(y) = #{rows <= y}; its rank range is
// [below, upto], and its utility is minus the distance of the target rank
// f n from that range:
//     u(y) = -max(0, below(y) - f n, f n - upto(y)).
// Between data values this is Smith's -|rank - f n|; at a value shared by
// many rows it is 0 whenever f n falls among their ranks, so ties (which
// make Smith's intervals empty) are handled: a lattice point holding the
// quantile has the best utility.
// Sensitivity max(f, 1 - f), not 1. Adding a row x raises n by 1 and f n
// by f, and raises below(y) and upto(y) by 0 or 1 each. So below - f n
// changes by a - f with a in {0, 1}, f n - upto by f - b with b in {0, 1}:
// each by at most max(f, 1 - f) in absolute value, as does the constant 0,
// and so does their maximum. Removing a row is the reverse. (For the median
// that halves the noise of a sensitivity-1 analysis.) The utility is not
// monotonic (adding a row above y lowers below - f n), so the standard
// exponential mechanism with exp(epsilon u / (2 Delta)) applies.
//
// Mechanism. P[y] proportional to exp(-min(lambda d(y), kSmithExponentCap)),
// d(y) = -u(y) >= 0, lambda = epsilon' / (2 Delta) rounded down to a dyadic
// rational (selection.h's PlanSelection, epsilon' = epsilon rounded down to
// 24 bits): an exponential mechanism with some epsilon'' <= epsilon. The
// cap is the exponential mechanism run on the clamped utility
// max(u(y), -T) with the public T = kSmithExponentCap / lambda; clamping at a
// public constant keeps the sensitivity (a maximum of quantities that each
// change by at most Delta). So the release is epsilon-DP (McSherry-Talwar
// Theorem 6, add/remove one row). The cap changes the distribution only for
// points whose weight is below e^-64 relative to the best point's, and it
// bounds the work (below).
//
// Exact sampling. The lattice splits into blocks of consecutive points with
// the same utility: the gaps between distinct data values, each data value
// itself, and the two ends; consecutive capped blocks are merged (same
// weight). A block b of length l_b and exponent a_b has total weight
// l_b exp(-a_b). The block is drawn by inversion with rigorous arithmetic: the
// cumulative weights are enclosed in intervals computed with MPFR under
// directed rounding (a_b is an exact dyadic rational, so exp(-a_b) is
// enclosed by correctly rounded exp), a uniform V in [0, 1) is read bit by
// bit, and block b is returned once [V, V + 2^-bits) times the total is
// certified to lie between the enclosures of S_(b-1) and S_b; otherwise 64
// more bits of V are drawn and the precision raised by 64 bits (probability
// about blocks * 2^-70 per round; ends with probability 1, since the
// enclosures shrink to the exact values and V hits a boundary with
// probability 0). So P[block b] = l_b exp(-a_b) / sum exactly. The point is
// then first_b + a uniform integer below l_b (exact rejection sampling).
// No floating-point value decides anything.
//
// The released double is the nearest double to y 2^unit_exponent, clamped to
// the bounds: a fixed function of the DP output y (post-processing). Its low
// bits therefore reveal nothing beyond y, unlike Mironov's (CCS 2012) attack
// on noise computed in floating point, where the rounding is applied to a
// data-dependent sum before the output is formed.
//
// Cost. Memory: 8 bytes per row (the state keeps every clamped value, like
// percentile_cont's sort), so it grows with the group's rows (QuantileGrid,
// quantile.h, has bounded memory with its bin-width floor, but SQL does not
// reach it: it is kept as the benchmark's baseline).
// Time: O(n log n) for the sort plus O(n) for the blocks; the MPFR work is
// only for the uncapped blocks (one or two directed-rounding products each:
// every uncapped distance is k + phi rows for an integer k and one of two
// public-given-n offsets phi, so exp(-lambda d) = E^k exp(-lambda phi) with
// E = exp(-lambda), and E^k is enclosed by repeated directed multiplication), at most about 4 T + 6
// of them (T = kSmithExponentCap * 2 Delta / epsilon rows on each side of the target rank),
// independent of n. Timing is not constant: it grows with n, and the block count depends on how
// many distinct values lie within T ranks of the target.
#ifndef DP_AGG_CORE_CONTINUOUS_QUANTILE_H
#define DP_AGG_CORE_CONTINUOUS_QUANTILE_H

#include <cstddef>
#include <cstdint>
#include <vector>

#include "random_source.h"
#include "selection.h"

namespace dp {

inline constexpr unsigned kSmithExponentCap = 64;

// A run of consecutive lattice points [first, first + length) with the same
// utility -distance (in units of 2^-fraction_bits rows). `capped` when
// lambda * distance >= kSmithExponentCap (then the weight per point is
// exp(-kSmithExponentCap)).
struct SmithBlock {
  std::int64_t first = 0;
  uint128 length = 0;
  uint128 distance = 0;
  bool capped = false;
  bool above_target = false;  // distance = rank - f n (else f n - rank)
};

struct SmithBlocks {
  std::vector<SmithBlock> blocks;  // in lattice order, none empty
  SelectionScale scale;  // lambda
  uint128 sensitivity = 0;  // max(f, 1 - f) in units of 2^-fraction_bits rows
  int fraction_bits = 0;
  uint128 target = 0;  // f n in units of 2^-fraction_bits rows
};

// The blocks for rows given as sorted lattice points (each in
// [lower_units, upper_units]), fraction in [0, 1] and epsilon > 0.
// Throws InvalidParameter for a bad fraction or epsilon, std::invalid_argument
// for unsorted or out-of-range rows or lower_units > upper_units.
SmithBlocks BuildSmithBlocks(const std::vector<std::int64_t>& sorted_units,
                             std::int64_t lower_units, std::int64_t upper_units, double fraction,
                             double epsilon);
// The same over an array of `rows` sorted points (the PostgreSQL state's
// storage, so that the final function needs no second copy of the rows).
SmithBlocks BuildSmithBlocks(const std::int64_t* sorted_units, std::size_t rows,
                             std::int64_t lower_units, std::int64_t upper_units, double fraction,
                             double epsilon);

// Draws from the blocks: the enclosures of the cumulative weights at the
// base precision are computed once (a few microseconds per block), so that
// repeated draws (tests, benchmarks) cost only a binary search each.
class SmithSampler {
 public:
  explicit SmithSampler(SmithBlocks blocks);
  ~SmithSampler();
  SmithSampler(const SmithSampler&) = delete;
  SmithSampler& operator=(const SmithSampler&) = delete;

  // Index of a block drawn with probability proportional to
  // length * exp(-min(lambda distance, kSmithExponentCap)), exactly (see above).
  std::size_t SampleBlock(RandomSource& rng) const;
  // A lattice point: a block as above, then a uniform point in it.
  std::int64_t SamplePoint(RandomSource& rng) const;

  const SmithBlocks& blocks() const { return blocks_; }

 private:
  SmithBlocks blocks_;
  struct Enclosures;
  Enclosures* base_ = nullptr;  // at the base precision
};

// The mechanism on the lattice: a lattice point in [lower_units, upper_units].
std::int64_t ReleaseSmithUnits(const std::vector<std::int64_t>& sorted_units,
                               std::int64_t lower_units, std::int64_t upper_units, double fraction,
                               double epsilon, RandomSource& rng);

// The public lattice of a pair of bounds, for callers that keep the rows in
// their own storage (the PostgreSQL state): the same rule as SmithQuantile.
struct SmithLattice {
  double lower = 0;
  double upper = 0;
  int unit_exponent = 0;
  double unit_scale = 0;
  std::int64_t lower_units = 0;
  std::int64_t upper_units = 0;
};
// Throws InvalidParameter unless lower and upper are finite, lower <= upper.
SmithLattice MakeSmithLattice(double lower, double upper);
// The lattice point of a row: clamped to the bounds, then ToUnits (monotone).
// The caller drops NaN first.
std::int64_t SmithPointOf(const SmithLattice& lattice, double value) noexcept;
// The epsilon-DP `fraction` quantile of `rows` points of `lattice` (each in
// [lower_units, upper_units]), sorting them in place; in [lower, upper].
double ReleaseSmithQuantile(const SmithLattice& lattice, std::int64_t* points, std::size_t rows,
                            double fraction, double epsilon, RandomSource& rng);

// Rows of one group, kept as lattice points.
class SmithQuantile {
 public:
  // Throws InvalidParameter unless lower and upper are finite, lower <= upper.
  SmithQuantile(double lower, double upper);

  // NaN is ignored; anything else (infinities included) is clamped.
  void Add(double value);
  // Adds the rows of `other` (same bounds, else std::invalid_argument).
  void Merge(const SmithQuantile& other);

  // The epsilon-DP estimate of the `fraction` quantile, in [lower, upper].
  // Sorts the kept rows (hence not const).
  double Release(double fraction, double epsilon, RandomSource& rng);

  std::size_t rows() const { return units_.size(); }
  std::size_t MemoryBytes() const { return units_.capacity() * sizeof(std::int64_t); }
  int unit_exponent() const { return unit_exponent_; }
  std::int64_t lower_units() const { return lower_units_; }
  std::int64_t upper_units() const { return upper_units_; }
  const std::vector<std::int64_t>& units() const { return units_; }

 private:
  double lower_;
  double upper_;
  int unit_exponent_ = 0;
  double unit_scale_ = 0;
  std::int64_t lower_units_ = 0;
  std::int64_t upper_units_ = 0;
  std::vector<std::int64_t> units_;
};

}  // namespace dp

#endif  // DP_AGG_CORE_CONTINUOUS_QUANTILE_H
