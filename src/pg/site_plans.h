// Every plan a private aggregate's support functions keep per call site,
// built when the query starts, from the call site's prepared initial state.
//
// Why: a plan built on the first group (or the first row) costs time only
// when a group (or a row) exists. Group selection's optimal table takes about
// 1.5 ms for parameters the process has not used, a Gaussian calibration
// 2.5-11 ms, dp_avg_interval's noise tables and dp_select's candidate index
// up to a millisecond: a GROUP BY whose WHERE matched no row would answer
// measurably faster than one whose groups were all then suppressed, and the
// analyst would learn, by timing, whether any group existed. Built at
// ExecutorStart (call_sites.cpp) from public parameters only, they cost the
// same whatever the data; the final functions then find them ready.
//
// Each family's source file owns its caches and says which of its support
// functions keep one (Plan*Site below); this file dispatches on the function
// pointer nodeAgg (or Citus) will call, so that a slot is only ever filled
// with the cache its own function reads (final_site_cache.h checks the tag).
#ifndef DP_AGG_PG_SITE_PLANS_H
#define DP_AGG_PG_SITE_PLANS_H

#include "pg_includes.h"

namespace dp_pg {

// Builds the plans of the call site of transition `transno` of `node`,
// prepared with `initial`: its transition's (dp_select's index) and those of
// every output aggregate that finalizes it. A partial step's outputs have
// no final function; a finalize step (parallel or partitionwise plans) is
// given the initial state of its partial step (FindPartialAggref).
void PlanAggregateSite(AggState* node, int transno, Datum initial);

// The partial Aggref whose output the finalize step's `aggref` combines:
// its argument is a Var of `finalize`'s subplan, followed down through the
// subplans' target lists (Gather, Gather Merge, Sort, Append's first
// child...). nullptr when it leads elsewhere.
Aggref* FindPartialAggref(Agg* finalize, Aggref* aggref);

// Builds the plans of final function `final_function` for the call site
// prepared with `initial` into `*slot` (allocated in `context`). Returns
// false when that function keeps no per-site plans (or under the test fault
// late_site_plans, which leaves every plan to the first group or row).
bool PlanFinalSite(PGFunction final_function, void** slot, MemoryContext context, Datum initial);

// Builds the per-site data of transition function `transition` (dp_select's
// candidate index) into `flinfo->fn_extra`. Returns false when it keeps none.
bool PlanTransitionSite(PGFunction transition, FmgrInfo* flinfo, Datum initial, Oid collation);

// The families' parts (aggregates.cpp, variance_aggregates.cpp,
// selection_aggregates.cpp): each returns false for a function not its own.
bool PlanStatisticFinalSite(PGFunction final_function, void** slot, MemoryContext context,
                            Datum initial);
bool PlanVarianceFinalSite(PGFunction final_function, void** slot, MemoryContext context,
                           Datum initial);
bool PlanSelectionTransitionSite(PGFunction transition, FmgrInfo* flinfo, Datum initial,
                                 Oid collation);

// Called by a support function when it had to build a per-site plan while
// the query runs (the executor hook's plans did not fit the state). That is
// a timing channel (above): it is counted (LateSitePlans), so that the
// regression suites and the neighbour fuzzer find any call site the executor
// hook does not reach.
void NoteLateSitePlan(const char* what);

// What dp_agg.insecure_test_late_plans (superuser-only) shows, for this
// backend: the plans NoteLateSitePlan counted, plus the noise samplers'
// constants computed on a draw rather than when a query
// started (a first group's draw with parameters this process had not used:
// ~0.1-0.4 ms, the same channel).
uint64 LateSitePlans();

}  // namespace dp_pg

#endif  // DP_AGG_PG_SITE_PLANS_H
