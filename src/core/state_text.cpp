#include "state_text.h"

#include <cinttypes>
#include <cstdio>

#include "grid_value.h"

namespace dp {

std::string FormatPartialState(const PartialStateFields& fields) {
  char text[512];
  std::snprintf(text, sizeof text,
                "v1 kind=%u count=%" PRId64 " sum=%s epsilon=%a lower=%a upper=%a "
                "lower_units=%" PRId64 " upper_units=%" PRId64 " unit_exponent=%d delta=%a confidence=%a",
                fields.kind, fields.count, Int128ToString(fields.sum).c_str(), fields.epsilon,
                fields.lower, fields.upper, fields.lower_units, fields.upper_units,
                fields.unit_exponent, fields.delta, fields.confidence);
  return text;
}

bool ParsePartialState(const char* text, PartialStateFields* fields) {
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

}  // namespace dp
