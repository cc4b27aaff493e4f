// The budget alert (README "Watching spend"): a charge that leaves a role
// less than dp_agg.budget_alert_fraction of one of its budget totals (of an
// amount the charge spent: epsilon, delta, rho or zCDP delta) gets a NOTICE
// saying what is left (the role may read it anyway: dp_agg.budgets,
// dp_agg.remaining_budget()), and the charge that crosses the threshold a
// LOG line "dp_agg budget alert: ..." in the server log, for an
// administrator to wire to alerts. Computed from the charge and the budget
// the ledger writer reported, never from the data.
#ifndef DP_AGG_PG_SPEND_ALERT_H
#define DP_AGG_PG_SPEND_ALERT_H

#include "pg_includes.h"

namespace dp_pg {

// A budget right after a charge was applied to it, as numeric text.
struct BudgetAfterCharge {
  const char* role_name;
  const char* budget_kind;  // 'epsilon_delta' or 'zcdp'
  // The charge.
  const char* epsilon;
  const char* delta;
  const char* rho;
  const char* zcdp_delta;
  // The budget after it; rho_total and zcdp_delta_total are empty when no
  // zCDP certificate binds.
  const char* epsilon_total;
  const char* epsilon_spent;
  const char* delta_total;
  const char* delta_spent;
  const char* rho_total;
  const char* rho_spent;
  const char* zcdp_delta_total;
  const char* zcdp_delta_spent;
};

// Raises the NOTICE and the LOG line described above, if due. Never raises
// an ERROR for a budget the writer reported (the charge is made: a refusal
// now would be a charge followed by a refusal).
void AlertIfBudgetLow(const BudgetAfterCharge& budget);

}  // namespace dp_pg

#endif  // DP_AGG_PG_SPEND_ALERT_H
