// Which pg_proc aggregates are private, what kind each is, and where its
// parameters are among its arguments (one table of argument layouts).
#ifndef DP_AGG_PG_AGGREGATE_CATALOG_H
#define DP_AGG_PG_AGGREGATE_CATALOG_H

#include "aggregate_state.h"
#include "pg_includes.h"

namespace dp_pg {

enum class Family { kStatistic, kQuantile, kSelection, kGroupSelection };

// What the executor needs to know about one private aggregate signature.
struct PrivateAggregateKind {
  PGFunction transition;
  ValueKind value_kind;
  Oid bound_type;  // InvalidOid when the aggregate takes no bounds
  Family family = Family::kStatistic;
};

// Which release the final function makes (the Gaussian calibration differs).
enum class FinalKind : std::uint8_t { kCount, kSum, kMean, kOther };

// Positions of an aggregate's arguments (-1: it has no such argument). The
// first `per_row` arguments are evaluated per row; the others are
// parameters, evaluated once before any row is read.
struct ArgumentLayout {
  Family family;
  bool bounded;  // the statistic family: value_kind != kNone
  bool interval;  // the *_interval aggregates
  int declared;  // pronargs
  int per_row;
  int fraction, lower, upper, candidates, epsilon, delta, confidence;
};

struct AggregateCacheEntry {
  Oid aggregate;  // hash key: pg_proc OID of the aggregate
  const PrivateAggregateKind* kind;  // nullptr: not one of ours
  bool interval;  // its final function returns the value with a confidence interval
  FinalKind final_kind;
  int declared_arguments;  // pg_proc.pronargs of the aggregate
  const ArgumentLayout* layout;  // nullptr: no known layout (refused when prepared)
  bool member;  // a member of extension dp_agg (defined by its install script)
  // Not a member, yet one of its support functions is dp_agg's, or its
  // transition function runs dp_agg's code: an aggregate someone else built
  // on dp_agg's states (support_guard.h refuses to run it).
  bool foreign_support;
};

// The classification of pg_proc OID `aggregate` (cached until pg_aggregate
// or pg_proc change).
const AggregateCacheEntry* LookupAggregate(Oid aggregate);

// The private aggregate behind pg_proc OID `aggregate`, or nullptr.
const PrivateAggregateKind* LookupPrivateAggregate(Oid aggregate);

// The name of aggregate `aggregate` as the analyst wrote it, for messages:
// dp_agg.citus_count and dp_agg.citus_select, the monomorphic forms the
// Citus rewrite substitutes (citus/planner.cpp), are named dp_count and
// dp_select. A palloc'd string.
char* AggregateName(Oid aggregate);

// How many leading arguments of the call `aggref` are evaluated per row (the
// value, and the weight of weighted dp_select); the others are parameters,
// evaluated once before any row is read. Counted from the aggregate's
// signature, never from aggref->args (which also holds ORDER BY keys).
int PerRowArgumentCount(Aggref* aggref);

// The number of arguments in the signature of the private aggregate called
// by `aggref` (pg_proc.pronargs; ERROR if the call does not match it).
int DeclaredArgumentCount(Aggref* aggref);

// The argument layout of the private aggregate called by `aggref` (ERROR
// 0A000 if its signature matches none).
const ArgumentLayout& ArgumentLayoutOf(Aggref* aggref);

// Drops the cache when pg_aggregate or pg_proc change.
void RegisterAggregateCacheInvalidation();

}  // namespace dp_pg

#endif  // DP_AGG_PG_AGGREGATE_CATALOG_H
