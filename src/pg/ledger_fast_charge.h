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

// Whether `other` may be charged in one group with `first`
// (ChargeTogether): neither is a reuse, both are of the same role under the
// same name, and each of their four amounts has the same display scale, so
// that the budget rows written one by one can be reconstructed exactly.
bool CanChargeTogether(const ledger_queue::ChargeRequest& first,
                       const ledger_queue::ChargeRequest& other) noexcept;

// Charges `count` requests of one role (CanChargeTogether with the first)
// with ONE UPDATE of its budget by their sum, and appends their ledger rows
// in order, each with the digest of the budget row that charging them one by
// one would have left after it: the ledger, the budget and the answers are
// those of ChargeWithoutRenewal called for each in turn (a check compares
// the last partial sums with the row written). Returns false having changed
// nothing if the sum is not admitted (or the budget renews, or none): the
// caller then charges them one by one. Same caller context as
// ChargeWithoutRenewal, in one subtransaction for the group.
bool ChargeTogether(ledger_queue::ChargeRequest** requests, int count);

}  // namespace dp_pg

#endif  // DP_AGG_PG_LEDGER_FAST_CHARGE_H
