// Group keys of a private aggregation level over protected rows: which keys
// may be released, and the order of released rows.
#ifndef DP_AGG_PG_GROUP_KEYS_H
#define DP_AGG_PG_GROUP_KEYS_H

#include "pg_includes.h"

namespace dp_pg {

// Refuses group key `key` (grouped by `clause`) unless it prints the same
// for every row of its group and grouping by it cannot fail. Raises ERROR;
// modifies nothing.
void CheckGroupKey(Node* key, const SortGroupClause* clause);

// Rewrite: appends the level's group keys to its ORDER BY (after the
// query's own keys), so that the order of released rows is a function of
// the released keys.
void OrderByGroupKeys(Query* query);

}  // namespace dp_pg

#endif  // DP_AGG_PG_GROUP_KEYS_H
