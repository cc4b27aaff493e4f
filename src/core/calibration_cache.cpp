#include "calibration_cache.h"

namespace dp {
namespace internal {

GaussianPlanMemo& GaussianPlans() {
  static GaussianPlanMemo memo;
  return memo;
}

RhoMemo& RhosForEpsilonDelta() {
  static RhoMemo memo;
  return memo;
}

}  // namespace internal

CalibrationCacheStats GaussianCalibrationCacheStats() {
  const CalibrationCacheStats plans = internal::GaussianPlans().Stats();
  const CalibrationCacheStats rhos = internal::RhosForEpsilonDelta().Stats();
  CalibrationCacheStats total;
  total.hits = plans.hits + rhos.hits;
  total.misses = plans.misses + rhos.misses;
  total.entries = plans.entries + rhos.entries;
  return total;
}

void ClearGaussianCalibrationCache() {
  internal::GaussianPlans().Clear();
  internal::RhosForEpsilonDelta().Clear();
}

}  // namespace dp
