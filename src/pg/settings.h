// Server settings (GUCs) of dp_agg and the choice of randomness source.
#ifndef DP_AGG_PG_SETTINGS_H
#define DP_AGG_PG_SETTINGS_H

#include "../core/random_source.h"

namespace dp_pg {

// dp_agg.max_epsilon: largest epsilon one aggregate call may use.
extern double max_epsilon;

// dp_agg.max_delta: largest delta one (epsilon, delta) aggregate call may use.
extern double max_delta;

// dp_agg.charge_timeout: how long a query waits for its charge to be recorded.
extern int charge_timeout_ms;

// dp_agg.ledger_writers: how many ledger writers the postmaster starts (ledger.h).
extern int ledger_writers;

// dp_agg.admin_role: members of this role may manage budgets (besides superusers).
extern char* admin_role;

// dp_agg.allow_drop_extension: a superuser's confirmation, for this session
// only, that DROP EXTENSION dp_agg may delete the budgets and the ledger
// (drop_guard.h).
extern bool allow_drop_extension;

// dp_agg.group_selection_epsilon / _delta: what DP partition selection of
// GROUP BY keys from protected rows spends per query (restricted roles).
extern double group_selection_epsilon;
extern double group_selection_delta;

// dp_agg.max_groups_contributed: how many groups of one GROUP BY a privacy
// unit may contribute to (unit_rewrite.h); the noise scales with it.
extern int max_groups_contributed;

// dp_agg.protected_rows_estimate: the row count the planner assumes for every
// protected table when it plans a restricted session's private query
// (public_estimates.h); an administrator's public figure, never measured.
extern double protected_rows_estimate;

// dp_agg.plan_as_restricted: plans and runs a superuser's or administrator's
// private queries as a restricted session's are (public estimates, pinned
// settings), so that EXPLAIN shows the plans analysts get.
extern bool plan_as_restricted;

// dp_agg.budget_alert_fraction: a charge that leaves a role less than this
// fraction of a budget total gets a NOTICE, and a LOG line when it crosses
// the threshold (spend_alert.h); 0 turns the alert off.
extern double budget_alert_fraction;
// dp_agg.plain_aggregate_epsilon: the epsilon of each plain count, sum or
// avg a restricted role runs on protected rows (plain_aggregates.h); 0:
// plain aggregates stay refused.
extern double plain_aggregate_epsilon;
// dp_agg.release_cache_period (seconds, 0 = off): how long a release is
// reused for the same question (release_cache.h); periods are aligned to
// the Unix epoch. dp_agg.release_cache_max_entries: how many stored
// releases each role keeps (release_store.h).
extern int release_cache_period_s;
extern int release_cache_max_entries;

// dp_agg.insecure_test_fault: deliberately broken mechanisms, so that the
// privacy audit suite can show that it catches them, and query rules
// replayed as they were before a leak was fixed, so that the
// neighbour-differential fuzzer can show that it finds that leak again.
// Superuser-only.
enum class TestFault {
  kNone = 0,
  kHalveNoise = 1,
  kSkipClamping = 2,
  kIndeterminateCollation = 3,  // text comparisons without a determined collation
  kCaseTestConstant = 4,  // a simple CASE's test value taken for a constant
  kHashGroupOrder = 5,  // released groups in hash-table order
  kFirstKeySpelling = 6,  // group keys of types whose equality is coarser than text
  kSkipUnitBounding = 7,  // private aggregates over unit tables left at row level
  kBuiltinArithmetic = 8,  // PostgreSQL's own (raising) arithmetic on protected rows
  kDistributedSubqueryUnseen = 9,  // Citus: only a level's own tables decide its rewrite
  kUnpinnedSettings = 10,  // Citus: the session's settings print the workers' text
  kFinalizeOnRewind = 11,  // releasing Aggs without the replay node above them
  kUncappedTextWork = 12,  // total text/numeric functions without their work caps
  kUncheckedTextEncoding = 13,  // total text functions without the encoding check
  kUncancellableSpin = 14,  // zcdp_rho busy for 3 s without CHECK_FOR_INTERRUPTS
  // Restricted plans from the protected tables' sizes and statistics (issue
  // 26, finding 2). Numbered apart from the faults other changes add.
  kMeasuredEstimates = 30,
  // Plain sum/avg refused when a row lies outside the declared bounds (the
  // plain-aggregate rewrite deciding from the data; issue 27).
  kPlainBoundsCheckedOnRows = 41,
  // The release cache keyed also by the version of every row of the
  // query's tables, so that a write drops the stored answer (issue 27,
  // item 3): a fresh charge would tell the analyst that a row changed.
  kCacheInvalidatedByWrites = 40,
  // A GROUP BY over declared public keys released without joining the key
  // set: the data's own keys appear, unselected (issue 29, item 2).
  kPublicKeysWithoutJoin = 55,
  // Partition selection's optimal rule without its second inequality
  // (1 - p_{n-1} <= e^eps (1 - p_n) + delta): groups reach release
  // probability 1 too early (issue 29; partition_selection.h).
  kOptimalOneSided = 56,
  // The aggregates of a public LEFT JOIN protected (and of the public-keys
  // rewrite) reading the NULL-extended row of a key without protected rows
  // (issue 29, review 2; AggregateOfMatchedRows in public_keys.h).
  kUnmatchedRowsAggregated = 63,
  // Per-call-site plans (group selection's table, Gaussian calibrations,
  // interval tables, dp_select's index) built on the first group or row,
  // not when the query starts: their time shows whether any group existed
  // (issue 29, second review; site_plans.h).
  kLateSitePlans = 57,
};
extern int test_fault;  // a TestFault
inline bool TestFaultIs(TestFault fault) { return test_fault == static_cast<int>(fault); }

void DefineSettings();

// Decides, from the session user, whether NoiseSource may return the seeded
// test generator. Called by the executor hook at every ExecutorStart, where
// no C++ object is alive (it reads the catalog, which may raise an ERROR).
void DecideNoiseSource();

// The randomness for noise: OpenSSL's CSPRNG, unless dp_agg.insecure_test_seed
// is set and the session user (decided by DecideNoiseSource) is a superuser.
// Never calls PostgreSQL, so it may be used inside CallCore.
dp::RandomSource& NoiseSource() noexcept;

}  // namespace dp_pg

#endif  // DP_AGG_PG_SETTINGS_H
