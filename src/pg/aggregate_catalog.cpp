// Recognising private aggregates in the catalog, cached per backend.
#include "aggregate_catalog.h"

#include <cstring>

extern "C" {
#include "catalog/dependency.h"
#include "commands/extension.h"
}

#include "aggregate_functions.h"
#include "quantile_aggregates.h"
#include "selection_aggregates.h"
#include "variance_aggregates.h"

namespace dp_pg {

namespace {

const PrivateAggregateKind kPrivateAggregates[] = {
    {dp_count_transfn, ValueKind::kNone, InvalidOid},
    {dp_int2_transfn, ValueKind::kInteger, INT2OID},
    {dp_int4_transfn, ValueKind::kInteger, INT4OID},
    {dp_int8_transfn, ValueKind::kInteger, INT8OID},
    {dp_float4_transfn, ValueKind::kFloat, FLOAT4OID},
    {dp_float8_transfn, ValueKind::kFloat, FLOAT8OID},
    {dp_numeric_transfn, ValueKind::kFloat, NUMERICOID},
    {dp_quantile_transfn, ValueKind::kFloat, FLOAT8OID, Family::kQuantile},
    {dp_select_transfn, ValueKind::kNone, FLOAT8OID, Family::kSelection},
    {dp_group_selection_transfn, ValueKind::kNone, InvalidOid, Family::kGroupSelection},
    // dp_variance, dp_stddev (variance_aggregates.cpp)
    {dp_variance_int2_transfn, ValueKind::kInteger, INT2OID, Family::kVariance},
    {dp_variance_int4_transfn, ValueKind::kInteger, INT4OID, Family::kVariance},
    {dp_variance_int8_transfn, ValueKind::kInteger, INT8OID, Family::kVariance},
    {dp_variance_float4_transfn, ValueKind::kFloat, FLOAT4OID, Family::kVariance},
    {dp_variance_float8_transfn, ValueKind::kFloat, FLOAT8OID, Family::kVariance},
    {dp_variance_numeric_transfn, ValueKind::kFloat, NUMERICOID, Family::kVariance},
};

// Every signature a private aggregate may have. delta selects the
// (epsilon, delta) Gaussian variant; confidence belongs to the *_interval
// aggregates.
constexpr int kNo = -1;
const ArgumentLayout kArgumentLayouts[] = {
    // family, bounded, interval, declared, per_row,
    //   fraction, lower, upper, candidates, epsilon, delta, confidence
    // dp_count(value, epsilon [, delta]), dp_count_interval(value, epsilon [, delta], confidence)
    {Family::kStatistic, false, false, 2, 1, kNo, kNo, kNo, kNo, 1, kNo, kNo},
    {Family::kStatistic, false, false, 3, 1, kNo, kNo, kNo, kNo, 1, 2, kNo},
    {Family::kStatistic, false, true, 3, 1, kNo, kNo, kNo, kNo, 1, kNo, 2},
    {Family::kStatistic, false, true, 4, 1, kNo, kNo, kNo, kNo, 1, 2, 3},
    // dp_sum, dp_avg(value, lower, upper, epsilon [, delta]) and their *_interval forms
    {Family::kStatistic, true, false, 4, 1, kNo, 1, 2, kNo, 3, kNo, kNo},
    {Family::kStatistic, true, false, 5, 1, kNo, 1, 2, kNo, 3, 4, kNo},
    {Family::kStatistic, true, true, 5, 1, kNo, 1, 2, kNo, 3, kNo, 4},
    {Family::kStatistic, true, true, 6, 1, kNo, 1, 2, kNo, 3, 4, 5},
    // dp_median(value, lower, upper, epsilon), dp_percentile(value, fraction, lower, upper,
    // epsilon)
    {Family::kQuantile, true, false, 4, 1, kNo, 1, 2, kNo, 3, kNo, kNo},
    {Family::kQuantile, true, false, 5, 1, 1, 2, 3, kNo, 4, kNo, kNo},
    // dp_select(value, candidates, epsilon), dp_select(value, weight, lower, upper, candidates,
    // epsilon)
    {Family::kSelection, false, false, 3, 1, kNo, kNo, kNo, 1, 2, kNo, kNo},
    {Family::kSelection, false, false, 6, 2, kNo, 2, 3, 4, 5, kNo, kNo},
    // dp_agg.group_selection(epsilon, delta)
    {Family::kGroupSelection, false, false, 2, 0, kNo, kNo, kNo, kNo, 0, 1, kNo},
    // dp_variance, dp_stddev(value, lower, upper, epsilon [, delta])
    {Family::kVariance, true, false, 4, 1, kNo, 1, 2, kNo, 3, kNo, kNo},
    {Family::kVariance, true, false, 5, 1, kNo, 1, 2, kNo, 3, 4, kNo},
};

const ArgumentLayout* FindLayout(const PrivateAggregateKind& kind, bool interval, int declared) {
  const bool bounded = kind.family == Family::kQuantile || kind.family == Family::kVariance ||
                       (kind.family == Family::kStatistic && kind.value_kind != ValueKind::kNone);
  for (const ArgumentLayout& layout : kArgumentLayouts)
    if (layout.family == kind.family && layout.bounded == bounded && layout.interval == interval &&
        layout.declared == declared)
      return &layout;
  return nullptr;
}

HTAB* aggregate_cache = nullptr;

void InvalidateAggregateCache(Datum, int, uint32) {
  if (aggregate_cache != nullptr) {
    hash_destroy(aggregate_cache);
    aggregate_cache = nullptr;
  }
}

// Recognises our aggregates by the address of their transition function:
// independent of names and schemas, and an aggregate that someone else builds
// on our transition function is treated as private too.
PGFunction FunctionAddress(Oid function) {
  if (!OidIsValid(function)) return nullptr;
  FmgrInfo info;
  fmgr_info(function, &info);
  return info.fn_addr;
}

// Whether pg_proc OID `function` was created by dp_agg's install script.
// Built-in functions never are (and are not looked up).
bool IsDpAggFunction(Oid function, Oid extension) {
  return OidIsValid(function) && function >= FirstNormalObjectId && OidIsValid(extension) &&
         getExtensionOfObject(ProcedureRelationId, function) == extension;
}

AggregateCacheEntry ClassifyAggregate(Oid aggregate) {
  AggregateCacheEntry entry{aggregate, nullptr, false, FinalKind::kOther, 0, nullptr, false, false};
  HeapTuple tuple = SearchSysCache1(AGGFNOID, ObjectIdGetDatum(aggregate));
  if (!HeapTupleIsValid(tuple)) return entry;
  const auto* form = reinterpret_cast<Form_pg_aggregate>(GETSTRUCT(tuple));
  const Oid transition = form->aggtransfn;
  const Oid final_function = form->aggfinalfn;
  const Oid support[] = {form->aggtransfn,     form->aggfinalfn,    form->aggcombinefn,
                         form->aggserialfn,    form->aggdeserialfn, form->aggmtransfn,
                         form->aggminvtransfn, form->aggmfinalfn};
  ReleaseSysCache(tuple);
  const Oid extension = get_extension_oid("dp_agg", true);
  entry.member = IsDpAggFunction(aggregate, extension);
  if (!entry.member)
    for (const Oid function : support)
      if (IsDpAggFunction(function, extension)) entry.foreign_support = true;
  entry.declared_arguments = get_func_nargs(aggregate);
  const PGFunction transition_address = FunctionAddress(transition);
  for (const PrivateAggregateKind& kind : kPrivateAggregates) {
    if (transition_address == kind.transition) entry.kind = &kind;
  }
  if (entry.kind != nullptr) {
    const PGFunction final_address = FunctionAddress(final_function);
    entry.interval = final_address == dp_avg_interval_final ||
                     final_address == dp_sum_interval_final ||
                     final_address == dp_count_interval_final;
    if (final_address == dp_count_final || final_address == dp_count_interval_final)
      entry.final_kind = FinalKind::kCount;
    else if (final_address == dp_sum_final_int8 || final_address == dp_sum_final_numeric ||
             final_address == dp_sum_final_float4 || final_address == dp_sum_final_float8 ||
             final_address == dp_sum_interval_final)
      entry.final_kind = FinalKind::kSum;
    else if (final_address == dp_avg_final_float8 || final_address == dp_avg_final_numeric ||
             final_address == dp_avg_interval_final)
      entry.final_kind = FinalKind::kMean;
    entry.layout = FindLayout(*entry.kind, entry.interval, entry.declared_arguments);
  }
  // Built on dp_agg's transition code under another name (a C function over
  // dp_agg's symbol, which only a superuser can create) counts as well.
  if (!entry.member && entry.kind != nullptr) entry.foreign_support = true;
  return entry;
}

void EnsureAggregateCache() {
  if (aggregate_cache != nullptr) return;
  HASHCTL control;
  std::memset(&control, 0, sizeof control);
  control.keysize = sizeof(Oid);
  control.entrysize = sizeof(AggregateCacheEntry);
  control.hcxt = TopMemoryContext;
  aggregate_cache =
      hash_create("dp_agg aggregate kinds", 32, &control, HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
}

}  // namespace

const AggregateCacheEntry* LookupAggregate(Oid aggregate) {
  EnsureAggregateCache();
  bool found = false;
  auto* entry = static_cast<AggregateCacheEntry*>(
      hash_search(aggregate_cache, &aggregate, HASH_FIND, &found));
  if (found) return entry;
  // Catalog lookups may process invalidations that drop the cache, so the
  // entry is made only afterwards.
  const AggregateCacheEntry classified = ClassifyAggregate(aggregate);
  EnsureAggregateCache();
  entry = static_cast<AggregateCacheEntry*>(
      hash_search(aggregate_cache, &aggregate, HASH_ENTER, &found));
  *entry = classified;
  return entry;
}

const PrivateAggregateKind* LookupPrivateAggregate(Oid aggregate) {
  return LookupAggregate(aggregate)->kind;
}

int DeclaredArgumentCount(Aggref* aggref) {
  const int declared = LookupAggregate(aggref->aggfnoid)->declared_arguments;
  // aggargtypes has one entry per argument of the signature; args may have
  // more (resjunk ORDER BY keys), which are never parameters.
  if (declared != list_length(aggref->aggargtypes) || declared > list_length(aggref->args))
    ereport(ERROR,
            (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
             errmsg("%s is called with %d arguments, but its signature has %d",
                    AggregateName(aggref->aggfnoid), list_length(aggref->aggargtypes), declared)));
  return declared;
}

int PerRowArgumentCount(Aggref* aggref) {
  const AggregateCacheEntry* entry = LookupAggregate(aggref->aggfnoid);
  if (entry->kind == nullptr) return list_length(aggref->args);
  // An unknown layout is refused when the call is prepared; until then its
  // value is the only argument read per row.
  return entry->layout != nullptr ? entry->layout->per_row : 1;
}

const ArgumentLayout& ArgumentLayoutOf(Aggref* aggref) {
  const int declared = DeclaredArgumentCount(aggref);
  const ArgumentLayout* layout = LookupAggregate(aggref->aggfnoid)->layout;
  if (layout == nullptr)
    ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
                    errmsg("%s has %d arguments, which is no known dp_agg layout",
                           AggregateName(aggref->aggfnoid), declared)));
  return *layout;
}

void RegisterAggregateCacheInvalidation() {
  CacheRegisterSyscacheCallback(AGGFNOID, InvalidateAggregateCache, 0);
  CacheRegisterSyscacheCallback(PROCOID, InvalidateAggregateCache, 0);
}

char* AggregateName(Oid aggregate) {
  char* name = get_func_name(aggregate);
  if (name == nullptr) return pstrdup("?");
  if (std::strncmp(name, "citus_", 6) == 0 && LookupPrivateAggregate(aggregate) != nullptr)
    return psprintf("dp_%s", name + 6);
  return name;
}

}  // namespace dp_pg
