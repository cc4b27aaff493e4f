// Speed and timing-independence figures for the exact noise samplers.
// Built and run by test/bench/bench_sampler.sh, once against a baseline
// commit's src/core ("before") and once against the working tree ("after").
// Uses only the public sampler interface, so both builds share this file.
//
// Prints:
//  1. ns per draw (OpenSSL randomness, as in production) for the parameters
//     the mechanisms really use: counts at epsilon 0.05..1, the float-sum grid
//     (scale ~2^40 grid steps), and discrete Gaussian counts and sums;
//  2. the timing-independence tables: single timed draws grouped by |x|
//     bucket (discrete Laplace count at epsilon 0.05; discrete Gaussian count),
//     mean / trimmed mean (+-2 standard errors) / median ns and mean random
//     bytes consumed per bucket. For the Gaussian the number of rejection
//     rounds varies (independently of the value), so bytes vary per draw but
//     their per-bucket mean must not trend.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include "../unit/counting_source.h"
#include "exact_sampler.h"
#include "gaussian_mechanism.h"
#include "laplace_mechanism.h"
#include "random_source.h"

namespace {

using Clock = std::chrono::steady_clock;

using dp_test::CountingSource;

volatile std::int64_t sink;

template <typename Draw>
double NsPerDraw(Draw draw, int n) {
  for (int i = 0; i < n / 10; ++i) sink = static_cast<std::int64_t>(draw());  // warm up
  double best = 1e300;
  for (int rep = 0; rep < 3; ++rep) {
    const auto start = Clock::now();
    for (int i = 0; i < n; ++i) sink = static_cast<std::int64_t>(draw());
    const double ns = std::chrono::duration<double, std::nano>(Clock::now() - start).count() / n;
    best = std::min(best, ns);
  }
  return best;
}

double Scale(const dp::LaplacePlan& p) {
  return static_cast<double>(p.scale_numerator) / static_cast<double>(p.scale_denominator);
}

// Times m single draws and prints mean / trimmed mean / median / bytes per
// bucket of |x|; bucket i holds lows[i] <= |x| < lows[i + 1].
template <typename Draw>
void TimingTable(const char* label, const char* title, int m, std::vector<long> lows,
                 dp::RandomSource& rng, Draw draw) {
  struct Bucket {
    std::vector<double> ns;
    double bytes = 0;
  };
  std::vector<Bucket> buckets(lows.size());
  CountingSource counting(rng);
  for (int i = 0; i < m / 10; ++i) sink = static_cast<std::int64_t>(draw(counting));
  for (int i = 0; i < m; ++i) {
    const std::uint64_t before_bytes = counting.bytes();
    const auto start = Clock::now();
    const dp::int128 x = draw(counting);
    const double ns = std::chrono::duration<double, std::nano>(Clock::now() - start).count();
    const long a = static_cast<long>(x < 0 ? -x : x);
    std::size_t b = lows.size() - 1;
    while (a < lows[b]) --b;
    buckets[b].ns.push_back(ns);
    buckets[b].bytes += static_cast<double>(counting.bytes() - before_bytes);
  }
  std::printf(
      "\n== %s: timing by |noise| bucket, %s, %d single timed draws (clock overhead "
      "included)\n",
      label, title, m);
  // The global 99th percentile: slower draws are those that refilled the
  // RAND_bytes buffer or were interrupted, whatever their value; the trimmed
  // mean leaves them out (their share per bucket is printed).
  std::vector<double> all;
  for (const Bucket& b : buckets) all.insert(all.end(), b.ns.begin(), b.ns.end());
  std::sort(all.begin(), all.end());
  const double cut = all[all.size() * 99 / 100];
  std::printf("%-16s %9s %9s %12s %10s %8s %8s %9s %11s\n", "bucket", "draws", "mean ns",
              "trim.mean ns", "+-2se", "median", "p90", "%>p99", "bytes/draw");
  for (std::size_t i = 0; i < buckets.size(); ++i) {
    Bucket& b = buckets[i];
    if (b.ns.empty()) continue;
    char name[64];
    if (i + 1 == buckets.size()) {
      std::snprintf(name, sizeof name, "|x| >= %ld", lows[i]);
    } else if (lows[i + 1] == lows[i] + 1) {
      std::snprintf(name, sizeof name, "|x| = %ld", lows[i]);
    } else {
      std::snprintf(name, sizeof name, "|x| in %ld..%ld", lows[i], lows[i + 1] - 1);
    }
    double sum = 0, tsum = 0, tsq = 0;
    std::size_t kept = 0;
    for (double v : b.ns) {
      sum += v;
      if (v <= cut) {
        tsum += v;
        tsq += v * v;
        ++kept;
      }
    }
    const double tmean = tsum / kept;
    const double se = std::sqrt((tsq / kept - tmean * tmean) / kept);
    std::sort(b.ns.begin(), b.ns.end());
    std::printf("%-16s %9zu %9.1f %12.2f %10.2f %8.0f %8.0f %8.2f%% %11.2f\n", name, b.ns.size(),
                sum / b.ns.size(), tmean, 2 * se, b.ns[b.ns.size() / 2], b.ns[b.ns.size() * 9 / 10],
                100.0 * (b.ns.size() - kept) / b.ns.size(), b.bytes / b.ns.size());
  }
}

}  // namespace

int main(int argc, char** argv) {
  const char* label = argc > 1 ? argv[1] : "build";
  const int n = argc > 2 ? std::atoi(argv[2]) : 200000;
  dp::OpenSslRandomSource rng;

  std::printf("== %s: ns per draw (OpenSSL RAND_bytes source, best of 3 x %d draws)\n", label, n);
  std::printf("%-44s %14s %10s %12s\n", "case", "scale", "ns/draw", "bytes/draw");
  struct LCase {
    const char* name;
    dp::uint128 sensitivity_units;
    double epsilon;
  };
  const LCase laplace_cases[] = {
      {"laplace count eps=0.05", 1, 0.05},
      {"laplace count eps=0.1", 1, 0.1},
      {"laplace count eps=0.5", 1, 0.5},
      {"laplace count eps=1", 1, 1.0},
      {"laplace float sum grid eps=0.1", dp::uint128{1000} << 52, 0.1},
      {"laplace float sum grid eps=1", dp::uint128{1000} << 52, 1.0},
  };
  for (const LCase& c : laplace_cases) {
    const dp::LaplacePlan plan = dp::PlanLaplace(c.sensitivity_units, c.epsilon);
    const double ns = NsPerDraw(
        [&] {
          return dp::SampleDiscreteLaplace(rng, plan.scale_numerator, plan.scale_denominator);
        },
        n);
    CountingSource counting(rng);
    for (int i = 0; i < 10000; ++i)
      sink = static_cast<std::int64_t>(
          dp::SampleDiscreteLaplace(counting, plan.scale_numerator, plan.scale_denominator));
    std::printf("%-44s %14.4g %10.1f %12.1f\n", c.name, Scale(plan), ns, counting.bytes() / 1e4);
  }
  struct GCase {
    const char* name;
    dp::GaussianPlan plan;
  };
  const GCase gaussian_cases[] = {
      {"gaussian count eps=1 delta=1e-6", dp::PlanGaussianCount(1.0, 1e-6)},
      {"gaussian count eps=0.1 delta=1e-6", dp::PlanGaussianCount(0.1, 1e-6)},
      {"gaussian float sum grid eps=1 delta=1e-6",
       dp::PlanGaussian(dp::uint128{1000} << 52, 1.0, 1e-6)},
  };
  for (const GCase& c : gaussian_cases) {
    const double sigma = std::sqrt(static_cast<double>(c.plan.sigma2_numerator) /
                                   static_cast<double>(c.plan.sigma2_denominator));
    const double ns = NsPerDraw(
        [&] {
          return dp::SampleDiscreteGaussian(rng, c.plan.sigma2_numerator,
                                            c.plan.sigma2_denominator);
        },
        n / 4);
    CountingSource counting(rng);
    for (int i = 0; i < 10000; ++i)
      sink = static_cast<std::int64_t>(
          dp::SampleDiscreteGaussian(counting, c.plan.sigma2_numerator, c.plan.sigma2_denominator));
    std::printf("%-44s %14.4g %10.1f %12.1f\n", c.name, sigma, ns, counting.bytes() / 1e4);
  }

  // Timing independence: one timed draw at a time, grouped by |x|.
  const dp::LaplacePlan plan = dp::PlanLaplace(1, 0.05);
  char title[200];
  std::snprintf(title, sizeof title, "discrete Laplace count eps=0.05 (scale %.4g)", Scale(plan));
  TimingTable(label, title, 10 * n, {0, 1, 11, 51}, rng, [&](dp::RandomSource& r) {
    return dp::SampleDiscreteLaplace(r, plan.scale_numerator, plan.scale_denominator);
  });
  const dp::GaussianPlan gplan = dp::PlanGaussianCount(1.0, 1e-6);
  TimingTable(label, "discrete Gaussian count eps=1 delta=1e-6 (sigma 4.23)", 2 * n, {0, 1, 5, 13},
              rng, [&](dp::RandomSource& r) {
                return dp::SampleDiscreteGaussian(r, gplan.sigma2_numerator,
                                                  gplan.sigma2_denominator);
              });
  return 0;
}
