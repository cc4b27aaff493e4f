// Restricted roles and protected tables: the label provider, the invariant
// that restricted roles hold no privilege of their own on protected tables,
// and the utility statements a restricted role may run.
#include "restriction.h"

#include "column_bounds.h"

#include "citus/catalog.h"
#include "drop_guard.h"

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

namespace {

constexpr const char* kProvider = "dp_agg";
constexpr const char* kProtected = "protected";
constexpr const char* kRestricted = "restricted";
constexpr const char* kPrivacyUnit = "privacy_unit";

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
    if (is_null || strcmp(TextDatumGetCString(provider), kProvider) != 0) continue;
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

// Membership without the superuser shortcut: is_member_of_role() says yes
// for a superuser and every role, which would restrict every superuser. A
// superuser that was itself granted a restricted role (or is labelled) is
// restricted like any other member.
bool IsMemberOfAny(Oid role, List* roles) {
  ListCell* cell;
  foreach (cell, roles) {
    if (is_member_of_role_nosuper(role, lfirst_oid(cell))) return true;
  }
  return false;
}

// RestrictedSession() is asked several times per statement (planner,
// executor, utility hook); the answer is kept for the current transaction
// and pair of users.
struct RestrictionCache {
  LocalTransactionId transaction = InvalidLocalTransactionId;
  Oid session_user = InvalidOid;
  Oid current_user = InvalidOid;
  bool restricted = false;
};
RestrictionCache restriction_cache;

// What the session's client may be sent below INFO, decided without
// catalog reads wherever a message is reported or a setting is checked.
// `session_judged`: the login role was judged at authentication, or
// RestrictedSession() answered. `session_seen_restricted`: some answer was
// yes; it stays set for the session (a role restricted mid-session, or a
// SET ROLE back from a restricted role, keeps the session fail-closed).
bool session_judged = false;
bool session_seen_restricted = false;

// DEBUG and LOG messages a client asked for (client_min_messages = debug5
// or log, also as a connection option or from postgresql.conf) include
// transaction and plan details that only the server log should get from a
// restricted session. Messages that are not also logged never reach the
// emit_log_hook, so the setting itself is kept at NOTICE or above. It is
// written directly, not through set_config_option, so that no transaction
// abort restores the lower value.
void KeepDebugFromClient() {
  if (client_min_messages < NOTICE) client_min_messages = NOTICE;
}

void NoteRestricted() {
  session_seen_restricted = true;
  KeepDebugFromClient();
}

// Whether messages below INFO must not reach this session's client: the
// session was found restricted, or it is not judged yet and its role is not
// a superuser (fail closed; a restricted role cannot be a superuser).
bool SessionKeepsDebugFromClient() {
  return session_seen_restricted || (!session_judged && !session_auth_is_superuser);
}

}  // namespace

bool RestrictedSession() {
  const Oid session_user = GetSessionUserId();
  const Oid current_user = GetUserId();
  if (!IsTransactionState()) return false;
  if (restriction_cache.transaction == MyProc->lxid &&
      restriction_cache.session_user == session_user &&
      restriction_cache.current_user == current_user)
    return restriction_cache.restricted;
  List* restricted_roles = LabelledObjects(AuthIdRelationId, kRestricted);
  const bool restricted =
      restricted_roles != NIL && (IsMemberOfAny(session_user, restricted_roles) ||
                                  IsMemberOfAny(current_user, restricted_roles));
  list_free(restricted_roles);
  restriction_cache = RestrictionCache{MyProc->lxid, session_user, current_user, restricted};
  session_judged = true;
  if (restricted) NoteRestricted();
  return restricted;
}

bool RoleIsRestricted(Oid role) {
  List* restricted_roles = LabelledObjects(AuthIdRelationId, kRestricted);
  const bool restricted = IsMemberOfAny(role, restricted_roles);
  list_free(restricted_roles);
  return restricted;
}

namespace {

bool HasProtectedLabel(Oid relation) {
  ObjectAddress address;
  address.classId = RelationRelationId;
  address.objectId = relation;
  address.objectSubId = 0;
  char* label = GetSecurityLabel(&address, kProvider);
  const bool is_protected = label != nullptr && strcmp(label, kProtected) == 0;
  if (label != nullptr) pfree(label);
  return is_protected;
}

// The protected tables, and `extra_table` (being protected now, its label
// not yet written), with every partition and inheritance child of theirs at
// any depth: all tables that hold protected rows.
List* ProtectedFamily(Oid extra_table) {
  List* tables = LabelledObjects(RelationRelationId, kProtected);
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
    SetSecurityLabel(&address, kProvider, kProtected);
    CacheInvalidateRelcacheByRelid(child);
  }
  list_free(family);
}

}  // namespace

namespace {

// The column of `relation` itself labelled privacy_unit (InvalidAttrNumber:
// none), ignoring its ancestors.
AttrNumber OwnPrivacyUnitColumn(Oid relation) {
  Relation labels = table_open(SecLabelRelationId, AccessShareLock);
  ScanKeyData keys[2];
  ScanKeyInit(&keys[0], Anum_pg_seclabel_objoid, BTEqualStrategyNumber, F_OIDEQ,
              ObjectIdGetDatum(relation));
  ScanKeyInit(&keys[1], Anum_pg_seclabel_classoid, BTEqualStrategyNumber, F_OIDEQ,
              ObjectIdGetDatum(RelationRelationId));
  SysScanDesc scan = systable_beginscan(labels, SecLabelObjectIndexId, true, nullptr, 2, keys);
  AttrNumber column = InvalidAttrNumber;
  HeapTuple tuple;
  TupleDesc descriptor = RelationGetDescr(labels);
  while (column == InvalidAttrNumber && HeapTupleIsValid(tuple = systable_getnext(scan))) {
    bool is_null = false;
    const Datum subid = heap_getattr(tuple, Anum_pg_seclabel_objsubid, descriptor, &is_null);
    if (is_null || DatumGetInt32(subid) <= 0) continue;
    const Datum provider = heap_getattr(tuple, Anum_pg_seclabel_provider, descriptor, &is_null);
    if (is_null || strcmp(TextDatumGetCString(provider), kProvider) != 0) continue;
    const Datum label = heap_getattr(tuple, Anum_pg_seclabel_label, descriptor, &is_null);
    if (is_null || strcmp(TextDatumGetCString(label), kPrivacyUnit) != 0) continue;
    column = static_cast<AttrNumber>(DatumGetInt32(subid));
  }
  systable_endscan(scan);
  table_close(labels, AccessShareLock);
  return column;
}

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

namespace {

// ---------------------------------------------------------------------------
// The invariant behind "fail closed": no restricted role owns a protected
// table or holds SELECT on it (directly, through a role it belongs to, or
// through PUBLIC). Access to protected data then exists only where the
// query rules grant it, and only while the library is loaded.
// ---------------------------------------------------------------------------

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

// `extra_table` / `extra_role`: an object being labelled now, whose label is
// not yet in the catalog.
void CheckRestrictionInvariant(Oid extra_table, Oid extra_role) {
  List* roles = LabelledObjects(AuthIdRelationId, kRestricted);
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
  const char* existing_label = GetSecurityLabel(object, kProvider);
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
  if (strcmp(label, kPrivacyUnit) != 0)
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
    if (label != nullptr && strcmp(label, kProtected) != 0)
      ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                      errmsg("invalid dp_agg label for a table: \"%s\"", label),
                      errhint("The only label of a table is 'protected' (or NULL to remove it).")));
    if (label != nullptr) {
      CheckRestrictionInvariant(object->objectId, InvalidOid);
      PropagateProtection(object->objectId);
    }
  } else if (object->classId == AuthIdRelationId) {
    if (label != nullptr && strcmp(label, kRestricted) != 0)
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

// ---------------------------------------------------------------------------
// Utility statements. A restricted role may run only those on this list;
// everything else is refused by name. Statements that contain a query (COPY
// (query), CREATE TABLE AS, DECLARE CURSOR, EXPLAIN, PREPARE/EXECUTE) have
// it planned, so the query rules judge it there.
// ---------------------------------------------------------------------------

int explain_depth = 0;  // > 0 while an EXPLAIN statement runs

[[noreturn]] void RefuseUtility(Node* statement, const char* why) {
  ereport(ERROR, (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
                  errmsg("dp_agg: restricted roles may not run %s",
                         GetCommandTagName(CreateCommandTag(statement))),
                  errdetail("%s", why),
                  errhint("Restricted roles read protected tables only through dp_agg's "
                          "differentially private aggregates.")));
  pg_unreachable();
}

void CheckUtilityForRestrictedRole(Node* statement) {
  switch (nodeTag(statement)) {
    case T_TransactionStmt:
    case T_VariableShowStmt:
    case T_PrepareStmt:
    case T_ExecuteStmt:
    case T_DeallocateStmt:
    case T_DeclareCursorStmt:
    case T_FetchStmt:
    case T_ClosePortalStmt:
    case T_DiscardStmt:
    // LISTEN is not allowed: NOTIFY payloads are whatever the application
    // sends (a trigger may send row_to_json(NEW) of a protected table).
    case T_UnlistenStmt:
    case T_NotifyStmt:
    case T_ExplainStmt:
    case T_CreateTableAsStmt:
    case T_CreateStmt:
    case T_ViewStmt:
    case T_DropStmt:
    case T_DoStmt:
    case T_CallStmt:
      return;
    case T_VariableSetStmt: {
      const auto* set = reinterpret_cast<VariableSetStmt*>(statement);
      // RESET returns to what the administrator configured; SET TRANSACTION
      // and SET SESSION CHARACTERISTICS are VAR_SET_MULTI.
      if (set->kind == VAR_RESET_ALL || set->kind == VAR_RESET || set->kind == VAR_SET_MULTI)
        return;
      if (set->name != nullptr && IsAnalystSetting(set->name)) return;
      RefuseUtility(statement,
                    "Restricted roles may change only client settings (DateStyle, "
                    "search_path, statement_timeout, ...) and "
                    "dp_agg.group_selection_epsilon/_delta, "
                    "dp_agg.max_groups_contributed, dp_agg.release_cache_period: planner "
                    "and debugging "
                    "settings show or change how protected rows are read.");
    }
    case T_CopyStmt: {
      const auto* copy = reinterpret_cast<CopyStmt*>(statement);
      if (copy->relation == nullptr) return;  // COPY (query): the query is judged when planned
      const Oid relation = RangeVarGetRelid(copy->relation, NoLock, true);
      if (OidIsValid(relation) && IsProtectedRelation(relation, true))
        RefuseUtility(statement, "COPY of a protected table copies its rows.");
      if (OidIsValid(relation) && get_rel_namespace(relation) == PG_CATALOG_NAMESPACE)
        RefuseUtility(statement,
                      "COPY of a system catalog is not judged like a query; "
                      "catalogs such as pg_class hold row counts (select them "
                      "instead).");
      return;
    }
    case T_LoadStmt:
      RefuseUtility(statement, "Loading libraries could change how queries run.");
    default:
      RefuseUtility(statement,
                    "It is not on dp_agg's list of statements that cannot read "
                    "protected data.");
  }
}

}  // namespace

void RunUtilityForRestrictedRoles(PlannedStmt* statement, const char* query_string,
                                  bool read_only_tree, ProcessUtilityContext context,
                                  ParamListInfo params, QueryEnvironment* environment,
                                  DestReceiver* destination, QueryCompletion* completion,
                                  ProcessUtility_hook_type next) {
  Node* parse_tree = statement->utilityStmt;
  // Sub-commands (the index of a PRIMARY KEY in CREATE TABLE) belong to a
  // statement that was already allowed.
  const bool restricted =
      context != PROCESS_UTILITY_SUBCOMMAND && IsTransactionState() && RestrictedSession();
  if (restricted) CheckUtilityForRestrictedRole(parse_tree);
  if (IsA(parse_tree, ExplainStmt)) {
    const int depth = explain_depth;
    PG_TRY();
    {
      ++explain_depth;
      next(statement, query_string, read_only_tree, context, params, environment, destination,
           completion);
    }
    PG_FINALLY();
    { explain_depth = depth; }
    PG_END_TRY();
    return;
  }
  next(statement, query_string, read_only_tree, context, params, environment, destination,
       completion);
  if (IsA(parse_tree, VariableSetStmt) || IsA(parse_tree, DiscardStmt)) {
    // A new role (SET ROLE, SET SESSION AUTHORIZATION) is judged now, not
    // at the next statement.
    if (IsTransactionState()) (void)RestrictedSession();
    // RESET and DISCARD ALL restore client_min_messages without checking
    // it (to postgresql.conf's value, say).
    if (session_seen_restricted) KeepDebugFromClient();
  }
  // A GRANT of a table or sequence privilege or of role membership, or a
  // new owner, must not hand a restricted role direct access to a protected
  // table or to a sequence that counts its rows (ALTER/CREATE SEQUENCE ...
  // OWNED BY, ALTER TABLE ... ADD COLUMN of a serial or identity column).
  if (IsA(parse_tree, GrantStmt) || IsA(parse_tree, GrantRoleStmt) ||
      IsA(parse_tree, AlterOwnerStmt) || IsA(parse_tree, AlterTableStmt) ||
      IsA(parse_tree, AlterDefaultPrivilegesStmt) || IsA(parse_tree, AlterSeqStmt) ||
      IsA(parse_tree, CreateSeqStmt) ||
      // A new partition or inheritance child of a protected table carries
      // the default privileges of its creator.
      IsA(parse_tree, CreateStmt) || IsA(parse_tree, CreateForeignTableStmt)) {
    CommandCounterIncrement();
    // CREATE [FOREIGN] TABLE ... INHERITS and ALTER TABLE ... INHERIT make
    // children.
    if (IsA(parse_tree, CreateStmt) || IsA(parse_tree, CreateForeignTableStmt) ||
        IsA(parse_tree, AlterTableStmt)) {
      PropagateProtection(InvalidOid);
      CommandCounterIncrement();
    }
    CheckRestrictionInvariant(InvalidOid, InvalidOid);
  }
}

namespace {

bool PlanReadsProtectedTable(PlannedStmt* plan) {
  ListCell* cell;
  foreach (cell, plan->rtable) {
    const auto* entry = static_cast<RangeTblEntry*>(lfirst(cell));
    if (entry->rtekind == RTE_RELATION && IsProtectedRelation(entry->relid, entry->inh))
      return true;
  }
  return false;
}

}  // namespace

void CheckExecutionForRestrictedRole(QueryDesc* query, int flags) {
  const bool explaining = explain_depth > 0 || (flags & EXEC_FLAG_EXPLAIN_ONLY) != 0;
  if (!explaining || !RestrictedSession()) return;
  if (PlanReadsProtectedTable(query->plannedstmt))
    ereport(ERROR, (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
                    errmsg("dp_agg: restricted roles may not EXPLAIN queries on protected tables"),
                    errdetail("A plan shows row counts and row estimates of the data."),
                    errhint("Run the query itself; its differentially private answers are the only "
                            "output about protected tables.")));
}

// Messages below INFO that are logged too pass here: a second guard behind
// the clamped client_min_messages (a library loaded into the session rather
// than preloaded has not clamped the setting it was started with).
void KeepDebugMessageFromClient(ErrorData* error) {
  if (error->output_to_client && error->elevel < INFO && SessionKeepsDebugFromClient())
    error->output_to_client = false;
}

// The login role is judged once authentication has succeeded, inside the
// transaction InitPostgres runs for it (shared catalogs are readable) and
// before connection options or ALTER ROLE ... SET apply client_min_messages.
// Until then only errors reach the client (ClientAuthInProgress).
void JudgeLoginRole(Port* port, int status) {
  if (status != STATUS_OK || port->user_name == nullptr || !IsTransactionState()) return;
  const Oid role = get_role_oid(port->user_name, true);
  if (!OidIsValid(role)) return;  // refused later, as an unknown role
  session_judged = true;
  if (RoleIsRestricted(role)) NoteRestricted();
}

// client_min_messages, however it is set (SET, set_config(), connection
// options, ALTER ROLE ... SET, a function's SET clause, postgresql.conf on
// reload), stays at NOTICE or above in a restricted session.
void ClampClientMinMessages(int* new_value) {
  if (*new_value < NOTICE && IsUnderPostmaster && SessionKeepsDebugFromClient())
    *new_value = NOTICE;
}

bool IsAnalystSetting(const char* name) {
  static const char* const kAllowed[] = {"application_name",
                                         "extra_float_digits",
                                         "datestyle",
                                         "intervalstyle",
                                         "timezone",
                                         "client_encoding",
                                         "search_path",
                                         "statement_timeout",
                                         "lock_timeout",
                                         "idle_in_transaction_session_timeout",
                                         "idle_session_timeout",
                                         "standard_conforming_strings",
                                         "bytea_output",
                                         "client_min_messages",
                                         "transaction_isolation",
                                         "transaction_read_only",
                                         "transaction_deferrable",
                                         "default_transaction_isolation",
                                         "default_transaction_read_only",
                                         "default_transaction_deferrable",
                                         "plan_cache_mode",
                                         "role",
                                         "lc_monetary",
                                         "lc_numeric",
                                         "lc_time",
                                         "xmlbinary",
                                         "xmloption",
                                         "dp_agg.group_selection_epsilon",
                                         "dp_agg.group_selection_delta",
                                         "dp_agg.max_groups_contributed",
                                         "dp_agg.release_cache_period"};
  if (name == nullptr) return false;
  for (const char* allowed : kAllowed)
    if (pg_strcasecmp(name, allowed) == 0) return true;
  return false;
}

void StartRestrictionRules() {
  register_label_provider(kProvider, CheckLabel);
  // Loaded into a session that has started (not preloaded): its setting
  // was not checked.
  if (IsUnderPostmaster && SessionKeepsDebugFromClient()) KeepDebugFromClient();
}

}  // namespace dp_pg
