#include "pinned_settings.h"

extern "C" {
#include "executor/executor.h"
#include "nodes/nodeFuncs.h"
#include "utils/guc.h"
#include "utils/guc_tables.h"
#include "utils/timeout.h"
}

#include "aggregate_catalog.h"
#include "citus/wrappers.h"
#include "plan_children.h"
#include "restriction.h"
#include "settings.h"

namespace dp_pg {

namespace {

// Every setting a session may change that decides how a value is printed by
// an output function or read by an input function, at a value that prints
// every value exactly and reads back what it printed on any node:
//   - extra_float_digits > 0 prints the shortest exact form of a float
//     (PostgreSQL 12+); 0 and below round (0.25 became 0.2 on the workers).
//   - DateStyle ISO prints year-month-day, which every DateStyle reads alike
//     (SQL/German/Postgres print day and month in the session's order, and
//     Postgres style prints a time-zone abbreviation instead of the offset).
//   - IntervalStyle postgres prints a sign on every field, which every
//     IntervalStyle reads alike (sql_standard reads a leading sign onto all
//     fields).
//   - standard_conforming_strings on: Citus prints '...' literals for it.
//   - bytea_output hex: escape format is read alike, but one form is simpler
//     to reason about.
//   - lc_monetary C: money is printed and read by the locale's conventions.
//   - xmloption content: a content fragment fails to read as a document.
//   - xmlbinary base64: how XML functions encode bytea.
// TimeZone is not pinned: with DateStyle ISO, a timestamptz is printed with
// its numeric offset and read back as the same instant in any time zone, so
// the analyst keeps seeing times in their own zone.
struct PinnedSetting {
  const char* name;
  const char* value;
};

constexpr PinnedSetting kPinned[] = {
    {"extra_float_digits", "1"},   {"DateStyle", "ISO, MDY"},
    {"IntervalStyle", "postgres"}, {"standard_conforming_strings", "on"},
    {"bytea_output", "hex"},       {"lc_monetary", "C"},
    {"xmloption", "content"},      {"xmlbinary", "base64"},
};

// ---------------------------------------------------------------------------
// Planner and executor settings of a restricted session (issue 26, finding
// 2): a plan, and the time it takes, must be a function of the query and of
// public information. A restricted role may not SET these (restriction.cpp),
// but it can pass them as connection options (-c jit_above_cost=...), which
// README once said "change plans, not outcomes": JIT compiling only above an
// analyst-chosen cost made the cost of a plan, computed from the protected
// table's size and statistics, visible as 200 ms. So while a restricted
// session's private query is planned and executed:
//   - every setting of the planner's and executor's groups (query tuning:
//     methods, costs, GEQO, other; memory; parallel workers; developer
//     options) that the session itself set (a connection option, SET, a
//     function's SET clause: sources above ALTER ROLE ... IN DATABASE) runs
//     at PostgreSQL's built-in value instead; values the administrator set
//     (postgresql.conf, ALTER SYSTEM/DATABASE/ROLE) are public and stay;
//   - jit is off, whoever set it: compiling doubles the data-dependent work
//     of a row into a large constant only above a cost threshold;
//   - lock_timeout and statement_timeout set by the session do not apply
//     (statement_timeout's timer, armed before the statement, is disarmed):
//     they turned a data-dependent duration into an error the session could
//     catch and branch on in one statement.
// ---------------------------------------------------------------------------

bool IsSessionSet(const config_generic* setting) { return setting->source > PGC_S_DATABASE_USER; }

bool IsPlannerOrExecutorSetting(const config_generic* setting) {
  switch (setting->group) {
    case QUERY_TUNING_METHOD:
    case QUERY_TUNING_COST:
    case QUERY_TUNING_GEQO:
    case QUERY_TUNING_OTHER:
    case RESOURCES_MEM:
    case RESOURCES_ASYNCHRONOUS:
    case DEVELOPER_OPTIONS:
      return true;
    default:
      return strcmp(setting->name, "lock_timeout") == 0 ||
             strcmp(setting->name, "statement_timeout") == 0;
  }
}

// PostgreSQL's built-in value of `setting`, as set_config_option reads it
// (integers in the setting's base unit); nullptr for a string with none.
const char* BuiltInValue(config_generic* setting) {
  switch (setting->vartype) {
    case PGC_BOOL:
      return reinterpret_cast<config_bool*>(setting)->boot_val ? "on" : "off";
    case PGC_INT:
      return psprintf("%d", reinterpret_cast<config_int*>(setting)->boot_val);
    case PGC_REAL:
      return psprintf("%.17g", reinterpret_cast<config_real*>(setting)->boot_val);
    case PGC_STRING:
      return reinterpret_cast<config_string*>(setting)->boot_val;
    case PGC_ENUM: {
      auto* options = reinterpret_cast<config_enum*>(setting);
      return config_enum_lookup_by_value(options, options->boot_val);
    }
  }
  return nullptr;
}

void PinPlannerAndExecutorSettings() {
  config_generic** settings = get_guc_variables();
  const int count = GetNumConfigOptions();
  for (int i = 0; i < count; ++i) {
    config_generic* setting = settings[i];
    // Only these can be set after the connection starts; the others are
    // fixed for the session's life by the administrator or at startup.
    if (setting->context != PGC_USERSET && setting->context != PGC_SUSET) continue;
    if (!IsPlannerOrExecutorSetting(setting)) continue;
    const char* value = strcmp(setting->name, "jit") == 0
                            ? "off"
                            : (IsSessionSet(setting) ? BuiltInValue(setting) : nullptr);
    if (value == nullptr) continue;
    (void)set_config_option(setting->name, value, PGC_SUSET, PGC_S_SESSION, GUC_ACTION_SAVE, true,
                            0, false);
  }
}

config_generic* FindSetting(const char* name) {
  config_generic** settings = get_guc_variables();
  const int count = GetNumConfigOptions();
  for (int i = 0; i < count; ++i)
    if (strcmp(settings[i]->name, name) == 0) return settings[i];
  return nullptr;
}

// Disarms the statement timer when the session chose its timeout (read
// before the pins, which show the built-in value). Armed again by
// PostgreSQL for the next statement (a FETCH of a cursor arms it, and its
// ExecutorRun disarms it here again).
void DisarmSessionStatementTimeout() {
  static config_generic* statement_timeout = nullptr;
  if (statement_timeout == nullptr) statement_timeout = FindSetting("statement_timeout");
  if (statement_timeout != nullptr && IsSessionSet(statement_timeout) &&
      get_timeout_active(STATEMENT_TIMEOUT))
    disable_timeout(STATEMENT_TIMEOUT, false);
}

bool IsPrivateCall(Node* node, void* context) {
  if (node == nullptr) return false;
  if (IsA(node, Aggref)) {
    auto* aggref = reinterpret_cast<Aggref*>(node);
    if (LookupPrivateAggregate(aggref->aggfnoid) != nullptr || IsPrivateCitusWrapperCall(aggref))
      return true;
  }
  return expression_tree_walker(node, DP_EXPRESSION_WALKER(IsPrivateCall), context);
}

// A ChildPlanVisitor: sets *context when a private call is at or below
// `plan` (the walk only reads the plan).
Plan* FindPrivateCall(Plan* plan, void* context) {
  bool* found = static_cast<bool*>(context);
  if (plan == nullptr || *found) return plan;
  check_stack_depth();
  if (IsA(plan, Agg) && (IsPrivateCall(reinterpret_cast<Node*>(plan->targetlist), nullptr) ||
                         IsPrivateCall(reinterpret_cast<Node*>(plan->qual), nullptr))) {
    *found = true;
    return plan;
  }
  VisitChildPlans(plan, FindPrivateCall, context);
  return plan;
}

}  // namespace

// Asked by the executor hooks on every statement. Settings are never
// removed, so a yes stays; a no stays until a setting is added (a library
// loaded, a placeholder SET).
bool CitusLoaded() {
  static bool loaded = false;
  static int settings_when_asked = -1;
  if (loaded) return true;
  const int settings = GetNumConfigOptions();
  if (settings == settings_when_asked) return false;
  loaded = GetConfigOption("citus.node_conninfo", true, false) != nullptr;
  settings_when_asked = settings;
  return loaded;
}

bool PlansAsRestricted() { return plan_as_restricted || RestrictedSession(); }

bool NeedsPinnedSettings(const PlannedStmt* plan) {
  if (plan == nullptr || plan->commandType == CMD_UTILITY) return false;
  if (!CitusLoaded() && !PlansAsRestricted()) return false;
  bool found = false;
  FindPrivateCall(plan->planTree, &found);
  VisitPlanList(plan->subplans, FindPrivateCall, &found);
  return found;
}

int PinSettings(bool planner_and_executor) {
  const int level = NewGUCNestLevel();
  // The neighbour fuzzer's self-check replays the session's settings.
  if (TestFaultIs(TestFault::kUnpinnedSettings)) return level;
  if (planner_and_executor) {
    DisarmSessionStatementTimeout();
    PinPlannerAndExecutorSettings();
  }
  // unchecked_text_encoding replays issue 26's finding 1 as it was found:
  // the session's DateStyle printing a cut zone abbreviation, and the text
  // functions raising on it (total_functions.cpp).
  if (TestFaultIs(TestFault::kUncheckedTextEncoding)) return level;
  for (const PinnedSetting& setting : kPinned)
    (void)set_config_option(setting.name, setting.value, PGC_USERSET, PGC_S_SESSION,
                            GUC_ACTION_SAVE, true, 0, false);
  return level;
}

void UnpinSettings(int nest_level) { AtEOXact_GUC(true, nest_level); }

int PinExecutorStep(const QueryDesc* query) {
  return NeedsPinnedSettings(query->plannedstmt) ? PinSettings(PlansAsRestricted()) : 0;
}

void UnpinExecutorStep(int nest_level) {
  if (nest_level != 0) UnpinSettings(nest_level);
}

}  // namespace dp_pg
