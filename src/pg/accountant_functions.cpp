// SQL entry points of the privacy accountant (core/privacy_accountant.h):
// conversions between zCDP and (epsilon, delta) for administrators and
// analysts, and the amounts shown by dp_agg.budgets. None of them takes part
// in admission, which is exact numeric arithmetic in dp_agg.apply_charge
// (README "Privacy budgets"). Every conversion is rounded the safe way: a
// rho that an (epsilon, delta) guarantee buys DOWN, an epsilon certified UP,
// an epsilon that a rho pays for DOWN.
#include <cmath>
#include <stdexcept>

#include "../core/gaussian_mechanism.h"
#include "../core/privacy_accountant.h"
#include "aggregate_state.h"
#include "error_boundary.h"
#include "pg_includes.h"
#include "query_cost.h"
#include "settings.h"

namespace dp_pg {

namespace {

int CompareNumeric(Datum a, Datum b) {
  return DatumGetInt32(DirectFunctionCall2(numeric_cmp, a, b));
}

// The nearest double to `value` in the given direction (numeric_float8
// rounds to nearest; the exact value of that double tells which side it
// fell on). NaN, infinite or negative amounts are refused (22023).
double NumericToDouble(Datum value, bool up) {
  double result = DatumGetFloat8(DirectFunctionCall1(numeric_float8, value));
  if (!std::isfinite(result) || result < 0)
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("privacy accountant: amount %s is not a finite number >= 0",
                           DatumGetCString(DirectFunctionCall1(numeric_out, value))),
                    errdetail("Budgets and charges are finite and non-negative.")));
  const int order = CompareNumeric(ExactNumericFromDouble(result), value);
  if (up && order < 0) result = std::nextafter(result, HUGE_VAL);
  if (!up && order > 0) result = std::nextafter(result, -HUGE_VAL);
  return result;
}

// What the ledger charges for a Gaussian release whose noise costs `rho`
// (query_cost.cpp: rounded up to 17 significant digits).
Datum ChargedRho(double rho) { return NumericCeilSignificant(ExactNumericFromDouble(rho), 17); }

}  // namespace

}  // namespace dp_pg

extern "C" {
// dp_agg.zcdp_epsilon(rho, delta): the epsilon of the tight conversion
// (CKS20 Cor. 13) of rho-zCDP at delta, rounded up.
PG_FUNCTION_INFO_V1(dp_agg_zcdp_epsilon);
Datum dp_agg_zcdp_epsilon(PG_FUNCTION_ARGS) {
  const double rho = PG_GETARG_FLOAT8(0);
  const double delta = PG_GETARG_FLOAT8(1);
  if (!std::isfinite(rho) || rho < 0 || !(delta > 0 && delta < 1))
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("invalid zCDP conversion: rho %g and delta %g", rho, delta),
                    errdetail("rho must be a finite number >= 0 and delta a number in (0, 1).")));
  PG_RETURN_FLOAT8(dp_pg::CallCore([&] { return dp::ZcdpEpsilon(rho, delta); }));
}

// dp_agg.zcdp_rho(epsilon, delta): the largest rho whose conversion is
// within (epsilon, delta), rounded down: the zCDP budget that gives an
// (epsilon, delta) guarantee (with zcdp delta total 0).
PG_FUNCTION_INFO_V1(dp_agg_zcdp_rho);
Datum dp_agg_zcdp_rho(PG_FUNCTION_ARGS) {
  const double epsilon = PG_GETARG_FLOAT8(0);
  const double delta = PG_GETARG_FLOAT8(1);
  if (!std::isfinite(epsilon) || !(epsilon > 0) || !(delta > 0 && delta < 1))
    ereport(ERROR,
            (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
             errmsg("invalid zCDP conversion: epsilon %g and delta %g", epsilon, delta),
             errdetail("epsilon must be a finite number > 0 and delta a number in (0, 1).")));
  // Test fault: a call that ignores statement_timeout and cancellation for
  // 3 s (the shape of issue 26's finding 4, but bounded), so that the crash
  // fuzzer can prove its timeout check fires.
  if (dp_pg::TestFaultIs(dp_pg::TestFault::kUncancellableSpin)) {
    const TimestampTz start = GetCurrentTimestamp();
    while (!TimestampDifferenceExceeds(start, GetCurrentTimestamp(), 3000)) {
    }
  }
  double rho = dp_pg::CallCore([&] { return dp::RhoForEpsilonDelta(epsilon, delta); });
  // 12 significant digits, rounded down: short enough that shares such as
  // rho / 100 are exact in numeric division (which keeps at least 16
  // significant digits), at a loss of about 1e-11 of the budget. The result
  // is checked both ways, by the delta at epsilon and by the epsilon at
  // delta (two separate minimisations over the order alpha, each rounded up,
  // which dp_agg.budgets shows), and lowered until both are within.
  for (int step = 0; step < 100 && rho > 0; ++step) {
    const Datum shown =
        dp_pg::NumericRoundSignificant(dp_pg::ExactNumericFromDouble(rho), 12, false);
    const double used = dp_pg::NumericToDouble(shown, true);
    const bool within = dp_pg::CallCore([&] {
      return dp::ZcdpDelta(used, epsilon) <= delta && dp::ZcdpEpsilon(used, delta) <= epsilon;
    });
    if (within) PG_RETURN_DATUM(shown);
    rho = used * (1 - 1e-11);
  }
  PG_RETURN_DATUM(DirectFunctionCall1(int4_numeric, Int32GetDatum(0)));
}

// dp_agg.gaussian_count_epsilon(rho, delta): the largest epsilon at which
// dp_count(value, epsilon, delta) is charged at most rho (numeric): the
// bisection runs on rho rounded down, and the result is checked against
// what the ledger charges (ChargedRho), exactly, stepping down if needed.
PG_FUNCTION_INFO_V1(dp_agg_gaussian_count_epsilon);
Datum dp_agg_gaussian_count_epsilon(PG_FUNCTION_ARGS) {
  const Datum rho_numeric = PG_GETARG_DATUM(0);
  const double rho = dp_pg::NumericToDouble(rho_numeric, false);
  const double delta = PG_GETARG_FLOAT8(1);
  if (!std::isfinite(rho) || !(rho > 0) || !(delta > 0 && delta < 1))
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("invalid Gaussian share: rho %g and delta %g", rho, delta),
                    errdetail("rho must be a finite number > 0 and delta a number in (0, 1).")));
  double epsilon = dp_pg::CallCore([&] { return dp::GaussianCountEpsilonForRho(rho, delta); });
  for (int step = 0; step < 64 && epsilon > 0; ++step) {
    const double planned =
        dp_pg::CallCore([&] { return dp::GaussianPlanRho(dp::PlanGaussianCount(epsilon, delta)); });
    if (dp_pg::CompareNumeric(dp_pg::ChargedRho(planned), rho_numeric) <= 0)
      PG_RETURN_FLOAT8(epsilon);
    epsilon = std::nextafter(epsilon, 0.0) * (1 - 1e-12);
  }
  PG_RETURN_FLOAT8(0.0);
}

// dp_agg.gaussian_count_rho(epsilon, delta): the rho the ledger charges for
// dp_count(value, epsilon, delta) (epsilon and delta rounded down to
// doubles); 0 when epsilon or delta is 0 and NULL when no Gaussian count
// exists at these parameters (dp_agg.budgets shows it for every budget, so
// it never raises for an amount a budget can hold).
PG_FUNCTION_INFO_V1(dp_agg_gaussian_count_rho);
Datum dp_agg_gaussian_count_rho(PG_FUNCTION_ARGS) {
  const double epsilon = dp_pg::NumericToDouble(PG_GETARG_DATUM(0), false);
  const double delta = dp_pg::NumericToDouble(PG_GETARG_DATUM(1), false);
  if (!(epsilon > 0) || !(delta > 0))
    PG_RETURN_DATUM(DirectFunctionCall1(int4_numeric, Int32GetDatum(0)));
  if (!(delta < 1) || !std::isfinite(epsilon)) PG_RETURN_NULL();
  const double rho = dp_pg::CallCore([&] {
    try {
      return dp::GaussianPlanRho(dp::PlanGaussianCount(epsilon, delta));
    } catch (const std::exception&) {
      return -1.0;  // outside what the sampler supports: shown as NULL
    }
  });
  if (rho < 0) PG_RETURN_NULL();
  PG_RETURN_DATUM(dp_pg::ChargedRho(rho));
}

// dp_agg.zcdp_pure_epsilon(rho): the largest epsilon with 12 decimals whose
// pure release the ledger admits against rho, i.e. whose charge
// PureReleaseRho (the ledger's own rounding: c^2 / 2 of the charged epsilon
// c, rounded up to 17 significant digits) is <= rho. Starts at
// trunc(sqrt(2 rho), 12) and steps down by 1e-12: for rho <= 1e6 (the
// largest zCDP total) epsilon has at most 16 significant digits, so the
// charge exceeds epsilon^2 / 2 by a relative 1e-16 at most and one or two
// steps suffice.
PG_FUNCTION_INFO_V1(dp_agg_zcdp_pure_epsilon);
Datum dp_agg_zcdp_pure_epsilon(PG_FUNCTION_ARGS) {
  const Datum rho = PG_GETARG_DATUM(0);
  const Datum zero = DirectFunctionCall1(int4_numeric, Int32GetDatum(0));
  auto parse = [](const char* text) {
    return DirectFunctionCall3(numeric_in, CStringGetDatum(text), ObjectIdGetDatum(InvalidOid),
                               Int32GetDatum(-1));
  };
  // 0 with the 12 decimals of every other result.
  const Datum none = parse("0.000000000000");
  if (dp_pg::CompareNumeric(rho, zero) <= 0) PG_RETURN_DATUM(none);
  if (dp_pg::CompareNumeric(rho, parse("1000000")) > 0)
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("zcdp_pure_epsilon: rho %s is above 1e6",
                           DatumGetCString(DirectFunctionCall1(numeric_out, rho))),
                    errdetail("rho must be at most 1e6, the largest zCDP budget total.")));
  const Datum step = parse("0.000000000001");
  Datum epsilon = DirectFunctionCall2(
      numeric_trunc,
      DirectFunctionCall1(numeric_sqrt,
                          DirectFunctionCall2(numeric_mul, rho,
                                              DirectFunctionCall1(int4_numeric, Int32GetDatum(2)))),
      Int32GetDatum(12));
  while (dp_pg::CompareNumeric(epsilon, zero) > 0) {
    CHECK_FOR_INTERRUPTS();
    // The analyst passes epsilon's decimal text, which becomes this double.
    const double requested = DatumGetFloat8(DirectFunctionCall1(numeric_float8, epsilon));
    if (dp_pg::CompareNumeric(dp_pg::PureReleaseRho(requested), rho) <= 0) PG_RETURN_DATUM(epsilon);
    epsilon = DirectFunctionCall2(numeric_sub, epsilon, step);
  }
  PG_RETURN_DATUM(none);
}

}  // extern "C"
