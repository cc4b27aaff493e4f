// dp_agg's own SQLSTATEs, defined once.
//
// Class ZP: the SQL standard reserves classes beginning with 0-4 and A-H for
// itself and leaves 5-9 and I-Z to implementations (the SQLSTATE clause of
// SQL/Foundation); PostgreSQL's src/backend/utils/errcodes.txt says the same
// and asks extensions to pick from the implementation-defined range. There
// PostgreSQL itself uses 53-58, 72, P0 and XX; no class beginning with Z, so
// ZP ("P" for privacy) cannot collide with a future PostgreSQL code of its
// own classes. 0.1.0 used class DP (reserved by the standard): see
// CHANGELOG.md for clients that match on codes.
#ifndef DP_AGG_PG_SQLSTATES_H
#define DP_AGG_PG_SQLSTATES_H

#include "pg_includes.h"

// ZP001: the query needs more epsilon or delta than the session user's budget
// has left; nothing was released.
#define ERRCODE_DP_AGG_BUDGET_EXHAUSTED MAKE_SQLSTATE('Z', 'P', '0', '0', '1')

// ZP002: the session user has no privacy budget at all.
#define ERRCODE_DP_AGG_NO_BUDGET MAKE_SQLSTATE('Z', 'P', '0', '0', '2')

// ZP003: partial states of one private aggregate (from Citus workers or
// parallel workers) were computed with different parameters; nothing was
// released. No setting of the session can cause it since the Citus settings
// are pinned (pinned_settings.h); it stays as the proof that the states agree.
#define ERRCODE_DP_AGG_INCONSISTENT_PARTIALS MAKE_SQLSTATE('Z', 'P', '0', '0', '3')
// ZP004: a budget restored from another cluster under the role's name waits
// to be re-attached (dp_agg.reattach_budgets), so set_budget, add_budget and
// set_budget_zcdp refuse to start a fresh one beside it (raised by the SQL
// functions of src/sql/40_budgets_ledger.sql and 42_budget_restores.sql).
#define ERRCODE_DP_AGG_RESTORED_BUDGET MAKE_SQLSTATE('Z', 'P', '0', '0', '4')

// ZP005: another session of the same role is computing the answer to the
// same query, which this one would reuse (release_cache.h), and has not
// stored it within dp_agg.charge_timeout; nothing was charged.
#define ERRCODE_DP_AGG_RELEASE_BUSY MAKE_SQLSTATE('Z', 'P', '0', '0', '5')

// ZP006: a change of the privacy ledger that dp_agg's own functions did not
// make (UPDATE, DELETE or TRUNCATE of dp_agg.ledger_entry or
// dp_agg.ledger_head, a row inserted by hand), refused by their triggers;
// or a ledger whose chain head is missing, to which nothing can be appended
// (ledger_chain.h, src/sql/46_ledger_integrity.sql).
#define ERRCODE_DP_AGG_LEDGER_APPEND_ONLY MAKE_SQLSTATE('Z', 'P', '0', '0', '6')

#endif  // DP_AGG_PG_SQLSTATES_H
