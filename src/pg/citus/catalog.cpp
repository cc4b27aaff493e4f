// dp_agg on Citus: Citus's catalogs, read without Citus's headers (catalog.h).
#include "catalog.h"

#include <cstdlib>
#include <cstring>

extern "C" {
#include "access/genam.h"
#include "access/table.h"
#include "catalog/dependency.h"
#include "catalog/namespace.h"
#include "catalog/pg_namespace.h"
#include "catalog/pg_type.h"
#include "commands/extension.h"
#include "nodes/makefuncs.h"
#include "optimizer/tlist.h"
#include "parser/parse_func.h"
#include "parser/parsetree.h"
#include "utils/datum.h"
#include "utils/fmgroids.h"
#include "utils/inval.h"
#include "utils/typcache.h"
#include "tcop/pquery.h"
#include "utils/rel.h"
#include "nodes/extensible.h"
}

namespace dp_pg {

// Asked while planning every statement. pg_extension has no syscache; the
// extension's catalog table pg_dist_partition, which it cannot be without,
// is found through one (a negative entry, dropped when such a table is
// created), so a database without Citus answers without a scan.
bool CitusInstalled() {
  if (!OidIsValid(get_relname_relid("pg_dist_partition", PG_CATALOG_NAMESPACE))) return false;
  return OidIsValid(get_extension_oid("citus", true));
}

// pg_dist_shard (logicalrelid, shardid, ...): the table of shard `shard_id`.
Oid ShardTable(int64 shard_id) {
  const Oid catalog = get_relname_relid("pg_dist_shard", PG_CATALOG_NAMESPACE);
  if (!OidIsValid(catalog)) return InvalidOid;
  Relation table = table_open(catalog, AccessShareLock);
  ScanKeyData key;
  ScanKeyInit(&key, 2, BTEqualStrategyNumber, F_INT8EQ, Int64GetDatum(shard_id));
  SysScanDesc scan = systable_beginscan(table, InvalidOid, false, nullptr, 1, &key);
  Oid logical = InvalidOid;
  HeapTuple tuple = systable_getnext(scan);
  if (HeapTupleIsValid(tuple)) {
    bool is_null = false;
    const Datum value = heap_getattr(tuple, 1, RelationGetDescr(table), &is_null);
    if (!is_null) logical = DatumGetObjectId(value);
  }
  systable_endscan(scan);
  table_close(table, AccessShareLock);
  return logical;
}

// pg_dist_partition (logicalrelid, partmethod, partkey, ...), read without
// Citus's headers. Returns the distribution column of a hash/range/append
// distributed table, or 0; *method is its partmethod ('h' hash, 'r' range,
// 'a' append, 'n' none: reference and single-shard tables), or '\0' for a
// table Citus does not know.
AttrNumber DistributionColumn(Oid relation, char* method_out) {
  if (method_out != nullptr) *method_out = '\0';
  const Oid catalog = get_relname_relid("pg_dist_partition", PG_CATALOG_NAMESPACE);
  if (!OidIsValid(catalog)) return 0;
  Relation table = table_open(catalog, AccessShareLock);
  ScanKeyData key;
  ScanKeyInit(&key, 1, BTEqualStrategyNumber, F_OIDEQ, ObjectIdGetDatum(relation));
  SysScanDesc scan = systable_beginscan(table, InvalidOid, false, nullptr, 1, &key);
  AttrNumber column = 0;
  HeapTuple tuple = systable_getnext(scan);
  if (HeapTupleIsValid(tuple)) {
    bool method_null = false;
    bool key_null = false;
    const char method = DatumGetChar(heap_getattr(tuple, 2, RelationGetDescr(table), &method_null));
    if (method_out != nullptr && !method_null) *method_out = method;
    const Datum key_text = heap_getattr(tuple, 3, RelationGetDescr(table), &key_null);
    if (!method_null && !key_null && method != 'n') {
      char* serialized = text_to_cstring(reinterpret_cast<text*>(
          pg_detoast_datum_packed(reinterpret_cast<struct varlena*>(DatumGetPointer(key_text)))));
      Node* node = static_cast<Node*>(stringToNode(serialized));
      if (node != nullptr && IsA(node, Var)) column = reinterpret_cast<Var*>(node)->varattno;
    }
  }
  systable_endscan(scan);
  table_close(table, AccessShareLock);
  return column;
}

Oid CitusShardParent(Oid relation) {
  char* name = get_rel_name(relation);
  if (name == nullptr) return InvalidOid;
  const char* underscore = std::strrchr(name, '_');
  if (underscore == nullptr || underscore[1] == '\0') return InvalidOid;
  for (const char* c = underscore + 1; *c != '\0'; ++c)
    if (*c < '0' || *c > '9') return InvalidOid;
  if (!CitusInstalled()) return InvalidOid;
  const Oid table = ShardTable(std::strtoll(underscore + 1, nullptr, 10));
  // A shard lives in its table's schema. (Citus shortens long names with a
  // hash but keeps the _<shardid> suffix; a table of one's own that happens
  // to end like a shard of a protected table in the same schema is treated
  // as protected too: fail closed.)
  if (!OidIsValid(table) || table == relation ||
      get_rel_namespace(table) != get_rel_namespace(relation))
    return InvalidOid;
  return table;
}

}  // namespace dp_pg
