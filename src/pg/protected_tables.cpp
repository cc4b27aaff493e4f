// What is protected (see protected_tables.h and restriction.h).
#include "protected_tables.h"

#include "citus/catalog.h"
#include "label_cache.h"
#include "restriction.h"
#include "security_labels.h"

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

namespace dp_pg {

// The protected tables, and `extra_table` (being protected now, its label
// not yet written), with every partition and inheritance child of theirs at
// any depth: all tables that hold protected rows.
List* ProtectedFamily(Oid extra_table) {
  List* tables = LabelledObjects(RelationRelationId, kProtectedLabel);
  if (OidIsValid(extra_table)) tables = list_append_unique_oid(tables, extra_table);
  List* family = NIL;
  ListCell* cell;
  foreach (cell, tables) {
    const Oid table = lfirst_oid(cell);
    if (!SearchSysCacheExists1(RELOID, ObjectIdGetDatum(table))) continue;
    family = list_concat_unique_oid(family, find_all_inheritors(table, NoLock, nullptr));
  }
  list_free(tables);
  return family;
}

// Labels every INHERITS child (at any depth) of the protected tables, and of
// `extra_table` (being protected now, its label not yet written), as
// protected: a child's rows are protected rows, whether read through the
// parent or by name. Partitions are recognised through their ancestors
// instead (IsProtectedRelation), which a syscache field makes cheap; for a
// plain inheritance child only a pg_inherits scan would tell, on every
// statement, so the label is written once, when the child is made.
void PropagateProtection(Oid extra_table) {
  List* family = ProtectedFamily(extra_table);
  ListCell* cell;
  foreach (cell, family) {
    const Oid child = lfirst_oid(cell);
    if (child == extra_table || get_rel_relispartition(child) || HasProtectedLabel(child)) continue;
    ObjectAddress address;
    address.classId = RelationRelationId;
    address.objectId = child;
    address.objectSubId = 0;
    SetSecurityLabel(&address, kLabelProvider, kProtectedLabel);
    CacheInvalidateRelcacheByRelid(child);
    SendLabelInvalidation();  // label_cache.h
  }
  list_free(family);
}

// The column of `relation` itself labelled privacy_unit (InvalidAttrNumber:
// none), ignoring its ancestors.
AttrNumber OwnPrivacyUnitColumn(Oid relation) { return LabelledPrivacyUnitColumn(relation); }

namespace {

// The direct INHERITS parents of `relation` (pg_inherits rows with inhrelid =
// relation), in seqno order. Partitions have their parent here too.
List* DirectParents(Oid relation) {
  List* parents = NIL;
  Relation inherits = table_open(InheritsRelationId, AccessShareLock);
  ScanKeyData key;
  ScanKeyInit(&key, Anum_pg_inherits_inhrelid, BTEqualStrategyNumber, F_OIDEQ,
              ObjectIdGetDatum(relation));
  SysScanDesc scan =
      systable_beginscan(inherits, InheritsRelidSeqnoIndexId, true, nullptr, 1, &key);
  HeapTuple tuple;
  while (HeapTupleIsValid(tuple = systable_getnext(scan)))
    parents = lappend_oid(parents, reinterpret_cast<Form_pg_inherits>(GETSTRUCT(tuple))->inhparent);
  systable_endscan(scan);
  table_close(inherits, AccessShareLock);
  return parents;
}

}  // namespace

// A partition or INHERITS child holds rows of its ancestors' units: querying
// it directly must bound them per unit too (review finding: a partition named
// in FROM was answered per row). The nearest labelled ancestor decides, and
// its column is found in `relation` by name (attribute numbers differ after
// dropped columns or ATTACH PARTITION). Ancestors that disagree, or a child
// without the ancestor's column, cannot be bounded: refused.
AttrNumber PrivacyUnitColumn(Oid relation) {
  const AttrNumber own = OwnPrivacyUnitColumn(relation);
  if (own != InvalidAttrNumber) return own;
  // Only a unit table with children passes its column on (label_cache.h).
  if (!AnyUnitTableWithChildren()) return InvalidAttrNumber;
  List* frontier = DirectParents(relation);
  List* seen = NIL;
  char* unit_name = nullptr;
  while (frontier != NIL) {
    const Oid ancestor = linitial_oid(frontier);
    frontier = list_delete_first(frontier);
    if (list_member_oid(seen, ancestor)) continue;
    seen = lappend_oid(seen, ancestor);
    const AttrNumber column = OwnPrivacyUnitColumn(ancestor);
    if (column != InvalidAttrNumber) {
      char* name = get_attname(ancestor, column, false);
      if (unit_name != nullptr && strcmp(unit_name, name) != 0)
        ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
                        errmsg("dp_agg: %s inherits two different privacy unit columns",
                               get_rel_name(relation)),
                        errdetail("Its ancestors label \"%s\" and \"%s\" as privacy units; dp_agg "
                                  "cannot bound both. Label one column on every ancestor.",
                                  unit_name, name)));
      unit_name = name;
      continue;  // this branch is decided; its own ancestors are not needed
    }
    frontier = list_concat(frontier, DirectParents(ancestor));
  }
  if (unit_name == nullptr) return InvalidAttrNumber;
  const AttrNumber mine = get_attnum(relation, unit_name);
  if (mine == InvalidAttrNumber)
    ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
                    errmsg("dp_agg: %s has no column \"%s\", its ancestors' privacy unit",
                           get_rel_name(relation), unit_name),
                    errdetail("Query the parent table instead.")));
  return mine;
}

bool IsProtectedRelation(Oid relation, bool with_children) {
  // No table of this database is labelled: none holds protected rows, nor
  // does a shard of one (label_cache.h).
  if (!AnyProtectedTable()) return false;
  if (HasProtectedLabel(relation)) return true;
  // A Citus shard holds rows of its distributed table, which alone carries
  // the label (citus/catalog.h).
  const Oid shard_of = CitusShardParent(relation);
  if (OidIsValid(shard_of) && IsProtectedRelation(shard_of, true)) return true;
  // A partition of a protected table holds protected rows too (INHERITS
  // children carry the label themselves: PropagateProtection).
  if (get_rel_relispartition(relation)) {
    List* ancestors = get_partition_ancestors(relation);
    ListCell* cell;
    foreach (cell, ancestors) {
      if (HasProtectedLabel(lfirst_oid(cell))) return true;
    }
  }
  if (!with_children || !has_subclass(relation)) return false;
  List* family = find_all_inheritors(relation, AccessShareLock, nullptr);
  ListCell* cell;
  foreach (cell, family) {
    if (HasProtectedLabel(lfirst_oid(cell))) return true;
  }
  return false;
}

}  // namespace dp_pg
