#include "state_text.h"

#include <cinttypes>
#include <cerrno>
#include <cstdio>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "grid_value.h"

namespace dp {

namespace {

// The partial state's text as snprintf's %a and %PRId64 write it; the
// reference that the fast forms below must equal, and what formats the
// values they leave to it (an infinite or NaN double).
std::string FormatPartialStateWithPrintf(const PartialStateFields& fields) {
  char text[512];
  std::snprintf(text, sizeof text,
                "v1 kind=%u count=%" PRId64
                " sum=%s epsilon=%a lower=%a upper=%a "
                "lower_units=%" PRId64 " upper_units=%" PRId64
                " unit_exponent=%d delta=%a confidence=%a",
                fields.kind, fields.count, Int128ToString(fields.sum).c_str(), fields.epsilon,
                fields.lower, fields.upper, fields.lower_units, fields.upper_units,
                fields.unit_exponent, fields.delta, fields.confidence);
  return text;
}

// Citus moves one partial state per group and shard, and the coordinator
// parses each (issue 31: sscanf and the re-format were about 12% of its time
// per group). These write and read the same text without the printf/scanf
// machinery; state_text_test.cpp checks them against it.

char* AppendText(char* out, const char* text) {
  while (*text != '\0') *out++ = *text++;
  return out;
}

char* AppendUnsigned64(char* out, std::uint64_t value) {
  char digits[20];
  int n = 0;
  do {
    digits[n++] = static_cast<char>('0' + static_cast<int>(value % 10));
    value /= 10;
  } while (value != 0);
  while (n > 0) *out++ = digits[--n];
  return out;
}

// 128-bit division is a library call: split into 19-digit pieces first.
char* AppendUnsigned(char* out, uint128 value) {
  constexpr std::uint64_t kPiece = 10000000000000000000ULL;  // 10^19
  if (value <= ~std::uint64_t{0}) return AppendUnsigned64(out, static_cast<std::uint64_t>(value));
  const uint128 high = value / kPiece;
  const std::uint64_t low = static_cast<std::uint64_t>(value % kPiece);
  out = AppendUnsigned(out, high);
  char digits[19];
  std::uint64_t rest = low;
  for (int i = 18; i >= 0; --i) {
    digits[i] = static_cast<char>('0' + static_cast<int>(rest % 10));
    rest /= 10;
  }
  for (char digit : digits) *out++ = digit;
  return out;
}

char* AppendSigned(char* out, int128 value) {
  if (value < 0) {
    *out++ = '-';
    return AppendUnsigned(out, -static_cast<uint128>(value));
  }
  return AppendUnsigned(out, static_cast<uint128>(value));
}

// glibc's %a of a finite double: [-]0x1[.hhh]p(+|-)E for normal numbers,
// [-]0x0[.hhh]p-1022 for subnormal ones, [-]0x0p+0 for zero, with the
// fraction's trailing zero nibbles left out. False (nothing written) for an
// infinite or NaN value.
bool AppendHexDouble(char** cursor, double value) {
  std::uint64_t bits = 0;
  std::memcpy(&bits, &value, sizeof bits);
  const int biased = static_cast<int>((bits >> 52) & 0x7ff);
  std::uint64_t fraction = bits & ((std::uint64_t{1} << 52) - 1);
  if (biased == 0x7ff) return false;
  char* out = *cursor;
  if ((bits >> 63) != 0) *out++ = '-';
  *out++ = '0';
  *out++ = 'x';
  int exponent = 0;
  if (biased == 0) {
    *out++ = '0';
    exponent = fraction == 0 ? 0 : -1022;
  } else {
    *out++ = '1';
    exponent = biased - 1023;
  }
  if (fraction != 0) {
    *out++ = '.';
    int nibbles = 13;
    while ((fraction & 0xf) == 0) {
      fraction >>= 4;
      --nibbles;
    }
    for (int i = nibbles - 1; i >= 0; --i) *out++ = "0123456789abcdef"[(fraction >> (4 * i)) & 0xf];
  }
  *out++ = 'p';
  *out++ = exponent < 0 ? '-' : '+';
  out = AppendUnsigned(out, static_cast<uint128>(exponent < 0 ? -exponent : exponent));
  *cursor = out;
  return true;
}

// Reads `literal` at *cursor.
bool Expect(const char** cursor, const char* literal) {
  const char* at = *cursor;
  while (*literal != '\0') {
    if (*at != *literal) return false;
    ++at;
    ++literal;
  }
  *cursor = at;
  return true;
}

// A decimal integer (optionally negative) of at most 39 digits, up to the
// next space or the end; its range is checked by the caller.
bool ReadDecimal(const char** cursor, bool* negative, uint128* magnitude) {
  const char* at = *cursor;
  *negative = *at == '-';
  if (*negative) ++at;
  int digits = 0;
  std::uint64_t small = 0;  // the first 19 digits without 128-bit arithmetic
  uint128 value = 0;
  while (*at >= '0' && *at <= '9') {
    if (++digits > 38) return false;
    if (digits <= 19) {
      small = small * 10 + static_cast<unsigned>(*at - '0');
      value = small;
    } else {
      value = value * 10 + static_cast<unsigned>(*at - '0');
    }
    ++at;
  }
  if (digits == 0) return false;
  *magnitude = value;
  *cursor = at;
  return true;
}

bool ReadInt64(const char** cursor, std::int64_t* out) {
  bool negative = false;
  uint128 magnitude = 0;
  if (!ReadDecimal(cursor, &negative, &magnitude)) return false;
  if (magnitude > (negative ? uint128{1} << 63 : (uint128{1} << 63) - 1)) return false;
  *out = negative ? static_cast<std::int64_t>(-static_cast<std::uint64_t>(magnitude))
                  : static_cast<std::int64_t>(magnitude);
  return true;
}

bool ReadInt128(const char** cursor, int128* out) {
  // 39 digits may exceed the range: left to ParseInt128 on the slow path.
  bool negative = false;
  uint128 magnitude = 0;
  if (!ReadDecimal(cursor, &negative, &magnitude)) return false;
  *out = negative ? static_cast<int128>(-magnitude) : static_cast<int128>(magnitude);
  return true;
}

// [-]0x(0|1)[.h{1,13}]p(+|-)D: the value exactly (at most 53 significant
// bits); whether the text is the canonical one is checked by formatting.
bool ReadHexDouble(const char** cursor, double* out) {
  const char* at = *cursor;
  const bool negative = *at == '-';
  if (negative) ++at;
  if (at[0] != '0' || at[1] != 'x' || (at[2] != '0' && at[2] != '1')) return false;
  std::uint64_t mantissa = static_cast<std::uint64_t>(at[2] - '0');
  at += 3;
  int nibbles = 0;
  if (*at == '.') {
    ++at;
    for (;; ++at) {
      int digit = -1;
      if (*at >= '0' && *at <= '9') digit = *at - '0';
      if (*at >= 'a' && *at <= 'f') digit = *at - 'a' + 10;
      if (digit < 0) break;
      if (++nibbles > 13) return false;
      mantissa = (mantissa << 4) | static_cast<std::uint64_t>(digit);
    }
    if (nibbles == 0) return false;
  }
  if (*at++ != 'p' || (*at != '+' && *at != '-')) return false;
  const bool exponent_negative = *at++ == '-';
  int exponent = 0;
  int digits = 0;
  while (*at >= '0' && *at <= '9') {
    if (++digits > 4) return false;
    exponent = exponent * 10 + (*at - '0');
    ++at;
  }
  if (digits == 0) return false;
  if (exponent_negative) exponent = -exponent;
  // mantissa < 2^53: exact as a double, and scaling by a power of two is
  // exact for the normal and subnormal results %a writes.
  const double magnitude = std::ldexp(static_cast<double>(mantissa), exponent - 4 * nibbles);
  *out = negative ? -magnitude : magnitude;
  *cursor = at;
  return true;
}

// The fields of a text in the layout of FormatPartialState, or false; the
// text may still not be canonical (checked by the caller).
bool ReadPartialState(const char* text, PartialStateFields* fields) {
  const char* at = text;
  std::int64_t kind = 0;
  std::int64_t exponent = 0;
  if (!Expect(&at, "v1 kind=") || !ReadInt64(&at, &kind) || kind < 0 || kind > 0xffffffffLL ||
      !Expect(&at, " count=") || !ReadInt64(&at, &fields->count) || !Expect(&at, " sum=") ||
      !ReadInt128(&at, &fields->sum) || !Expect(&at, " epsilon=") ||
      !ReadHexDouble(&at, &fields->epsilon) || !Expect(&at, " lower=") ||
      !ReadHexDouble(&at, &fields->lower) || !Expect(&at, " upper=") ||
      !ReadHexDouble(&at, &fields->upper) || !Expect(&at, " lower_units=") ||
      !ReadInt64(&at, &fields->lower_units) || !Expect(&at, " upper_units=") ||
      !ReadInt64(&at, &fields->upper_units) || !Expect(&at, " unit_exponent=") ||
      !ReadInt64(&at, &exponent) || exponent < -2147483647LL - 1 || exponent > 2147483647LL ||
      !Expect(&at, " delta=") || !ReadHexDouble(&at, &fields->delta) ||
      !Expect(&at, " confidence=") || !ReadHexDouble(&at, &fields->confidence) || *at != '\0')
    return false;
  fields->kind = static_cast<unsigned>(kind);
  fields->unit_exponent = static_cast<int>(exponent);
  return true;
}

}  // namespace

std::string FormatPartialState(const PartialStateFields& fields) {
  char text[512];
  char* out = text;
  out = AppendText(out, "v1 kind=");
  out = AppendUnsigned(out, fields.kind);
  out = AppendText(out, " count=");
  out = AppendSigned(out, fields.count);
  out = AppendText(out, " sum=");
  out = AppendSigned(out, fields.sum);
  const struct {
    const char* label;
    double value;
  } head[3] = {{" epsilon=", fields.epsilon}, {" lower=", fields.lower}, {" upper=", fields.upper}};
  for (const auto& field : head) {
    out = AppendText(out, field.label);
    if (!AppendHexDouble(&out, field.value)) return FormatPartialStateWithPrintf(fields);
  }
  out = AppendText(out, " lower_units=");
  out = AppendSigned(out, fields.lower_units);
  out = AppendText(out, " upper_units=");
  out = AppendSigned(out, fields.upper_units);
  out = AppendText(out, " unit_exponent=");
  out = AppendSigned(out, fields.unit_exponent);
  out = AppendText(out, " delta=");
  if (!AppendHexDouble(&out, fields.delta)) return FormatPartialStateWithPrintf(fields);
  out = AppendText(out, " confidence=");
  if (!AppendHexDouble(&out, fields.confidence)) return FormatPartialStateWithPrintf(fields);
  return std::string(text, static_cast<std::size_t>(out - text));
}

std::string FormatPartialStateForTest(const PartialStateFields& fields) {
  return FormatPartialStateWithPrintf(fields);
}

bool ParsePartialState(const char* text, PartialStateFields* fields) {
  // Read by hand, then accepted only as the canonical form: the one text
  // that formats back to itself. What the hand reader does not take (an
  // infinite or NaN double, a 39-digit sum) goes through sscanf as before.
  if (ReadPartialState(text, fields))
    return fields->count >= 0 && FormatPartialState(*fields) == text;
  char sum_text[64];
  int consumed = 0;
  const int matched = std::sscanf(
      text,
      "v1 kind=%u count=%" SCNd64 " sum=%63s epsilon=%la lower=%la upper=%la lower_units=%" SCNd64
      " upper_units=%" SCNd64 " unit_exponent=%d delta=%la confidence=%la%n",
      &fields->kind, &fields->count, sum_text, &fields->epsilon, &fields->lower, &fields->upper,
      &fields->lower_units, &fields->upper_units, &fields->unit_exponent, &fields->delta,
      &fields->confidence, &consumed);
  if (matched != 11 || text[consumed] != '\0' || !ParseInt128(sum_text, &fields->sum) ||
      fields->count < 0)
    return false;
  // sscanf tolerates variations (extra spaces, signs, decimal doubles): accept
  // only the canonical form, the one text that formats back to itself.
  return FormatPartialState(*fields) == text;
}

std::string FormatQuantileState(const QuantileStateFields& fields) {
  char head[256];
  std::snprintf(head, sizeof head,
                "q2 epsilon=%a fraction=%a lower=%a upper=%a points=", fields.epsilon,
                fields.fraction, fields.lower, fields.upper);
  std::string text = head;
  text.reserve(text.size() + 21 * fields.points.size());
  for (std::size_t i = 0; i < fields.points.size(); ++i) {
    if (i > 0) text += ',';
    text += std::to_string(fields.points[i]);
  }
  return text;
}

bool ParseQuantileState(const char* text, QuantileStateFields* fields) {
  int consumed = 0;
  if (std::sscanf(text, "q2 epsilon=%la fraction=%la lower=%la upper=%la points=%n",
                  &fields->epsilon, &fields->fraction, &fields->lower, &fields->upper,
                  &consumed) != 4 ||
      consumed == 0)
    return false;
  fields->points.clear();
  const char* cursor = text + consumed;
  while (*cursor != '\0') {
    char* end = nullptr;
    errno = 0;
    const long long point = std::strtoll(cursor, &end, 10);
    if (end == cursor || errno == ERANGE) return false;
    fields->points.push_back(point);
    cursor = end;
    if (*cursor == ',') ++cursor;
  }
  // The canonical form only (no signs, spaces or leading zeros).
  return FormatQuantileState(*fields) == text;
}

std::string FormatSelectionStateHead(const SelectionStateFields& fields) {
  char head[256];
  std::snprintf(
      head, sizeof head, "s1 weighted=%d epsilon=%a lower=%a upper=%a unit_exponent=%d scores=",
      fields.weighted ? 1 : 0, fields.epsilon, fields.lower, fields.upper, fields.unit_exponent);
  std::string text = head;
  for (std::size_t i = 0; i < fields.scores.size(); ++i) {
    if (i > 0) text += ',';
    text += Int128ToString(fields.scores[i]);
  }
  return text;
}

bool ParseSelectionStateHead(const std::string& text, SelectionStateFields* fields) {
  int weighted = 0;
  int consumed = 0;
  if (std::sscanf(text.c_str(),
                  "s1 weighted=%d epsilon=%la lower=%la upper=%la unit_exponent=%d scores=%n",
                  &weighted, &fields->epsilon, &fields->lower, &fields->upper,
                  &fields->unit_exponent, &consumed) != 5 ||
      consumed == 0 || (weighted != 0 && weighted != 1))
    return false;
  fields->weighted = weighted == 1;
  fields->scores.clear();
  std::size_t start = static_cast<std::size_t>(consumed);
  while (start < text.size()) {
    std::size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    int128 score = 0;
    if (!ParseInt128(text.substr(start, end - start).c_str(), &score)) return false;
    fields->scores.push_back(score);
    start = end + 1;
  }
  return !fields->scores.empty() && FormatSelectionStateHead(*fields) == text;
}

}  // namespace dp
