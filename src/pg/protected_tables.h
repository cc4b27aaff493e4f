// What is protected: the tables labelled 'protected' with their partitions
// and inheritance children, and the privacy unit column a table has or
// inherits. IsProtectedRelation and PrivacyUnitColumn, defined here, are
// declared in restriction.h; this header holds what the label provider and
// the GRANT invariant share with them.
#ifndef DP_AGG_PG_PROTECTED_TABLES_H
#define DP_AGG_PG_PROTECTED_TABLES_H

#include "pg_includes.h"

namespace dp_pg {

// The protected tables, and `extra_table` (being protected now, its label
// not yet written), with every partition and inheritance child of theirs at
// any depth: all tables that hold protected rows.
List* ProtectedFamily(Oid extra_table);

// Labels every INHERITS child (at any depth) of the protected tables, and of
// `extra_table` (being protected now, its label not yet written), as
// protected: a child's rows are protected rows, whether read through the
// parent or by name. Partitions are recognised through their ancestors
// instead (IsProtectedRelation), which a syscache field makes cheap; for a
// plain inheritance child only a pg_inherits scan would tell, on every
// statement, so the label is written once, when the child is made.
void PropagateProtection(Oid extra_table);

// The column of `relation` itself labelled privacy_unit (InvalidAttrNumber:
// none), ignoring its ancestors.
AttrNumber OwnPrivacyUnitColumn(Oid relation);

}  // namespace dp_pg

#endif  // DP_AGG_PG_PROTECTED_TABLES_H
