#include "settings.h"

#include <new>

#include "pg_includes.h"
#include "site_plans.h"
#include "total_functions.h"

namespace dp_pg {

// Each default is stated once, here: the variable starts with it and its
// DefineCustom*Variable call registers it (docs/settings.md is checked
// against pg_settings by make test).
namespace defaults {
constexpr double kMaxEpsilon = 10.0;
constexpr double kMaxDelta = 1e-5;
constexpr int kChargeTimeoutMs = 60000;
constexpr int kLedgerWriters = 2;
constexpr bool kAllowDropExtension = false;
constexpr const char* kAdminRole = "";
constexpr double kGroupSelectionEpsilon = 1.0;
constexpr double kGroupSelectionDelta = 1e-6;
constexpr int kTestFault = static_cast<int>(TestFault::kNone);
constexpr int kInsecureTestSeed = 0;
constexpr int kMaxGroupsContributed = 1;
constexpr double kProtectedRowsEstimate = 1e5;
constexpr bool kPlanAsRestricted = false;
constexpr double kBudgetAlertFraction = 0.1;
constexpr double kPlainAggregateEpsilon = 0;
constexpr int kReleaseCachePeriodS = 3600;
constexpr int kReleaseCacheMaxEntries = 1000;
}  // namespace defaults

double max_epsilon = defaults::kMaxEpsilon;
int test_fault = defaults::kTestFault;
int charge_timeout_ms = defaults::kChargeTimeoutMs;
int ledger_writers = defaults::kLedgerWriters;
double max_delta = defaults::kMaxDelta;
bool allow_drop_extension = defaults::kAllowDropExtension;
char* admin_role = nullptr;  // the string GUC machinery sets it to a copy of kAdminRole
double group_selection_epsilon = defaults::kGroupSelectionEpsilon;
double group_selection_delta = defaults::kGroupSelectionDelta;
int max_groups_contributed = defaults::kMaxGroupsContributed;
double protected_rows_estimate = defaults::kProtectedRowsEstimate;
bool plan_as_restricted = defaults::kPlanAsRestricted;
double budget_alert_fraction = defaults::kBudgetAlertFraction;
double plain_aggregate_epsilon = defaults::kPlainAggregateEpsilon;
int release_cache_period_s = defaults::kReleaseCachePeriodS;
int release_cache_max_entries = defaults::kReleaseCacheMaxEntries;
bool session_may_use_test_seed = false;

namespace {

int insecure_test_seed = defaults::kInsecureTestSeed;

const struct config_enum_entry kTestFaults[] = {
    {"none", static_cast<int>(TestFault::kNone), false},
    {"halve_noise", static_cast<int>(TestFault::kHalveNoise), false},
    {"skip_clamping", static_cast<int>(TestFault::kSkipClamping), false},
    {"indeterminate_collation", static_cast<int>(TestFault::kIndeterminateCollation), false},
    {"case_test_constant", static_cast<int>(TestFault::kCaseTestConstant), false},
    {"hash_group_order", static_cast<int>(TestFault::kHashGroupOrder), false},
    {"first_key_spelling", static_cast<int>(TestFault::kFirstKeySpelling), false},
    {"skip_unit_bounding", static_cast<int>(TestFault::kSkipUnitBounding), false},
    {"optimal_one_sided", static_cast<int>(TestFault::kOptimalOneSided), false},
    {"builtin_arithmetic", static_cast<int>(TestFault::kBuiltinArithmetic), false},
    {"distributed_subquery_unseen", static_cast<int>(TestFault::kDistributedSubqueryUnseen), false},
    {"unpinned_settings", static_cast<int>(TestFault::kUnpinnedSettings), false},
    {"finalize_on_rewind", static_cast<int>(TestFault::kFinalizeOnRewind), false},
    {"uncapped_text_work", static_cast<int>(TestFault::kUncappedTextWork), false},
    {"unchecked_text_encoding", static_cast<int>(TestFault::kUncheckedTextEncoding), false},
    {"measured_estimates", static_cast<int>(TestFault::kMeasuredEstimates), false},
    {"uncancellable_spin", static_cast<int>(TestFault::kUncancellableSpin), false},
    {"plain_bounds_checked_on_rows", static_cast<int>(TestFault::kPlainBoundsCheckedOnRows), false},
    {"cache_invalidated_by_writes", static_cast<int>(TestFault::kCacheInvalidatedByWrites), false},
    {"public_keys_without_join", static_cast<int>(TestFault::kPublicKeysWithoutJoin), false},
    {"unmatched_rows_aggregated", static_cast<int>(TestFault::kUnmatchedRowsAggregated), false},
    {"late_site_plans", static_cast<int>(TestFault::kLateSitePlans), false},
    {nullptr, 0, false},
};

// Constructed lazily in each backend, never in the postmaster, so a forked
// process cannot inherit buffered random bytes.
alignas(dp::OpenSslRandomSource) unsigned char secure_storage[sizeof(dp::OpenSslRandomSource)];
dp::OpenSslRandomSource* secure_source = nullptr;
alignas(dp::SeededTestRandomSource) unsigned char test_storage[sizeof(dp::SeededTestRandomSource)];
dp::SeededTestRandomSource* test_source = nullptr;

void AssignTestSeed(int new_value, void* /*extra*/) {
  // Re-seeding on every assignment makes a test run reproducible from the
  // moment it sets the seed.
  test_source = new_value == 0
                    ? nullptr
                    : new (test_storage) dp::SeededTestRandomSource(
                          static_cast<std::uint64_t>(static_cast<std::uint32_t>(new_value)));
}

// A confirmation to delete the ledger must be given for the session that
// drops the extension, not left on: refused from postgresql.conf, ALTER
// SYSTEM, ALTER DATABASE/ROLE ... SET (validated as PGC_S_TEST), which would
// make every later DROP EXTENSION silent again.
bool CheckAllowDropExtension(bool* new_value, void** /*extra*/, GucSource source) {
  if (!*new_value || source == PGC_S_SESSION || source == PGC_S_CLIENT) return true;
  GUC_check_errcode(ERRCODE_INVALID_PARAMETER_VALUE);
  GUC_check_errdetail(
      "dp_agg.allow_drop_extension can only be turned on with SET in the "
      "session that drops the extension.");
  return false;
}

// dp_agg.insecure_test_work_units: a read-only view of total_work_units. The
// variable itself is never read; SHOW prints what this hook returns.
char* work_units_placeholder = nullptr;

const char* ShowWorkUnits() {
  static char text[32];
  snprintf(text, sizeof text, UINT64_FORMAT, total_work_units);
  return text;
}

char* late_plans_placeholder = nullptr;

const char* ShowLatePlans() {
  static char text[32];
  snprintf(text, sizeof text, UINT64_FORMAT, LateSitePlans());
  return text;
}

}  // namespace

void DefineSettings() {
  DefineCustomRealVariable(
      "dp_agg.max_epsilon", "Largest epsilon that one differentially private aggregate may use.",
      "Calls with a larger epsilon are refused with SQLSTATE 22023. Values above about 10 give "
      "essentially no privacy.",
      &max_epsilon, defaults::kMaxEpsilon, 1e-6, 1e6, PGC_SUSET, 0, nullptr, nullptr, nullptr);
  DefineCustomIntVariable(
      "dp_agg.insecure_test_seed",
      "FOR TESTS ONLY: draw noise from a predictable generator seeded with this value.",
      "0 (the default) draws noise from OpenSSL's CSPRNG. Any other value makes every noisy "
      "answer predictable and therefore not private; only superusers can set it.",
      &insecure_test_seed, defaults::kInsecureTestSeed, 0, INT_MAX, PGC_SUSET,
      GUC_NOT_IN_SAMPLE | GUC_SUPERUSER_ONLY, nullptr, AssignTestSeed, nullptr);
  DefineCustomRealVariable(
      "dp_agg.max_delta",
      "Largest delta that one (epsilon, delta)-differentially private aggregate may use.",
      "delta is the probability that the epsilon guarantee fails; keep it far below 1/n.",
      &max_delta, defaults::kMaxDelta, 1e-300, 0.5, PGC_SUSET, 0, nullptr, nullptr, nullptr);
  DefineCustomIntVariable(
      "dp_agg.charge_timeout",
      "How long a private query waits for its budget charge to be recorded durably.",
      "After this, the query fails without computing anything.", &charge_timeout_ms,
      defaults::kChargeTimeoutMs, 100, 3600000, PGC_SUSET, GUC_UNIT_MS, nullptr, nullptr, nullptr);
  // (A server-start setting can only be defined while the library is
  // preloaded: loaded later, defining it ends the session with FATAL.)
  if (process_shared_preload_libraries_in_progress)
    DefineCustomIntVariable(
        "dp_agg.ledger_writers",
        "How many ledger writers record privacy charges (background workers started with the "
        "server).",
        "Each writer serves one database at a time and owns its background worker slot, counted "
        "in max_worker_processes. Databases that run private queries at the same time beyond "
        "this number wait their turn.",
        &ledger_writers, defaults::kLedgerWriters, 1, 64, PGC_POSTMASTER, 0, nullptr, nullptr,
        nullptr);
  DefineCustomBoolVariable(
      "dp_agg.allow_drop_extension",
      "Confirms that DROP EXTENSION dp_agg, or DROP DATABASE of a database with a dp_agg "
      "ledger, may delete every privacy budget and the ledger.",
      "Off (the default) refuses the drop. Superusers only, and only with SET in the session "
      "that drops the extension or the database.",
      &allow_drop_extension, defaults::kAllowDropExtension, PGC_SUSET, GUC_NOT_IN_SAMPLE,
      CheckAllowDropExtension, nullptr, nullptr);
  DefineCustomStringVariable("dp_agg.admin_role", "Role whose members may manage privacy budgets.",
                             "Superusers always may. Empty (the default) means superusers only.",
                             &admin_role, defaults::kAdminRole, PGC_SUSET, 0, nullptr, nullptr,
                             nullptr);
  // USERSET: the analyst chooses how to spend budget on group selection, and
  // pays for it like for any epsilon in a query; the limits above still hold.
  DefineCustomRealVariable(
      "dp_agg.group_selection_epsilon",
      "Epsilon spent by DP partition selection of groups whose keys come from protected rows.",
      "Restricted roles only: a group is shown with the optimal probability for its row count "
      "at this epsilon and dp_agg.group_selection_delta; both are charged per query.",
      &group_selection_epsilon, defaults::kGroupSelectionEpsilon, 1e-6, 1e6, PGC_USERSET, 0,
      nullptr, nullptr, nullptr);
  DefineCustomRealVariable(
      "dp_agg.group_selection_delta",
      "Delta spent by DP partition selection: the chance that a group of one row is shown.",
      "Must not exceed dp_agg.max_delta.", &group_selection_delta, defaults::kGroupSelectionDelta,
      1e-300, 0.5, PGC_USERSET, 0, nullptr, nullptr, nullptr);
  // USERSET: the analyst trades noise (which scales with it) for how many
  // groups of each privacy unit are kept; the charge does not depend on it.
  DefineCustomIntVariable(
      "dp_agg.max_groups_contributed",
      "Most groups of one GROUP BY that a privacy unit contributes to.",
      "For tables with a privacy_unit column: each unit keeps at most this many groups, "
      "chosen at random per query, and the noise of every private aggregate and of group "
      "selection scales with it.",
      &max_groups_contributed, defaults::kMaxGroupsContributed, 1, 1000000, PGC_USERSET, 0, nullptr,
      nullptr, nullptr);
  // SUSET: the planner's picture of a protected table must not be the
  // analyst's to choose (public_estimates.h).
  DefineCustomRealVariable(
      "dp_agg.protected_rows_estimate",
      "Rows the planner assumes for each protected table in a restricted session's private "
      "query.",
      "Plans for restricted analysts use this public figure instead of the table's size and "
      "statistics, which describe the protected rows. Set it near the size of your tables "
      "(per database with ALTER DATABASE ... SET) for plans that suit them.",
      &protected_rows_estimate, defaults::kProtectedRowsEstimate, 1, 1e12, PGC_SUSET, 0, nullptr,
      nullptr, nullptr);
  DefineCustomBoolVariable(
      "dp_agg.plan_as_restricted",
      "Plans this session's private queries as a restricted analyst's are planned.",
      "With public estimates and pinned planner settings, so that EXPLAIN shows the plan an "
      "analyst gets. Superusers only.",
      &plan_as_restricted, defaults::kPlanAsRestricted, PGC_SUSET, GUC_NOT_IN_SAMPLE, nullptr,
      nullptr, nullptr);
  // SUSET: the administrator's alert (a LOG line) must not be the analyst's
  // to switch off (spend_alert.h).
  DefineCustomRealVariable(
      "dp_agg.budget_alert_fraction",
      "Alerts when a charge leaves a role less than this fraction of a budget total.",
      "The analyst gets a NOTICE with what is left after each such charge, and the server log "
      "a LOG line (\"dp_agg budget alert\") when a charge crosses the threshold. 0 turns the "
      "alert off.",
      &budget_alert_fraction, defaults::kBudgetAlertFraction, 0.0, 1.0, PGC_SUSET, 0, nullptr,
      nullptr, nullptr);
  // Superuser-only to set, so that ALTER ROLE ... SET (by a superuser, or by
  // an administrator granted SET ON PARAMETER) decides it for a restricted
  // role: the analyst neither turns plain aggregates on nor picks their epsilon.
  DefineCustomRealVariable(
      "dp_agg.plain_aggregate_epsilon",
      "Epsilon of each plain count, sum or avg a restricted role runs on protected rows.",
      "0 (the default) refuses plain aggregates on protected rows. Above 0, count(*), "
      "count(x), count(DISTINCT x), sum(x) and avg(x) are answered as dp_count, dp_sum and "
      "dp_avg with this epsilon and the bounds declared by dp_agg.set_column_bounds. Set it per "
      "role: ALTER ROLE analyst SET dp_agg.plain_aggregate_epsilon = 0.5.",
      &plain_aggregate_epsilon, defaults::kPlainAggregateEpsilon, 0, 1e6, PGC_SUSET, 0, nullptr,
      nullptr, nullptr);
  // USERSET, and on the restricted analyst's list: whatever the analyst
  // chooses only moves the trade-off between budget and freshness. A
  // shorter period (0: never reused) only costs the analyst budget; a longer
  // one only reuses older answers, which were released and paid for. Neither
  // releases anything new, and whether an answer is reused still depends
  // only on the role, the query, the key's settings and the clock. An
  // administrator sets the default for a role with ALTER ROLE ... SET.
  DefineCustomIntVariable(
      "dp_agg.release_cache_period",
      "How long the answer released for a private query is reused for the same query.",
      "The same role asking the same query (same normalised text, parameter values and "
      "meaning-changing settings) again in the same period, aligned to the Unix epoch, gets "
      "the rows released the first time and is not charged. 0 turns reuse off.",
      &release_cache_period_s, defaults::kReleaseCachePeriodS, 0, 366 * 24 * 3600, PGC_USERSET,
      GUC_UNIT_S, nullptr, nullptr, nullptr);
  // SUSET: the stored releases take disk space on the server.
  DefineCustomIntVariable(
      "dp_agg.release_cache_max_entries", "How many stored releases each role keeps for reuse.",
      "Beyond this, the role's oldest stored releases are removed; a query whose release was "
      "removed is released again, and charged.",
      &release_cache_max_entries, defaults::kReleaseCacheMaxEntries, 1, 1000000, PGC_SUSET, 0,
      nullptr, nullptr, nullptr);
  DefineCustomEnumVariable(
      "dp_agg.insecure_test_fault", "FOR TESTS ONLY: break a mechanism or a query rule on purpose.",
      "Used by the privacy audit suite to show that it detects broken mechanisms. Any value "
      "but none voids the privacy guarantee; only superusers can set it.",
      &test_fault, defaults::kTestFault, kTestFaults, PGC_SUSET,
      GUC_NOT_IN_SAMPLE | GUC_SUPERUSER_ONLY, nullptr, nullptr, nullptr);
  // Superuser-only to read (and members of pg_read_all_settings, PostgreSQL's
  // rule for GUC_SUPERUSER_ONLY): the count is an exact measure of the work
  // a query did on its rows, a timing channel without the noise of a clock.
  // Never grant pg_read_all_settings to a restricted analyst.
  DefineCustomStringVariable(
      "dp_agg.insecure_test_work_units",
      "FOR TESTS ONLY: work done by dp_agg's total functions in this backend.",
      "Text bytes and numeric digits the total versions of text and numeric functions have "
      "processed since the backend started (README \"Work per row\"); the neighbour fuzzer "
      "compares it between neighbouring databases. Read-only.",
      &work_units_placeholder, "0", PGC_INTERNAL,
      GUC_NOT_IN_SAMPLE | GUC_SUPERUSER_ONLY | GUC_NO_RESET_ALL | GUC_DISALLOW_IN_FILE, nullptr,
      nullptr, ShowWorkUnits);
  // Superuser-only to read, like the work units: a per-site plan built
  // after its query started is a timing channel (site_plans.h), and the
  // count says whether a query reached one.
  DefineCustomStringVariable(
      "dp_agg.insecure_test_late_plans",
      "FOR TESTS ONLY: per-call-site plans built after their query started, in this backend.",
      "Plans of private aggregates that their support functions had to build on a group or a "
      "row because the executor hook had not built them when the query started; the "
      "regression suites and the neighbour fuzzer check it stays 0. Read-only.",
      &late_plans_placeholder, "0", PGC_INTERNAL,
      GUC_NOT_IN_SAMPLE | GUC_SUPERUSER_ONLY | GUC_NO_RESET_ALL | GUC_DISALLOW_IN_FILE, nullptr,
      nullptr, ShowLatePlans);
#if PG_VERSION_NUM >= 150000
  MarkGUCPrefixReserved("dp_agg");
#else
  EmitWarningsOnPlaceholders("dp_agg");
#endif
}

void DecideNoiseSource() {
  // The SESSION user: a SECURITY DEFINER function owned by a superuser runs
  // with a superuser as current user, but the analyst who calls it must not
  // get predictable noise.
  session_may_use_test_seed = superuser_arg(GetSessionUserId());
}

dp::RandomSource& NoiseSource() noexcept {
  // Even if a superuser set the seed in postgresql.conf or for a database,
  // only superuser sessions get the predictable generator: everyone else's
  // noise always comes from OpenSSL. A plain flag, decided by
  // DecideNoiseSource before any C++ object is alive: this runs inside
  // CallCore, where nothing may raise a PostgreSQL error.
  if (test_source != nullptr && session_may_use_test_seed) return *test_source;
  if (secure_source == nullptr) secure_source = new (secure_storage) dp::OpenSslRandomSource();
  return *secure_source;
}

}  // namespace dp_pg
