// Restricted roles may not call dblink's or postgres_fdw's functions
// (remote_connection_guard.h).
#include "remote_connection_guard.h"

extern "C" {
#include "commands/extension.h"
}

#include "function_classes.h"
#include "restriction.h"

namespace dp_pg {

namespace {

char ClassifyRemoteConnectionFunction(Oid function) {
  return FunctionBelongsToExtension(function, get_extension_oid("dblink", true)) ||
                 FunctionBelongsToExtension(function, get_extension_oid("postgres_fdw", true))
             ? 1
             : 0;
}

FunctionClasses remote_functions{"dp_agg dblink and postgres_fdw functions",
                                 ClassifyRemoteConnectionFunction, nullptr, InvalidOid, 0};

}  // namespace

bool RemoteConnectionFunctionNeedsGuard(Oid function) {
  if (function < FirstNormalObjectId || !IsTransactionState()) return false;
  return FunctionClass(&remote_functions, function) != 0;
}

void GuardRemoteConnectionCall(Oid function) {
  if (!RemoteConnectionFunctionNeedsGuard(function) || !RestrictedSession()) return;
  char* name = get_func_name(function);
  ereport(ERROR,
          (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
           errmsg("dp_agg: restricted roles may not call %s, a function of dblink or "
                  "postgres_fdw (foreign tables of postgres_fdw included)",
                  name != nullptr ? name : "?"),
           errdetail("Connections opened by a server process read outside dp_agg's rules and "
                     "can present the certificate this server uses for its Citus "
                     "connections. Query tables of this server with dp_agg's private "
                     "aggregates; an administrator runs dblink and postgres_fdw."),
           errhint("Query tables of this server with dp_agg's private aggregates.")));
}

void RegisterRemoteConnectionCacheInvalidation() {
  RegisterFunctionClassesInvalidation(&remote_functions);
}

}  // namespace dp_pg
