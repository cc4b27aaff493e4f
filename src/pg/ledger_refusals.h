// Why a charge was refused for lack of budget, told to the analyst: the
// certificate ((epsilon, delta) or zCDP) that the charge does not fit, and
// whether only delta is short (ledger_charge.cpp raises these after the
// writer answered "exhausted").
#ifndef DP_AGG_PG_LEDGER_REFUSALS_H
#define DP_AGG_PG_LEDGER_REFUSALS_H

#include "ledger_queue.h"

namespace dp_pg {
namespace ledger_queue {

// Whether the charge does not fit the (epsilon, delta) certificate, or the
// zCDP one (whose totals are empty when it does not bind).
bool EpsilonDeltaRefuses(const ChargeRequest& result);

bool ZcdpRefuses(const ChargeRequest& result);

// A refusal for lack of delta only: saying "use a smaller epsilon" would
// send the analyst the wrong way.
bool OnlyDeltaIsShort(const ChargeRequest& result);

// The charge description names dp_agg.group_selection when a restricted
// role's GROUP BY keys pay for partition selection (query_cost.cpp).
[[noreturn]] void RefuseForDelta(const ChargeRequest& result);

// A refusal by a zCDP budget (dp_agg.set_budget_zcdp): its certificate is
// rho_spent + rho <= rho_total and zcdp_delta_spent + zcdp_delta <=
// zcdp_delta_total. Only group selection needs zCDP delta.
[[noreturn]] void RefuseForZcdp(const ChargeRequest& result);

}  // namespace ledger_queue
}  // namespace dp_pg

#endif  // DP_AGG_PG_LEDGER_REFUSALS_H
