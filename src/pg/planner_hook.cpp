#include "planner_hook.h"

extern "C" {
#include "optimizer/planner.h"
#include "tcop/pquery.h"
}

#include "citus/function_guard.h"
#include "citus/planner.h"
#include "citus/worker.h"
#include "judge_prefilter.h"
#include "pinned_settings.h"
#include "plain_aggregates.h"
#include "public_estimates.h"
#include "query_judgement.h"
#include "query_rewrites.h"
#include "regex_like.h"
#include "release_cache.h"
#include "release_once.h"
#include "release_replay.h"
#include "restriction.h"
#include "row_count.h"
#include "shard_partials.h"
#include "total_functions.h"

namespace dp_pg {

namespace {

// How many planner calls are running: more than one while Citus plans a
// subquery recursively inside the planning of the statement.
int planner_depth = 0;

PlannedStmt* PlanJudged(Query* query, const char* query_string, int cursor_options,
                        ParamListInfo bound_parameters, planner_hook_type next) {
  // A query that cannot concern dp_agg, of an unrestricted session on a node
  // without Citus, is planned at once (judge_prefilter.h): the steps below
  // would leave it as it is. The final plan is still proved and wrapped
  // (a SQL function the planner inlines may bring private aggregates in).
  // Asked first, before anything is planned: the statement's decision
  // (restriction.h) is made here for every plan made in the statement.
  const bool restricted = RestrictedSession();
  if (!CitusLoaded() && !restricted && !QueryMayConcernDpAgg(query)) {
    SetPublicEstimatesActive(false);
    PlannedStmt* plan = next(query, query_string, cursor_options, bound_parameters);
    VerifyReleasedOnce(plan);
    WrapReleases(plan, cursor_options);
    return plan;
  }
  // dp_agg on Citus: a restricted role calls no Citus function, at any level,
  // before it is judged and charged (issue 25, finding 3). Only the outermost
  // planning with no query running is the analyst's statement as written;
  // queries planned inside a planning or while a query runs may be Citus's
  // own (recursive planning, local execution), with the functions Citus puts
  // into them.
  RefuseRestrictedCitusCalls(query, planner_depth > 1 || ActivePortal != nullptr);
  // A restricted role's plain count/sum/avg over protected rows become
  // dp_count/dp_sum/dp_avg when an administrator gave the role an epsilon
  // for them (plain_aggregates.h), before anything else looks at the query.
  RewritePlainAggregates(query);
  // dp_count(epsilon) becomes dp_count(true, epsilon) before it is judged.
  ExpandRowCounts(query);
  // So do a restricted role's simple regular expressions: LIKE (regex_like.h).
  if (RestrictedSession()) TranslateSimpleRegexes(query);
  // dp_agg on Citus: a worker runs the coordinator's partial-aggregation
  // fragments of a query the coordinator judged (citus/worker.h).
  const bool fragment = AcceptCoordinatorFragment(query);
  // The coordinator judged the fragment's to_char calls; this backend's
  // dp_agg.total_to_char answers NULL until it has checked its own lc_time
  // (total_functions.h), which raises, if at all, for every query alike.
  if (fragment) PinLcTimeForToChar();
  const Verdict verdict =
      fragment ? Verdict{true, NIL} : JudgeQuery(query);  // raises ERROR if refused
  ApplyRewrites(verdict.rewrites);
  // The release cache's question (release_cache.h): from the tree as judged
  // and rewritten, before Citus or the planner change it. Only the
  // statement's own planning: plans made inside it (Citus's recursive
  // subplans) are parts of its question, and a worker's fragment is the
  // coordinator's.
  CachedStatement cached;
  const bool cacheable = !fragment && planner_depth == 1 && DescribeCachedStatement(query, &cached);
  // dp_agg on Citus (citus/planner.h): before Citus plans the query.
  const bool private_distributed = PrepareDistributedQuery(query);
  // A restricted session's private query, and a worker's fragment of one, is
  // planned from public estimates under settings the session did not choose
  // (public_estimates.h, pinned_settings.h); the caller restores the flag.
  const bool as_restricted = (verdict.reads_protected && PlansAsRestricted()) || fragment;
  SetPublicEstimatesActive(as_restricted);
  // Citus prints the workers' fragment while it plans: under pinned
  // settings, never the session's (pinned_settings.h).
  const bool pin =
      ((private_distributed || fragment || verdict.reads_protected) && CitusLoaded()) ||
      as_restricted;
  const int pin_level = pin ? PinSettings(as_restricted) : 0;
  PlannedStmt* plan =
      private_distributed
          ? PlanWithoutRouter(query, query_string, cursor_options, bound_parameters, next)
          : next(query, query_string, cursor_options, bound_parameters);
  if (pin) UnpinSettings(pin_level);
  // The judgement depends on who runs the query: a cached plan is made again
  // when the current user changes.
  if (verdict.reads_protected) plan->dependsOnRole = true;
  VerifyReleasedOnce(plan);
  // dp_agg on Citus, on a worker: the fragment's partial states without
  // Citus's per-row wrapper (shard_partials.h).
  if (fragment) RunShardPartialsDirectly(plan);
  // Rewinds and rescans replay a release instead of drawing again.
  WrapReleases(plan, cursor_options);
  // The same question is answered once per period (release_cache.h).
  if (cacheable) WrapInReleaseCache(plan, cached);
  return plan;
}

}  // namespace

PlannedStmt* PlanPrivateQuery(Query* query, const char* query_string, int cursor_options,
                              ParamListInfo bound_parameters, planner_hook_type next) {
  PlannedStmt* volatile plan = nullptr;
  ++planner_depth;
  // A planning inside this one (Citus's recursive planning, a function
  // inlined) decides its own estimates; this one's resume after it.
  const bool outer_public_estimates = PublicEstimatesActive();
  PG_TRY();
  { plan = PlanJudged(query, query_string, cursor_options, bound_parameters, next); }
  PG_FINALLY();
  {
    --planner_depth;
    SetPublicEstimatesActive(outer_public_estimates);
  }
  PG_END_TRY();
  return plan;
}

}  // namespace dp_pg
