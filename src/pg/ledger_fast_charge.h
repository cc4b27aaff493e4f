// The ledger writer's common charge in C (issue 31): a charge to a budget that
// does not renew, applied with one prepared UPDATE and the chain's append
// (ledger_chain.h), without dp_agg.apply_charge's PL/pgSQL, its SECURITY
// DEFINER-style wrappers and the renewal check's extra scan. Everything else
// (a budget that renews, an exhausted, missing or orphaned budget) is left to
// dp_agg.apply_charge, which stays the one definition of those cases.
#ifndef DP_AGG_PG_LEDGER_FAST_CHARGE_H
#define DP_AGG_PG_LEDGER_FAST_CHARGE_H

#include "ledger_queue.h"

namespace dp_pg {

// Applies `request`'s charge if the role has a budget of this cluster that
// does not renew and admits it: the same UPDATE as dp_agg.apply_charge
// (src/sql/40_budgets_ledger.sql: keep the two in step), and the same
// ledger row through AppendLedgerEntry. Returns true and fills the request's
// outcome and budget fields if it charged; returns false having changed
// nothing otherwise (the caller then runs dp_agg.apply_charge). Caller is
// connected to SPI, in the subtransaction of this request, with the writer's
// pinned search_path.
bool ChargeWithoutRenewal(ledger_queue::ChargeRequest* request);

}  // namespace dp_pg

#endif  // DP_AGG_PG_LEDGER_FAST_CHARGE_H
