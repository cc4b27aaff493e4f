// dp_agg on Citus.
//
// Citus splits an aggregate that has a combine function and a non-pseudo
// state type into
//   worker_partial_agg('agg'::regprocedure, ROW(args...))   on every shard, and
//   coord_combine_agg('agg'::regprocedure, partial_text, NULL::result)   on the coordinator.
// Both are Citus's own aggregates, so dp_agg's executor hook recognises them by
// the inner aggregate (the first argument) and treats them as:
//  * the partial site (worker): the inner call's parameters are checked and
//    written into the initial state exactly as on one node, but nothing is
//    charged and nothing is released: worker_partial_agg's final function only
//    prints the state. Workers run it only for a connection that presents the
//    coordinator's client certificate (verified by PostgreSQL's TLS layer
//    against ssl_ca_file; dp_agg.coordinator_cn names it). Any other private
//    aggregate on a worker is refused, so worker ledgers are never used.
//  * the release site (coordinator): the parameters are read from the
//    worker_partial_agg call in Citus's worker job (the very expressions the
//    workers evaluate), validated, and charged once, in ExecutorStart, before
//    Citus dispatches any task (tasks start in ExecutorRun). The combining
//    state starts from the coordinator's prepared state, partial states with
//    other parameters are refused, and the final function adds the noise once
//    per group, also for groups whose shards saw no row.
// Sequential and parallel composition are unchanged: the shards partition the
// rows, so one charge of epsilon covers every group of the single release.
//
// The files of this directory, one concern each: node_role (settings and the
// authenticated coordinator), peer_certificate.c (the connection's verified
// certificate), catalog (Citus's catalogs), wrappers (this file: the wrapper
// calls), plan_text (Citus's plan, read from its text), contract (the
// fragment shapes the coordinator sends and the workers accept, side by
// side), units (privacy units on distributed tables), planner (the
// coordinator's planner pre-pass), function_guard (Citus's functions refused
// to restricted roles), sites (a wrapper call site's checks at ExecutorStart),
// site_states (the states prepared for them), worker (worker acceptance) and
// adapter.h (what the aggregate families call).
#ifndef DP_AGG_PG_CITUS_WRAPPERS_H
#define DP_AGG_PG_CITUS_WRAPPERS_H

#include "../pg_includes.h"

namespace dp_pg {

enum class Wrapper { kNone, kWorkerPartial, kCoordinatorCombine };

// Which of Citus's wrappers `function` is (Citus creates both in pg_catalog
// with its extension, so normal OIDs).
Wrapper WrapperOf(Oid function);

// `node` without RelabelType nodes above it.
Node* StripRelabel(Node* node);

// The inner aggregate of a wrapper call: its first argument, a constant.
// InvalidOid when it is not a constant (then nobody can tell what it wraps).
Oid InnerAggregateOid(Aggref* outer);

// A wrapper around a private aggregate, or one whose inner aggregate is not
// known from the query alone (treated as private: fail closed).
bool WrapsPrivateAggregate(Aggref* outer);

// worker_partial_agg(oid, ROW(a, b, ...)) -> inner(a, b, ...): the same
// expressions, in the inner aggregate's argument order.
Aggref* InnerCall(Aggref* partial, Oid inner);

// ERROR 0A000 with the message, detail and hint (hint may be null).
[[noreturn]] void RefuseDistributed(const char* message, const char* detail, const char* hint);

// Citus's worker_partial_agg or coord_combine_agg around a private aggregate
// (or around an aggregate that is not a constant, which is refused when run).
bool IsPrivateCitusWrapperCall(Aggref* outer);
// The coordinator's coord_combine_agg around a private aggregate: a release.
bool IsPrivateCitusReleaseCall(Aggref* outer);

// For an aggregate call of a worker's fragment: when it is Citus's
// worker_partial_agg around a private aggregate named by a constant, that
// private aggregate's own call with the wrapper's arguments (InnerCall);
// nullptr otherwise.
Aggref* WorkerPartialInnerCall(Aggref* outer);

}  // namespace dp_pg

#endif  // DP_AGG_PG_CITUS_WRAPPERS_H
