#include "query_cost.h"

#include <cmath>

#include "../core/laplace_mechanism.h"
#include "aggregate_state.h"
#include "error_boundary.h"
#include "ledger.h"

namespace dp_pg {

namespace {

// Significant digits of the rho and epsilon^2 charges (rounded up).
constexpr int kChargeDigits = 17;

// What a call costs, as an exact numeric: the shortest decimal of the
// requested value (0.1 costs 0.1, so 50 calls at 0.1 spend exactly 5.0) when
// that is at least the value the mechanism uses (the request rounded down to
// 24 bits, EffectivePrivacyParameter); otherwise, for the rare request whose
// shortest decimal lies just below its 24-bit value, that value exactly.
Datum ChargeFor(double requested) {
  if (requested == 0) return DirectFunctionCall1(int4_numeric, Int32GetDatum(0));
  const double effective = CallCore([&] { return dp::EffectivePrivacyParameter(requested); });
  char shortest_text[DOUBLE_SHORTEST_DECIMAL_LEN];
  double_to_shortest_decimal_buf(requested, shortest_text);
  const Datum shortest = DirectFunctionCall3(numeric_in, CStringGetDatum(shortest_text),
                                             ObjectIdGetDatum(InvalidOid), Int32GetDatum(-1));
  const Datum used = ExactNumericFromDouble(effective);
  return DatumGetInt32(DirectFunctionCall2(numeric_cmp, shortest, used)) >= 0 ? shortest : used;
}

Datum NumericZero() { return DirectFunctionCall1(int4_numeric, Int32GetDatum(0)); }

Datum NumericTimes(Datum value, int times) {
  return DirectFunctionCall2(numeric_mul, value,
                             DirectFunctionCall1(int4_numeric, Int32GetDatum(times)));
}

Datum NumericPlus(Datum a, Datum b) { return DirectFunctionCall2(numeric_add, a, b); }

Datum NumericHalf() {
  return DirectFunctionCall3(numeric_in, CStringGetDatum("0.5"), ObjectIdGetDatum(InvalidOid),
                             Int32GetDatum(-1));
}

}  // namespace

// value (numeric, >= 0) rounded to `digits` significant digits, UP (the
// smallest multiple of 10^(e - digits + 1), e the decimal exponent of its
// leading digit, that is >= value) or DOWN, exactly (numeric ceil/floor and
// multiplications by powers of ten). Keeps ledger numbers short without ever
// charging less (and remaining amounts without ever showing more).
Datum NumericRoundSignificant(Datum value, int digits, bool up) {
  const Datum zero = NumericZero();
  if (DatumGetInt32(DirectFunctionCall2(numeric_cmp, value, zero)) <= 0) return value;
  const double approximate = DatumGetFloat8(DirectFunctionCall1(numeric_float8, value));
  // The exponent estimate may be off by one near a power of ten: either way
  // the result is rounded the right way, to digits or digits + 1 digits.
  const int exponent =
      approximate > 0 ? static_cast<int>(std::floor(std::log10(approximate))) : -400;
  const int scale = digits - 1 - exponent;
  char to_scaled[32], from_scaled[32];
  snprintf(to_scaled, sizeof to_scaled, "1e%d", scale);
  snprintf(from_scaled, sizeof from_scaled, "1e%d", -scale);
  auto parse = [](const char* text) {
    return DirectFunctionCall3(numeric_in, CStringGetDatum(text), ObjectIdGetDatum(InvalidOid),
                               Int32GetDatum(-1));
  };
  const Datum scaled = DirectFunctionCall2(numeric_mul, value, parse(to_scaled));
  const Datum whole = DirectFunctionCall1(up ? numeric_ceil : numeric_floor, scaled);
  const Datum result = DirectFunctionCall2(numeric_mul, whole, parse(from_scaled));
  // numeric_mul keeps every digit of exact operands; checked all the same.
  const int order = DatumGetInt32(DirectFunctionCall2(numeric_cmp, result, value));
  if (up ? order < 0 : order > 0) return value;
  // Trailing zeros dropped for display (the value is unchanged).
  return DirectFunctionCall1(numeric_trim_scale, result);
}

Datum NumericCeilSignificant(Datum value, int digits) {
  return NumericRoundSignificant(value, digits, true);
}

Datum PureReleaseRho(double requested_epsilon) {
  const Datum charged = ChargeFor(requested_epsilon);
  return NumericCeilSignificant(
      DirectFunctionCall2(numeric_mul, DirectFunctionCall2(numeric_mul, charged, charged),
                          NumericHalf()),
      kChargeDigits);
}

// Every statement of every session starts a cost, and almost all of them
// charge nothing (issue 31): the zero they start from is made once per
// backend (numeric operations never change their arguments, and nothing
// frees a cost's numbers), and the description starts small, grown by the
// first call site added.
void StartQueryCost(QueryCost* cost, bool leader_paid) {
  static Datum zero = 0;
  if (zero == 0) {
    const MemoryContext caller = MemoryContextSwitchTo(TopMemoryContext);
    zero = NumericZero();
    MemoryContextSwitchTo(caller);
  }
  cost->leader_paid = leader_paid;
  cost->constants_decide = false;
  cost->plan_sites = true;
  cost->partial_sites = NIL;
  cost->sites = 0;
  cost->epsilon = zero;
  cost->delta = zero;
  cost->rho = zero;
  cost->zcdp_delta = zero;
  constexpr int kFirstDescription = 32;
  cost->description.data = static_cast<char*>(palloc(kFirstDescription));
  cost->description.maxlen = kFirstDescription;
  resetStringInfo(&cost->description);
}

int GroupingSetCount(Agg* plan) {
  int sets = list_length(plan->groupingSets);
  ListCell* cell;
  foreach (cell, plan->chain)
    sets += list_length(reinterpret_cast<Agg*>(lfirst(cell))->groupingSets);
  return sets > 0 ? sets : 1;
}

void AddCost(QueryCost* cost, Aggref* aggref, const RequestedPrivacy& requested, int unit_groups,
             int multiplier) {
  const double epsilon = requested.epsilon * unit_groups;
  const double delta = requested.delta * unit_groups;
  const Datum epsilon_charge = NumericTimes(ChargeFor(epsilon), multiplier);
  const Datum delta_charge = NumericTimes(ChargeFor(delta), multiplier);
  cost->epsilon = NumericPlus(cost->epsilon, epsilon_charge);
  cost->delta = NumericPlus(cost->delta, delta_charge);
  // The zCDP charge (README "Privacy budgets"). Over privacy units a unit
  // reaches unit_groups groups, each a release of the requested parameters,
  // and every grouping set is one more release: rho (and zCDP delta) add up
  // over the unit_groups * multiplier releases (Bun and Steinke 2016, Lemma
  // 2.3 and, for the delta, Lemma 8.3).
  const int releases = unit_groups * multiplier;
  double rho = 0;
  if (requested.gaussian) {
    // The discrete Gaussian calibrated here is rho-zCDP with rho =
    // Delta^2 / (2 sigma^2) of its exact sigma (BS16 Prop. 1.6; Canonne,
    // Kamath and Steinke 2020, Thm. 14), GaussianPlanRho rounded up.
    rho = requested.rho;
    cost->rho = NumericPlus(
        cost->rho,
        NumericTimes(NumericCeilSignificant(ExactNumericFromDouble(requested.rho), kChargeDigits),
                     releases));
  } else if (requested.approximate || requested.delta == 0) {
    // A pure epsilon-DP release is (epsilon^2 / 2)-zCDP (BS16 Prop. 1.4);
    // group selection (the only (epsilon, delta) release that is not
    // Gaussian) is delta-approximately (epsilon^2 / 2)-zCDP (BS16 Def. 8.1):
    // the optimal rule attains delta on {released} for small groups AND on
    // {not released} near n* (a group of n* - 1 rows is withheld with
    // probability <= delta, one of n* rows never), so the events remove mass
    // m <= delta on BOTH sides, after which the group's bit is epsilon-DP
    // (docs/administrator_guide.md, "The accountant", has the computation; for the
    // fallback rule an event on D' alone suffices). Over units, each of the
    // unit_groups groups a unit reaches is such a release at epsilon / m.
    // The epsilon charged per release is ChargeFor(requested.epsilon), at
    // least the one the mechanism uses; c^2 / 2 is exact in numeric (c is a
    // decimal) and only rounded up to kChargeDigits digits.
    const Datum half_square = PureReleaseRho(requested.epsilon);
    cost->rho = NumericPlus(cost->rho, NumericTimes(half_square, releases));
    if (requested.approximate) cost->zcdp_delta = NumericPlus(cost->zcdp_delta, delta_charge);
  } else {
    // Every release with a delta is Gaussian or group selection
    // (initial_state.cpp); anything else would have no zCDP cost here.
    ereport(ERROR, (errcode(ERRCODE_INTERNAL_ERROR),
                    errmsg("dp_agg: no zCDP cost for %s with delta %g",
                           AggregateName(aggref->aggfnoid), requested.delta)));
  }
  cost->sites += 1;
  appendStringInfo(&cost->description, "%s%s(epsilon %g", cost->sites > 1 ? "; " : "",
                   AggregateName(aggref->aggfnoid), epsilon);
  if (delta > 0) appendStringInfo(&cost->description, ", delta %g", delta);
  if (requested.gaussian) appendStringInfo(&cost->description, ", rho %.6g", rho * unit_groups);
  if (multiplier > 1) appendStringInfo(&cost->description, " x %d grouping sets", multiplier);
  appendStringInfoChar(&cost->description, ')');
}

void ChargeQueryCost(QueryCost* cost) {
  if (cost->sites > 0) {
    QueryCharge charge;
    charge.epsilon = cost->epsilon;
    charge.delta = cost->delta;
    charge.rho = cost->rho;
    charge.zcdp_delta = cost->zcdp_delta;
    strlcpy(charge.description, cost->description.data, sizeof charge.description);
    ChargeBudget(charge);
  }
  pfree(cost->description.data);
}

}  // namespace dp_pg
