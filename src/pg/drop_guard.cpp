// Refuses an unconfirmed DROP EXTENSION dp_agg (see drop_guard.h).
#include "drop_guard.h"

#include "settings.h"

extern "C" {
#include "catalog/objectaccess.h"
#include "catalog/pg_extension.h"
#include "commands/extension.h"
#include "nodes/parsenodes.h"
}

namespace dp_pg {

namespace {

constexpr const char* kExtensionName = "dp_agg";

void RefuseDrop() {
  ereport(ERROR,
          (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
           errmsg("dropping extension dp_agg would delete every privacy budget and the whole "
                  "privacy ledger"),
           errdetail("Archive the ledger first (for example \\copy dp_agg.ledger_entry TO "
                     "'ledger.csv' CSV HEADER, or pg_dump --table=dp_agg.ledger_entry "
                     "--table=dp_agg.role_budget), then a superuser confirms with SET "
                     "dp_agg.allow_drop_extension = on in the same session.")));
}

object_access_hook_type previous_object_access = nullptr;

// OAT_DROP is invoked for every object a DROP deletes, including those
// reached by CASCADE, before the deletion: an ERROR here aborts it all.
void ObjectAccessHook(ObjectAccessType access, Oid class_id, Oid object_id, int sub_id,
                      void* argument) {
  if (previous_object_access != nullptr)
    previous_object_access(access, class_id, object_id, sub_id, argument);
  if (access != OAT_DROP || class_id != ExtensionRelationId || allow_drop_extension) return;
  if (object_id == get_extension_oid(kExtensionName, true)) RefuseDrop();
}

}  // namespace

void RefuseUnconfirmedExtensionDrop(Node* parse_tree) {
  if (allow_drop_extension || !IsA(parse_tree, DropStmt)) return;
  const auto* drop = reinterpret_cast<DropStmt*>(parse_tree);
  if (drop->removeType != OBJECT_EXTENSION) return;
  // Where dp_agg is not installed there is no ledger to lose: DROP EXTENSION
  // IF EXISTS dp_agg (migration scripts, pg_restore --clean --if-exists)
  // must go on with PostgreSQL's own NOTICE or ERROR.
  if (!OidIsValid(get_extension_oid(kExtensionName, true))) return;
  ListCell* cell;
  foreach (cell, drop->objects) {
    if (strcmp(strVal(lfirst(cell)), kExtensionName) == 0) RefuseDrop();
  }
}

void InstallDropGuard() {
  previous_object_access = object_access_hook;
  object_access_hook = ObjectAccessHook;
}

}  // namespace dp_pg
