// dp_select: the private mode (or the "best option") among candidates given
// in the query, with permute-and-flip sampled exactly (core/selection.h).
//
//   dp_select(value anyelement, candidates anyarray, epsilon)
//     score of a candidate = number of rows equal to it (sensitivity 1; all
//     scores move the same way between neighbours, so the monotonic rate)
//   dp_select(value anyelement, weight, lower, upper, candidates anyarray, epsilon)
//     score = sum of the rows' weights clamped to [lower, upper]
//     (sensitivity max(|lower|, |upper|))
//
// Both forms use the monotonic rate epsilon / Delta rather than
// epsilon / (2 Delta): adding or removing one row changes the score of at most
// one candidate (the candidates are distinct), so all scores move in the same
// direction, whatever the sign of the weight (McKenna & Sheldon 2020; Ding et
// al. 2021, arXiv:2105.07260, on permute-and-flip as report-noisy-max with
// exponential noise).
//
// Rows whose value is not a candidate count for nothing; the answer is always
// one of the candidates, also on empty input. Candidates must come from the
// query (a literal, a parameter), never from the private rows: a value that
// exists only because one person has it would be selectable only when that
// person is present.
//
// The state carries the scores and a copy of the candidate array: the final
// function has to return a candidate, and the combining step of a parallel
// plan sees no aggregate arguments.
#include <cstring>
#include <string>
#include <vector>

#include "../core/grid_value.h"
#include "../core/parameters.h"
#include "../core/private_statistics.h"
#include "../core/selection.h"
#include "../core/state_text.h"
#include "aggregate_state.h"
#include "call_parameters.h"
#include "error_boundary.h"
#include "initial_state.h"
#include "selection_aggregates.h"
#include "settings.h"
#include "site_plans.h"
#include "state_header.h"
#include "citus/adapter.h"
#include "support_guard.h"

extern "C" {
#include "utils/array.h"
#include "utils/datum.h"
#include "utils/typcache.h"
}

namespace dp_pg {

namespace {

constexpr std::uint8_t kSelectionFormatVersion = 1;
constexpr int kMaxCandidates = 100000;

struct SelectionState {
  std::int32_t varlena_header;
  std::uint8_t format_version;
  std::uint8_t initialized;
  std::uint8_t weighted;
  std::uint8_t reserved;
  std::int32_t num_candidates;
  std::int32_t candidates_offset;  // where the candidate array (a varlena) starts
  double epsilon;
  double lower;  // weight bounds (weighted form only)
  double upper;
  std::int32_t unit_exponent;
  std::int32_t padding;
  std::int64_t lower_units;
  std::int64_t upper_units;
  double unit_scale;
  // followed by num_candidates scores, each an int128 as {uint64 low, int64 high},
  // then the candidate array at candidates_offset
};

static_assert(offsetof(SelectionState, format_version) == offsetof(StateHeader, format_version) &&
                  offsetof(SelectionState, initialized) == offsetof(StateHeader, initialized),
              "SelectionState starts with StateHeader");

struct Score {
  std::uint64_t low;
  std::int64_t high;
};

Score* ScoresOf(SelectionState* state) {
  return reinterpret_cast<Score*>(reinterpret_cast<char*>(state) + sizeof(SelectionState));
}

ArrayType* CandidatesOf(SelectionState* state) {
  return reinterpret_cast<ArrayType*>(reinterpret_cast<char*>(state) + state->candidates_offset);
}

dp::int128 ScoreValue(const Score& score) {
  return static_cast<dp::int128>((static_cast<dp::uint128>(score.high) << 64) | score.low);
}

void AddToScore(Score* score, dp::int128 amount) {
  const dp::int128 sum = ScoreValue(*score) + amount;
  score->low = static_cast<std::uint64_t>(sum);
  score->high = static_cast<std::int64_t>(sum >> 64);
}

// The candidates, deconstructed, with a hash table from value to position.
struct CandidateIndex {
  int count;
  int indexed;  // values[0 .. indexed) are in the index
  Datum* values;
  FmgrInfo equality;
  FmgrInfo hash;
  bool hashable;
  Oid collation;
  int table_size;  // a power of two, at least 2 * count
  int* table;  // -1: empty, else a position in values
  std::uint32_t* hashes;
};

std::uint32_t HashOf(const CandidateIndex& index, Datum value) {
  return DatumGetUInt32(
      FunctionCall1Coll(const_cast<FmgrInfo*>(&index.hash), index.collation, value));
}

bool Equal(const CandidateIndex& index, Datum a, Datum b) {
  return DatumGetBool(
      FunctionCall2Coll(const_cast<FmgrInfo*>(&index.equality), index.collation, a, b));
}

// Position of `value` among the candidates, or -1.
int Find(const CandidateIndex& index, Datum value) {
  if (!index.hashable) {
    for (int i = 0; i < index.indexed; ++i)
      if (Equal(index, index.values[i], value)) return i;
    return -1;
  }
  const std::uint32_t hash = HashOf(index, value);
  for (int slot = static_cast<int>(hash & (index.table_size - 1));;
       slot = (slot + 1) & (index.table_size - 1)) {
    const int position = index.table[slot];
    if (position < 0) return -1;
    if (index.hashes[position] == hash && Equal(index, index.values[position], value))
      return position;
  }
}

// Builds the index in `context` from a copy of `candidates`; with
// `reject_duplicates`, a repeated candidate is an ERROR 22023.
CandidateIndex* BuildIndex(ArrayType* candidates, Oid collation, MemoryContext context,
                           bool reject_duplicates) {
  MemoryContext previous = MemoryContextSwitchTo(context);
  auto* index = static_cast<CandidateIndex*>(palloc0(sizeof(CandidateIndex)));
  ArrayType* copy = static_cast<ArrayType*>(palloc(VARSIZE(candidates)));
  std::memcpy(copy, candidates, VARSIZE(candidates));
  const Oid element_type = ARR_ELEMTYPE(copy);
  TypeCacheEntry* type =
      lookup_type_cache(element_type, TYPECACHE_EQ_OPR_FINFO | TYPECACHE_HASH_PROC_FINFO);
  // eq_opr is the equality of the type's default btree opclass, else of its
  // default hash opclass; the hash function is used only when it exists.
  if (!OidIsValid(type->eq_opr_finfo.fn_oid))
    ereport(ERROR, (errcode(ERRCODE_UNDEFINED_FUNCTION),
                    errmsg("dp_select needs an equality operator for type %s",
                           format_type_be(element_type)),
                    errhint("The candidates' type needs a default btree or hash operator class; "
                            "cast the value and the candidates to such a type, e.g. text.")));
  int16 length;
  bool by_value;
  char alignment;
  get_typlenbyvalalign(element_type, &length, &by_value, &alignment);
  bool* nulls = nullptr;
  deconstruct_array(copy, element_type, length, by_value, alignment, &index->values, &nulls,
                    &index->count);
  fmgr_info_copy(&index->equality, &type->eq_opr_finfo, context);
  index->hashable = OidIsValid(type->hash_proc_finfo.fn_oid);
  if (index->hashable) fmgr_info_copy(&index->hash, &type->hash_proc_finfo, context);
  index->collation = collation;
  index->table_size = 1;
  while (index->table_size < 2 * index->count) index->table_size *= 2;
  index->table = static_cast<int*>(palloc(sizeof(int) * index->table_size));
  for (int i = 0; i < index->table_size; ++i) index->table[i] = -1;
  index->hashes = static_cast<std::uint32_t*>(palloc(sizeof(std::uint32_t) * (index->count + 1)));
  for (int i = 0; i < index->count; ++i) {
    if (nulls != nullptr && nulls[i])
      ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                      errmsg("dp_select candidates must not contain NULL"),
                      errhint("List the values that the answer may take.")));
    if (reject_duplicates && Find(*index, index->values[i]) >= 0)
      ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                      errmsg("dp_select candidates must be distinct"),
                      errhint("Each candidate may appear once in the array.")));
    if (index->hashable) {
      index->hashes[i] = HashOf(*index, index->values[i]);
      int slot = static_cast<int>(index->hashes[i] & (index->table_size - 1));
      while (index->table[slot] >= 0) slot = (slot + 1) & (index->table_size - 1);
      index->table[slot] = i;
    }
    index->indexed = i + 1;
  }
  MemoryContextSwitchTo(previous);
  return index;
}

SelectionState* ReadSelectionState(FunctionCallInfo fcinfo, int argument) {
  return static_cast<SelectionState*>(ReadStateCopy(
      fcinfo, argument, sizeof(SelectionState), kSelectionFormatVersion, "dp_agg selection state"));
}

}  // namespace

Datum PrepareSelectionInitialState(Aggref* aggref, const CallParameters& call,
                                   const dp::PrivacyParameters& effective) {
  const bool weighted = call.values.has_bounds;
  const double lower = call.values.lower;
  const double upper = call.values.upper;
  const Datum candidates_datum = call.candidates;
  ArrayType* candidates = DatumGetArrayTypeP(candidates_datum);
  const int count = ArrayGetNItems(ARR_NDIM(candidates), ARR_DIMS(candidates));
  if (count < 1 || ARR_NDIM(candidates) != 1 || count > kMaxCandidates)
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("candidates of dp_select must be a one-dimensional array of 1 to %d "
                           "values",
                           kMaxCandidates),
                    errhint("Pass an array of the values the answer may take.")));
  // Checks NULLs and duplicates (the index itself is rebuilt per execution by
  // the transition function).
  BuildIndex(candidates, aggref->inputcollid, CurrentMemoryContext, true);

  const Size scores_size = sizeof(Score) * static_cast<Size>(count);
  const Size candidates_offset = MAXALIGN(sizeof(SelectionState) + scores_size);
  const Size total = candidates_offset + VARSIZE(candidates);
  auto* state = static_cast<SelectionState*>(palloc0(total));
  SET_VARSIZE(state, total);
  state->format_version = kSelectionFormatVersion;
  state->initialized = dp_pg::kStatePrepared;
  state->weighted = weighted ? 1 : 0;
  state->num_candidates = count;
  state->candidates_offset = static_cast<std::int32_t>(candidates_offset);
  state->epsilon = StateEpsilon(effective);
  std::memcpy(CandidatesOf(state), candidates, VARSIZE(candidates));
  if (weighted) {
    state->lower = lower;
    state->upper = upper;
    state->unit_exponent = dp::ChooseUnitExponent(lower, upper);
    state->unit_scale = dp::UnitScale(state->unit_exponent);
    state->lower_units = dp::ToUnits(lower, state->unit_exponent, state->unit_scale);
    state->upper_units = dp::ToUnits(upper, state->unit_exponent, state->unit_scale);
  }
  return PointerGetDatum(state);
}

}  // namespace dp_pg

using dp_pg::SelectionState;

extern "C" {

// STRICT: rows with a NULL value (or weight) never arrive.
PG_FUNCTION_INFO_V1(dp_select_transfn);
Datum dp_select_transfn(PG_FUNCTION_ARGS) {
  dp_pg::RequireAggregateContext(fcinfo, "dp_select_transfn");
  auto* state = reinterpret_cast<SelectionState*>(PG_GETARG_POINTER(0));
  if (state->initialized == dp_pg::kStateUninitialized) {  // dp_agg on Citus: agginitcond
    if (void* prepared = dp_pg::CitusPreparedState(fcinfo))
      state = static_cast<SelectionState*>(prepared);
  }
  dp_pg::RequirePreparedState(state->initialized);
  // Built when the query starts (site_plans.h), except under a Citus
  // wrapper, whose transition calls the executor hook cannot reach.
  if (fcinfo->flinfo->fn_extra == nullptr) {
    Oid collation = PG_GET_COLLATION();
    if (!OidIsValid(collation)) collation = dp_pg::CitusSiteCollation(fcinfo);  // under Citus
    fcinfo->flinfo->fn_extra =
        dp_pg::BuildIndex(dp_pg::CandidatesOf(state), collation, fcinfo->flinfo->fn_mcxt, false);
    dp_pg::NoteLateSitePlan("dp_select's candidate index");
  }
  const auto* index = static_cast<const dp_pg::CandidateIndex*>(fcinfo->flinfo->fn_extra);
  const int position = dp_pg::Find(*index, PG_GETARG_DATUM(1));
  if (position < 0) PG_RETURN_POINTER(state);  // not a candidate: counts for nothing
  dp::int128 amount = 1;
  if (state->weighted != 0) {
    double weight = PG_GETARG_FLOAT8(2);
    if (std::isnan(weight)) PG_RETURN_POINTER(state);
    weight = weight < state->lower ? state->lower : (weight > state->upper ? state->upper : weight);
    amount = dp::ToUnits(weight, state->unit_exponent, state->unit_scale);
  }
  dp_pg::AddToScore(&dp_pg::ScoresOf(state)[position], amount);
  PG_RETURN_POINTER(state);
}

PG_FUNCTION_INFO_V1(dp_select_combine);
Datum dp_select_combine(PG_FUNCTION_ARGS) {
  dp_pg::RequireAggregateContext(fcinfo, "dp_select_combine");
  dp_pg::RequireOwnAggregateCall(fcinfo, "dp_select_combine");
  auto* into = reinterpret_cast<SelectionState*>(PG_GETARG_POINTER(0));
  SelectionState* partial = dp_pg::ReadSelectionState(fcinfo, 1);
  // dp_agg on Citus: the coordinator combines into the state it prepared
  // (and charged); a partial state read from text never chooses parameters.
  if (into->initialized == dp_pg::kStateUninitialized && dp_pg::IsCitusWrapperCall(fcinfo))
    into = static_cast<SelectionState*>(dp_pg::RequireCitusPreparedState(fcinfo));
  switch (dp_pg::DecideCombineStep(*reinterpret_cast<const dp_pg::StateHeader*>(into),
                                   *reinterpret_cast<const dp_pg::StateHeader*>(partial))) {
    case dp_pg::CombineStep::kKeepInto:
      PG_RETURN_POINTER(into);
    case dp_pg::CombineStep::kAdoptPartial:
      // The partial state, already a private copy (ReadSelectionState),
      // becomes the transition value; nodeAgg moves a new transition value
      // into the aggregate context.
      PG_RETURN_POINTER(partial);
    case dp_pg::CombineStep::kMerge:
      break;
  }
  dp_pg::RequireSameParameters(
      into->num_candidates == partial->num_candidates && into->weighted == partial->weighted &&
          into->epsilon == partial->epsilon && into->lower_units == partial->lower_units &&
          into->upper_units == partial->upper_units,
      "dp_agg selection");
  for (int i = 0; i < into->num_candidates; ++i)
    dp_pg::AddToScore(&dp_pg::ScoresOf(into)[i], dp_pg::ScoreValue(dp_pg::ScoresOf(partial)[i]));
  PG_RETURN_POINTER(into);
}

PG_FUNCTION_INFO_V1(dp_select_final);
Datum dp_select_final(PG_FUNCTION_ARGS) {
  dp_pg::RequireAggregateContext(fcinfo, "dp_select_final");
  dp_pg::RequireOwnAggregateCall(fcinfo, "dp_select_final");
  SelectionState* state = dp_pg::ReadSelectionState(fcinfo, 0);
  if (state->initialized == dp_pg::kStateUninitialized) {  // dp_agg on Citus: no partial arrived
    if (void* prepared = dp_pg::CitusPreparedState(fcinfo))
      state = static_cast<SelectionState*>(prepared);
  }
  dp_pg::RequirePreparedState(state->initialized);
  const std::size_t chosen = dp_pg::CallCore([&] {
    std::vector<dp::int128> values(static_cast<std::size_t>(state->num_candidates));
    for (int i = 0; i < state->num_candidates; ++i)
      values[i] = dp_pg::ScoreValue(dp_pg::ScoresOf(state)[i]);
    if (state->weighted == 0)
      return dp::PermuteAndFlip(values, 1, state->epsilon, /*monotonic=*/true,
                                dp_pg::NoiseSource());
    // Scores are sums of clamped weights: each row moves one score by at
    // most max(|lower|, |upper|).
    const dp::uint128 sensitivity = dp::SumSensitivity(state->lower_units, state->upper_units);

    if (sensitivity == 0) return std::size_t{0};  // every weight is 0: nothing to learn
    return dp::PermuteAndFlip(values, sensitivity, state->epsilon, /*monotonic=*/true,
                              dp_pg::NoiseSource());
  });
  ArrayType* candidates = dp_pg::CandidatesOf(state);
  const Oid element_type = ARR_ELEMTYPE(candidates);
  int16 length;
  bool by_value;
  char alignment;
  get_typlenbyvalalign(element_type, &length, &by_value, &alignment);
  Datum* values;
  bool* nulls;
  int count;
  deconstruct_array(candidates, element_type, length, by_value, alignment, &values, &nulls, &count);
  PG_RETURN_DATUM(datumCopy(values[chosen], by_value, length));
}

// Text form, for Citus (which moves partial states between nodes as text):
//   s1 weighted=W epsilon=E lower=L upper=U unit_exponent=X scores=S0,S1,...
//   type=<element type name> candidates=<the array's own text form>
// Doubles in hexadecimal, scores in decimal: everything round-trips exactly.
PG_FUNCTION_INFO_V1(dp_selection_state_in);
Datum dp_selection_state_in(PG_FUNCTION_ARGS) {
  const char* text = PG_GETARG_CSTRING(0);
  if (std::strcmp(text, "uninitialized") == 0) {
    auto* state = static_cast<SelectionState*>(palloc0(sizeof(SelectionState)));
    SET_VARSIZE(state, sizeof(SelectionState));
    state->format_version = dp_pg::kSelectionFormatVersion;
    PG_RETURN_POINTER(state);
  }
  const char* type_start = std::strstr(text, " type=");
  const char* candidates_start = std::strstr(text, " candidates=");
  if (type_start == nullptr || candidates_start == nullptr || candidates_start < type_start)
    ereport(ERROR, (errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
                    errmsg("invalid input syntax for type dp_agg.selection_state")));
  // PostgreSQL's own input functions first (they may raise errors), while no
  // C++ object is alive; the core then parses the head straight into the state.
  char* type_name = pnstrdup(type_start + 6, candidates_start - (type_start + 6));
  const Oid element_type =
      DatumGetObjectId(DirectFunctionCall1(regtypein, CStringGetDatum(type_name)));
  const Oid array_type = OidIsValid(element_type) ? get_array_type(element_type) : InvalidOid;
  if (!OidIsValid(array_type))
    ereport(ERROR, (errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
                    errmsg("invalid input syntax for type dp_agg.selection_state"),
                    errdetail("\"%s\" is not a type with an array type.", type_name)));
  Oid input_function, parameter;
  getTypeInputInfo(array_type, &input_function, &parameter);
  ArrayType* candidates = DatumGetArrayTypeP(OidInputFunctionCall(
      input_function, const_cast<char*>(candidates_start + 12), parameter, -1));
  const int count = ArrayGetNItems(ARR_NDIM(candidates), ARR_DIMS(candidates));
  if (ARR_NDIM(candidates) > 1 || count > dp_pg::kMaxCandidates || ARR_HASNULL(candidates))
    ereport(ERROR, (errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
                    errmsg("invalid input syntax for type dp_agg.selection_state"),
                    errdetail("The candidates must be a one-dimensional array of at most %d "
                              "non-NULL values.",
                              dp_pg::kMaxCandidates)));
  const Size candidates_offset = MAXALIGN(sizeof(SelectionState) + sizeof(dp_pg::Score) * count);
  const Size total = candidates_offset + VARSIZE(candidates);
  auto* state = static_cast<SelectionState*>(palloc0(total));
  SET_VARSIZE(state, total);
  const std::size_t head_length = static_cast<std::size_t>(type_start - text);
  const bool parsed = dp_pg::CallCore([&] {
    dp::SelectionStateFields fields;
    if (!dp::ParseSelectionStateHead(std::string(text, head_length), &fields) ||
        fields.scores.size() != static_cast<std::size_t>(count))
      return false;
    state->weighted = fields.weighted ? 1 : 0;
    state->epsilon = fields.epsilon;
    state->lower = fields.lower;
    state->upper = fields.upper;
    state->unit_exponent = fields.unit_exponent;
    state->unit_scale = dp::UnitScale(fields.unit_exponent);
    if (fields.weighted) {
      state->lower_units = dp::ToUnits(fields.lower, fields.unit_exponent, state->unit_scale);
      state->upper_units = dp::ToUnits(fields.upper, fields.unit_exponent, state->unit_scale);
    }
    for (int i = 0; i < count; ++i) dp_pg::AddToScore(&dp_pg::ScoresOf(state)[i], fields.scores[i]);
    return true;
  });
  if (!parsed)
    ereport(ERROR, (errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
                    errmsg("invalid input syntax for type dp_agg.selection_state")));
  state->format_version = dp_pg::kSelectionFormatVersion;
  state->initialized = dp_pg::kStateFromText;  // support_guard.h
  state->num_candidates = count;
  state->candidates_offset = static_cast<std::int32_t>(candidates_offset);
  std::memcpy(dp_pg::CandidatesOf(state), candidates, VARSIZE(candidates));
  PG_RETURN_POINTER(state);
}

PG_FUNCTION_INFO_V1(dp_selection_state_out);
Datum dp_selection_state_out(PG_FUNCTION_ARGS) {
  SelectionState* state = dp_pg::ReadSelectionState(fcinfo, 0);
  if (state->initialized == 0) PG_RETURN_CSTRING(pstrdup("uninitialized"));
  ArrayType* candidates = dp_pg::CandidatesOf(state);
  Oid output_function;
  bool varlena_type;
  getTypeOutputInfo(get_array_type(ARR_ELEMTYPE(candidates)), &output_function, &varlena_type);
  const char* candidates_text = OidOutputFunctionCall(output_function, PointerGetDatum(candidates));
  const char* type_name = format_type_be_qualified(ARR_ELEMTYPE(candidates));
  // The head has at most 256 characters plus 41 per score (an int128 and a comma).
  const Size capacity = 256 + 41 * static_cast<Size>(state->num_candidates);
  char* head = static_cast<char*>(palloc(capacity));
  const bool fits = dp_pg::CallCore([&] {
    dp::SelectionStateFields fields;
    fields.weighted = state->weighted != 0;
    fields.epsilon = state->epsilon;
    fields.lower = state->lower;
    fields.upper = state->upper;
    fields.unit_exponent = state->unit_exponent;
    for (int i = 0; i < state->num_candidates; ++i)
      fields.scores.push_back(dp_pg::ScoreValue(dp_pg::ScoresOf(state)[i]));
    const std::string formatted = dp::FormatSelectionStateHead(fields);
    if (formatted.size() >= capacity) return false;
    std::memcpy(head, formatted.c_str(), formatted.size() + 1);
    return true;
  });
  if (!fits)
    ereport(ERROR, (errcode(ERRCODE_INTERNAL_ERROR), errmsg("dp_agg selection state too long")));
  PG_RETURN_CSTRING(psprintf("%s type=%s candidates=%s", head, type_name, candidates_text));
}

}  // extern "C"

namespace dp_pg {

// dp_select's transition keeps the candidates' index in fn_extra (site_plans.h).
bool PlanSelectionTransitionSite(PGFunction transition, FmgrInfo* flinfo, Datum initial,
                                 Oid collation) {
  if (transition != dp_select_transfn) return false;
  if (flinfo->fn_extra != nullptr) return true;
  auto* state = reinterpret_cast<SelectionState*>(DatumGetPointer(initial));
  if (state->format_version != kSelectionFormatVersion || state->initialized != kStatePrepared)
    ereport(ERROR, (errcode(ERRCODE_DATA_CORRUPTED), errmsg("invalid dp_agg selection state")));
  flinfo->fn_extra = BuildIndex(CandidatesOf(state), collation, flinfo->fn_mcxt, false);
  return true;
}

}  // namespace dp_pg
