// The release cache as administrators see and manage it (release_cache.h,
// release_store.h): dp_agg.release_cache_entries() behind the view
// dp_agg.release_cache, and dp_agg.clear_release_cache(role).
#include "pg_includes.h"

extern "C" {
#include "catalog/namespace.h"
#include "nodes/makefuncs.h"
#include "nodes/value.h"
#include "parser/parse_func.h"
#include "utils/tuplestore.h"
}

#include "release_store.h"

namespace dp_pg {

namespace {

Oid DpAggFunction(const char* name, int arguments, Oid* types) {
  List* qualified = list_make2(makeString(pstrdup("dp_agg")), makeString(pstrdup(name)));
  return LookupFuncName(qualified, arguments, types, false);
}

// dp_agg.is_admin(): one definition of who administers, judged by the
// session user.
bool SessionIsAdmin() {
  return DatumGetBool(OidFunctionCall0(DpAggFunction("is_admin", 0, nullptr)));
}

struct EntryRows {
  Tuplestorestate* rows;
  TupleDesc description;
};

void AddEntry(const StoredReleaseInfo& entry, void* context) {
  auto* out = static_cast<EntryRows*>(context);
  Datum values[9] = {ObjectIdGetDatum(entry.role),
                     ObjectIdGetDatum(entry.current_user),
                     CStringGetTextDatum(entry.query),
                     TimestampTzGetDatum(entry.period_start),
                     TimestampTzGetDatum(entry.period_end),
                     TimestampTzGetDatum(entry.stored_at),
                     Int64GetDatum(entry.rows),
                     Int64GetDatum(entry.bytes),
                     Int64GetDatum(entry.times_reused)};
  bool nulls[9] = {false, false, false, false, false, false, false, false, false};
  tuplestore_putvalues(out->rows, out->description, values, nulls);
}

}  // namespace

}  // namespace dp_pg

extern "C" {

// release_cache_entries(OUT role_oid oid, OUT current_user_oid oid, OUT query
// text, OUT period_start timestamptz, OUT period_end timestamptz, OUT
// stored_at timestamptz, OUT rows bigint, OUT bytes bigint, OUT times_reused
// bigint): administrators see every role's entries, everyone else their own.
PG_FUNCTION_INFO_V1(dp_agg_release_cache_entries);
Datum dp_agg_release_cache_entries(PG_FUNCTION_ARGS) {
  InitMaterializedSRF(fcinfo, 0);
  auto* result = reinterpret_cast<ReturnSetInfo*>(fcinfo->resultinfo);
  const Oid role = dp_pg::SessionIsAdmin() ? InvalidOid : GetSessionUserId();
  dp_pg::EntryRows rows{result->setResult, result->setDesc};
  dp_pg::VisitStoredReleases(role, dp_pg::AddEntry, &rows);
  return static_cast<Datum>(0);
}

// clear_release_cache(role regrole DEFAULT NULL) returns bigint
PG_FUNCTION_INFO_V1(dp_agg_clear_release_cache);
Datum dp_agg_clear_release_cache(PG_FUNCTION_ARGS) {
  Oid text_type = TEXTOID;
  (void)OidFunctionCall1(dp_pg::DpAggFunction("require_admin", 1, &text_type),
                         CStringGetTextDatum("clear the release cache"));
  const Oid role = PG_ARGISNULL(0) ? InvalidOid : PG_GETARG_OID(0);
  PG_RETURN_INT64(dp_pg::RemoveStoredReleases(role));
}

}  // extern "C"
