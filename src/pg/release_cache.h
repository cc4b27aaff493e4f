// The release cache: the same question is answered once per period.
//
// A dashboard re-runs its queries on every refresh and for every viewer;
// each run used to be a new charge and a fresh draw of noise (the averaging
// attack, paid for, but still wasted budget). Now a private SELECT asked
// again by the same role, with the same text (after normalisation,
// release_key.h), parameter values and meaning-changing settings, within
// the same period, gets the rows released for it earlier and is not
// charged; the ledger records the reuse (kind 'reused', epsilon 0).
//
// Reuse is post-processing of a past release. Whether an answer is reused
// depends only on public things: the role, the query and its parameters,
// the settings in the key, and the clock (period = floor(Unix time /
// dp_agg.release_cache_period), aligned to the epoch: a public clock, never
// the role's own activity), and on the role's own earlier questions (what
// it asked, the bound on its entries). Never on the data, and never on
// whether the data was written: a cache invalidated by writes would tell the
// analyst that someone's row changed, so a release stays valid for its
// whole period, and a write in between changes nothing an analyst sees.
//
// How (issue 27, item 3):
//  * plan: the planner hook wraps the top of every plain SELECT with a
//    private aggregate (release_key.h) in a node of its own, "dp_agg release
//    cache", carrying the statement's digest and the external parameters it
//    reads. Only the outermost planning: Citus's recursive subplans and a
//    worker's fragments are parts of the coordinator's question.
//  * ExecutorStart (call_sites.cpp), after every check and the cost of the
//    query are computed as always, and before the charge: the full key is
//    computed; a stored release of the current period is loaded, the reuse
//    is recorded in the ledger through the ledger writer (durable, not undone
//    by ROLLBACK; refused, as a charge would be, for a role without any
//    budget; an exhausted budget does not matter), and the node serves those
//    rows: the query is not charged and the plan below the node never runs:
//    it is ended there and then, before ExecutorRun, and taken out of the
//    plan state tree, since an extension may run parts of it from its own
//    ExecutorRun hook (Citus executes the subplans of every Citus scan it
//    finds there: a worker contacted and a nested private level charged on
//    what should be a reuse). Otherwise the question is claimed
//    (release_claims.h: a second session asking it meanwhile waits for this
//    one and then reuses its rows) and charged as always.
//  * first fetch of a claimed question: the node runs the plan below it to
//    completion into a tuplestore, stores the rows durably (release_store.h)
//    and gives up the claim, before the first row is returned; then it
//    serves the rows from the tuplestore, so rewinds, SCROLL cursors and
//    backward fetches read the one release.
//  * not cached, the node passing rows through as they come: a period of 0
//    (dp_agg.release_cache_period), and EXPLAIN ANALYZE (or any instrumented
//    execution, e.g. auto_explain.log_analyze), which is a diagnostic run of
//    the plan and charged as always. A question that releases nothing (a
//    LIMIT 0 probe, which costs nothing), a nested execution of a question
//    this backend is computing already, or a full claims table: the node
//    keeps the rows (the plan below it runs forward once) but stores none.
//
// dp_agg.query_cost of a question that would be reused reports 0 and
// "reused: ..." (without waiting for a question being computed).
//
// Where this departs from the first design, and why:
//  * the bound on stored releases is per role (release_store.h): a bound
//    shared by all roles would let one analyst learn from its own misses how
//    many questions others asked;
//  * dp_agg.release_cache_period is part of the key and any role may set it
//    (settings.cpp): every choice only trades its own budget for freshness;
//  * a wait for another session that outlasts dp_agg.charge_timeout is an
//    ERROR before any charge (ZP005), not a second charged release;
//  * a release that cannot be stored (disk full) is still returned, with a
//    WARNING: it was charged and released once; only its reuse is lost;
//  * CREATE TABLE AS, SELECT INTO, COPY (SELECT ...) TO and REFRESH
//    MATERIALIZED VIEW plan the same SELECT and reuse it like a query does:
//    the rows are the release wherever they go;
//  * plain EXPLAIN shows the node (a plan made for EXPLAIN EXECUTE may be
//    the one a prepared statement keeps, so no plan is made without it);
//    EXPLAIN ANALYZE runs through it uncached.
#ifndef DP_AGG_PG_RELEASE_CACHE_H
#define DP_AGG_PG_RELEASE_CACHE_H

#include "pg_includes.h"
#include "query_cost.h"
#include "release_key.h"

namespace dp_pg {

// Registers the node's methods (plans are copied and read back by name).
void RegisterReleaseCache();

// Wraps the top plan of `statement` in the release cache node.
void WrapInReleaseCache(PlannedStmt* statement, const CachedStatement& cached);

// The node as a plan's state.
bool IsReleaseCacheState(const PlanState* state);

// Called by the executor hook when the query starts, after every call site
// was checked and costed into `cost` and before the charge: whether the
// query is answered from a stored release (then the reuse is recorded and
// it must not be charged). May wait for another session computing the same
// question; raises an ERROR (before any charge) if that takes longer than
// dp_agg.charge_timeout.
bool AnswerFromReleaseCache(QueryDesc* query, QueryCost* cost);

// For dp_agg.query_cost: when the query would be answered from a stored
// release, makes `cost` zero and its description "reused: ...".
void ProbeReleaseCache(QueryDesc* query, QueryCost* cost);

}  // namespace dp_pg

#endif  // DP_AGG_PG_RELEASE_CACHE_H
