// Public key sets follow the DDL of their columns (issue 29, review 2). A
// set is stored by table OID and column name (dp_agg.public_key_set,
// src/sql/74_public_keys.sql): the name is what pg_dump restores faithfully
// (attribute numbers change when a table with dropped columns is restored),
// so the utility hook keeps that name right instead:
//
//   * ALTER TABLE ... RENAME COLUMN: after the rename succeeded, the sets of
//     the column (of the table and of the INHERITS children and partitions
//     the rename reached) are moved to the new name: the declaration stays;
//   * ALTER TABLE ... ALTER COLUMN ... TYPE of a column with declared keys
//     (on the table or on a child the change reaches) to another type is
//     refused before it runs (ERROR 0A000, as PostgreSQL refuses to change
//     the type of a column a view uses): the keys were checked against the
//     old type and may not mean the same values in the new one, so the
//     administrator removes them, changes the type and declares them again;
//   * ALTER TYPE ... RENAME VALUE of an enum: the label is renamed in the
//     declared keys of the enum's columns (stored as the labels' text);
//   * ALTER TABLE ... DROP COLUMN (and any other ALTER TABLE that leaves a
//     declared name without a column, or with another column: DROP COLUMN c,
//     ADD COLUMN c in one statement): the set is removed, with a NOTICE, so
//     a column added later under that name does not take it.
#ifndef DP_AGG_PG_PUBLIC_KEY_DDL_H
#define DP_AGG_PG_PUBLIC_KEY_DDL_H

#include "pg_includes.h"

namespace dp_pg {

// Before a utility statement runs: refuses a type change of a column with
// declared public keys. Returns, for an ALTER TABLE, the declared columns
// with their attribute numbers as they are before it runs (palloc'd), for
// FollowPublicKeyColumns.
List* RefuseTypeChangeOfPublicKeys(Node* parse_tree);

// After a utility statement ran: follows a column rename and an enum label
// rename, removes the sets of columns that an ALTER TABLE dropped (also a
// column dropped and added again under its name: another attribute number
// than in `before`).
void FollowPublicKeyColumns(Node* parse_tree, List* before);

}  // namespace dp_pg

#endif  // DP_AGG_PG_PUBLIC_KEY_DDL_H
