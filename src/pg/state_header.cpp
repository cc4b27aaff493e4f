#include "state_header.h"

#include "sqlstates.h"

namespace dp_pg {

void* ReadStateCopy(FunctionCallInfo fcinfo, int argument, Size minimum_size, std::uint8_t version,
                    const char* type_name) {
  if (PG_ARGISNULL(argument))
    ereport(ERROR, (errcode(ERRCODE_INTERNAL_ERROR), errmsg("%s is NULL", type_name)));
  struct varlena* raw = PG_DETOAST_DATUM_COPY(PG_GETARG_DATUM(argument));
  if (VARSIZE(raw) < minimum_size ||
      reinterpret_cast<const StateHeader*>(raw)->format_version != version)
    ereport(ERROR, (errcode(ERRCODE_DATA_CORRUPTED), errmsg("invalid %s", type_name)));
  return raw;
}

CombineStep DecideCombineStep(const StateHeader& into, const StateHeader& partial) {
  if (partial.initialized == 0) return CombineStep::kKeepInto;
  if (into.initialized == 0) return CombineStep::kAdoptPartial;
  return CombineStep::kMerge;
}

void RequireSameParameters(bool same, const char* type_name) {
  if (!same)
    ereport(ERROR, (errcode(ERRCODE_DP_AGG_INCONSISTENT_PARTIALS),
                    errmsg("%s partial states with different parameters", type_name),
                    errdetail("Nothing was released: the workers aggregated with parameters "
                              "other than the ones the query was charged for.")));
}

}  // namespace dp_pg
