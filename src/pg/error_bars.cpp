// dp_count_margin and dp_sum_margin: the half-width of a confidence interval
// for a dp_count / dp_sum answer, from the public parameters alone, so that
// an analyst can put error bars next to an answer at no privacy cost:
//   SELECT dp_sum(x, 0, 100, 0.5) AS total, dp_sum_margin(0, 100, 0.5) AS margin FROM t;
// The margins are exact quantiles of the released noise (coverage at least
// the level, see core/confidence.h).
#include <algorithm>
#include <cmath>

#include "../core/confidence.h"
#include "../core/gaussian_mechanism.h"
#include "../core/grid_value.h"
#include "../core/noise_mechanism.h"
#include "../core/parameters.h"
#include "../core/private_statistics.h"
#include "error_boundary.h"
#include "pg_includes.h"
#include "settings.h"

namespace dp_pg {
namespace {

struct MarginParameters {
  dp::PublicParameters values;
  dp::PrivacyParameters effective;  // the values the aggregates use
};

// epsilon, delta (0: the Laplace aggregate) and confidence from arguments
// first .. first + 2, validated by the aggregates' own path (the cap on
// delta is not applied: a margin releases nothing), with dp_sum_margin's
// bounds when `bounds` is given.
MarginParameters ReadMarginParameters(FunctionCallInfo fcinfo, int first,
                                      const double* bounds = nullptr) {
  for (int i = first; i < first + 3; ++i) {
    if (PG_ARGISNULL(i))
      ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                      errmsg("epsilon, delta and confidence must not be NULL")));
  }
  MarginParameters parameters;
  parameters.values.epsilon = PG_GETARG_FLOAT8(first);
  parameters.values.delta = PG_GETARG_FLOAT8(first + 1);
  parameters.values.has_delta = parameters.values.delta != 0;
  parameters.values.has_confidence = true;
  parameters.values.confidence = PG_GETARG_FLOAT8(first + 2);
  if (bounds != nullptr) {
    parameters.values.has_bounds = true;
    parameters.values.lower = bounds[0];
    parameters.values.upper = bounds[1];
  }
  dp::PrivacyLimits limits;
  limits.max_epsilon = max_epsilon;
  parameters.effective =
      CallCore([&] { return dp::ValidatePublicParameters(parameters.values, limits); });
  return parameters;
}

// Half-width for a statistic of sensitivity `sensitivity_units` in units of
// 2^unit_exponent, released as dp_count / dp_sum would.
double Margin(dp::uint128 sensitivity_units, int unit_exponent, const MarginParameters& p) {
  return dp::MechanismBuilder()
      .SetEpsilon(p.effective.epsilon)
      .SetDelta(p.effective.delta)
      .SetSensitivityUnits(sensitivity_units)
      .Build()
      .Interval(unit_exponent, p.values.confidence)
      .half_width_value;
}

}  // namespace
}  // namespace dp_pg

extern "C" {

PG_FUNCTION_INFO_V1(dp_count_margin);
Datum dp_count_margin(PG_FUNCTION_ARGS) {
  const dp_pg::MarginParameters parameters = dp_pg::ReadMarginParameters(fcinfo, 0);
  PG_RETURN_FLOAT8(dp_pg::CallCore([&] { return dp_pg::Margin(1, 0, parameters); }));
}

// dp_sum releases integer columns in units of 1 and float or numeric columns
// in fixed point; the margin is the larger of the two, so it holds whichever
// type the sum was over.
PG_FUNCTION_INFO_V1(dp_sum_margin);
Datum dp_sum_margin(PG_FUNCTION_ARGS) {
  if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("lower and upper bounds must not be NULL")));
  const double lower = PG_GETARG_FLOAT8(0);
  const double upper = PG_GETARG_FLOAT8(1);
  const double bounds[2] = {lower, upper};
  const dp_pg::MarginParameters parameters = dp_pg::ReadMarginParameters(fcinfo, 2, bounds);
  PG_RETURN_FLOAT8(dp_pg::CallCore([&] {
    const int unit_exponent = dp::ChooseUnitExponent(lower, upper);
    const dp::uint128 float_sensitivity =
        dp::SumSensitivity(dp::ToUnits(lower, unit_exponent), dp::ToUnits(upper, unit_exponent));
    double margin = dp_pg::Margin(float_sensitivity, unit_exponent, parameters);
    constexpr double kTwoTo62 = 4611686018427387904.0;
    const bool integer_bounds = std::floor(lower) == lower && std::floor(upper) == upper &&
                                std::fabs(lower) < kTwoTo62 && std::fabs(upper) < kTwoTo62;
    if (integer_bounds) {
      const dp::uint128 integer_sensitivity =
          dp::SumSensitivity(static_cast<std::int64_t>(lower), static_cast<std::int64_t>(upper));
      margin = std::max(margin, dp_pg::Margin(integer_sensitivity, 0, parameters));
    }
    return margin;
  }));
}

}  // extern "C"
