#include "pinned_settings.h"

extern "C" {
#include "executor/executor.h"
#include "nodes/nodeFuncs.h"
#include "utils/guc.h"
}

#include "aggregate_catalog.h"
#include "distributed.h"
#include "plan_children.h"
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

ExecutorRun_hook_type previous_executor_run = nullptr;
ExecutorFinish_hook_type previous_executor_finish = nullptr;
ExecutorEnd_hook_type previous_executor_end = nullptr;

// Runs one executor step (`step`, the previous hook or the standard one) of
// `query`, under pinned settings when the statement needs them. `step`
// captures only pointers and values: nothing with a destructor is alive
// across the PostgreSQL calls.
template <typename Step>
void RunPinned(QueryDesc* query, Step step) {
  const bool pin = NeedsPinnedSettings(query->plannedstmt);
  const int level = pin ? PinSettings() : 0;
  step();
  if (pin) UnpinSettings(level);
}

void PinnedExecutorRun(QueryDesc* query, ScanDirection direction, uint64 count, bool execute_once) {
  RunPinned(query, [=] {
    (previous_executor_run != nullptr ? previous_executor_run : standard_ExecutorRun)(
        query, direction, count, execute_once);
  });
}

void PinnedExecutorFinish(QueryDesc* query) {
  RunPinned(query, [=] {
    (previous_executor_finish != nullptr ? previous_executor_finish
                                         : standard_ExecutorFinish)(query);
  });
}

void PinnedExecutorEnd(QueryDesc* query) {
  RunPinned(query, [=] {
    (previous_executor_end != nullptr ? previous_executor_end : standard_ExecutorEnd)(query);
  });
}

}  // namespace

bool CitusLoaded() { return GetConfigOption("citus.node_conninfo", true, false) != nullptr; }

bool NeedsPinnedSettings(const PlannedStmt* plan) {
  if (plan == nullptr || plan->commandType == CMD_UTILITY || !CitusLoaded()) return false;
  bool found = false;
  FindPrivateCall(plan->planTree, &found);
  VisitPlanList(plan->subplans, FindPrivateCall, &found);
  return found;
}

int PinSettings() {
  const int level = NewGUCNestLevel();
  // The neighbour fuzzer's self-check replays the session's settings.
  if (TestFaultIs(TestFault::kUnpinnedSettings)) return level;
  for (const PinnedSetting& setting : kPinned)
    (void)set_config_option(setting.name, setting.value, PGC_USERSET, PGC_S_SESSION,
                            GUC_ACTION_SAVE, true, 0, false);
  return level;
}

void UnpinSettings(int nest_level) { AtEOXact_GUC(true, nest_level); }

void InstallPinnedSettingsHooks() {
  previous_executor_run = ExecutorRun_hook;
  ExecutorRun_hook = PinnedExecutorRun;
  previous_executor_finish = ExecutorFinish_hook;
  ExecutorFinish_hook = PinnedExecutorFinish;
  previous_executor_end = ExecutorEnd_hook;
  ExecutorEnd_hook = PinnedExecutorEnd;
}

}  // namespace dp_pg
