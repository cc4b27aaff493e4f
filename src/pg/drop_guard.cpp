// Refuses an unconfirmed DROP EXTENSION dp_agg or DROP DATABASE of a
// database that holds a dp_agg ledger (see drop_guard.h).
#include "drop_guard.h"

#include "settings.h"

extern "C" {
#include "catalog/objectaccess.h"
#include "catalog/pg_database.h"
#include "catalog/pg_extension.h"
#include "commands/dbcommands.h"
#include "commands/defrem.h"
#include "commands/extension.h"
#include "commands/seclabel.h"
#include "utils/resowner.h"
#include "nodes/parsenodes.h"
}

namespace dp_pg {

namespace {

constexpr const char* kExtensionName = "dp_agg";
constexpr const char* kLabelProvider = "dp_agg";
constexpr const char* kLedgerLabel = "ledger";

void RefuseDrop() {
  ereport(ERROR,
          (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
           errmsg("dropping extension dp_agg would delete every privacy budget and the whole "
                  "privacy ledger"),
           errdetail("Archive the ledger first (for example \\copy dp_agg.ledger_entry TO "
                     "'ledger.csv' CSV HEADER, or pg_dump --table=dp_agg.ledger_entry "
                     "--table=dp_agg.ledger_head --table=dp_agg.role_budget), then a superuser "
                     "confirms with SET dp_agg.allow_drop_extension = on in the same session.")));
}

void RefuseDatabaseDrop(const char* database) {
  ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
                  errmsg("dropping database \"%s\" would delete its privacy budgets and the whole "
                         "privacy ledger",
                         database),
                  errdetail("Archive the ledger first (for example pg_dump -d %s --data-only "
                            "--table=dp_agg.ledger_entry --table=dp_agg.ledger_head "
                            "--table=dp_agg.role_budget), then a superuser confirms with SET "
                            "dp_agg.allow_drop_extension = on in the same session.",
                            database)));
}

ObjectAddress DatabaseAddress(Oid database) {
  ObjectAddress address;
  address.classId = DatabaseRelationId;
  address.objectId = database;
  address.objectSubId = 0;
  return address;
}

bool HoldsLedger(Oid database) {
  const ObjectAddress address = DatabaseAddress(database);
  char* label = GetSecurityLabel(&address, kLabelProvider);
  const bool holds = label != nullptr && strcmp(label, kLedgerLabel) == 0;
  if (label != nullptr) pfree(label);
  return holds;
}

// The database this backend found labelled (LabelDatabaseAsHoldingLedger).
Oid labelled_database = InvalidOid;

}  // namespace

// OAT_DROP is invoked for every object a DROP deletes, including those
// reached by CASCADE, before the deletion: an ERROR here aborts it all. A
// confirmed drop takes the database's ledger label with it (rolled back with
// the drop).
void RefuseUnconfirmedExtensionDrop(ObjectAccessType access, Oid class_id, Oid object_id) {
  if (access != OAT_DROP || class_id != ExtensionRelationId) return;
  if (object_id != get_extension_oid(kExtensionName, true)) return;
  if (!allow_drop_extension) RefuseDrop();
  const ObjectAddress database = DatabaseAddress(MyDatabaseId);
  if (HoldsLedger(MyDatabaseId)) SetSecurityLabel(&database, kLabelProvider, nullptr);
  labelled_database = InvalidOid;
}

void RefuseUnconfirmedLedgerDrop(Node* parse_tree) {
  if (allow_drop_extension) return;
  if (IsA(parse_tree, DropdbStmt)) {
    // DROP DATABASE [IF EXISTS] of a database that does not exist goes on
    // with PostgreSQL's own NOTICE or ERROR.
    const auto* drop = reinterpret_cast<DropdbStmt*>(parse_tree);
    const Oid database = get_database_oid(drop->dbname, true);
    if (OidIsValid(database) && HoldsLedger(database)) RefuseDatabaseDrop(drop->dbname);
    return;
  }
  if (!IsA(parse_tree, DropStmt)) return;
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

void LabelCopiedLedger(Node* parse_tree) {
  if (!IsA(parse_tree, CreatedbStmt)) return;
  const auto* create = reinterpret_cast<CreatedbStmt*>(parse_tree);
  const char* template_name = "template1";  // PostgreSQL's default template
  ListCell* cell;
  foreach (cell, create->options) {
    DefElem* option = lfirst_node(DefElem, cell);
    if (strcmp(option->defname, "template") == 0 && option->arg != nullptr)
      template_name = defGetString(option);
  }
  const Oid source = get_database_oid(template_name, true);
  const Oid copy = get_database_oid(create->dbname, true);
  if (!OidIsValid(source) || !OidIsValid(copy) || !HoldsLedger(source)) return;
  const ObjectAddress address = DatabaseAddress(copy);
  SetSecurityLabel(&address, kLabelProvider, kLedgerLabel);
}

void CheckDatabaseLabel(const char* label) {
  if (!superuser())
    ereport(ERROR, (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
                    errmsg("only superusers may change the dp_agg label of a database"),
                    errdetail("The label 'ledger' guards DROP DATABASE of a database that holds "
                              "a dp_agg ledger.")));
  if (label != nullptr && strcmp(label, kLedgerLabel) != 0)
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("invalid dp_agg label for a database: \"%s\"", label),
                    errhint("The only label of a database is 'ledger' (or NULL to remove it).")));
  // Removing it lifts the guard: the same confirmation as the drop itself
  // (review 28: the label removed, DROP DATABASE went through unconfirmed).
  if (label == nullptr && !allow_drop_extension)
    ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
                    errmsg("removing the dp_agg label of a database lifts its DROP DATABASE guard"),
                    errdetail("The label 'ledger' marks a database that holds a dp_agg ledger."),
                    errhint("Confirm with SET dp_agg.allow_drop_extension = on in the same "
                            "session.")));
}

void LabelDatabaseAsHoldingLedger(bool trust_memory) {
  // A label found once stays (only a confirmed DROP EXTENSION, after which
  // nothing is appended here, or a superuser removes it): no catalog read
  // for every entry.
  if (trust_memory && labelled_database == MyDatabaseId) return;
  if (HoldsLedger(MyDatabaseId)) {
    labelled_database = MyDatabaseId;
    return;
  }
  const ObjectAddress database = DatabaseAddress(MyDatabaseId);
  // In a subtransaction: two first entries at once may both insert the label
  // (a unique violation for the second, which then finds it there).
  MemoryContext context = CurrentMemoryContext;
  ResourceOwner owner = CurrentResourceOwner;
  BeginInternalSubTransaction(nullptr);
  MemoryContextSwitchTo(context);
  PG_TRY();
  {
    SetSecurityLabel(&database, kLabelProvider, kLedgerLabel);
    ReleaseCurrentSubTransaction();
    MemoryContextSwitchTo(context);
    CurrentResourceOwner = owner;
  }
  PG_CATCH();
  {
    MemoryContextSwitchTo(context);
    ErrorData* error = CopyErrorData();
    FlushErrorState();
    RollbackAndReleaseCurrentSubTransaction();
    MemoryContextSwitchTo(context);
    CurrentResourceOwner = owner;
    if (error->sqlerrcode != ERRCODE_UNIQUE_VIOLATION) ReThrowError(error);
    FreeErrorData(error);
  }
  PG_END_TRY();
}

}  // namespace dp_pg

extern "C" {

// dp_agg.mark_ledger_database(): labels the current database as holding a
// dp_agg ledger (drop_guard.h). Called by the install and upgrade scripts.
PG_FUNCTION_INFO_V1(dp_agg_mark_ledger_database);
Datum dp_agg_mark_ledger_database(PG_FUNCTION_ARGS) {
  dp_pg::LabelDatabaseAsHoldingLedger(false);
  PG_RETURN_VOID();
}

}  // extern "C"
