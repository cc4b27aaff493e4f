// Every hook dp_agg installs, in one place (as sepgsql's hooks.c): the
// library's entry point, each hook variable's previous value, the chaining
// to it, and the dispatch to the concern that does the work. Which hook
// calls the previous one first and which last is decided here; the
// concerns' functions neither install nor chain anything.
//
// Only a library loaded at server start has its hooks in place for every
// query of every backend. Loaded later, it installs no hook, the initial
// states get no parameters, and the aggregates refuse to run (fail closed).
#include "pg_includes.h"

extern "C" {
#include "catalog/objectaccess.h"
#include "libpq/auth.h"
#include "optimizer/paths.h"
#include "optimizer/plancat.h"
#include "optimizer/planner.h"
#include "parser/analyze.h"
#include "storage/ipc.h"
#include "tcop/utility.h"
#include "utils/elog.h"
#include "utils/guc_tables.h"
#include "utils/lsyscache.h"
#include "utils/queryjumble.h"
#include "utils/selfuncs.h"
}

#include <cstring>

#include "aggregate_catalog.h"
#include "call_sites.h"
#include "citus/function_guard.h"
#include "citus/node_role.h"
#include "citus/peer_certificate.h"
#include "drop_guard.h"
#include "information_schema.h"
#include "label_cache.h"
#include "ledger.h"
#include "pinned_settings.h"
#include "planner_hook.h"
#include "public_estimates.h"
#include "public_key_ddl.h"
#include "query_id.h"
#include "release_cache.h"
#include "release_claims.h"
#include "release_once.h"
#include "release_replay.h"
#include "remote_connection_guard.h"
#include "restriction.h"
#include "settings.h"
#include "support_guard.h"

namespace dp_pg {

namespace {

// --- shared memory ------------------------------------------------------------

shmem_request_hook_type previous_shmem_request = nullptr;
shmem_startup_hook_type previous_shmem_startup = nullptr;

void ShmemRequest() {
  if (previous_shmem_request != nullptr) previous_shmem_request();
  RequestLedgerSharedMemory();  // ledger.h
  RequestClaimsSharedMemory();  // release_claims.h
}

void ShmemStartup() {
  if (previous_shmem_startup != nullptr) previous_shmem_startup();
  StartLedgerSharedMemory();
  StartClaimsSharedMemory();
}

// --- connections and messages -------------------------------------------------

ClientAuthentication_hook_type previous_client_authentication = nullptr;
emit_log_hook_type previous_emit_log = nullptr;
GucEnumCheckHook previous_client_min_messages_check = nullptr;

void ClientAuthentication(Port* port, int status) {
  if (previous_client_authentication != nullptr) previous_client_authentication(port, status);
  JudgeLoginRole(port, status);  // restriction.h
  dp_citus_record_authentication(port, status);  // citus/peer_certificate.h
}

void EmitLog(ErrorData* error) {
  KeepDebugMessageFromClient(error);  // restriction.h
  if (previous_emit_log != nullptr) previous_emit_log(error);
}

// client_min_messages, however it is set (SET, set_config(), connection
// options, ALTER ROLE ... SET, a function's SET clause, postgresql.conf on
// reload), stays at NOTICE or above in a restricted session.
bool CheckClientMinMessages(int* new_value, void** extra, GucSource source) {
  if (previous_client_min_messages_check != nullptr &&
      !previous_client_min_messages_check(new_value, extra, source))
    return false;
  ClampClientMinMessages(new_value);  // restriction.h
  return true;
}

void InstallClientMinMessagesCheck() {
  struct config_generic** settings = get_guc_variables();
  const int count = GetNumConfigOptions();
  for (int i = 0; i < count; ++i) {
    if (settings[i]->vartype != PGC_ENUM || strcmp(settings[i]->name, "client_min_messages") != 0)
      continue;
    auto* setting = reinterpret_cast<struct config_enum*>(settings[i]);
    if (setting->check_hook == CheckClientMinMessages) return;
    previous_client_min_messages_check = setting->check_hook;
    setting->check_hook = CheckClientMinMessages;
    return;
  }
  elog(ERROR, "dp_agg: setting client_min_messages not found");
}

// --- parsing and planning -------------------------------------------------------

post_parse_analyze_hook_type previous_post_parse_analyze = nullptr;
planner_hook_type previous_planner = nullptr;
create_upper_paths_hook_type previous_upper_paths = nullptr;
get_relation_info_hook_type previous_relation_info = nullptr;
get_relation_stats_hook_type previous_relation_stats = nullptr;
get_index_stats_hook_type previous_index_stats = nullptr;
get_attavgwidth_hook_type previous_attavgwidth = nullptr;

void PostParseAnalyze(ParseState* state, Query* query, JumbleState* jumble) {
  // First, so that the hooks chained to see the identifier (query_id.h).
  jumble = IdentifyQueryDpAggMayCharge(state, query, jumble);
  if (previous_post_parse_analyze != nullptr) previous_post_parse_analyze(state, query, jumble);
  PointRestrictedQueryToListingViews(query);  // information_schema.h
}

PlannedStmt* Planner(Query* query, const char* query_string, int cursor_options,
                     ParamListInfo bound_parameters) {
  return PlanPrivateQuery(query, query_string, cursor_options, bound_parameters,  // planner_hook.h
                          previous_planner != nullptr ? previous_planner : standard_planner);
}

void UpperPaths(PlannerInfo* root, UpperRelationKind stage, RelOptInfo* input_rel,
                RelOptInfo* output_rel, void* extra) {
  if (previous_upper_paths != nullptr)
    previous_upper_paths(root, stage, input_rel, output_rel, extra);
  KeepReleasesOutOfParallelPaths(root, stage, output_rel);  // release_once.h
}

// Public estimates (public_estimates.h).
void RelationInfo(PlannerInfo* root, Oid relation, bool inheritance_parent, RelOptInfo* rel) {
  if (previous_relation_info != nullptr)
    previous_relation_info(root, relation, inheritance_parent, rel);
  PublicRelationInfo(relation, inheritance_parent, rel);
}

bool RelationStats(PlannerInfo* root, RangeTblEntry* entry, AttrNumber column,
                   VariableStatData* data) {
  if (PublicRelationStats(entry, data)) return true;
  return previous_relation_stats != nullptr && previous_relation_stats(root, entry, column, data);
}

bool IndexStats(PlannerInfo* root, Oid index, AttrNumber column, VariableStatData* data) {
  if (PublicIndexStats(index, data)) return true;
  return previous_index_stats != nullptr && previous_index_stats(root, index, column, data);
}

int32 AverageWidth(Oid relation, AttrNumber column) {
  const int32 width = PublicAverageWidth(relation, column);
  if (width > 0) return width;
  return previous_attavgwidth != nullptr ? previous_attavgwidth(relation, column) : 0;
}

// --- execution ---------------------------------------------------------------------

ExecutorStart_hook_type previous_executor_start = nullptr;
ExecutorRun_hook_type previous_executor_run = nullptr;
ExecutorFinish_hook_type previous_executor_finish = nullptr;
ExecutorEnd_hook_type previous_executor_end = nullptr;

void ExecutorStartHook(QueryDesc* query, int flags) {
  StartPrivateExecutor(
      query, flags,  // call_sites.h
      previous_executor_start != nullptr ? previous_executor_start : standard_ExecutorStart);
}

// Run, Finish and End under pinned settings when the statement needs them
// (pinned_settings.h).
void ExecutorRunHook(QueryDesc* query, ScanDirection direction, uint64 count, bool execute_once) {
  const int pinned = PinExecutorStep(query);
  (previous_executor_run != nullptr ? previous_executor_run : standard_ExecutorRun)(
      query, direction, count, execute_once);
  UnpinExecutorStep(pinned);
}

void ExecutorFinishHook(QueryDesc* query) {
  const int pinned = PinExecutorStep(query);
  (previous_executor_finish != nullptr ? previous_executor_finish : standard_ExecutorFinish)(query);
  UnpinExecutorStep(pinned);
}

void ExecutorEndHook(QueryDesc* query) {
  const int pinned = PinExecutorStep(query);
  (previous_executor_end != nullptr ? previous_executor_end : standard_ExecutorEnd)(query);
  UnpinExecutorStep(pinned);
}

// --- utility statements and objects ----------------------------------------------

ProcessUtility_hook_type previous_process_utility = nullptr;
object_access_hook_type previous_object_access = nullptr;

void ProcessUtilityHook(PlannedStmt* statement, const char* query_string, bool read_only_tree,
                        ProcessUtilityContext context, ParamListInfo params,
                        QueryEnvironment* environment, DestReceiver* destination,
                        QueryCompletion* completion) {
  Node* parse_tree = statement->utilityStmt;
  RefuseUnconfirmedLedgerDrop(parse_tree);  // drop_guard.h
  RefuseAggregateOverSupportFunctions(parse_tree);  // support_guard.h
  List* key_columns = RefuseTypeChangeOfPublicKeys(parse_tree);  // public_key_ddl.h
  RunUtilityForRestrictedRoles(  // restriction.h
      statement, query_string, read_only_tree, context, params, environment, destination,
      completion,
      previous_process_utility != nullptr ? previous_process_utility : standard_ProcessUtility);
  LabelCopiedLedger(parse_tree);  // drop_guard.h
  FollowPublicKeyColumns(parse_tree, key_columns);  // public_key_ddl.h
}

void ObjectAccess(ObjectAccessType access, Oid class_id, Oid object_id, int sub_id,
                  void* argument) {
  if (previous_object_access != nullptr)
    previous_object_access(access, class_id, object_id, sub_id, argument);
  RefuseUnconfirmedExtensionDrop(access, class_id, object_id);  // drop_guard.h
}

// --- function calls ------------------------------------------------------------------

needs_fmgr_hook_type previous_needs_fmgr = nullptr;
fmgr_hook_type previous_fmgr = nullptr;

bool NeedsFmgr(Oid function) {
  if (previous_needs_fmgr != nullptr && previous_needs_fmgr(function)) return true;
  return CitusFunctionNeedsGuard(function) ||  // citus/function_guard.h
         RemoteConnectionFunctionNeedsGuard(function);  // remote_connection_guard.h
}

void Fmgr(FmgrHookEventType event, FmgrInfo* info, Datum* private_data) {
  if (previous_fmgr != nullptr) previous_fmgr(event, info, private_data);
  if (event != FHET_START) return;
  GuardCitusFunctionCall(info->fn_oid);
  GuardRemoteConnectionCall(info->fn_oid);
}

}  // namespace

}  // namespace dp_pg

extern "C" {

PG_MODULE_MAGIC;

PGDLLEXPORT void _PG_init(void);

void _PG_init(void) {
  using namespace dp_pg;
  // dp_agg on Citus: defined before DefineSettings reserves the prefix.
  DefineDistributedSettings();
  DefineSettings();
  // Plans carrying the replay node may be copied and read back by name.
  RegisterReleaseReplay();
  RegisterReleaseCache();
  if (!process_shared_preload_libraries_in_progress) return;
  // Every ledger row records the query's identifier (dp_agg.spend_by_query
  // groups spending by it). Not EnableQueryId(): PostgreSQL would then compute
  // it for every statement of every session; the post-parse-analysis hook
  // computes it for the statements dp_agg may charge or judge (query_id.h).
  RegisterAggregateCacheInvalidation();
  RegisterLabelCacheInvalidation();
  RegisterRestrictionInvalidation();  // restriction.h
  RegisterCitusFunctionCacheInvalidation();
  RegisterRemoteConnectionCacheInvalidation();
  InstallLedger();  // the pool of ledger writers

  previous_shmem_request = shmem_request_hook;
  shmem_request_hook = ShmemRequest;
  previous_shmem_startup = shmem_startup_hook;
  shmem_startup_hook = ShmemStartup;

  previous_client_authentication = ClientAuthentication_hook;
  ClientAuthentication_hook = ClientAuthentication;
  previous_emit_log = emit_log_hook;
  emit_log_hook = EmitLog;
  InstallClientMinMessagesCheck();

  previous_post_parse_analyze = post_parse_analyze_hook;
  post_parse_analyze_hook = PostParseAnalyze;
  previous_planner = planner_hook;
  planner_hook = Planner;
  previous_upper_paths = create_upper_paths_hook;
  create_upper_paths_hook = UpperPaths;
  previous_relation_info = get_relation_info_hook;
  get_relation_info_hook = RelationInfo;
  previous_relation_stats = get_relation_stats_hook;
  get_relation_stats_hook = RelationStats;
  previous_index_stats = get_index_stats_hook;
  get_index_stats_hook = IndexStats;
  previous_attavgwidth = get_attavgwidth_hook;
  get_attavgwidth_hook = AverageWidth;

  previous_executor_start = ExecutorStart_hook;
  ExecutorStart_hook = ExecutorStartHook;
  previous_executor_run = ExecutorRun_hook;
  ExecutorRun_hook = ExecutorRunHook;
  previous_executor_finish = ExecutorFinish_hook;
  ExecutorFinish_hook = ExecutorFinishHook;
  previous_executor_end = ExecutorEnd_hook;
  ExecutorEnd_hook = ExecutorEndHook;

  previous_process_utility = ProcessUtility_hook;
  ProcessUtility_hook = ProcessUtilityHook;
  previous_object_access = object_access_hook;
  object_access_hook = ObjectAccess;

  previous_needs_fmgr = needs_fmgr_hook;
  needs_fmgr_hook = NeedsFmgr;
  previous_fmgr = fmgr_hook;
  fmgr_hook = Fmgr;

  // After the client_min_messages check is in place (restriction.h).
  StartRestrictionRules();
}

}  // extern "C"
