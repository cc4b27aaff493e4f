// Every call site's plans, built when the query starts (site_plans.h).
#include "site_plans.h"

#include "settings.h"
#include "../core/exact_sampler.h"

namespace dp_pg {

namespace {

// The plans NoteLateSitePlan counted.
uint64 late_site_plans = 0;

// The samplers' constants computed by the plans built at the start of
// queries (PlanFinalSite): every other computation of them happened while a
// query ran, on a draw (exact_sampler.h PrepareDiscreteLaplace).
std::uint64_t sampler_constants_at_start = 0;

}  // namespace

void NoteLateSitePlan(const char* /*what*/) { ++late_site_plans; }

uint64 LateSitePlans() {
  return late_site_plans + (dp::DiscreteLaplaceConstantsBuilt() - sampler_constants_at_start);
}

// Test fault (superuser-only): plans left to the first group or row, as
// before issue 29's second review; the neighbour fuzzer's self-check.
bool PlanFinalSite(PGFunction final_function, void** slot, MemoryContext context, Datum initial) {
  if (TestFaultIs(TestFault::kLateSitePlans)) return false;
  const std::uint64_t before = dp::DiscreteLaplaceConstantsBuilt();
  const bool planned = PlanStatisticFinalSite(final_function, slot, context, initial) ||
                       PlanVarianceFinalSite(final_function, slot, context, initial);
  sampler_constants_at_start += dp::DiscreteLaplaceConstantsBuilt() - before;
  return planned;
}

bool PlanTransitionSite(PGFunction transition, FmgrInfo* flinfo, Datum initial, Oid collation) {
  if (TestFaultIs(TestFault::kLateSitePlans)) return false;
  return PlanSelectionTransitionSite(transition, flinfo, initial, collation);
}

void PlanAggregateSite(AggState* node, int transno, Datum initial) {
  AggStatePerTrans transition = &node->pertrans[transno];
  if (!DO_AGGSPLIT_COMBINE(transition->aggref->aggsplit))
    PlanTransitionSite(transition->transfn.fn_addr, &transition->transfn, initial,
                       transition->aggCollation);
  for (int j = 0; j < node->numaggs; ++j) {
    AggStatePerAgg output = &node->peragg[j];
    if (output->transno != transno || !OidIsValid(output->finalfn_oid)) continue;
    PlanFinalSite(output->finalfn.fn_addr, &output->finalfn.fn_extra, output->finalfn.fn_mcxt,
                  initial);
  }
}

namespace {

// The expression that column `attno` of `plan`'s output computes.
Expr* OutputExpression(Plan* plan, AttrNumber attno) {
  if (plan == nullptr || attno < 1 || attno > list_length(plan->targetlist)) return nullptr;
  auto* entry = static_cast<TargetEntry*>(list_nth(plan->targetlist, attno - 1));
  return entry->resno == attno ? entry->expr : nullptr;
}

// The subplan whose output `plan`'s OUTER_VAR Vars name: the outer plan, or
// (Append, MergeAppend: their Vars name their children's common output) the
// first child.
Plan* OuterSource(Plan* plan) {
  if (IsA(plan, Append)) {
    List* children = reinterpret_cast<Append*>(plan)->appendplans;
    return children != NIL ? static_cast<Plan*>(linitial(children)) : nullptr;
  }
  if (IsA(plan, MergeAppend)) {
    List* children = reinterpret_cast<MergeAppend*>(plan)->mergeplans;
    return children != NIL ? static_cast<Plan*>(linitial(children)) : nullptr;
  }
  return outerPlan(plan);
}

}  // namespace

Aggref* FindPartialAggref(Agg* finalize, Aggref* aggref) {
  if (list_length(aggref->args) != 1) return nullptr;
  Expr* expression = static_cast<TargetEntry*>(linitial(aggref->args))->expr;
  Plan* plan = &finalize->plan;
  // Each step moves one plan node down; a plan is finite, the bound only
  // guards against a malformed one.
  for (int depth = 0; depth < 1000 && expression != nullptr; ++depth) {
    if (IsA(expression, Aggref)) {
      auto* partial = reinterpret_cast<Aggref*>(expression);
      return DO_AGGSPLIT_SKIPFINAL(partial->aggsplit) && partial->aggfnoid == aggref->aggfnoid
                 ? partial
                 : nullptr;
    }
    if (!IsA(expression, Var)) return nullptr;
    auto* var = reinterpret_cast<Var*>(expression);
    if (var->varno != OUTER_VAR) return nullptr;
    plan = OuterSource(plan);
    expression = OutputExpression(plan, var->varattno);
  }
  return nullptr;
}

}  // namespace dp_pg
