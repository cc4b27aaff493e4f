#include "settings.h"

#include <new>

#include "pg_includes.h"

namespace dp_pg {

double max_epsilon = 10.0;

namespace {

int insecure_test_seed = 0;

// Constructed lazily in each backend, never in the postmaster, so a forked
// process cannot inherit buffered random bytes.
alignas(dp::OpenSslRandomSource) unsigned char secure_storage[sizeof(dp::OpenSslRandomSource)];
dp::OpenSslRandomSource* secure_source = nullptr;
alignas(dp::SeededTestRandomSource) unsigned char test_storage[sizeof(dp::SeededTestRandomSource)];
dp::SeededTestRandomSource* test_source = nullptr;

void AssignTestSeed(int new_value, void* /*extra*/) {
  // Re-seeding on every assignment makes a test run reproducible from the
  // moment it sets the seed.
  test_source = new_value == 0
                    ? nullptr
                    : new (test_storage) dp::SeededTestRandomSource(
                          static_cast<std::uint64_t>(static_cast<std::uint32_t>(new_value)));
}

}  // namespace

void DefineSettings() {
  DefineCustomRealVariable(
      "dp_agg.max_epsilon", "Largest epsilon that one differentially private aggregate may use.",
      "Calls with a larger epsilon are refused with SQLSTATE 22023. Values above about 10 give "
      "essentially no privacy.",
      &max_epsilon, 10.0, 1e-6, 1e6, PGC_SUSET, 0, nullptr, nullptr, nullptr);
  DefineCustomIntVariable(
      "dp_agg.insecure_test_seed",
      "FOR TESTS ONLY: draw noise from a predictable generator seeded with this value.",
      "0 (the default) draws noise from OpenSSL's CSPRNG. Any other value makes every noisy "
      "answer predictable and therefore not private; only superusers can set it.",
      &insecure_test_seed, 0, 0, INT_MAX, PGC_SUSET, GUC_NOT_IN_SAMPLE, nullptr,
      AssignTestSeed, nullptr);
#if PG_VERSION_NUM >= 150000
  MarkGUCPrefixReserved("dp_agg");
#else
  EmitWarningsOnPlaceholders("dp_agg");
#endif
}

dp::RandomSource& NoiseSource() {
  if (test_source != nullptr) return *test_source;
  if (secure_source == nullptr) secure_source = new (secure_storage) dp::OpenSslRandomSource();
  return *secure_source;
}

}  // namespace dp_pg
