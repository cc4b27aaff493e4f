// The invariant behind "fail closed" (restriction.h): no restricted role
// owns a protected table or holds a privilege on it, or on a sequence that
// counts its rows (directly, through a role it belongs to, or through
// PUBLIC). Access to protected data then exists only where the query rules
// grant it, and only while the library is loaded. Checked when a label is
// set (security_labels.h) and after every GRANT, ALTER and CREATE that could
// break it (restricted_statements.cpp).
#ifndef DP_AGG_PG_GRANT_INVARIANT_H
#define DP_AGG_PG_GRANT_INVARIANT_H

#include "pg_includes.h"

namespace dp_pg {

// Raises an ERROR (0LP01, invalid grant operation) naming the role and
// the table or sequence if the invariant does not hold. `extra_table` /
// `extra_role`: an object being labelled now, whose label is not yet in the
// catalog (InvalidOid: none).
void CheckRestrictionInvariant(Oid extra_table, Oid extra_role);

}  // namespace dp_pg

#endif  // DP_AGG_PG_GRANT_INVARIANT_H
