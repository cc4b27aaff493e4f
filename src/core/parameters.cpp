#include "parameters.h"

#include <cmath>
#include <cstdio>

namespace dp {

namespace {
std::string Format(const char* format, double a, double b = 0.0) {
  char buffer[160];
  std::snprintf(buffer, sizeof buffer, format, a, b);
  return buffer;
}
}  // namespace

const char* const kEpsilonHint =
    "epsilon is the privacy cost of this aggregate: a positive number such as 0.1 "
    "(strong privacy) or 1 (moderate privacy).";

void ValidateEpsilonIsPositive(double epsilon) {
  if (!std::isfinite(epsilon) || !(epsilon > 0.0))
    throw InvalidParameter(Format("epsilon must be a positive finite number, not %g", epsilon),
                           kEpsilonHint);
}

void ValidateEpsilon(double epsilon, double max_epsilon) {
  const char* hint = kEpsilonHint;
  ValidateEpsilonIsPositive(epsilon);
  if (epsilon < kMinEpsilon)
    throw InvalidParameter(
        Format("epsilon %g is below the smallest supported value %g", epsilon, kMinEpsilon), hint);
  if (epsilon > max_epsilon)
    throw InvalidParameter(
        Format("epsilon %g exceeds the maximum allowed by dp_agg.max_epsilon (%g)", epsilon,
               max_epsilon),
        "Use a smaller epsilon: larger values give almost no privacy. Only a superuser can "
        "change dp_agg.max_epsilon.");
}

void ValidateDeltaAtMost(double delta, double max_delta) {
  if (delta > max_delta)
    throw InvalidParameter(
        Format("delta %g exceeds the maximum allowed by dp_agg.max_delta (%g)", delta, max_delta),
        "delta is the probability that the epsilon guarantee fails: use a smaller one, far "
        "below 1 / (number of rows). Only a superuser can change dp_agg.max_delta.");
}

void ValidateBounds(double lower, double upper) {
  if (!std::isfinite(lower) || !std::isfinite(upper))
    throw InvalidParameter(Format("bounds must be finite numbers, not [%g, %g]", lower, upper),
                           "Give finite lower and upper bounds that every value is clamped to.");
  if (lower > upper)
    throw InvalidParameter(
        Format("lower bound %.17g is greater than upper bound %.17g", lower, upper),
        "The arguments are (value, lower, upper, epsilon); pass the smaller bound first.");
}

void ValidateBounds(std::int64_t lower, std::int64_t upper) {
  if (lower > upper)
    throw InvalidParameter(
        "lower bound " + std::to_string(lower) + " is greater than upper bound " +
            std::to_string(upper),
        "The arguments are (value, lower, upper, epsilon); pass the smaller bound first.");
}

void ValidateFraction(double fraction) {
  if (!(fraction >= 0.0 && fraction <= 1.0))
    throw InvalidParameter("fraction must lie in [0, 1]",
                           "The fraction is the quantile to estimate: 0.5 for the median, "
                           "0.9 for the 90th percentile.");
}

}  // namespace dp
