// Public key sets follow the DDL of their columns (public_key_ddl.h).
#include "public_key_ddl.h"

#include "refusal.h"

extern "C" {
#include "access/genam.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/heapam.h"
#include "catalog/pg_class.h"
#include "catalog/namespace.h"
#include "catalog/pg_inherits.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "parser/parse_type.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"
}

namespace dp_pg {

namespace {

// The relation's name as regclass prints it (qualified when not visible).
const char* RelationName(Oid relation) {
  return DatumGetCString(DirectFunctionCall1(regclassout, ObjectIdGetDatum(relation)));
}

// dp_agg.public_key_set, or InvalidOid where the extension is not installed.
Oid KeySetTable() {
  const Oid schema = get_namespace_oid("dp_agg", true);
  return OidIsValid(schema) ? get_relname_relid("public_key_set", schema) : InvalidOid;
}

// The column names with declared keys of `relation` (palloc'd strings).
List* DeclaredColumns(Oid catalog, Oid relation) {
  Relation table = table_open(catalog, AccessShareLock);
  ScanKeyData key;
  ScanKeyInit(&key, 1, BTEqualStrategyNumber, F_OIDEQ, ObjectIdGetDatum(relation));
  SysScanDesc scan = systable_beginscan(table, InvalidOid, false, nullptr, 1, &key);
  List* names = NIL;
  HeapTuple tuple;
  while (HeapTupleIsValid(tuple = systable_getnext(scan))) {
    bool is_null = false;
    const Datum name = heap_getattr(tuple, 2, RelationGetDescr(table), &is_null);
    if (!is_null) names = lappend(names, pstrdup(NameStr(*DatumGetName(name))));
  }
  systable_endscan(scan);
  table_close(table, AccessShareLock);
  return names;
}

bool HasDeclaredColumn(Oid catalog, Oid relation, const char* column) {
  ListCell* cell;
  foreach (cell, DeclaredColumns(catalog, relation)) {
    if (strcmp(static_cast<const char*>(lfirst(cell)), column) == 0) return true;
  }
  return false;
}

// The relation a statement names and the INHERITS children and partitions
// its change reaches (all of them: PostgreSQL refuses ONLY where the
// children share the column). NIL when it does not exist.
//
// A composite type (ALTER TYPE ... ATTRIBUTE ... CASCADE) reaches its typed
// tables (CREATE TABLE ... OF type) and their children: PostgreSQL changes
// their columns with the type's attributes (review of i29minor: a rename,
// drop or type change there left the sets behind).
List* ReachedRelations(RangeVar* relation) {
  if (relation == nullptr) return NIL;
  const Oid relid = RangeVarGetRelid(relation, NoLock, true);
  if (!OidIsValid(relid)) return NIL;
  if (get_rel_relkind(relid) == RELKIND_COMPOSITE_TYPE) {
    const Oid type = get_rel_type_id(relid);
    List* typed = NIL;
    Relation classes = table_open(RelationRelationId, AccessShareLock);
    ScanKeyData key;
    ScanKeyInit(&key, Anum_pg_class_reloftype, BTEqualStrategyNumber, F_OIDEQ,
                ObjectIdGetDatum(type));
    TableScanDesc scan = table_beginscan_catalog(classes, 1, &key);
    HeapTuple tuple;
    while ((tuple = heap_getnext(scan, ForwardScanDirection)) != nullptr)
      typed = list_concat(
          typed, find_all_inheritors(reinterpret_cast<Form_pg_class>(GETSTRUCT(tuple))->oid, NoLock,
                                     nullptr));
    table_endscan(scan);
    table_close(classes, AccessShareLock);
    return typed;
  }
  if (!relation->inh) return list_make1_oid(relid);
  return find_all_inheritors(relid, NoLock, nullptr);
}

// Runs `sql` with `arguments` (oid, name[, name]) as the owner of
// dp_agg.public_key_set, which the ALTER TABLE's role need not be.
void RunAsKeySetOwner(Oid catalog, const char* sql, int count, Oid* types, Datum* arguments) {
  HeapTuple owner_tuple = SearchSysCache1(RELOID, ObjectIdGetDatum(catalog));
  if (!HeapTupleIsValid(owner_tuple)) return;
  const Oid owner = reinterpret_cast<Form_pg_class>(GETSTRUCT(owner_tuple))->relowner;
  ReleaseSysCache(owner_tuple);
  Oid saved_user = InvalidOid;
  int saved_context = 0;
  GetUserIdAndSecContext(&saved_user, &saved_context);
  SetUserIdAndSecContext(
      owner, saved_context | SECURITY_LOCAL_USERID_CHANGE | SECURITY_RESTRICTED_OPERATION);
  // The statement runs as the key-set table's owner (a superuser as a rule):
  // the ALTER's role chooses the search_path, and an operator or function of
  // its schemas found there would run with the owner's rights (review of
  // i29minor). Its names resolve in pg_catalog alone, as PostgreSQL does for
  // its own maintenance operations run as a table's owner.
  const int nest_level = NewGUCNestLevel();
  (void)set_config_option("search_path", "pg_catalog, pg_temp", PGC_USERSET, PGC_S_SESSION,
                          GUC_ACTION_SAVE, true, 0, false);
  if (SPI_connect() != SPI_OK_CONNECT) elog(ERROR, "dp_agg: SPI_connect failed");
  const int result = SPI_execute_with_args(sql, count, types, arguments, nullptr, false, 0);
  if (result < 0) elog(ERROR, "dp_agg: updating public key sets: %d", result);
  SPI_finish();
  AtEOXact_GUC(true, nest_level);
  SetUserIdAndSecContext(saved_user, saved_context);  // an error resets it with the transaction
}

void FollowRename(Oid catalog, const RenameStmt* rename) {
  ListCell* cell;
  foreach (cell, ReachedRelations(rename->relation)) {
    const Oid relation = lfirst_oid(cell);
    if (!HasDeclaredColumn(catalog, relation, rename->subname)) continue;
    Oid types[3] = {OIDOID, NAMEOID, NAMEOID};
    Datum arguments[3] = {ObjectIdGetDatum(relation),
                          DirectFunctionCall1(namein, CStringGetDatum(rename->subname)),
                          DirectFunctionCall1(namein, CStringGetDatum(rename->newname))};
    // A set left under the new name (a column dropped before this hook
    // removed such sets) named no column: it goes.
    RunAsKeySetOwner(catalog,
                     "DELETE FROM dp_agg.public_key_set WHERE relation OPERATOR(pg_catalog.=) $1 "
                     "AND column_name OPERATOR(pg_catalog.=) $3; "
                     "UPDATE dp_agg.public_key_set SET column_name = $3 "
                     "WHERE relation OPERATOR(pg_catalog.=) $1 "
                     "AND column_name OPERATOR(pg_catalog.=) $2",
                     3, types, arguments);
  }
}

// A column with declared keys as it was before an ALTER TABLE ran.
struct DeclaredColumn {
  Oid relation;
  AttrNumber number;
  const char* name;
};

// Whether `name` of `relation` names the column it named before the ALTER
// TABLE ran: a column dropped and added again under its name in the same
// statement (DROP COLUMN c, ADD COLUMN c int) is another column, with
// another number, which the keys were never checked against.
bool SameColumnAsBefore(List* before, Oid relation, const char* name, AttrNumber now) {
  ListCell* cell;
  foreach (cell, before) {
    const auto* column = static_cast<const DeclaredColumn*>(lfirst(cell));
    if (column->relation == relation && strcmp(column->name, name) == 0)
      return column->number == now;
  }
  return true;
}

void RemoveSetsOfDroppedColumns(Oid catalog, AlterTableStmt* alter, List* before) {
  ListCell* cell;
  foreach (cell, ReachedRelations(alter->relation)) {
    const Oid relation = lfirst_oid(cell);
    ListCell* column;
    foreach (column, DeclaredColumns(catalog, relation)) {
      const char* name = static_cast<const char*>(lfirst(column));
      const AttrNumber now = get_attnum(relation, name);
      if (now != InvalidAttrNumber && SameColumnAsBefore(before, relation, name, now)) continue;
      Oid types[2] = {OIDOID, NAMEOID};
      Datum arguments[2] = {ObjectIdGetDatum(relation),
                            DirectFunctionCall1(namein, CStringGetDatum(name))};
      RunAsKeySetOwner(catalog,
                       "DELETE FROM dp_agg.public_key_set WHERE relation OPERATOR(pg_catalog.=) $1 "
                       "AND column_name OPERATOR(pg_catalog.=) $2",
                       2, types, arguments);
      ereport(NOTICE, (errmsg("dp_agg: removed the public keys declared for column \"%s\" of %s",
                              name, RelationName(relation)),
                       now == InvalidAttrNumber
                           ? errdetail("The column no longer exists.")
                           : errdetail("The column was dropped; the column \"%s\" now is "
                                       "another one, added by the same statement.",
                                       name)));
    }
  }
}

// ALTER TYPE ... RENAME VALUE of an enum: the keys of the enum's columns
// are stored as the labels' text, so the renamed label is renamed in them.
void FollowEnumRename(Oid catalog, const AlterEnumStmt* alter) {
  if (alter->oldVal == nullptr || alter->newVal == nullptr) return;
  const Oid type = typenameTypeId(nullptr, makeTypeNameFromNameList(alter->typeName));
  Oid types[3] = {OIDOID, TEXTOID, TEXTOID};
  Datum arguments[3] = {ObjectIdGetDatum(type), CStringGetTextDatum(alter->oldVal),
                        CStringGetTextDatum(alter->newVal)};
  RunAsKeySetOwner(catalog,
                   "UPDATE dp_agg.public_key_set s SET keys = pg_catalog.array_replace(s.keys, "
                   "$2, $3) FROM pg_catalog.pg_attribute a "
                   "WHERE a.attrelid OPERATOR(pg_catalog.=) s.relation "
                   "AND a.attname OPERATOR(pg_catalog.=) s.column_name AND NOT a.attisdropped "
                   "AND a.atttypid OPERATOR(pg_catalog.=) $1 "
                   "AND $2 OPERATOR(pg_catalog.=) ANY(s.keys)",
                   3, types, arguments);
}

}  // namespace

List* RefuseTypeChangeOfPublicKeys(Node* parse_tree) {
  if (parse_tree == nullptr || !IsA(parse_tree, AlterTableStmt)) return NIL;
  auto* alter = reinterpret_cast<AlterTableStmt*>(parse_tree);
  const Oid catalog = KeySetTable();
  if (!OidIsValid(catalog)) return NIL;
  List* before = NIL;
  ListCell* relation_cell;
  foreach (relation_cell, ReachedRelations(alter->relation)) {
    const Oid relation = lfirst_oid(relation_cell);
    ListCell* name_cell;
    foreach (name_cell, DeclaredColumns(catalog, relation)) {
      auto* column = static_cast<DeclaredColumn*>(palloc(sizeof(DeclaredColumn)));
      column->relation = relation;
      column->name = static_cast<const char*>(lfirst(name_cell));
      column->number = get_attnum(relation, column->name);
      before = lappend(before, column);
    }
  }
  ListCell* command_cell;
  foreach (command_cell, alter->cmds) {
    auto* command = static_cast<AlterTableCmd*>(lfirst(command_cell));
    if (command->subtype != AT_AlterColumnType || command->name == nullptr ||
        command->def == nullptr || !IsA(command->def, ColumnDef))
      continue;
    ListCell* cell;
    foreach (cell, ReachedRelations(alter->relation)) {
      const Oid relation = lfirst_oid(cell);
      if (!HasDeclaredColumn(catalog, relation, command->name)) continue;
      const AttrNumber column = get_attnum(relation, command->name);
      if (column == InvalidAttrNumber) continue;  // PostgreSQL says so
      const Oid old_type = get_atttype(relation, column);
      const Oid new_type =
          typenameTypeId(nullptr, reinterpret_cast<ColumnDef*>(command->def)->typeName);
      if (new_type == old_type) continue;  // a new length or precision: the same values
      Refuse(
          ERRCODE_FEATURE_NOT_SUPPORTED,
          psprintf("cannot change the type of column \"%s\" of %s: it has declared public "
                   "keys",
                   command->name, RelationName(relation)),
          "dp_agg checked the declared keys against the column's type; they may not name "
          "the same values in another type.",
          psprintf("Remove them first (SELECT dp_agg.unset_public_keys(%s, %s)), change "
                   "the type, then declare them again (dp_agg.set_public_keys).",
                   quote_literal_cstr(RelationName(relation)), quote_literal_cstr(command->name)));
    }
  }
  return before;
}

void FollowPublicKeyColumns(Node* parse_tree, List* before) {
  if (parse_tree == nullptr) return;
  const bool rename = IsA(parse_tree, RenameStmt) &&
                      (reinterpret_cast<RenameStmt*>(parse_tree)->renameType == OBJECT_COLUMN ||
                       reinterpret_cast<RenameStmt*>(parse_tree)->renameType == OBJECT_ATTRIBUTE);
  if (!rename && !IsA(parse_tree, AlterTableStmt) && !IsA(parse_tree, AlterEnumStmt)) return;
  const Oid catalog = KeySetTable();
  if (!OidIsValid(catalog)) return;
  if (IsA(parse_tree, AlterEnumStmt))
    FollowEnumRename(catalog, reinterpret_cast<AlterEnumStmt*>(parse_tree));
  else if (rename)
    FollowRename(catalog, reinterpret_cast<RenameStmt*>(parse_tree));
  else
    RemoveSetsOfDroppedColumns(catalog, reinterpret_cast<AlterTableStmt*>(parse_tree), before);
}

}  // namespace dp_pg
