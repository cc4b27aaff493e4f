// The simple regular expressions that are LIKE patterns in disguise.
//
// PostgreSQL's regular-expression engine is not total in the data (its
// memory and running time depend on the text matched: README "Regular
// expressions"), so dp_agg never runs it on protected rows. But the patterns
// analysts and BI tools write most often, `col ~ '^north'`, `col ~ 'ill$'`,
// `col ~ 'a.c'`, `col ~ 'x.*y'`, say exactly what a LIKE pattern says. This
// translates such a pattern (an Advanced Regular Expression of PostgreSQL,
// default flags: not newline-sensitive, so `.` matches any character and
// `^`/`$` only the ends of the string) into the LIKE pattern (escape `\`)
// that matches exactly the same strings:
//   - an optional `^` first and an optional `$` last anchor the match;
//     without them the LIKE pattern starts (ends) with `%`;
//   - `.*` becomes `%`, `.` becomes `_`;
//   - `\c` for a character c that is not a letter or digit is c itself;
//   - every other character other than `^ $ . * + ? ( ) [ ] { } | \` is
//     itself, with LIKE's own `%`, `_` and `\` escaped.
// Anything else (classes, quantifiers, groups, alternation, back-references,
// `\d`-style escapes, directors such as `***=`) is not translated.
#ifndef DP_AGG_CORE_REGEX_LIKE_H
#define DP_AGG_CORE_REGEX_LIKE_H

#include <cstddef>
#include <string>

namespace dp {

// The LIKE pattern equivalent to `regex` (`length` bytes), or false when the
// regular expression is not of the simple form above.
bool SimpleRegexAsLike(const char* regex, std::size_t length, std::string* like) noexcept;

}  // namespace dp

#endif  // DP_AGG_CORE_REGEX_LIKE_H
