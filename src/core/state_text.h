// Text form of an aggregate's partial state. Citus moves partial states
// between nodes as text, so every field must round-trip exactly: integers in
// decimal, doubles in C99 hexadecimal notation.
//   v1 kind=K count=N sum=S epsilon=E lower=L upper=U lower_units=A upper_units=B unit_exponent=X
//      delta=D confidence=C
#ifndef DP_AGG_CORE_STATE_TEXT_H
#define DP_AGG_CORE_STATE_TEXT_H

#include <cstdint>
#include <string>
#include <vector>

#include "random_source.h"

namespace dp {

struct PartialStateFields {
  unsigned kind = 0;
  std::int64_t count = 0;
  int128 sum = 0;
  double epsilon = 0;
  double lower = 0;
  double upper = 0;
  std::int64_t lower_units = 0;
  std::int64_t upper_units = 0;
  int unit_exponent = 0;
  double delta = 0;
  double confidence = 0;
};

std::string FormatPartialState(const PartialStateFields& fields);
// The same text through snprintf, for the tests that compare the two.
std::string FormatPartialStateForTest(const PartialStateFields& fields);

// The partial state of dp_percentile / dp_median: parameters and the rows'
// lattice points (core/continuous_quantile.h), in any order, possibly none:
//   q2 epsilon=E fraction=F lower=L upper=U points=P0,P1,...
struct QuantileStateFields {
  double epsilon = 0;
  double fraction = 0;
  double lower = 0;
  double upper = 0;
  std::vector<std::int64_t> points;
};
std::string FormatQuantileState(const QuantileStateFields& fields);
bool ParseQuantileState(const char* text, QuantileStateFields* fields);

// The parameters and scores of a dp_select partial state; the PostgreSQL
// layer appends the element type and the candidate array in their own text
// forms:
//   s1 weighted=W epsilon=E lower=L upper=U unit_exponent=X scores=S0,S1,...
struct SelectionStateFields {
  bool weighted = false;
  double epsilon = 0;
  double lower = 0;
  double upper = 0;
  int unit_exponent = 0;
  std::vector<int128> scores;
};
std::string FormatSelectionStateHead(const SelectionStateFields& fields);
bool ParseSelectionStateHead(const std::string& text, SelectionStateFields* fields);

// False when `text` is not exactly what FormatPartialState writes.
bool ParsePartialState(const char* text, PartialStateFields* fields);

}  // namespace dp

#endif  // DP_AGG_CORE_STATE_TEXT_H
