#include "ledger_refusals.h"

#include <cstring>

#include "sqlstates.h"

namespace dp_pg {
namespace ledger_queue {

namespace {

Datum NumericFromText(const char* text) {
  return DirectFunctionCall3(numeric_in, CStringGetDatum(text), ObjectIdGetDatum(InvalidOid),
                             Int32GetDatum(-1));
}

// Whether spent + needed > total, as exact numerics.
bool Exceeds(const char* spent, const char* needed, const char* total) {
  const Datum sum =
      DirectFunctionCall2(numeric_add, NumericFromText(spent), NumericFromText(needed));
  return DatumGetInt32(DirectFunctionCall2(numeric_cmp, sum, NumericFromText(total))) > 0;
}

}  // namespace

// Whether the charge does not fit the (epsilon, delta) certificate, or the
// zCDP one (whose totals are empty when it does not bind).
bool EpsilonDeltaRefuses(const ChargeRequest& result) {
  return Exceeds(result.epsilon_spent, result.epsilon, result.epsilon_total) ||
         Exceeds(result.delta_spent, result.delta, result.delta_total);
}

bool ZcdpRefuses(const ChargeRequest& result) {
  return result.rho_total[0] == '\0' || Exceeds(result.rho_spent, result.rho, result.rho_total) ||
         Exceeds(result.zcdp_delta_spent, result.zcdp_delta, result.zcdp_delta_total);
}

// A refusal for lack of delta only: saying "use a smaller epsilon" would
// send the analyst the wrong way.
bool OnlyDeltaIsShort(const ChargeRequest& result) {
  const bool needs_delta =
      DatumGetInt32(DirectFunctionCall2(numeric_cmp, NumericFromText(result.delta),
                                        DirectFunctionCall1(int4_numeric, Int32GetDatum(0)))) > 0;
  return needs_delta && !Exceeds(result.epsilon_spent, result.epsilon, result.epsilon_total) &&
         Exceeds(result.delta_spent, result.delta, result.delta_total);
}

// The charge description names dp_agg.group_selection when a restricted
// role's GROUP BY keys pay for partition selection (query_cost.cpp).
[[noreturn]] void RefuseForDelta(const ChargeRequest& result) {
  const bool group_selection = std::strstr(result.aggregates, "group_selection(") != nullptr;
  const bool no_delta =
      DatumGetInt32(DirectFunctionCall2(numeric_cmp, NumericFromText(result.delta_total),
                                        DirectFunctionCall1(int4_numeric, Int32GetDatum(0)))) == 0;
  const char* purpose = group_selection ? " for group selection" : "";
  const char* guidance =
      group_selection
          ? "Ask an administrator for a delta budget (dp_agg.add_budget(role, 0, delta)); "
            "group selection's delta is the setting dp_agg.group_selection_delta."
          : "Ask an administrator for a delta budget (dp_agg.add_budget(role, 0, delta)), or "
            "use the epsilon-only form of the aggregate (without delta).";
  if (no_delta)
    ereport(ERROR, (errcode(ERRCODE_DP_AGG_BUDGET_EXHAUSTED),
                    errmsg("this query needs delta %s%s; the role \"%s\" has no delta budget",
                           result.delta, purpose, result.role_name),
                    errdetail("It needs epsilon %s and delta %s (%s); the role has epsilon %s of "
                              "%s spent and a delta total of 0. %s Nothing was charged or "
                              "released.",
                              result.epsilon, result.delta, result.aggregates, result.epsilon_spent,
                              result.epsilon_total, guidance)));
  ereport(ERROR,
          (errcode(ERRCODE_DP_AGG_BUDGET_EXHAUSTED),
           errmsg("this query needs delta %s%s; the delta budget of role \"%s\" is exhausted",
                  result.delta, purpose, result.role_name),
           errdetail("It needs epsilon %s and delta %s (%s); the role has spent delta %s of %s "
                     "(epsilon %s of %s). %s Nothing was charged or released.",
                     result.epsilon, result.delta, result.aggregates, result.delta_spent,
                     result.delta_total, result.epsilon_spent, result.epsilon_total, guidance)));
  pg_unreachable();
}

// A refusal by a zCDP budget (dp_agg.set_budget_zcdp): its certificate is
// rho_spent + rho <= rho_total and zcdp_delta_spent + zcdp_delta <=
// zcdp_delta_total. Only group selection needs zCDP delta.
[[noreturn]] void RefuseForZcdp(const ChargeRequest& result) {
  // An (epsilon, delta) budget whose earlier zCDP certificate still binds.
  const char* holder = std::strcmp(result.budget_kind, "zcdp") == 0
                           ? "the role has a zCDP budget with"
                           : "the role's earlier zCDP certificate, binding since its switch of "
                             "budget kind (until dp_agg.reset_spent), has";
  const bool rho_fits = !Exceeds(result.rho_spent, result.rho, result.rho_total);
  const bool needs_delta =
      DatumGetInt32(DirectFunctionCall2(numeric_cmp, NumericFromText(result.zcdp_delta),
                                        DirectFunctionCall1(int4_numeric, Int32GetDatum(0)))) > 0;
  const bool no_delta =
      DatumGetInt32(DirectFunctionCall2(numeric_cmp, NumericFromText(result.zcdp_delta_total),
                                        DirectFunctionCall1(int4_numeric, Int32GetDatum(0)))) == 0;
  if (rho_fits && needs_delta && no_delta)
    ereport(ERROR, (errcode(ERRCODE_DP_AGG_BUDGET_EXHAUSTED),
                    errmsg("this query needs delta %s for group selection; the role \"%s\" has no "
                           "delta budget",
                           result.zcdp_delta, result.role_name),
                    errdetail("It needs rho %s and delta %s (%s); %s rho "
                              "%s of %s spent and a delta total of 0. Ask an administrator for a "
                              "delta budget (dp_agg.set_budget_zcdp(role, rho, delta)); group "
                              "selection's delta is the setting dp_agg.group_selection_delta. "
                              "Nothing was charged or released.",
                              result.rho, result.zcdp_delta, result.aggregates, holder,
                              result.rho_spent, result.rho_total)));
  if (rho_fits && needs_delta)
    ereport(ERROR,
            (errcode(ERRCODE_DP_AGG_BUDGET_EXHAUSTED),
             errmsg("this query needs delta %s for group selection; the delta budget of role "
                    "\"%s\" is exhausted",
                    result.zcdp_delta, result.role_name),
             errdetail("It needs rho %s and delta %s (%s); %s "
                       "delta %s of %s spent (rho %s of %s). Ask an administrator for more "
                       "(dp_agg.set_budget_zcdp(role, rho, delta)). Nothing was charged or "
                       "released.",
                       result.rho, result.zcdp_delta, result.aggregates, holder,
                       result.zcdp_delta_spent, result.zcdp_delta_total, result.rho_spent,
                       result.rho_total)));
  ereport(ERROR,
          (errcode(ERRCODE_DP_AGG_BUDGET_EXHAUSTED),
           errmsg("privacy budget exhausted for role \"%s\"", result.role_name),
           errdetail("This query needs rho %s and delta %s (%s); %s rho %s "
                     "of %s and delta %s of %s spent. A pure release of epsilon "
                     "costs rho epsilon^2/2, a Gaussian one the rho of its noise. Nothing was "
                     "charged or released.",
                     result.rho, result.zcdp_delta, result.aggregates, holder, result.rho_spent,
                     result.rho_total, result.zcdp_delta_spent, result.zcdp_delta_total),
           errhint("Use a smaller epsilon, or ask an administrator for more budget "
                   "(dp_agg.set_budget_zcdp). Nothing was released.")));
  pg_unreachable();
}

}  // namespace ledger_queue
}  // namespace dp_pg
