// Benchmark (not a test): the partial state's text round trip that Citus
// makes per group and shard (FormatPartialState on the worker,
// ParsePartialState on the coordinator), in ns per state. Built against two
// versions of src/core by bench_state_text.sh.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "state_text.h"

int main(int argc, char** argv) {
  const int states = argc > 1 ? std::atoi(argv[1]) : 300000;
  dp::PartialStateFields fields;
  fields.kind = 0;
  fields.sum = static_cast<dp::int128>(123456789) << 40;
  fields.epsilon = 0.5;
  fields.lower = 0;
  fields.upper = 1000000;
  fields.upper_units = 1000000LL << 20;
  fields.unit_exponent = -20;
  std::size_t parsed = 0;
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < states; ++i) {
    fields.count = i;
    const std::string text = dp::FormatPartialState(fields);
    dp::PartialStateFields read;
    parsed += dp::ParsePartialState(text.c_str(), &read) ? 1 : 0;
  }
  const double ns =
      std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count();
  if (parsed != static_cast<std::size_t>(states)) return 1;
  std::printf("%.1f\n", ns / states);
  return 0;
}
