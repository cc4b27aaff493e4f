#include "verified_calls.h"

extern "C" {
#include "catalog/pg_type.h"
#include "nodes/makefuncs.h"
#include "parser/parse_func.h"
#include "pgtime.h"
#include "utils/builtins.h"
#include "utils/date.h"
#include "utils/fmgroids.h"
#include "utils/pg_locale.h"
}

namespace dp_pg {

// The settings that to_timestamp and to_date read (formatting.c,
// do_to_timestamp): TimeZone for the offset of a time without a zone, and
// lc_time for localized month and day names (TM). DateStyle is not read.
text* VerifiedCallSettings() {
  const char* zone = session_timezone != nullptr ? pg_get_timezone_name(session_timezone) : "";
  const char* time_locale = locale_time != nullptr ? locale_time : "";
  const Size length = strlen(zone) + 1 + strlen(time_locale);
  char* joined = static_cast<char*>(palloc(length + 1));
  snprintf(joined, length + 1, "%s\n%s", zone, time_locale);
  return cstring_to_text(joined);
}

namespace {

Oid ReplacementOf(Oid builtin) {
  const bool timestamp = builtin == F_TO_TIMESTAMP_TEXT_TEXT;
  const Oid result = timestamp ? TIMESTAMPTZOID : DATEOID;
  const Oid arguments[4] = {TEXTOID, TEXTOID, result, TEXTOID};
  return LookupFuncName(
      list_make2(makeString(pstrdup("dp_agg")),
                 makeString(pstrdup(timestamp ? "total_to_timestamp" : "total_to_date"))),
      4, arguments, false);
}

const Const* ConstantOf(Node* argument) {
  while (argument != nullptr && IsA(argument, RelabelType))
    argument = reinterpret_cast<Node*>(reinterpret_cast<RelabelType*>(argument)->arg);
  return argument != nullptr && IsA(argument, Const) ? reinterpret_cast<const Const*>(argument)
                                                     : nullptr;
}

}  // namespace

bool IsVerifiedCallFunction(Oid function) {
  return function == F_TO_TIMESTAMP_TEXT_TEXT || function == F_TO_DATE;
}

Node* VerifiedCall(FuncExpr* call) {
  const Const* text_argument = ConstantOf(static_cast<Node*>(linitial(call->args)));
  const Const* format_argument = ConstantOf(static_cast<Node*>(lsecond(call->args)));
  if (text_argument == nullptr || format_argument == nullptr)
    elog(ERROR, "dp_agg: %s without constant arguments reached the rewrite",
         get_func_name(call->funcid));
  const Oid result_type = call->funcresulttype;
  if (text_argument->constisnull || format_argument->constisnull)
    return reinterpret_cast<Node*>(makeNullConst(result_type, -1, InvalidOid));
  // Raises here, while planning, for what would raise at execution under
  // the same settings (the function is deterministic in its arguments and
  // those settings).
  const Datum result = OidFunctionCall2Coll(call->funcid, call->inputcollid,
                                            text_argument->constvalue, format_argument->constvalue);
  List* arguments =
      list_make4(copyObjectImpl(text_argument), copyObjectImpl(format_argument),
                 makeConst(result_type, -1, InvalidOid,
                           result_type == DATEOID ? sizeof(DateADT) : sizeof(int64), result, false,
                           result_type == DATEOID ? true : FLOAT8PASSBYVAL),
                 makeConst(TEXTOID, -1, InvalidOid, -1, PointerGetDatum(VerifiedCallSettings()),
                           false, false));
  FuncExpr* replacement = makeFuncExpr(ReplacementOf(call->funcid), result_type, arguments,
                                       InvalidOid, call->inputcollid, COERCE_EXPLICIT_CALL);
  replacement->location = call->location;
  return reinterpret_cast<Node*>(replacement);
}

}  // namespace dp_pg

extern "C" {

// dp_agg.total_to_timestamp(text, format, result, settings) and
// dp_agg.total_to_date(...): the result the built-in gave for the same
// constants while planning, while the session's TimeZone and lc_time are
// those it gave it under; NULL otherwise. Reads nothing but its arguments
// and two settings: total.
PG_FUNCTION_INFO_V1(dp_total_verified_call);
Datum dp_total_verified_call(PG_FUNCTION_ARGS) {
  text* recorded = PG_GETARG_TEXT_PP(3);
  text* current = dp_pg::VerifiedCallSettings();
  const bool same =
      VARSIZE_ANY_EXHDR(recorded) == VARSIZE_ANY_EXHDR(current) &&
      memcmp(VARDATA_ANY(recorded), VARDATA_ANY(current), VARSIZE_ANY_EXHDR(current)) == 0;
  pfree(current);
  if (!same) PG_RETURN_NULL();
  return PG_GETARG_DATUM(2);
}

}  // extern "C"
