// Simple regular expressions written by a restricted role run as LIKE
// (src/core/regex_like.h): `col ~ '^north'` becomes `col LIKE 'north%'`
// before the query is judged, so that the judge and the allow-list's LIKE
// rules apply to it, and PostgreSQL's regular
// expression engine, which is not total in the data, never runs on
// protected rows (README "Regular expressions").
#ifndef DP_AGG_PG_REGEX_LIKE_H
#define DP_AGG_PG_REGEX_LIKE_H

#include "pg_includes.h"

namespace dp_pg {

// In place, at every query level: each `text ~ constant` and `text !~
// constant` whose constant pattern SimpleRegexAsLike translates becomes the
// LIKE or NOT LIKE of the translated pattern. Other regular expressions (and
// the case-insensitive `~*`, `!~*`, whose case folding is not ILIKE's) are
// left for the judge to refuse. Only for restricted sessions: other roles
// keep PostgreSQL's own matching.
void TranslateSimpleRegexes(Query* query);

}  // namespace dp_pg

#endif  // DP_AGG_PG_REGEX_LIKE_H
