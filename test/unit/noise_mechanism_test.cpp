// Tests of the one validation path (ValidatePublicParameters) and of the
// mechanism builder: every invalid parameter is refused, by that path, and a
// built mechanism releases exactly what the dedicated planners release.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "gaussian_mechanism.h"
#include "noise_mechanism.h"
#include "parameters.h"
#include "privacy_accountant.h"
#include "private_statistics.h"
#include "random_source.h"

namespace {

using dp::InvalidParameter;
using dp::MechanismBuilder;
using dp::NoiseKind;
using dp::PrivacyLimits;
using dp::PublicParameters;
using dp::ValidatePublicParameters;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

PrivacyLimits Limits() {
  PrivacyLimits limits;
  limits.max_epsilon = 10;
  limits.max_delta = 1e-5;
  return limits;
}

// A call with every parameter present and valid.
PublicParameters Valid() {
  PublicParameters p;
  p.epsilon = 0.5;
  p.has_delta = true;
  p.delta = 1e-7;
  p.has_bounds = true;
  p.lower = -1;
  p.upper = 3;
  p.has_confidence = true;
  p.confidence = 0.95;
  p.has_fraction = true;
  p.fraction = 0.5;
  return p;
}

TEST(ValidatePublicParametersTest, AcceptsValidCallAndReturnsEffectiveValues) {
  const dp::PrivacyParameters effective = ValidatePublicParameters(Valid(), Limits());
  EXPECT_EQ(effective.epsilon, dp::EffectivePrivacyParameter(0.5));
  EXPECT_EQ(effective.delta, dp::EffectivePrivacyParameter(1e-7));
  EXPECT_LE(effective.delta, 1e-7);
}

TEST(ValidatePublicParametersTest, EveryInvalidParameterIsRefused) {
  struct Case {
    const char* what;
    void (*spoil)(PublicParameters*);
  };
  const Case cases[] = {
      {"epsilon 0", [](PublicParameters* p) { p->epsilon = 0; }},
      {"epsilon negative", [](PublicParameters* p) { p->epsilon = -1; }},
      {"epsilon NaN", [](PublicParameters* p) { p->epsilon = kNaN; }},
      {"epsilon infinite", [](PublicParameters* p) { p->epsilon = kInf; }},
      {"epsilon below 2^-50", [](PublicParameters* p) { p->epsilon = std::ldexp(1.0, -51); }},
      {"epsilon above the cap", [](PublicParameters* p) { p->epsilon = 10.5; }},
      {"delta 0 in the Gaussian variant", [](PublicParameters* p) { p->delta = 0; }},
      {"delta negative", [](PublicParameters* p) { p->delta = -1e-9; }},
      {"delta 1", [](PublicParameters* p) { p->delta = 1; }},
      {"delta NaN", [](PublicParameters* p) { p->delta = kNaN; }},
      {"delta above the cap", [](PublicParameters* p) { p->delta = 2e-5; }},
      {"lower above upper", [](PublicParameters* p) { p->lower = 4; }},
      {"infinite bound", [](PublicParameters* p) { p->upper = kInf; }},
      {"NaN bound", [](PublicParameters* p) { p->lower = kNaN; }},
      {"integer lower above upper",
       [](PublicParameters* p) {
         p->integer_bounds = true;
         p->lower_integer = (std::int64_t{1} << 62) + 1;
         p->upper_integer = std::int64_t{1} << 62;  // equal as doubles: compared exactly
       }},
      {"confidence 0", [](PublicParameters* p) { p->confidence = 0; }},
      {"confidence 1", [](PublicParameters* p) { p->confidence = 1; }},
      {"confidence NaN", [](PublicParameters* p) { p->confidence = kNaN; }},
      {"fraction below 0", [](PublicParameters* p) { p->fraction = -0.01; }},
      {"fraction above 1", [](PublicParameters* p) { p->fraction = 1.01; }},
      {"fraction NaN", [](PublicParameters* p) { p->fraction = kNaN; }},
  };
  for (const Case& c : cases) {
    PublicParameters p = Valid();
    c.spoil(&p);
    EXPECT_THROW(ValidatePublicParameters(p, Limits()), InvalidParameter) << c.what;
  }
}

TEST(ValidatePublicParametersTest, AbsentParametersAreNotRead) {
  PublicParameters p;
  p.epsilon = 1;
  p.delta = kNaN;  // has_delta false: the Laplace variant
  p.lower = kNaN;
  p.confidence = kNaN;
  p.fraction = kNaN;
  const dp::PrivacyParameters effective = ValidatePublicParameters(p, Limits());
  EXPECT_EQ(effective.delta, 0);
  EXPECT_EQ(effective.epsilon, 1);
}

TEST(ValidatePublicParametersTest, FractionBoundsAreInclusive) {
  for (double fraction : {0.0, 1.0}) {
    PublicParameters p = Valid();
    p.fraction = fraction;
    EXPECT_NO_THROW(ValidatePublicParameters(p, Limits())) << fraction;
  }
}

TEST(MechanismBuilderTest, RefusesInvalidPrivacyParameters) {
  const double bad_epsilons[] = {0, -1, kNaN, kInf, std::ldexp(1.0, -51), 11};
  for (double epsilon : bad_epsilons)
    EXPECT_THROW(MechanismBuilder().SetEpsilon(epsilon).SetLimits(Limits()).Build(),
                 InvalidParameter)
        << epsilon;
  const double bad_deltas[] = {-1e-9, 1, 1.5, kNaN, kInf, 2e-5};
  for (double delta : bad_deltas)
    EXPECT_THROW(MechanismBuilder().SetEpsilon(1).SetDelta(delta).SetLimits(Limits()).Build(),
                 InvalidParameter)
        << delta;
}

TEST(MechanismBuilderTest, DeltaChoosesTheMechanism) {
  const dp::NoiseMechanism laplace = MechanismBuilder().SetEpsilon(0.3).Build();
  EXPECT_EQ(laplace.kind(), NoiseKind::kLaplace);
  EXPECT_EQ(laplace.delta(), 0);
  const dp::NoiseMechanism gaussian = MechanismBuilder().SetEpsilon(0.3).SetDelta(1e-9).Build();
  EXPECT_EQ(gaussian.kind(), NoiseKind::kGaussian);
  EXPECT_EQ(gaussian.epsilon(), dp::EffectivePrivacyParameter(0.3));
  EXPECT_EQ(gaussian.delta(), dp::EffectivePrivacyParameter(1e-9));
}

// The builder plans exactly what the dedicated planners plan for the
// effective parameters, so the same seed gives the same release.
TEST(MechanismBuilderTest, MatchesTheDedicatedPlanners) {
  const dp::uint128 sensitivity = dp::SumSensitivity(-7, 300);
  const dp::NoiseMechanism laplace =
      MechanismBuilder().SetEpsilon(0.7).SetSensitivityUnits(sensitivity).Build();
  const dp::LaplacePlan plan = dp::PlanSum(-7, 300, 0.7);
  EXPECT_EQ(laplace.laplace_plan().grid_shift, plan.grid_shift);
  EXPECT_TRUE(laplace.laplace_plan().scale_numerator == plan.scale_numerator);
  EXPECT_TRUE(laplace.laplace_plan().scale_denominator == plan.scale_denominator);
  dp::SeededTestRandomSource a(42), b(42);
  const dp::GridValue from_builder = laplace.AddNoise(1000, 0, a);
  const dp::GridValue from_planner = dp::ReleaseLaplace(1000, 0, plan, b);
  EXPECT_EQ(dp::ToDouble(from_builder), dp::ToDouble(from_planner));

  const dp::NoiseMechanism gaussian = MechanismBuilder().SetEpsilon(0.7).SetDelta(1e-8).Build();
  // The Gaussian planner takes the effective values (it does not round).
  const dp::GaussianPlan gaussian_plan = dp::PlanGaussianCount(dp::EffectivePrivacyParameter(0.7),
                                                               dp::EffectivePrivacyParameter(1e-8));
  EXPECT_TRUE(gaussian.gaussian_plan().sigma2_numerator == gaussian_plan.sigma2_numerator);
  EXPECT_TRUE(gaussian.gaussian_plan().sigma2_denominator == gaussian_plan.sigma2_denominator);
  EXPECT_EQ(gaussian.Interval(0, 0.95).half_width_value,
            dp::GaussianNoiseInterval(gaussian_plan, 0, 0.95).half_width_value);
}

// Rounding is idempotent: a mechanism built from an effective epsilon (as
// the final functions do from a state) is the one built from the request.
TEST(MechanismBuilderTest, EffectiveParametersAreAFixedPoint) {
  const double requested = 0.1;
  const dp::NoiseMechanism first = MechanismBuilder().SetEpsilon(requested).Build();
  const dp::NoiseMechanism again = MechanismBuilder().SetEpsilon(first.epsilon()).Build();
  EXPECT_EQ(first.epsilon(), again.epsilon());
  EXPECT_LE(first.epsilon(), requested);
  EXPECT_EQ(2 * first.epsilon(), dp::EffectivePrivacyParameter(2 * first.epsilon()));
}

// The mean's two mechanisms are the plans PlanMean / PlanGaussianMean make,
// and draw in the same order: the same seed gives the same mean and parts.
TEST(MechanismBuilderTest, MeanMatchesTheDedicatedPlanners) {
  const double epsilon = dp::EffectivePrivacyParameter(0.9);
  const dp::MeanMechanisms laplace = MechanismBuilder().SetEpsilon(epsilon).BuildMean(-7, 300);
  const dp::MeanPlans plans = dp::PlanMean(-7, 300, epsilon);
  EXPECT_EQ(laplace.count.kind(), NoiseKind::kLaplace);
  EXPECT_EQ(laplace.count.epsilon(), epsilon / 2);
  EXPECT_TRUE(laplace.centred_sum.laplace_plan().scale_numerator ==
              plans.centred_sum.scale_numerator);
  EXPECT_TRUE(laplace.centred_sum.laplace_plan().scale_denominator ==
              plans.centred_sum.scale_denominator);
  EXPECT_EQ(laplace.centred_sum.laplace_plan().grid_shift, plans.centred_sum.grid_shift);
  dp::SeededTestRandomSource a(7), b(7);
  const dp::MeanRelease from_builder = laplace.AddNoise(40, 2000, -7, 300, -2, a);
  const dp::MeanRelease from_planner = dp::ReleaseMeanParts(40, 2000, -7, 300, -2, plans, b);
  EXPECT_EQ(from_builder.mean, from_planner.mean);
  EXPECT_EQ(dp::ToDouble(from_builder.noisy_count), dp::ToDouble(from_planner.noisy_count));
  EXPECT_EQ(laplace.Intervals(-2, 0.9).centred_sum.half_width_value,
            dp::LaplaceMeanNoiseIntervals(plans, -2, 0.9).centred_sum.half_width_value);

  const double delta = dp::EffectivePrivacyParameter(1e-8);
  const dp::MeanMechanisms gaussian =
      MechanismBuilder().SetEpsilon(epsilon).SetDelta(delta).BuildMean(-7, 300);
  // With delta: the count and the sum calibrated jointly in zCDP.
  const dp::GaussianMeanPlans gaussian_plans = dp::PlanGaussianMeanJoint(-7, 300, epsilon, delta);
  EXPECT_EQ(gaussian.centred_sum.kind(), NoiseKind::kGaussian);
  EXPECT_TRUE(gaussian.centred_sum.gaussian_plan().sigma2_numerator ==
              gaussian_plans.centred_sum.sigma2_numerator);
  EXPECT_TRUE(gaussian.count.gaussian_plan().sigma2_denominator ==
              gaussian_plans.count.sigma2_denominator);
  dp::SeededTestRandomSource c(9), d(9);
  EXPECT_EQ(gaussian.AddNoise(40, 2000, -7, 300, -2, c).mean,
            dp::ReleaseGaussianMeanParts(40, 2000, -7, 300, -2, gaussian_plans, d).mean);
}

// The whole budget is validated once (the halves may lie below the smallest
// epsilon a query may ask for), and a delta whose half rounds to 0 is refused.
TEST(MechanismBuilderTest, MeanValidatesTheWholeBudgetOnce) {
  EXPECT_NO_THROW(MechanismBuilder().SetEpsilon(dp::kMinEpsilon).BuildMean(0, 1));
  EXPECT_THROW(MechanismBuilder().SetEpsilon(std::ldexp(1.0, -51)).BuildMean(0, 1),
               InvalidParameter);
  const double smallest = std::numeric_limits<double>::denorm_min();
  EXPECT_THROW(MechanismBuilder().SetEpsilon(1).SetDelta(smallest).BuildMean(0, 1),
               InvalidParameter);
  EXPECT_THROW(dp::SplitMeanBudget(1, smallest), InvalidParameter);
  const dp::MeanPartBudget part = dp::SplitMeanBudget(1, 3 * smallest);
  EXPECT_EQ(part.delta, smallest);  // rounded down, never up
  EXPECT_EQ(part.epsilon, 0.5);
}

}  // namespace
