#include "continuous_quantile.h"

#include <gmp.h>
#include <mpfr.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <utility>

#include "grid_value.h"
#include "parameters.h"
#include "quantile.h"

namespace dp {

namespace {

void SetMpz(mpz_ptr out, uint128 value) {
  mpz_set_ui(out, static_cast<unsigned long>(static_cast<std::uint64_t>(value >> 64)));
  mpz_mul_2exp(out, out, 64);
  mpz_add_ui(out, out, static_cast<unsigned long>(static_cast<std::uint64_t>(value)));
}

uint128 Distance(uint128 a, uint128 b) { return a > b ? a - b : b - a; }

// A vector of MPFR numbers (mpfr_t is an array type, so no std::vector of it).
class MpfrArray {
 public:
  MpfrArray(std::size_t size, mpfr_prec_t precision) : values_(size) {
    for (auto& v : values_) mpfr_init2(&v, precision);
  }
  ~MpfrArray() {
    for (auto& v : values_) mpfr_clear(&v);
  }
  MpfrArray(const MpfrArray&) = delete;
  MpfrArray& operator=(const MpfrArray&) = delete;
  mpfr_ptr operator[](std::size_t i) { return &values_[i]; }

 private:
  std::vector<__mpfr_struct> values_;
};

class Mpfr {
 public:
  explicit Mpfr(mpfr_prec_t precision) { mpfr_init2(value_, precision); }
  ~Mpfr() { mpfr_clear(value_); }
  Mpfr(const Mpfr&) = delete;
  Mpfr& operator=(const Mpfr&) = delete;
  mpfr_ptr get() { return value_; }

 private:
  mpfr_t value_;
};

class Mpz {
 public:
  Mpz() { mpz_init(value_); }
  ~Mpz() { mpz_clear(value_); }
  Mpz(const Mpz&) = delete;
  Mpz& operator=(const Mpz&) = delete;
  mpz_ptr get() { return value_; }

 private:
  mpz_t value_;
};

// Enclosure [low, high] of exp(-lambda v) for v >= 0 in the distance units
// (2^-bits rows): the exponent multiplier * v * 2^-shift (< 2^193 before the
// shift) is exact in 256 bits, and MPFR's exp is correctly rounded in the
// direction asked.
void EncloseExp(const SmithBlocks& sb, uint128 value, mpfr_ptr low, mpfr_ptr high) {
  Mpfr exponent(256);
  Mpz product, multiplier;
  SetMpz(multiplier.get(), sb.scale.multiplier);
  SetMpz(product.get(), value);
  mpz_mul(product.get(), product.get(), multiplier.get());
  mpfr_set_z(exponent.get(), product.get(), MPFR_RNDN);  // exact
  mpfr_div_2si(exponent.get(), exponent.get(), sb.scale.shift, MPFR_RNDN);  // exact
  mpfr_neg(exponent.get(), exponent.get(), MPFR_RNDN);
  mpfr_exp(low, exponent.get(), MPFR_RNDD);
  mpfr_exp(high, exponent.get(), MPFR_RNDU);
}

// Enclosures of the cumulative weights S_b = sum_{j <= b} l_j exp(-a_j) at a
// working precision. An uncapped distance d (units of 2^-bits rows) is
// either 0 or k 2^bits + phi with phi = phi_up = (-target) mod 2^bits (d at
// or above the target) or phi = phi_down = target mod 2^bits (below it); its
// weight factor exp(-lambda d) = E^k exp(-lambda phi), E = exp(-lambda 2^bits),
// with E^k enclosed by products rounded down and up.
void Enclose(const SmithBlocks& sb, mpfr_prec_t precision, MpfrArray& low, MpfrArray& high) {
  const uint128 one = uint128{1} << sb.fraction_bits;
  const uint128 mask = one - 1;
  const uint128 phi_down = sb.target & mask;
  const uint128 phi_up = (one - phi_down) & mask;
  Mpfr base_up_low(precision), base_up_high(precision), base_down_low(precision),
      base_down_high(precision), step_low(precision), step_high(precision), capped_low(precision),
      capped_high(precision);
  EncloseExp(sb, phi_up, base_up_low.get(), base_up_high.get());
  EncloseExp(sb, phi_down, base_down_low.get(), base_down_high.get());
  EncloseExp(sb, one, step_low.get(), step_high.get());
  {
    Mpfr cap(64);
    mpfr_set_si(cap.get(), -static_cast<long>(kSmithExponentCap), MPFR_RNDN);
    mpfr_exp(capped_low.get(), cap.get(), MPFR_RNDD);
    mpfr_exp(capped_high.get(), cap.get(), MPFR_RNDU);
  }
  // E^k for k = 0, 1, ...: grown on demand.
  std::vector<std::pair<std::shared_ptr<Mpfr>, std::shared_ptr<Mpfr>>> powers;
  auto power = [&](std::size_t k, bool want_high) -> mpfr_ptr {
    while (powers.size() <= k) {
      auto lo = std::make_shared<Mpfr>(precision), hi = std::make_shared<Mpfr>(precision);
      if (powers.empty()) {
        mpfr_set_ui(lo->get(), 1, MPFR_RNDN);
        mpfr_set_ui(hi->get(), 1, MPFR_RNDN);
      } else {
        mpfr_mul(lo->get(), powers.back().first->get(), step_low.get(), MPFR_RNDD);
        mpfr_mul(hi->get(), powers.back().second->get(), step_high.get(), MPFR_RNDU);
      }
      powers.emplace_back(lo, hi);
    }
    return want_high ? powers[k].second->get() : powers[k].first->get();
  };
  Mpfr weight_low(precision), weight_high(precision);
  Mpz length;
  for (std::size_t b = 0; b < sb.blocks.size(); ++b) {
    const SmithBlock& block = sb.blocks[b];
    if (block.capped) {
      mpfr_set(weight_low.get(), capped_low.get(), MPFR_RNDD);
      mpfr_set(weight_high.get(), capped_high.get(), MPFR_RNDU);
    } else if (block.distance == 0) {
      mpfr_set_ui(weight_low.get(), 1, MPFR_RNDN);
      mpfr_set_ui(weight_high.get(), 1, MPFR_RNDN);
    } else {
      // Which family: the block's rank range lies above the target when
      // d = (rank - target) with rank 2^bits-aligned, i.e. d = phi_up mod 2^bits.
      const bool up = block.above_target;
      const uint128 phi = up ? phi_up : phi_down;
      if (block.distance < phi || ((block.distance - phi) & mask) != 0)
        throw std::logic_error("Smith quantile: distance outside its family");
      const std::size_t k = static_cast<std::size_t>((block.distance - phi) >> sb.fraction_bits);
      mpfr_mul(weight_low.get(), power(k, false), up ? base_up_low.get() : base_down_low.get(),
               MPFR_RNDD);
      mpfr_mul(weight_high.get(), power(k, true), up ? base_up_high.get() : base_down_high.get(),
               MPFR_RNDU);
    }
    SetMpz(length.get(), block.length);
    mpfr_mul_z(weight_low.get(), weight_low.get(), length.get(), MPFR_RNDD);
    mpfr_mul_z(weight_high.get(), weight_high.get(), length.get(), MPFR_RNDU);
    if (b == 0) {
      mpfr_set(low[b], weight_low.get(), MPFR_RNDD);
      mpfr_set(high[b], weight_high.get(), MPFR_RNDU);
    } else {
      mpfr_add(low[b], low[b - 1], weight_low.get(), MPFR_RNDD);
      mpfr_add(high[b], high[b - 1], weight_high.get(), MPFR_RNDU);
    }
  }
}

}  // namespace

SmithBlocks BuildSmithBlocks(const std::vector<std::int64_t>& sorted_units,
                             std::int64_t lower_units, std::int64_t upper_units, double fraction,
                             double epsilon) {
  return BuildSmithBlocks(sorted_units.data(), sorted_units.size(), lower_units, upper_units,
                          fraction, epsilon);
}

SmithBlocks BuildSmithBlocks(const std::int64_t* sorted_units, std::size_t rows,
                             std::int64_t lower_units, std::int64_t upper_units, double fraction,
                             double epsilon) {
  CheckFraction(fraction);
  ValidateEpsilonIsPositive(epsilon);
  if (lower_units > upper_units) throw std::invalid_argument("Smith quantile: lower > upper");
  const DyadicFraction f = ToDyadic(fraction);
  SmithBlocks result;
  result.fraction_bits = f.bits;
  const uint128 one = uint128{1} << f.bits;
  // max(f, 1 - f) in units of 2^-bits rows; >= one / 2 > 0.
  result.sensitivity = std::max(f.numerator, one - f.numerator);
  result.scale = PlanSelection(result.sensitivity, epsilon, /*monotonic=*/false);

  // The smallest capped distance: ceil(cap 2^shift / multiplier).
  uint128 cap_distance = ~uint128{0};
  bool cap_reachable = false;
  {
    Mpz numerator, multiplier, quotient;
    mpz_set_ui(numerator.get(), kSmithExponentCap);
    if (result.scale.shift >= 0) {
      mpz_mul_2exp(numerator.get(), numerator.get(), static_cast<mp_bitcnt_t>(result.scale.shift));
      SetMpz(multiplier.get(), result.scale.multiplier);
    } else {
      SetMpz(multiplier.get(), result.scale.multiplier);
      mpz_mul_2exp(multiplier.get(), multiplier.get(),
                   static_cast<mp_bitcnt_t>(-result.scale.shift));
    }
    mpz_cdiv_q(quotient.get(), numerator.get(), multiplier.get());
    if (mpz_sizeinbase(quotient.get(), 2) <= 127) {
      cap_reachable = true;
      cap_distance = 0;
      for (std::size_t i = mpz_size(quotient.get()); i-- > 0;)
        cap_distance =
            (cap_distance << 64) | mpz_getlimbn(quotient.get(), static_cast<mp_size_t>(i));
    }
  }

  const std::size_t n = rows;
  const uint128 target = f.numerator * static_cast<uint128>(n);
  result.target = target;
  // rank_above: the rank (2^bits-aligned) whose distance from the target this
  // is lies above the target (distance = rank - target), else below.
  auto push = [&](std::int64_t first, uint128 length, uint128 distance, bool rank_above) {
    if (length == 0) return;
    const bool capped = cap_reachable && distance >= cap_distance;
    if (capped && !result.blocks.empty() && result.blocks.back().capped) {
      result.blocks.back().length += length;  // adjacent, same weight per point
      return;
    }
    result.blocks.push_back(SmithBlock{first, length, distance, capped, rank_above});
  };
  std::int64_t next = lower_units;  // first lattice point not yet in a block
  std::size_t i = 0;
  while (i < n) {
    const std::int64_t z = sorted_units[i];
    if (z < next || z > upper_units)
      throw std::invalid_argument("Smith quantile: rows must be sorted and within the bounds");
    std::size_t j = i;
    while (j < n && sorted_units[j] == z) ++j;
    const uint128 below = static_cast<uint128>(i) << f.bits;
    const uint128 upto = static_cast<uint128>(j) << f.bits;
    // The gap [next, z): below = upto = i rows.
    push(next, static_cast<uint128>(z - next), Distance(below, target), below >= target);
    // The point z: rank range [i, j].
    const uint128 point_distance =
        target < below ? below - target : (target > upto ? target - upto : 0);
    push(z, 1, point_distance, target < below);
    next = z + 1;
    i = j;
  }
  if (n == 0 || next <= upper_units) {
    const uint128 all = static_cast<uint128>(n) << f.bits;
    push(next, static_cast<uint128>(int128{upper_units} - int128{next} + 1), Distance(all, target),
         all >= target);
  }
  return result;
}

struct SmithSampler::Enclosures {
  Enclosures(const SmithBlocks& sb, mpfr_prec_t p)
      : precision(p), low(sb.blocks.size(), p), high(sb.blocks.size(), p) {
    Enclose(sb, p, low, high);
  }
  mpfr_prec_t precision;
  MpfrArray low;
  MpfrArray high;
};

namespace {

constexpr mpfr_prec_t kBasePrecision = 128;

// The block of V in [v 2^-bits, (v + 1) 2^-bits) if certified by the
// enclosures, or m (ambiguous).
std::size_t Locate(MpfrArray& low, MpfrArray& high, std::size_t m, mpfr_prec_t precision, mpz_ptr v,
                   unsigned long bits) {
  // V S lies in [v 2^-bits S_low, (v + 1) 2^-bits S_high].
  Mpfr target_low(precision + 64), target_high(precision + 64);
  Mpz v_next;
  mpz_add_ui(v_next.get(), v, 1);
  mpfr_mul_z(target_low.get(), low[m - 1], v, MPFR_RNDD);
  mpfr_div_2ui(target_low.get(), target_low.get(), bits, MPFR_RNDD);
  mpfr_mul_z(target_high.get(), high[m - 1], v_next.get(), MPFR_RNDU);
  mpfr_div_2ui(target_high.get(), target_high.get(), bits, MPFR_RNDU);
  // First b with S_low[b] > target_high.
  std::size_t lo = 0, hi = m;
  while (lo < hi) {
    const std::size_t mid = lo + (hi - lo) / 2;
    if (mpfr_greater_p(low[mid], target_high.get())) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  if (lo < m && (lo == 0 || mpfr_lessequal_p(high[lo - 1], target_low.get()))) return lo;
  return m;
}

}  // namespace

SmithSampler::SmithSampler(SmithBlocks blocks) : blocks_(std::move(blocks)) {
  if (blocks_.blocks.empty()) throw std::invalid_argument("Smith quantile: no blocks");
  if (blocks_.blocks.size() > 1) base_ = new Enclosures(blocks_, kBasePrecision);
}

SmithSampler::~SmithSampler() { delete base_; }

std::size_t SmithSampler::SampleBlock(RandomSource& rng) const {
  const std::size_t m = blocks_.blocks.size();
  if (m == 1) return 0;
  unsigned long bits = 80;
  Mpz v;
  {
    unsigned char bytes[10];
    rng.Fill(bytes, sizeof bytes);
    mpz_import(v.get(), sizeof bytes, -1, 1, 0, 0, bytes);  // 80 uniform bits
  }
  std::size_t found = Locate(base_->low, base_->high, m, base_->precision, v.get(), bits);
  mpfr_prec_t precision = kBasePrecision;
  for (int round = 0; found == m; ++round) {
    // Ambiguous: 64 more bits of V and 64 more bits of precision.
    if (round > 200) throw std::runtime_error("Smith quantile: sampler did not settle");
    mpz_mul_2exp(v.get(), v.get(), 64);
    mpz_add_ui(v.get(), v.get(), static_cast<unsigned long>(rng.NextUint64()));
    bits += 64;
    precision += 64;
    Enclosures finer(blocks_, precision);
    found = Locate(finer.low, finer.high, m, precision, v.get(), bits);
  }
  return found;
}

std::int64_t SmithSampler::SamplePoint(RandomSource& rng) const {
  const SmithBlock& block = blocks_.blocks[SampleBlock(rng)];
  return static_cast<std::int64_t>(int128{block.first} +
                                   static_cast<int128>(rng.UniformBelow128(block.length)));
}

std::int64_t ReleaseSmithUnits(const std::vector<std::int64_t>& sorted_units,
                               std::int64_t lower_units, std::int64_t upper_units, double fraction,
                               double epsilon, RandomSource& rng) {
  const SmithSampler sampler(
      BuildSmithBlocks(sorted_units, lower_units, upper_units, fraction, epsilon));
  return sampler.SamplePoint(rng);
}

SmithLattice MakeSmithLattice(double lower, double upper) {
  ValidateBounds(lower, upper);
  SmithLattice lattice;
  lattice.lower = lower;
  lattice.upper = upper;
  lattice.unit_exponent = ChooseUnitExponent(lower, upper);
  lattice.unit_scale = UnitScale(lattice.unit_exponent);
  lattice.lower_units = ToUnits(lower, lattice.unit_exponent, lattice.unit_scale);
  lattice.upper_units = ToUnits(upper, lattice.unit_exponent, lattice.unit_scale);
  return lattice;
}

std::int64_t SmithPointOf(const SmithLattice& lattice, double value) noexcept {
  const double clamped = std::min(std::max(value, lattice.lower), lattice.upper);
  return ToUnits(clamped, lattice.unit_exponent, lattice.unit_scale);
}

double ReleaseSmithQuantile(const SmithLattice& lattice, std::int64_t* points, std::size_t rows,
                            double fraction, double epsilon, RandomSource& rng) {
  CheckFraction(fraction);
  ValidateEpsilonIsPositive(epsilon);
  if (lattice.lower_units == lattice.upper_units) return lattice.lower;  // public answer
  std::sort(points, points + rows);
  const SmithSampler sampler(
      BuildSmithBlocks(points, rows, lattice.lower_units, lattice.upper_units, fraction, epsilon));
  const std::int64_t y = sampler.SamplePoint(rng);
  const double value = ToDouble(GridValue{y, lattice.unit_exponent});
  return std::min(std::max(value, lattice.lower), lattice.upper);
}

SmithQuantile::SmithQuantile(double lower, double upper) : lower_(lower), upper_(upper) {
  ValidateBounds(lower, upper);
  unit_exponent_ = ChooseUnitExponent(lower, upper);
  unit_scale_ = UnitScale(unit_exponent_);
  lower_units_ = ToUnits(lower, unit_exponent_, unit_scale_);
  upper_units_ = ToUnits(upper, unit_exponent_, unit_scale_);
}

void SmithQuantile::Add(double value) {
  if (std::isnan(value)) return;
  const double clamped = std::min(std::max(value, lower_), upper_);
  // ToUnits is monotone: lower <= clamped <= upper maps into [lower_units, upper_units].
  units_.push_back(ToUnits(clamped, unit_exponent_, unit_scale_));
}

void SmithQuantile::Merge(const SmithQuantile& other) {
  if (other.lower_ != lower_ || other.upper_ != upper_)
    throw std::invalid_argument("Smith quantile states with different bounds cannot be merged");
  units_.insert(units_.end(), other.units_.begin(), other.units_.end());
}

double SmithQuantile::Release(double fraction, double epsilon, RandomSource& rng) {
  CheckFraction(fraction);
  ValidateEpsilonIsPositive(epsilon);
  if (lower_units_ == upper_units_) return lower_;  // one lattice point: the answer is public
  std::sort(units_.begin(), units_.end());
  const std::int64_t y =
      ReleaseSmithUnits(units_, lower_units_, upper_units_, fraction, epsilon, rng);
  const double value = ToDouble(GridValue{y, unit_exponent_});
  return std::min(std::max(value, lower_), upper_);
}

}  // namespace dp
