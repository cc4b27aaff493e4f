// Validation of the public parameters of a private aggregate. These checks
// read only the query's own values (epsilon, bounds), never the data, so that
// whether an error happens reveals nothing about the table.
#ifndef DP_AGG_CORE_PARAMETERS_H
#define DP_AGG_CORE_PARAMETERS_H

#include <cstdint>
#include <stdexcept>
#include <string>

namespace dp {

// A parameter the caller chose is unusable. Carries a hint for the user.
class InvalidParameter : public std::invalid_argument {
 public:
  InvalidParameter(const std::string& message, std::string hint)
      : std::invalid_argument(message), hint_(std::move(hint)) {}
  const std::string& hint() const { return hint_; }

 private:
  std::string hint_;
};

// Below this, an exact noise scale no longer fits the samplers' integers; such
// an epsilon would drown any statistic anyway. Google's library has the same
// floor.
inline constexpr double kMinEpsilon = 8.8817841970012523e-16;  // 2^-50

// epsilon must be finite and positive (the mechanisms' own precondition).
void ValidateEpsilonIsPositive(double epsilon);

// epsilon must be finite, at least kMinEpsilon, and at most max_epsilon.
void ValidateEpsilon(double epsilon, double max_epsilon);

// delta (already a valid probability) must not exceed max_delta.
void ValidateDeltaAtMost(double delta, double max_delta);

// Bounds must be finite with lower <= upper.
void ValidateBounds(double lower, double upper);
void ValidateBounds(std::int64_t lower, std::int64_t upper);

// A quantile's fraction must lie in [0, 1] (NaN refused).
void ValidateFraction(double fraction);

}  // namespace dp

#endif  // DP_AGG_CORE_PARAMETERS_H
