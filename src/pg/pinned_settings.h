// Text that travels between Citus nodes is printed and read under settings
// no session can change.
//
// Citus deparses the fragment it sends to the workers with the output
// functions of the coordinator's session: extra_float_digits rounds a float
// parameter (the workers then aggregate with an epsilon or bounds other than
// the ones the coordinator charged), DateStyle prints a date the workers read
// as another day, standard_conforming_strings and bytea_output change how a
// literal reads, and the coordinator reads the workers' group keys back with
// its session's input functions (issue 25, finding 1; review_const C1-C4
// were instances of the same class). Instead of making every shipped value
// safe one type at a time, the settings that decide how values are printed
// and read are pinned to fixed values while a private query is planned and
// executed on a node of a Citus cluster, on the coordinator (deparse,
// parameters, reading results back) and on the workers (printing partial
// states and group keys).
#ifndef DP_AGG_PG_PINNED_SETTINGS_H
#define DP_AGG_PG_PINNED_SETTINGS_H

#include "pg_includes.h"

namespace dp_pg {

// Citus is loaded in this server (its settings exist).
bool CitusLoaded();

// Whether a planned statement carries private work that Citus moves between
// nodes: a private aggregate (or Citus's wrapper around one) in a plan, on a
// server that has Citus loaded.
bool NeedsPinnedSettings(const PlannedStmt* plan);

// Opens a GUC nest level and sets every pinned setting in it; returns the
// level for UnpinSettings. An ERROR in between is cleaned up by the
// (sub)transaction's abort, like a function's SET clause.
int PinSettings();
void UnpinSettings(int nest_level);

// Installs ExecutorRun/Finish/End hooks that pin the settings around the
// executor of a statement for which NeedsPinnedSettings holds (ExecutorStart
// pins in call_sites.cpp's hook).
void InstallPinnedSettingsHooks();

}  // namespace dp_pg

#endif  // DP_AGG_PG_PINNED_SETTINGS_H
