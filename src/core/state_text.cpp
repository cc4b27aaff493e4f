#include "state_text.h"

#include <cinttypes>
#include <cerrno>
#include <cstdio>
#include <cstdlib>

#include "grid_value.h"

namespace dp {

std::string FormatPartialState(const PartialStateFields& fields) {
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
