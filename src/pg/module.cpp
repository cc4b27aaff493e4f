// Library entry point: settings and hooks.
#include "call_sites.h"
#include "citus/function_guard.h"
#include "citus/node_role.h"
#include "drop_guard.h"
#include "information_schema.h"
#include "ledger.h"
#include "pg_includes.h"
#include "pinned_settings.h"
#include "planner_hook.h"
#include "public_estimates.h"
#include "release_cache.h"
#include "release_claims.h"
#include "release_once.h"
#include "release_replay.h"
#include "restriction.h"
#include "settings.h"

extern "C" {
#include "utils/queryjumble.h"

PG_MODULE_MAGIC;

PGDLLEXPORT void _PG_init(void);

void _PG_init(void) {
  // dp_agg on Citus: defined before DefineSettings reserves the prefix.
  dp_pg::DefineDistributedSettings();
  dp_pg::DefineSettings();
  // Plans carrying the replay node may be copied and read back by name.
  dp_pg::RegisterReleaseReplay();
  dp_pg::RegisterReleaseCache();
  // Only a library loaded at server start has its hook in place for every
  // query of every backend. Loaded later, it installs no hook, the initial
  // states get no parameters, and the aggregates refuse to run (fail closed).
  if (!process_shared_preload_libraries_in_progress) return;
  // Every ledger row records the query's identifier (dp_agg.spend_by_query
  // groups spending by it), as pg_stat_statements does: with
  // compute_query_id = auto (the default) PostgreSQL then computes it.
  EnableQueryId();
  dp_pg::InstallExecutorHook();
  dp_pg::InstallPinnedSettingsHooks();
  dp_pg::InstallPlannerHook();
  dp_pg::InstallPublicEstimatesHooks();
  dp_pg::InstallReleaseOnceHook();
  dp_pg::InstallRestrictionHooks();
  dp_pg::InstallInformationSchemaHook();
  dp_pg::InstallLedger();
  dp_pg::InstallReleaseClaims();
  dp_pg::InstallDropGuard();
  dp_pg::InstallCitusFunctionGuard();
}

}  // extern "C"
