// dp_agg's labels as every statement asks about them, cached per backend
// (issue 31): the roles labelled 'restricted' (pg_shseclabel) and, in this
// database, the tables labelled 'protected' and the columns labelled
// 'privacy_unit' (pg_seclabel). Without the cache each statement of every
// session scanned pg_shseclabel (is the session restricted?) and
// pg_seclabel and pg_inherits for each table it reads.
//
// pg_seclabel and pg_shseclabel have no syscache, so their changes send no
// invalidation of their own. Every dp_agg label is written through the
// label provider's check (SECURITY LABEL FOR dp_agg, which dp_agg's
// functions run) or by protected_tables.cpp's PropagateProtection; both call
// SendLabelInvalidation(), a relcache invalidation of the two label
// catalogs themselves, which PostgreSQL delivers at commit to every backend
// of every database (and replays on standbys) and applies locally at the
// next command or on rollback. The caches are also dropped when a labelled
// table is invalidated (dropped: its OID may be reused), when pg_authid
// changes (DROP ROLE deletes its label), and on every full cache reset.
// A label written by direct DML on the catalogs (allow_system_table_mods)
// takes effect at the next such invalidation: not a supported way to label.
#ifndef DP_AGG_PG_LABEL_CACHE_H
#define DP_AGG_PG_LABEL_CACHE_H

#include "pg_includes.h"

namespace dp_pg {

// The roles labelled 'restricted'. The list belongs to the cache: do not
// free or change it, and do not keep it across a call that may reread the
// cache (another call of this file's functions).
List* RestrictedRoles();

// Counts the invalidations that may have changed RestrictedRoles() (role
// labels, pg_authid) since the backend started; restriction.cpp decides again
// when it moved.
uint64 RestrictedRolesChanges();

// Whether `relation` itself carries the label 'protected'.
bool HasProtectedLabel(Oid relation);

// Whether any table of this database carries the label 'protected'.
bool AnyProtectedTable();

// The column of `relation` itself labelled 'privacy_unit', or
// InvalidAttrNumber.
AttrNumber LabelledPrivacyUnitColumn(Oid relation);

// Whether any table of this database that has a privacy unit column has
// (or had) inheritance children or partitions: only then may a table
// inherit a unit column (pg_class.relhassubclass, set when the child is
// attached).
bool AnyUnitTableWithChildren();

// Tells every backend (at commit) that dp_agg's labels changed.
void SendLabelInvalidation();

// In _PG_init.
void RegisterLabelCacheInvalidation();

}  // namespace dp_pg

#endif  // DP_AGG_PG_LABEL_CACHE_H
