// dp_agg's labels, cached per backend (see label_cache.h).
#include "label_cache.h"

#include "security_labels.h"

extern "C" {
#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/pg_authid.h"
#include "catalog/pg_class.h"
#include "catalog/pg_seclabel.h"
#include "catalog/pg_shseclabel.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/syscache.h"
}

#include <cstring>

namespace dp_pg {

namespace {

// One cache: its lists live in TopMemoryContext; `changes` counts the
// invalidations received, so that a reread during which one arrived is
// used once but not kept.
struct RoleCache {
  bool valid = false;
  uint64 changes = 0;
  List* restricted = NIL;  // Oid
};

struct TableCache {
  bool valid = false;
  uint64 changes = 0;
  List* protected_tables = NIL;  // Oid
  List* unit_tables = NIL;  // Oid, parallel to unit_columns
  List* unit_columns = NIL;  // int (AttrNumber)
};

RoleCache roles;
TableCache tables;

void DropRoles() {
  roles.valid = false;
  ++roles.changes;
}

void DropTables() {
  tables.valid = false;
  ++tables.changes;
}

void RelcacheChanged(Datum, Oid relation) {
  if (!OidIsValid(relation) || relation == SharedSecLabelRelationId) DropRoles();
  if (!OidIsValid(relation) || relation == SecLabelRelationId ||
      list_member_oid(tables.protected_tables, relation) ||
      list_member_oid(tables.unit_tables, relation))
    DropTables();
}

void RoleChanged(Datum, int, uint32) { DropRoles(); }

// Copies `fresh` into TopMemoryContext and frees `kept`.
List* KeepInTopContext(List* kept, List* fresh) {
  MemoryContext old = MemoryContextSwitchTo(TopMemoryContext);
  List* copy = list_copy(fresh);
  MemoryContextSwitchTo(old);
  list_free(kept);
  return copy;
}

void ReadRoles() {
  const uint64 changes = roles.changes;
  List* fresh = LabelledObjects(AuthIdRelationId, kRestrictedLabel);
  roles.restricted = KeepInTopContext(roles.restricted, fresh);
  list_free(fresh);
  roles.valid = roles.changes == changes;
}

// One scan of this database's dp_agg labels on tables and their columns.
void ReadTables() {
  const uint64 changes = tables.changes;
  List* protected_tables = NIL;
  List* unit_tables = NIL;
  List* unit_columns = NIL;
  Relation catalog = table_open(SecLabelRelationId, AccessShareLock);
  ScanKeyData key;
  ScanKeyInit(&key, Anum_pg_seclabel_classoid, BTEqualStrategyNumber, F_OIDEQ,
              ObjectIdGetDatum(RelationRelationId));
  SysScanDesc scan = systable_beginscan(catalog, InvalidOid, false, nullptr, 1, &key);
  TupleDesc descriptor = RelationGetDescr(catalog);
  HeapTuple tuple;
  while (HeapTupleIsValid(tuple = systable_getnext(scan))) {
    bool is_null = false;
    const Datum provider = heap_getattr(tuple, Anum_pg_seclabel_provider, descriptor, &is_null);
    if (is_null || strcmp(TextDatumGetCString(provider), kLabelProvider) != 0) continue;
    const Datum label_datum = heap_getattr(tuple, Anum_pg_seclabel_label, descriptor, &is_null);
    if (is_null) continue;
    const char* label = TextDatumGetCString(label_datum);
    const Datum column_datum = heap_getattr(tuple, Anum_pg_seclabel_objsubid, descriptor, &is_null);
    if (is_null) continue;
    const int32 column = DatumGetInt32(column_datum);
    const Oid object =
        DatumGetObjectId(heap_getattr(tuple, Anum_pg_seclabel_objoid, descriptor, &is_null));
    if (is_null) continue;
    if (column == 0 && strcmp(label, kProtectedLabel) == 0) {
      protected_tables = lappend_oid(protected_tables, object);
    } else if (column > 0 && strcmp(label, kPrivacyUnitLabel) == 0) {
      // One privacy unit column per table (the provider's check); were
      // there two, the lowest decides, as an index scan in column order.
      int position = 0;
      ListCell* cell;
      foreach (cell, unit_tables) {
        if (lfirst_oid(cell) == object) break;
        ++position;
      }
      if (position == list_length(unit_tables)) {
        unit_tables = lappend_oid(unit_tables, object);
        unit_columns = lappend_int(unit_columns, column);
      } else if (column < list_nth_int(unit_columns, position)) {
        list_nth_cell(unit_columns, position)->int_value = column;
      }
    }
  }
  systable_endscan(scan);
  table_close(catalog, AccessShareLock);
  tables.protected_tables = KeepInTopContext(tables.protected_tables, protected_tables);
  tables.unit_tables = KeepInTopContext(tables.unit_tables, unit_tables);
  tables.unit_columns = KeepInTopContext(tables.unit_columns, unit_columns);
  list_free(protected_tables);
  list_free(unit_tables);
  list_free(unit_columns);
  tables.valid = tables.changes == changes;
}

const TableCache& Tables() {
  if (!tables.valid) ReadTables();
  return tables;
}

}  // namespace

List* RestrictedRoles() {
  if (!roles.valid) ReadRoles();
  return roles.restricted;
}

uint64 RestrictedRolesChanges() { return roles.changes; }

bool HasProtectedLabel(Oid relation) {
  return list_member_oid(Tables().protected_tables, relation);
}

bool AnyProtectedTable() { return Tables().protected_tables != NIL; }

AttrNumber LabelledPrivacyUnitColumn(Oid relation) {
  const TableCache& cache = Tables();
  ListCell* table_cell;
  ListCell* column_cell;
  forboth(table_cell, cache.unit_tables, column_cell, cache.unit_columns) {
    if (lfirst_oid(table_cell) == relation) return static_cast<AttrNumber>(lfirst_int(column_cell));
  }
  return InvalidAttrNumber;
}

bool AnyUnitTableWithChildren() {
  ListCell* cell;
  foreach (cell, Tables().unit_tables) {
    HeapTuple tuple = SearchSysCache1(RELOID, ObjectIdGetDatum(lfirst_oid(cell)));
    if (!HeapTupleIsValid(tuple)) continue;
    const bool children = reinterpret_cast<Form_pg_class>(GETSTRUCT(tuple))->relhassubclass;
    ReleaseSysCache(tuple);
    if (children) return true;
  }
  return false;
}

void SendLabelInvalidation() {
  CacheInvalidateRelcacheByRelid(SecLabelRelationId);
  CacheInvalidateRelcacheByRelid(SharedSecLabelRelationId);
}

void RegisterLabelCacheInvalidation() {
  CacheRegisterRelcacheCallback(RelcacheChanged, 0);
  CacheRegisterSyscacheCallback(AUTHOID, RoleChanged, 0);
}

}  // namespace dp_pg
