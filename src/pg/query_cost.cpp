#include "query_cost.h"

#include "../core/laplace_mechanism.h"
#include "aggregate_state.h"
#include "error_boundary.h"
#include "ledger.h"

namespace dp_pg {

namespace {

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

}  // namespace

void StartQueryCost(QueryCost* cost, bool leader_paid) {
  cost->leader_paid = leader_paid;
  cost->constants_decide = false;
  cost->sites = 0;
  cost->epsilon = DirectFunctionCall1(int4_numeric, Int32GetDatum(0));
  cost->delta = cost->epsilon;
  initStringInfo(&cost->description);
}

int GroupingSetCount(Agg* plan) {
  int sets = list_length(plan->groupingSets);
  ListCell* cell;
  foreach (cell, plan->chain)
    sets += list_length(reinterpret_cast<Agg*>(lfirst(cell))->groupingSets);
  return sets > 0 ? sets : 1;
}

void AddCost(QueryCost* cost, Aggref* aggref, double epsilon, double delta, int multiplier) {
  const Datum times = DirectFunctionCall1(int4_numeric, Int32GetDatum(multiplier));
  cost->epsilon = DirectFunctionCall2(numeric_add, cost->epsilon,
                                      DirectFunctionCall2(numeric_mul, ChargeFor(epsilon), times));
  cost->delta = DirectFunctionCall2(numeric_add, cost->delta,
                                    DirectFunctionCall2(numeric_mul, ChargeFor(delta), times));
  cost->sites += 1;
  appendStringInfo(&cost->description, "%s%s(epsilon %g", cost->sites > 1 ? "; " : "",
                   get_func_name(aggref->aggfnoid), epsilon);
  if (delta > 0) appendStringInfo(&cost->description, ", delta %g", delta);
  if (multiplier > 1) appendStringInfo(&cost->description, " x %d grouping sets", multiplier);
  appendStringInfoChar(&cost->description, ')');
}

void ChargeQueryCost(QueryCost* cost) {
  if (cost->sites > 0) {
    QueryCharge charge;
    charge.epsilon = cost->epsilon;
    charge.delta = cost->delta;
    strlcpy(charge.description, cost->description.data, sizeof charge.description);
    ChargeBudget(charge);
  }
  pfree(cost->description.data);
}

}  // namespace dp_pg
