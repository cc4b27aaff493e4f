// dp_agg's security labels: reading them, and the provider's check of a new
// one (see security_labels.h).
#include "security_labels.h"

#include "column_bounds.h"
#include "drop_guard.h"
#include "grant_invariant.h"
#include "label_cache.h"
#include "protected_tables.h"

extern "C" {
#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/dependency.h"
#include "catalog/namespace.h"
#include "catalog/pg_attrdef.h"
#include "catalog/pg_authid.h"
#include "catalog/pg_class.h"
#include "catalog/pg_database.h"
#include "catalog/pg_depend.h"
#include "catalog/partition.h"
#include "catalog/pg_inherits.h"
#include "catalog/pg_namespace.h"
#include "catalog/pg_seclabel.h"
#include "catalog/pg_shseclabel.h"
#include "commands/seclabel.h"
#include "libpq/auth.h"
#include "libpq/libpq-be.h"
#include "nodes/parsenodes.h"
#include "storage/proc.h"
#include "tcop/utility.h"
#include "utils/acl.h"
#include "utils/fmgroids.h"
#include "utils/guc.h"
#include "utils/guc_tables.h"
#include "utils/rel.h"
}

#include <cstring>

#include "settings.h"

namespace dp_pg {

// Objects of class `class_id` that carry our label `wanted`, read from
// pg_seclabel (tables, column 0 only) or pg_shseclabel (roles).
List* LabelledObjects(Oid class_id, const char* wanted) {
  const bool shared = class_id == AuthIdRelationId;
  Relation catalog =
      table_open(shared ? SharedSecLabelRelationId : SecLabelRelationId, AccessShareLock);
  ScanKeyData key;
  ScanKeyInit(&key, shared ? Anum_pg_shseclabel_classoid : Anum_pg_seclabel_classoid,
              BTEqualStrategyNumber, F_OIDEQ, ObjectIdGetDatum(class_id));
  SysScanDesc scan = systable_beginscan(catalog, InvalidOid, false, nullptr, 1, &key);
  TupleDesc descriptor = RelationGetDescr(catalog);
  List* objects = NIL;
  HeapTuple tuple;
  while (HeapTupleIsValid(tuple = systable_getnext(scan))) {
    bool is_null = false;
    const Datum provider =
        heap_getattr(tuple, shared ? Anum_pg_shseclabel_provider : Anum_pg_seclabel_provider,
                     descriptor, &is_null);
    if (is_null || strcmp(TextDatumGetCString(provider), kLabelProvider) != 0) continue;
    const Datum label = heap_getattr(
        tuple, shared ? Anum_pg_shseclabel_label : Anum_pg_seclabel_label, descriptor, &is_null);
    if (is_null || strcmp(TextDatumGetCString(label), wanted) != 0) continue;
    if (!shared) {
      const Datum column = heap_getattr(tuple, Anum_pg_seclabel_objsubid, descriptor, &is_null);
      if (is_null || DatumGetInt32(column) != 0) continue;
    }
    const Datum object = heap_getattr(
        tuple, shared ? Anum_pg_shseclabel_objoid : Anum_pg_seclabel_objoid, descriptor, &is_null);
    objects = lappend_oid(objects, DatumGetObjectId(object));
  }
  systable_endscan(scan);
  table_close(catalog, AccessShareLock);
  return objects;
}

namespace {

bool IsLabelAdministrator() {
  const Oid session_user = GetSessionUserId();
  if (superuser_arg(session_user)) return true;
  if (admin_role == nullptr || admin_role[0] == '\0') return false;
  const Oid role = get_role_oid(admin_role, true);
  return OidIsValid(role) && is_member_of_role(session_user, role);
}

// A column's label: 'privacy_unit' (unit_rewrite.h). One per table, on a
// column of a table the label provider could protect; any type with a
// default btree and hash opclass works (it is grouped and partitioned by).
void CheckColumnLabel(const ObjectAddress* object, const char* label) {
  const char kind = get_rel_relkind(object->objectId);
  if (kind != RELKIND_RELATION && kind != RELKIND_PARTITIONED_TABLE && kind != RELKIND_MATVIEW &&
      kind != RELKIND_FOREIGN_TABLE)
    ereport(ERROR, (errcode(ERRCODE_WRONG_OBJECT_TYPE),
                    errmsg("dp_agg labels privacy units and bounds on columns of tables only")));
  if (label == nullptr) return;
  // One label per column and provider: a column is either a privacy unit or
  // has bounds, and setting one never silently drops the other.
  const char* existing_label = GetSecurityLabel(object, kLabelProvider);
  if (existing_label != nullptr && IsBoundsLabel(existing_label) != IsBoundsLabel(label))
    ereport(ERROR,
            (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
             errmsg("column \"%s\" already has the dp_agg label '%s'",
                    get_attname(object->objectId, object->objectSubId, false), existing_label),
             errdetail("A privacy unit column has no bounds, and a column with bounds is no "
                       "privacy unit."),
             errhint("Remove that label first (dp_agg.unset_column_bounds or "
                     "dp_agg.unset_privacy_unit).")));
  if (IsBoundsLabel(label)) {
    CheckBoundsLabel(object->objectId, object->objectSubId, label);
    return;
  }
  if (strcmp(label, kPrivacyUnitLabel) != 0)
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("invalid dp_agg label for a column: \"%s\"", label),
                    errhint("A column's label is 'privacy_unit' or 'bounds [lower, upper]' (or "
                            "NULL to remove it).")));
  const AttrNumber existing = OwnPrivacyUnitColumn(object->objectId);
  if (existing != InvalidAttrNumber && existing != object->objectSubId)
    ereport(ERROR,
            (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
             errmsg("table %s already has a privacy unit column, %s",
                    get_rel_name(object->objectId), get_attname(object->objectId, existing, false)),
             errdetail("Each table has at most one privacy unit column."),
             errhint("Remove that label first (IS NULL).")));
}

void CheckLabel(const ObjectAddress* object, const char* label) {
  if (!IsLabelAdministrator())
    ereport(ERROR, (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
                    errmsg("permission denied to change dp_agg security labels"),
                    errhint("Only superusers and members of the role named in dp_agg.admin_role "
                            "protect tables and restrict roles.")));
  if (object->classId == RelationRelationId && object->objectSubId == 0) {
    const char kind = get_rel_relkind(object->objectId);
    if (kind != RELKIND_RELATION && kind != RELKIND_PARTITIONED_TABLE && kind != RELKIND_MATVIEW &&
        kind != RELKIND_FOREIGN_TABLE)
      ereport(ERROR, (errcode(ERRCODE_WRONG_OBJECT_TYPE),
                      errmsg("dp_agg protects tables, materialized views and foreign tables "
                             "only"),
                      errhint("To protect what a view shows, protect the tables it reads.")));
    if (label != nullptr && strcmp(label, kProtectedLabel) != 0)
      ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                      errmsg("invalid dp_agg label for a table: \"%s\"", label),
                      errhint("The only label of a table is 'protected' (or NULL to remove it).")));
    if (label != nullptr) {
      CheckRestrictionInvariant(object->objectId, InvalidOid);
      PropagateProtection(object->objectId);
    }
  } else if (object->classId == AuthIdRelationId) {
    if (label != nullptr && strcmp(label, kRestrictedLabel) != 0)
      ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                      errmsg("invalid dp_agg label for a role: \"%s\"", label),
                      errhint("The only label of a role is 'restricted' (or NULL to remove it).")));
    if (label != nullptr && superuser_arg(object->objectId))
      ereport(ERROR,
              (errcode(ERRCODE_INVALID_PARAMETER_VALUE), errmsg("a superuser cannot be restricted"),
               errdetail("Superusers bypass every permission check."),
               errhint("Restrict an ordinary role (NOSUPERUSER).")));
    if (label != nullptr) CheckRestrictionInvariant(InvalidOid, object->objectId);
  } else if (object->classId == RelationRelationId && object->objectSubId > 0) {
    CheckColumnLabel(object, label);
  } else if (object->classId == DatabaseRelationId) {
    CheckDatabaseLabel(label);  // drop_guard.h: no plan depends on it
    return;
  } else {
    ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
                    errmsg("dp_agg labels only tables ('protected'), columns ('privacy_unit', "
                           "'bounds [...]') and "
                           "roles ('restricted')")));
  }
  // Every backend's cached labels (label_cache.h), at commit.
  SendLabelInvalidation();
  // Cached plans were validated under the old labels: plan again. A role's
  // label can change how any query is judged, so every relation is
  // invalidated then (a rare administrative act).
  if (object->classId == RelationRelationId) {
    ListCell* cell;
    foreach (cell, find_all_inheritors(object->objectId, NoLock, nullptr))
      CacheInvalidateRelcacheByRelid(lfirst_oid(cell));
  } else {
    CacheInvalidateRelcacheAll();
  }
}

}  // namespace

void RegisterLabelProvider() { register_label_provider(kLabelProvider, CheckLabel); }

}  // namespace dp_pg
