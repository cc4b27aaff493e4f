// Randomized response for local differential privacy (core/randomized_response.h):
//  * dp_agg.randomized_response(answer, epsilon): the answer an application
//    stores for a respondent, randomized once at collection time;
//  * the final functions of dp_rr_proportion / dp_rr_proportion_se, the
//    unbiased estimate of the true proportion from stored randomized answers
//    and its standard error.
// Nothing here is charged: the privacy of each answer was spent when it was
// randomized, and what the aggregates read is already private. Over
// protected tables restricted roles may call neither (the judge refuses any
// function of protected rows outside dp_agg's private aggregates): a
// randomized value of a protected column would be a release nothing charged.
#include <cmath>

#include "../core/randomized_response.h"
#include "error_boundary.h"
#include "pg_includes.h"
#include "settings.h"

extern "C" {
#include "utils/array.h"
}

namespace dp_pg {
namespace {

// The state of dp_rr_proportion: float8[3] {answers, true answers, epsilon}
// (exact integers below 2^53).
void ReadProportionState(FunctionCallInfo fcinfo, double out[3]) {
  ArrayType* array = PG_GETARG_ARRAYTYPE_P(0);
  if (ARR_NDIM(array) != 1 || ARR_DIMS(array)[0] != 3 || ARR_HASNULL(array) ||
      ARR_ELEMTYPE(array) != FLOAT8OID)
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("not a dp_rr_proportion state: a float8[3] without NULLs"),
                    errhint("Call the aggregates dp_rr_proportion(answer, epsilon) and "
                            "dp_rr_proportion_se(answer, epsilon), not their final functions.")));
  const double* values = reinterpret_cast<const double*>(ARR_DATA_PTR(array));
  out[0] = values[0];
  out[1] = values[1];
  out[2] = values[2];
  // The aggregate's own states hold counts 0 <= yes <= n below 2^53 (exact in
  // a double); a state written by hand and passed to a final function
  // directly is refused, never converted out of range (undefined behaviour).
  const double n = out[0];
  const double yes = out[1];
  if (!(n >= 0 && n <= 9007199254740992.0 && n == std::floor(n) && yes >= 0 && yes <= n &&
        yes == std::floor(yes)))
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("not a dp_rr_proportion state: counts must be integers with "
                           "0 <= yes <= n <= 2^53"),
                    errhint("Call the aggregates dp_rr_proportion(answer, epsilon) and "
                            "dp_rr_proportion_se(answer, epsilon), not their final functions.")));
}

dp::ProportionEstimate EstimateOf(FunctionCallInfo fcinfo) {
  double state[3];
  ReadProportionState(fcinfo, state);
  const auto n = static_cast<std::int64_t>(state[0]);
  const auto yes = static_cast<std::int64_t>(state[1]);
  const double epsilon = state[2];
  // No row: no epsilon was seen; the estimate is the uninformed 0.5 with
  // an infinite standard error whatever epsilon was written.
  if (n == 0) return CallCore([&] { return dp::EstimateProportion(0, 0, 1.0); });
  return CallCore([&] { return dp::EstimateProportion(yes, n, epsilon); });
}

}  // namespace
}  // namespace dp_pg

extern "C" {

PG_FUNCTION_INFO_V1(dp_randomized_response);
Datum dp_randomized_response(PG_FUNCTION_ARGS) {
  const bool answer = PG_GETARG_BOOL(0);
  const double epsilon = PG_GETARG_FLOAT8(1);
  PG_RETURN_BOOL(dp_pg::CallCore(
      [&] { return dp::RandomizedResponse(answer, epsilon, dp_pg::NoiseSource()); }));
}

// dp_agg.rr_check_epsilon(epsilon, previous, answers): epsilon, checked,
// and the same as the one of the answers already counted (if any).
PG_FUNCTION_INFO_V1(dp_rr_check_epsilon);
Datum dp_rr_check_epsilon(PG_FUNCTION_ARGS) {
  const double epsilon = PG_GETARG_FLOAT8(0);
  const double previous = PG_GETARG_FLOAT8(1);
  const double answers = PG_GETARG_FLOAT8(2);
  dp_pg::CallCore([&] { dp::ValidateRandomizedResponseEpsilon(epsilon); });
  if (answers > 0 && previous != epsilon)
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("epsilon of dp_rr_proportion must be the same for every row"),
                    errhint("Estimate answers randomized at different epsilons separately, "
                            "e.g. GROUP BY the epsilon column.")));
  PG_RETURN_FLOAT8(epsilon);
}

PG_FUNCTION_INFO_V1(dp_rr_proportion_final);
Datum dp_rr_proportion_final(PG_FUNCTION_ARGS) {
  PG_RETURN_FLOAT8(dp_pg::EstimateOf(fcinfo).estimate);
}

PG_FUNCTION_INFO_V1(dp_rr_proportion_se_final);
Datum dp_rr_proportion_se_final(PG_FUNCTION_ARGS) {
  PG_RETURN_FLOAT8(dp_pg::EstimateOf(fcinfo).standard_error);
}

}  // extern "C"
