// The key of a question for the release cache (release_cache.h): what makes
// two executions "the same question", so that the second may be answered
// with the rows released for the first.
//
// Everything in the key is public, i.e. chosen by the analyst or the
// administrator, never read from the protected rows; so whether an answer is
// reused never depends on the data. The key is the SHA-256 of
//  * the statement's digest, made in the planner hook after every rewrite
//    (dp_agg's judgement, the row-count and LIKE rewrites; a later rewrite of
//    plain aggregates happens before judging, so it is in the tree too) and
//    before planning: nodeToString of the Query with queryId, stmt_location
//    and stmt_len zeroed and every ":location N" removed, so that spacing,
//    comments, the case of keywords and how a table is named (its OID is in
//    the tree) do not matter, while every constant, column alias and
//    resolved object does. External parameters stay Param nodes in this
//    tree: a custom plan and a generic plan of a prepared statement have the
//    same digest, so whether an answer is reused never depends on the plan
//    cache's choice (which it makes from estimates, i.e. statistics);
//  * at execution: the database, the session user (whose budget pays), the
//    current user (row security, privileges), dp_agg.release_cache_period,
//    the values of the external parameters the tree reads (their types and
//    binary images, detoasted: never their text, which settings shape), and
//    the settings that change what a query computes at run time
//    (kMeaningSettings in release_key.cpp: TimeZone, DateStyle,
//    IntervalStyle, extra_float_digits, the lc_ settings, bytea_output,
//    search_path, ...). Settings read at parse time (standard_conforming_
//    strings) and dp_agg's group-selection settings are in the tree already.
#ifndef DP_AGG_PG_RELEASE_KEY_H
#define DP_AGG_PG_RELEASE_KEY_H

#include "pg_includes.h"
#include "release_claims.h"

namespace dp_pg {

constexpr int kDigestHexLength = 2 * kReleaseKeyBytes;

// A question as the planner hook saw it.
struct CachedStatement {
  char digest[kDigestHexLength + 1];  // hex SHA-256 of the normalised tree
  List* parameters;  // IntList: the external parameters (paramid) the tree reads
};

// Whether `query` (judged and rewritten, not yet planned) is a question the
// release cache may answer: a plain SELECT (no data-modifying WITH, no FOR
// UPDATE/SHARE, not a utility statement) with a private aggregate at some
// level. Fills `statement` when it is.
bool DescribeCachedStatement(Query* query, CachedStatement* statement);

// The key of one execution of the statement (see above). `plan` and
// `snapshot` are read only by the test fault cache_invalidated_by_writes.
void ComputeReleaseKey(const char* digest, List* parameters, ParamListInfo bound,
                       int period_seconds, PlannedStmt* plan, Snapshot snapshot,
                       unsigned char key[kReleaseKeyBytes]);

// The key as text (64 hex digits and a NUL).
void ReleaseKeyToHex(const unsigned char key[kReleaseKeyBytes], char hex[kDigestHexLength + 1]);

}  // namespace dp_pg

#endif  // DP_AGG_PG_RELEASE_KEY_H
