// Cached classifications of functions for the fmgr hooks (function_classes.h).
#include "function_classes.h"

#include <cstring>

extern "C" {
#include "catalog/dependency.h"
#include "catalog/pg_proc.h"
#include "utils/inval.h"
}

namespace dp_pg {

namespace {

struct Entry {
  Oid function;
  char function_class;
};

void Forget(Datum argument, int, uint32) {
  auto* classes = reinterpret_cast<FunctionClasses*>(DatumGetPointer(argument));
  classes->last_function = InvalidOid;
  if (classes->table != nullptr) {
    hash_destroy(classes->table);
    classes->table = nullptr;
  }
}

}  // namespace

char FunctionClass(FunctionClasses* classes, Oid function) {
  if (function == classes->last_function) return classes->last_class;
  if (classes->table != nullptr) {
    bool found = false;
    auto* entry = static_cast<Entry*>(hash_search(classes->table, &function, HASH_FIND, &found));
    if (found) {
      classes->last_function = function;
      classes->last_class = entry->function_class;
      return entry->function_class;
    }
  }
  const char function_class = classes->classify(function);
  if (classes->table == nullptr) {
    HASHCTL control;
    std::memset(&control, 0, sizeof control);
    control.keysize = sizeof(Oid);
    control.entrysize = sizeof(Entry);
    control.hcxt = TopMemoryContext;
    classes->table =
        hash_create(classes->name, 64, &control, HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
  }
  bool found = false;
  auto* entry = static_cast<Entry*>(hash_search(classes->table, &function, HASH_ENTER, &found));
  entry->function_class = function_class;
  classes->last_function = function;
  classes->last_class = function_class;
  return function_class;
}

void RegisterFunctionClassesInvalidation(FunctionClasses* classes) {
  CacheRegisterSyscacheCallback(PROCOID, Forget, PointerGetDatum(classes));
}

bool FunctionBelongsToExtension(Oid function, Oid extension) {
  return OidIsValid(extension) && getExtensionOfObject(ProcedureRelationId, function) == extension;
}

}  // namespace dp_pg
