// DROP EXTENSION dp_agg deletes every budget and the whole privacy ledger
// (they are member tables of the extension), and DROP DATABASE of a
// database that holds them deletes them just the same. The audit trail of a
// privacy system must not vanish by accident, so both are refused unless a
// superuser confirmed it in that session:
//
//   SET dp_agg.allow_drop_extension = on;   -- superusers only, session only
//   DROP EXTENSION dp_agg;   /   DROP DATABASE analytics;
//
// DROP DATABASE runs in another database, which cannot read the dropped
// one's catalog: a database that holds a dp_agg ledger carries the security
// label 'ledger' of provider dp_agg in the shared catalog pg_shseclabel
// (SECURITY LABEL FOR dp_agg ON DATABASE ... IS 'ledger'), written by the
// install and upgrade scripts, with every ledger entry, and by CREATE
// DATABASE for a copy of a labelled template; a confirmed DROP EXTENSION
// removes it.
//
// README.md ("Removing dp_agg") says how to archive the ledger first.
#ifndef DP_AGG_PG_DROP_GUARD_H
#define DP_AGG_PG_DROP_GUARD_H

#include "pg_includes.h"

extern "C" {
#include "catalog/objectaccess.h"
}

namespace dp_pg {

// Called by the utility hook before a statement runs: refuses DROP EXTENSION
// naming dp_agg (with or without CASCADE or IF EXISTS), and DROP DATABASE of
// a database labelled as holding a ledger, unless confirmed.
void RefuseUnconfirmedLedgerDrop(Node* parse_tree);

// Called by the utility hook after a statement ran: CREATE DATABASE from a
// template that holds a ledger labels the copy, which holds the copied
// ledger.
void LabelCopiedLedger(Node* parse_tree);

// The label provider's check of a database label (restriction.cpp's
// provider hook): only 'ledger' or NULL, and only superusers may set or
// remove it.
void CheckDatabaseLabel(const char* label);

// Labels the current database as holding a ledger if it is not yet (with
// every ledger entry: a database copied from a template by other means than
// CREATE DATABASE, or whose label a superuser removed, is labelled again).
// With `trust_memory`, a label this backend found before is taken to be
// there still (no catalog read for every entry).
void LabelDatabaseAsHoldingLedger(bool trust_memory);

// The object-access hook's work (hooks.cpp): refuses the same drop when it
// comes by another path: DROP SCHEMA <schema of the extension> CASCADE, DROP
// OWNED BY the extension's owner.
void RefuseUnconfirmedExtensionDrop(ObjectAccessType access, Oid class_id, Oid object_id);

}  // namespace dp_pg

#endif  // DP_AGG_PG_DROP_GUARD_H
