#include "regex_like.h"

#include <cstring>

namespace dp {

namespace {

bool IsRegexSpecial(char c) { return std::strchr("^$.*+?()[]{}|\\", c) != nullptr && c != '\0'; }

bool IsAsciiAlphanumeric(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

void AppendLiteral(char c, std::string* like) {
  if (c == '%' || c == '_' || c == '\\') like->push_back('\\');
  like->push_back(c);
}

// `%` after `%` matches nothing more.
void AppendAny(std::string* like) {
  const std::size_t n = like->size();
  // A `%` is a wildcard unless escaped: count the backslashes before it.
  if (n > 0 && (*like)[n - 1] == '%') {
    std::size_t backslashes = 0;
    while (backslashes + 1 < n && (*like)[n - 2 - backslashes] == '\\') ++backslashes;
    if (backslashes % 2 == 0) return;
  }
  like->push_back('%');
}

}  // namespace

bool SimpleRegexAsLike(const char* regex, std::size_t length, std::string* like) noexcept {
  try {
    std::string result;
    std::size_t begin = 0;
    std::size_t end = length;
    // Directors (***=, ***:) and embedded options ((?...)) start with * or (.
    const bool anchored_start = begin < end && regex[begin] == '^';
    if (anchored_start) ++begin;
    bool anchored_end = false;
    if (end > begin && regex[end - 1] == '$') {
      // An escaped `\$` is a literal dollar: count the backslashes before it.
      std::size_t backslashes = 0;
      while (end - 1 - backslashes > begin && regex[end - 2 - backslashes] == '\\') ++backslashes;
      if (backslashes % 2 == 0) {
        anchored_end = true;
        --end;
      }
    }
    if (!anchored_start) result.push_back('%');
    for (std::size_t i = begin; i < end; ++i) {
      const char c = regex[i];
      if (c == '\0') return false;
      if (c == '.') {
        if (i + 1 < end && regex[i + 1] == '*') {
          AppendAny(&result);
          ++i;
        } else {
          result.push_back('_');
        }
      } else if (c == '\\') {
        if (i + 1 >= end) return false;
        const char next = regex[i + 1];
        // \d, \w, \1, \m, \y, ... are classes, back-references or
        // constraints; a byte >= 0x80 may start a multibyte character.
        if (IsAsciiAlphanumeric(next) || static_cast<unsigned char>(next) >= 0x80 || next == '\0')
          return false;
        AppendLiteral(next, &result);
        ++i;
      } else if (IsRegexSpecial(c)) {
        return false;
      } else {
        AppendLiteral(c, &result);
      }
    }
    if (!anchored_end) AppendAny(&result);
    *like = std::move(result);
    return true;
  } catch (...) {
    return false;
  }
}

}  // namespace dp
