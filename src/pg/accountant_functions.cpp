// SQL entry points of the privacy accountant (core/privacy_accountant.h):
// the ledger's admission test for (epsilon, delta) budgets, the remaining
// budget in both terms for dp_agg.budgets and dp_agg.remaining_budget(), and
// conversions for administrators and analysts.
//
// The ledger keeps every sum as an exact numeric; the accountant works in
// doubles. Every conversion is rounded the safe way: what was spent UP, the
// budget DOWN, so rounding can only refuse a charge, never admit one that
// exceeds the budget. Amounts shown as remaining are rounded DOWN, the
// guarantee reported UP.
#include <cmath>

#include "../core/privacy_accountant.h"
#include "aggregate_state.h"
#include "error_boundary.h"
#include "pg_includes.h"
#include "query_cost.h"

extern "C" {
#include "funcapi.h"
}

namespace dp_pg {

namespace {

Datum NumericZeroDatum() { return DirectFunctionCall1(int4_numeric, Int32GetDatum(0)); }

int CompareNumeric(Datum a, Datum b) {
  return DatumGetInt32(DirectFunctionCall2(numeric_cmp, a, b));
}

// The nearest double to `value` in the given direction: numeric_float8
// rounds to nearest, and the exact value of that double tells which side it
// fell on.
// NaN, infinite, negative or out-of-range amounts are refused (22023): no
// budget or spending is ever one of them (CHECK constraints, set_budget's
// checks).
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

// What was spent, read from the ledger's sums, each rounded up. approx_*:
// the releases that are (epsilon, delta)-DP only (the linear sums less the
// pure and Gaussian parts, computed exactly by the caller).
dp::PrivacySpend SpendFrom(Datum pure_epsilon, Datum pure_epsilon_squared, Datum rho,
                           Datum approx_epsilon, Datum approx_delta) {
  dp::PrivacySpend spend;
  spend.pure_epsilon = NumericToDouble(pure_epsilon, true);
  spend.pure_epsilon_squared = NumericToDouble(pure_epsilon_squared, true);
  spend.rho = NumericToDouble(rho, true);
  spend.approx_epsilon = NumericToDouble(approx_epsilon, true);
  spend.approx_delta = NumericToDouble(approx_delta, true);
  return spend;
}

// A double shown as a numeric of 10 significant digits, rounded down (up).
Datum ShownNumeric(double value, bool up) {
  if (!(value > 0)) return NumericZeroDatum();
  return NumericRoundSignificant(ExactNumericFromDouble(value), 10, up);
}

Datum Greatest(Datum a, Datum b) { return CompareNumeric(a, b) >= 0 ? a : b; }

}  // namespace

}  // namespace dp_pg

extern "C" {

// dp_agg.zcdp_admits(epsilon_total, delta_total, pure_epsilon,
// pure_epsilon_squared, rho, approx_epsilon, approx_delta): whether the
// accountant certifies the spending within (epsilon_total, delta_total)
// (PrivacyAccountant::WithinBudget), with the spending rounded up and the
// budget rounded down. Called by dp_agg.budget_admits under the budget row's
// lock; a spend it cannot read (negative) raises, failing the charge.
PG_FUNCTION_INFO_V1(dp_agg_zcdp_admits);
Datum dp_agg_zcdp_admits(PG_FUNCTION_ARGS) {
  const double epsilon_total = dp_pg::NumericToDouble(PG_GETARG_DATUM(0), false);
  const double delta_total = dp_pg::NumericToDouble(PG_GETARG_DATUM(1), false);
  const dp::PrivacySpend spend =
      dp_pg::SpendFrom(PG_GETARG_DATUM(2), PG_GETARG_DATUM(3), PG_GETARG_DATUM(4),
                       PG_GETARG_DATUM(5), PG_GETARG_DATUM(6));
  const bool admitted = dp_pg::CallCore([&] {
    if (!(delta_total >= 0 && delta_total < 1) || !(epsilon_total >= 0)) return false;
    return dp::PrivacyAccountant(spend).WithinBudget(epsilon_total, delta_total);
  });
  PG_RETURN_BOOL(admitted);
}

// dp_agg.budget_terms(budget_unit, epsilon_total, delta_total, rho_total,
// epsilon_spent, delta_spent, pure_epsilon_spent, pure_epsilon_squared_spent,
// rho_spent, gaussian_epsilon_spent, gaussian_delta_spent, OUT
// epsilon_remaining, OUT delta_remaining, OUT rho_remaining, OUT
// epsilon_guarantee): a budget in both terms (README "Privacy budgets").
PG_FUNCTION_INFO_V1(dp_agg_budget_terms);
Datum dp_agg_budget_terms(PG_FUNCTION_ARGS) {
  for (int i = 0; i < 11; ++i) {
    if (i != 3 && PG_ARGISNULL(i)) PG_RETURN_NULL();
  }
  TupleDesc description;
  if (get_call_result_type(fcinfo, nullptr, &description) != TYPEFUNC_COMPOSITE)
    elog(ERROR, "dp_agg.budget_terms: return type must be a row type");
  description = BlessTupleDesc(description);
  const char* unit = text_to_cstring(PG_GETARG_TEXT_PP(0));
  const Datum epsilon_total = PG_GETARG_DATUM(1);
  const Datum delta_total = PG_GETARG_DATUM(2);
  const Datum epsilon_spent = PG_GETARG_DATUM(4);
  const Datum delta_spent = PG_GETARG_DATUM(5);
  const Datum pure = PG_GETARG_DATUM(6);
  const Datum pure_squared = PG_GETARG_DATUM(7);
  const Datum rho = PG_GETARG_DATUM(8);
  const Datum gaussian_epsilon = PG_GETARG_DATUM(9);
  const Datum gaussian_delta = PG_GETARG_DATUM(10);
  const Datum zero = dp_pg::NumericZeroDatum();
  Datum values[4];
  bool nulls[4] = {false, false, false, false};
  if (std::strcmp(unit, "rho") == 0 && !PG_ARGISNULL(3)) {
    // rho budget: pure releases cost epsilon^2 / 2 (BS16 Prop. 1.4), exactly.
    const Datum half = DirectFunctionCall3(numeric_in, CStringGetDatum("0.5"),
                                           ObjectIdGetDatum(InvalidOid), Int32GetDatum(-1));
    const Datum used =
        DirectFunctionCall2(numeric_add, rho, DirectFunctionCall2(numeric_mul, pure_squared, half));
    const Datum left =
        dp_pg::Greatest(DirectFunctionCall2(numeric_sub, PG_GETARG_DATUM(3), used), zero);
    const double left_down = dp_pg::NumericToDouble(left, false);
    // The largest pure epsilon with epsilon^2 / 2 <= left, rounded down.
    double pure_left = std::sqrt(2 * left_down);
    while (pure_left > 0 && pure_left * pure_left / 2 > left_down)
      pure_left = std::nextafter(pure_left, 0.0);
    values[0] = dp_pg::ShownNumeric(pure_left, false);
    values[1] = zero;
    values[2] = left;
    nulls[3] = true;
    values[3] = zero;
  } else {
    // (epsilon, delta) budget: the better of basic composition of the
    // linear sums (exact) and the accountant.
    const Datum approx_epsilon = DirectFunctionCall2(
        numeric_sub, DirectFunctionCall2(numeric_sub, epsilon_spent, pure), gaussian_epsilon);
    const Datum approx_delta = DirectFunctionCall2(numeric_sub, delta_spent, gaussian_delta);
    const dp::PrivacySpend spend =
        dp_pg::SpendFrom(pure, pure_squared, rho, approx_epsilon, approx_delta);
    const double epsilon_budget = dp_pg::NumericToDouble(epsilon_total, false);
    const double delta_budget = dp_pg::NumericToDouble(delta_total, false);
    struct Terms {
      double pure, delta, rho, guarantee;
    };
    const Terms terms = dp_pg::CallCore([&] {
      Terms t{0, 0, 0, HUGE_VAL};
      if (!(delta_budget >= 0 && delta_budget < 1)) return t;
      t.pure = dp::RemainingPureEpsilon(spend, epsilon_budget, delta_budget);
      t.delta = dp::RemainingApproximateDelta(spend, epsilon_budget, delta_budget);
      t.rho = dp::RemainingRho(spend, epsilon_budget, delta_budget);
      t.guarantee = dp::PrivacyAccountant(spend).Epsilon(delta_budget);
      return t;
    });
    const bool linear_epsilon_fits = dp_pg::CompareNumeric(epsilon_spent, epsilon_total) <= 0;
    const bool linear_delta_fits = dp_pg::CompareNumeric(delta_spent, delta_total) <= 0;
    Datum epsilon_left = dp_pg::ShownNumeric(terms.pure, false);
    Datum delta_left = dp_pg::ShownNumeric(terms.delta, false);
    if (linear_delta_fits)
      epsilon_left = dp_pg::Greatest(
          epsilon_left,
          dp_pg::Greatest(DirectFunctionCall2(numeric_sub, epsilon_total, epsilon_spent), zero));
    if (linear_epsilon_fits)
      delta_left = dp_pg::Greatest(
          delta_left,
          dp_pg::Greatest(DirectFunctionCall2(numeric_sub, delta_total, delta_spent), zero));
    values[0] = epsilon_left;
    values[1] = delta_left;
    values[2] = dp_pg::ShownNumeric(terms.rho, false);
    // The epsilon certified at delta_total: basic composition's exact sum
    // when the linear delta fits and is no worse, else the accountant's.
    const bool accountant_finite = std::isfinite(terms.guarantee);
    const Datum accountant = dp_pg::ShownNumeric(terms.guarantee, true);
    if (linear_delta_fits &&
        (!accountant_finite || dp_pg::CompareNumeric(epsilon_spent, accountant) <= 0)) {
      values[3] = epsilon_spent;
    } else if (accountant_finite) {
      values[3] = accountant;
    } else {
      nulls[3] = true;
      values[3] = zero;
    }
  }
  PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(description, values, nulls)));
}

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
// within (epsilon, delta), rounded down: what an (epsilon, delta) budget buys
// in Gaussian releases.
PG_FUNCTION_INFO_V1(dp_agg_zcdp_rho);
Datum dp_agg_zcdp_rho(PG_FUNCTION_ARGS) {
  const double epsilon = PG_GETARG_FLOAT8(0);
  const double delta = PG_GETARG_FLOAT8(1);
  if (!std::isfinite(epsilon) || !(epsilon > 0) || !(delta > 0 && delta < 1))
    ereport(ERROR,
            (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
             errmsg("invalid zCDP conversion: epsilon %g and delta %g", epsilon, delta),
             errdetail("epsilon must be a finite number > 0 and delta a number in (0, 1).")));
  PG_RETURN_FLOAT8(dp_pg::CallCore([&] { return dp::RhoForEpsilonDelta(epsilon, delta); }));
}

// dp_agg.gaussian_count_epsilon(rho, delta): the largest epsilon at which
// dp_count(value, epsilon, delta) costs at most rho.
PG_FUNCTION_INFO_V1(dp_agg_gaussian_count_epsilon);
Datum dp_agg_gaussian_count_epsilon(PG_FUNCTION_ARGS) {
  const double rho = PG_GETARG_FLOAT8(0);
  const double delta = PG_GETARG_FLOAT8(1);
  if (!std::isfinite(rho) || !(rho > 0) || !(delta > 0 && delta < 1))
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("invalid Gaussian share: rho %g and delta %g", rho, delta),
                    errdetail("rho must be a finite number > 0 and delta a number in (0, 1).")));
  PG_RETURN_FLOAT8(dp_pg::CallCore([&] { return dp::GaussianCountEpsilonForRho(rho, delta); }));
}

}  // extern "C"
