// The query identifier of the statements dp_agg charges or judges (issue 31).
//
// Every ledger row records its statement's query identifier, the one
// pg_stat_statements and pg_stat_activity show (dp_agg.spend_by_query groups
// spending by it). PostgreSQL computes it for every statement of every
// session once a module calls EnableQueryId(), which the simple protocol pays
// on each statement; dp_agg does not. With compute_query_id = auto (the
// default) and no module asking, the identifier is computed here, exactly as
// PostgreSQL computes it (JumbleQuery, at the same point: after parse
// analysis, before the rewriter), only for a statement that may be charged or
// judged. When PostgreSQL computed it already (compute_query_id = on or
// regress, or pg_stat_statements loaded), that identifier is kept; with
// compute_query_id = off none is computed (the ledger's column is NULL).
#ifndef DP_AGG_PG_QUERY_ID_H
#define DP_AGG_PG_QUERY_ID_H

#include "pg_includes.h"

extern "C" {
#include "utils/queryjumble.h"
}

namespace dp_pg {

// From the post_parse_analyze hook, before the hooks it chains to: computes
// `query`'s identifier when PostgreSQL did not (`jumble` is null), compute_query_id
// is not off, and the statement (at any level, as PostgreSQL would: EXPLAIN
// VERBOSE shows the explained query's) may be charged or judged: the session is restricted, or the
// statement is not a plain SELECT of unlabelled tables without row security
// calling only PostgreSQL's built-in functions on values of PostgreSQL's own
// types (see query_id.cpp). Returns the
// jumble state to pass on (`jumble`, or the one computed here).
JumbleState* IdentifyQueryDpAggMayCharge(ParseState* state, Query* query, JumbleState* jumble);

// Whether `query` (at any depth) may lead to a charge in an unrestricted
// session: false only when it certainly does not (query_id.cpp).
bool QueryMayLeadToCharge(Query* query);

}  // namespace dp_pg

#endif  // DP_AGG_PG_QUERY_ID_H
