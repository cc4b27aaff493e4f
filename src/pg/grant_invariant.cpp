// The GRANT invariant of restricted roles (see grant_invariant.h).
#include "grant_invariant.h"

#include "protected_tables.h"
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

namespace dp_pg {

namespace {

void CheckNoDirectAccess(Oid table, Oid role) {
  const char* table_name = get_rel_name(table);
  const char* role_name = GetUserNameFromId(role, false);
  constexpr AclMode kColumnRights = ACL_SELECT | ACL_INSERT | ACL_UPDATE | ACL_REFERENCES;
  if (pg_class_ownercheck(table, role))
    ereport(ERROR, (errcode(ERRCODE_INVALID_GRANT_OPERATION),
                    errmsg("restricted role \"%s\" owns protected table \"%s\"", role_name,
                           table_name ? table_name : "?"),
                    errhint("Give the table to another owner (ALTER TABLE ... OWNER TO) before "
                            "protecting it or restricting the role.")));
  // Any privilege, not only SELECT: INSERT ... ON CONFLICT, UPDATE or
  // REFERENCES would let the role test which rows exist.
  if (pg_class_aclmask(table, role, ACL_ALL_RIGHTS_RELATION, ACLMASK_ANY) != 0 ||
      pg_attribute_aclcheck_all(table, role, kColumnRights, ACLMASK_ANY) == ACLCHECK_OK)
    ereport(ERROR,
            (errcode(ERRCODE_INVALID_GRANT_OPERATION),
             errmsg("restricted role \"%s\" holds a privilege on protected table \"%s\"", role_name,
                    table_name ? table_name : "?"),
             errdetail("A restricted role must hold no privilege on a protected table or its "
                       "partitions, not even through PUBLIC or a role it belongs to: dp_agg "
                       "grants read access query by query."),
             errhint("REVOKE ALL ON \"%s\" FROM the role (and from PUBLIC).",
                     table_name ? table_name : "?")));
}

// A sequence owned by a column of a protected table (serial, identity,
// OWNED BY), or called by one of its column defaults, counts its rows:
// last_value, nextval, currval, setval,
// pg_sequence_last_value() and pg_sequences show how many were ever
// inserted. It falls under the invariant like the table itself.
void CheckNoSequenceAccess(Oid sequence, Oid table, Oid role) {
  const char* sequence_name = get_rel_name(sequence);
  const char* table_name = get_rel_name(table);
  const char* role_name = GetUserNameFromId(role, false);
  if (pg_class_ownercheck(sequence, role))
    ereport(ERROR,
            (errcode(ERRCODE_INVALID_GRANT_OPERATION),
             errmsg("restricted role \"%s\" owns sequence \"%s\" of protected table \"%s\"",
                    role_name, sequence_name ? sequence_name : "?", table_name ? table_name : "?"),
             errhint("Give the table and its sequences to another owner (ALTER TABLE ... "
                     "OWNER TO) before protecting it or restricting the role.")));
  if (pg_class_aclmask(sequence, role, ACL_ALL_RIGHTS_SEQUENCE, ACLMASK_ANY) != 0)
    ereport(ERROR,
            (errcode(ERRCODE_INVALID_GRANT_OPERATION),
             errmsg("restricted role \"%s\" holds a privilege on sequence \"%s\" of protected "
                    "table \"%s\"",
                    role_name, sequence_name ? sequence_name : "?", table_name ? table_name : "?"),
             errdetail("The sequence's value tells how many rows were ever inserted into the "
                       "table: a restricted role must hold no privilege on it, not even through "
                       "PUBLIC or a role it belongs to."),
             errhint("REVOKE ALL ON SEQUENCE \"%s\" FROM the role (and from PUBLIC).",
                     sequence_name ? sequence_name : "?")));
}

// The sequences whose values count `table`'s rows: those its serial and
// identity columns own (pg_depend 'a' and 'i'), and every sequence a column
// default of it calls (nextval('s') with no OWNED BY, a sequence shared with
// another table): what matters is that inserts advance it, not who owns it.
// A default's dependencies are recorded on its pg_attrdef row, which itself
// depends on the table.
List* RowCountingSequences(Oid table) {
  List* sequences = getOwnedSequences(table);
  List* defaults = NIL;
  Relation depend = table_open(DependRelationId, AccessShareLock);
  ScanKeyData keys[2];
  ScanKeyInit(&keys[0], Anum_pg_depend_refclassid, BTEqualStrategyNumber, F_OIDEQ,
              ObjectIdGetDatum(RelationRelationId));
  ScanKeyInit(&keys[1], Anum_pg_depend_refobjid, BTEqualStrategyNumber, F_OIDEQ,
              ObjectIdGetDatum(table));
  SysScanDesc scan = systable_beginscan(depend, DependReferenceIndexId, true, nullptr, 2, keys);
  HeapTuple tuple;
  while (HeapTupleIsValid(tuple = systable_getnext(scan))) {
    const auto* row = reinterpret_cast<Form_pg_depend>(GETSTRUCT(tuple));
    if (row->classid == AttrDefaultRelationId)
      defaults = list_append_unique_oid(defaults, row->objid);
  }
  systable_endscan(scan);
  ListCell* cell;
  foreach (cell, defaults) {
    ScanKeyInit(&keys[0], Anum_pg_depend_classid, BTEqualStrategyNumber, F_OIDEQ,
                ObjectIdGetDatum(AttrDefaultRelationId));
    ScanKeyInit(&keys[1], Anum_pg_depend_objid, BTEqualStrategyNumber, F_OIDEQ,
                ObjectIdGetDatum(lfirst_oid(cell)));
    scan = systable_beginscan(depend, DependDependerIndexId, true, nullptr, 2, keys);
    while (HeapTupleIsValid(tuple = systable_getnext(scan))) {
      const auto* row = reinterpret_cast<Form_pg_depend>(GETSTRUCT(tuple));
      if (row->refclassid == RelationRelationId &&
          get_rel_relkind(row->refobjid) == RELKIND_SEQUENCE)
        sequences = list_append_unique_oid(sequences, row->refobjid);
    }
    systable_endscan(scan);
  }
  table_close(depend, AccessShareLock);
  list_free(defaults);
  return sequences;
}

}  // namespace

// `extra_table` / `extra_role`: an object being labelled now, whose label is
// not yet in the catalog.
void CheckRestrictionInvariant(Oid extra_table, Oid extra_role) {
  List* roles = LabelledObjects(AuthIdRelationId, kRestrictedLabel);
  if (OidIsValid(extra_role)) roles = list_append_unique_oid(roles, extra_role);
  // Partitions and inheritance children hold protected rows too.
  List* family = ProtectedFamily(extra_table);
  ListCell* table_cell;
  foreach (table_cell, family) {
    const Oid table = lfirst_oid(table_cell);
    if (!SearchSysCacheExists1(RELOID, ObjectIdGetDatum(table))) continue;
    // Serial and identity columns' sequences, and those defaults call.
    List* sequences = RowCountingSequences(table);
    ListCell* role_cell;
    foreach (role_cell, roles) {
      const Oid role = lfirst_oid(role_cell);
      if (!SearchSysCacheExists1(AUTHOID, ObjectIdGetDatum(role))) continue;
      // Members of a restricted role are restricted too.
      CheckNoDirectAccess(table, role);
      ListCell* sequence_cell;
      foreach (sequence_cell, sequences)
        CheckNoSequenceAccess(lfirst_oid(sequence_cell), table, role);
    }
    list_free(sequences);
  }
  list_free(roles);
  list_free(family);
}

}  // namespace dp_pg
