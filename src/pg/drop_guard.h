// DROP EXTENSION dp_agg deletes every budget and the whole privacy ledger
// (they are member tables of the extension). The audit trail of a privacy
// system must not vanish by accident, so dropping the extension is refused
// unless a superuser confirmed it in that session:
//
//   SET dp_agg.allow_drop_extension = on;   -- superusers only, session only
//   DROP EXTENSION dp_agg;
//
// README.md ("Removing dp_agg") says how to archive the ledger first.
#ifndef DP_AGG_PG_DROP_GUARD_H
#define DP_AGG_PG_DROP_GUARD_H

#include "pg_includes.h"

namespace dp_pg {

// Called by the utility hook before a statement runs: refuses DROP EXTENSION
// naming dp_agg (with or without CASCADE or IF EXISTS) unless confirmed.
void RefuseUnconfirmedExtensionDrop(Node* parse_tree);

// Installs an object-access hook that refuses the same drop when it comes by
// another path: DROP SCHEMA <schema of the extension> CASCADE, DROP OWNED BY
// the extension's owner.
void InstallDropGuard();

}  // namespace dp_pg

#endif  // DP_AGG_PG_DROP_GUARD_H
