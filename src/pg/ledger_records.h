// The canonical records of the tamper-evident ledger (README "A
// tamper-evident ledger"): the fields of a ledger entry and of a budget row,
// read from a tuple or composite datum, and their SHA-256 digests
// (core/ledger_chain.h holds the canonical form itself). The chain that
// links entries by these hashes is ledger_chain.h's.
#ifndef DP_AGG_PG_LEDGER_RECORDS_H
#define DP_AGG_PG_LEDGER_RECORDS_H

#include "pg_includes.h"

namespace dp_pg {

// The fields of each record, in order, with their column types
// (core/ledger_chain.h). A new column of these tables needs a new version of
// the record (a new tag): the hashes of existing rows must never change.
struct Field {
  const char* name;
  Oid type;
};
inline constexpr Field kEntryFields[] = {{"seq", INT8OID},
                                         {"id", INT8OID},
                                         {"recorded_at", TIMESTAMPTZOID},
                                         {"kind", TEXTOID},
                                         {"role_oid", OIDOID},
                                         {"system_identifier", INT8OID},
                                         {"role_name", NAMEOID},
                                         {"session_user_name", NAMEOID},
                                         {"current_user_name", NAMEOID},
                                         {"epsilon", NUMERICOID},
                                         {"delta", NUMERICOID},
                                         {"rho", NUMERICOID},
                                         {"zcdp_delta", NUMERICOID},
                                         {"query_id", INT8OID},
                                         {"aggregates", TEXTOID},
                                         {"query", TEXTOID},
                                         {"budget_digest", BYTEAOID}};
inline constexpr int kEntryCount = sizeof kEntryFields / sizeof kEntryFields[0];
enum EntryField {
  kSeq,
  kId,
  kRecordedAt,
  kKind,
  kRoleOid,
  kSystemIdentifier,
  kRoleName,
  kSessionUserName,
  kCurrentUserName,
  kEpsilon,
  kDelta,
  kRho,
  kZcdpDelta,
  kQueryId,
  kAggregates,
  kQuery,
  kBudgetDigest
};
constexpr const char* kBudgetTag = "dp_agg budget v1";

// Reads the columns named by `fields` (of their types) from `tuple`, in
// order. Raises an ERROR if one is missing or of another type (the table
// was altered).
void TupleValues(HeapTuple tuple, TupleDesc description, const Field* fields, int count,
                 Datum* values, bool* nulls, const char* table);

// The same, from a composite datum.
void CompositeValues(HeapTupleHeader row, const Field* fields, int count, Datum* values,
                     bool* nulls, const char* table);

// SHA-256 of an entry's canonical record (values in kEntryFields order) and
// of `previous` (the previous entry's hash; nullptr for the first entry).
// palloc'd.
bytea* EntryHash(const bytea* previous, const Datum* values, const bool* nulls);

// SHA-256 of a dp_agg.role_budget row's canonical record, as the ledger
// records it with each entry (budget_digest). palloc'd.
bytea* BudgetRecordDigest(HeapTupleHeader budget);

}  // namespace dp_pg

#endif  // DP_AGG_PG_LEDGER_RECORDS_H
