// A per-backend cache of how a guard classifies functions by OID, for the
// fmgr hooks (hooks.cpp), which PostgreSQL calls for every fmgr_info: Citus's
// worker_partial_agg_sfunc calls fmgr_info on the private aggregate's
// transition function for every row, and the lookup showed as 6% of a
// worker's time on a private sum (perf, BENCHMARKS.md). The last function
// looked up sits in front of the hash table (the same function again is the
// common case). Forgotten whenever pg_proc changes.
#ifndef DP_AGG_PG_FUNCTION_CLASSES_H
#define DP_AGG_PG_FUNCTION_CLASSES_H

#include "pg_includes.h"

namespace dp_pg {

struct FunctionClasses {
  const char* name;  // of the hash table
  char (*classify)(Oid function);  // the guard's classification (0: not guarded)
  HTAB* table;
  Oid last_function;
  char last_class;
};

// `function`'s class, computed by classes->classify once per function.
char FunctionClass(FunctionClasses* classes, Oid function);

// Forgets every class of `classes` when pg_proc changes (from _PG_init).
void RegisterFunctionClassesInvalidation(FunctionClasses* classes);

// Whether `function` is a member of extension `extension` (false when that
// is InvalidOid).
bool FunctionBelongsToExtension(Oid function, Oid extension);

}  // namespace dp_pg

#endif  // DP_AGG_PG_FUNCTION_CLASSES_H
