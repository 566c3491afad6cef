// Tests of frontends/cli/tensor_compare: the tolerance rule, special values and the report line.
#include "frontends/cli/tensor_compare.h"

#include <doctest/doctest.h>

#include <cmath>
#include <limits>

namespace tilert::check {
namespace {

constexpr Tolerance kTol{0.01, 0.001};  // rel, abs

TEST_CASE("elements within abs + rel * |ref| match") {
  std::vector<double> ref = {0.0, 1.0, -100.0};
  std::vector<double> dev = {0.001, 1.011, -101.0};
  TensorComparison c = compare_tensor("C", DType::kF32, {3}, dev, ref, kTol);
  CHECK(c.ok());
  CHECK(c.elements == 3);
  CHECK(c.max_abs_err == doctest::Approx(1.0));
  CHECK(c.max_rel_err == doctest::Approx(0.011));
  CHECK(format_comparison(c) ==
        "C: max abs err 1.0e+00, max rel err 1.1e-02, tolerance abs 1.0e-03 rel 1.0e-02, ok");
}

TEST_CASE("a mismatch is counted and the first one located") {
  std::vector<double> ref(6, 1.0);
  std::vector<double> dev = {1.0, 1.0, 1.0, 1.0, 1.5, 0.0};
  TensorComparison c = compare_tensor("Y", DType::kF16, {2, 3}, dev, ref, kTol);
  CHECK(!c.ok());
  CHECK(c.mismatches == 2);
  CHECK(c.first_mismatch == 4);
  std::string line = format_comparison(c);
  CHECK(line.find("FAIL (2 of 6 elements outside tolerance; first at [1, 1]: device 1.5, "
                  "reference 1)") != std::string::npos);
}

TEST_CASE("NaN matches only NaN, infinity only the same infinity") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> ref = {nan, inf, -inf, 1.0};
  CHECK(compare_tensor("A", DType::kF32, {4}, std::vector<double>{nan, inf, -inf, 1.0}, ref, kTol)
            .ok());
  CHECK(compare_tensor("A", DType::kF32, {4}, std::vector<double>{0.0, inf, -inf, 1.0}, ref, kTol)
            .mismatches == 1);
  CHECK(compare_tensor("A", DType::kF32, {4}, std::vector<double>{nan, -inf, -inf, 1.0}, ref,
                       kTol)
            .mismatches == 1);
  CHECK(compare_tensor("A", DType::kF32, {4}, std::vector<double>{nan, inf, -inf, nan}, ref, kTol)
            .mismatches == 1);
}

TEST_CASE("integer tensors compare exactly with a zero tolerance") {
  std::vector<double> ref = {3, -4};
  CHECK(compare_tensor("I", DType::kI32, {2}, std::vector<double>{3, -4}, ref, {0, 0}).ok());
  CHECK(!compare_tensor("I", DType::kI32, {2}, std::vector<double>{3, -3}, ref, {0, 0}).ok());
}

TEST_CASE("format_index walks a row-major shape") {
  std::vector<int64_t> shape = {2, 3, 4};
  CHECK(format_index(shape, 0) == "[0, 0, 0]");
  CHECK(format_index(shape, 23) == "[1, 2, 3]");
  CHECK(format_index(shape, 13) == "[1, 0, 1]");
  CHECK(format_index(std::vector<int64_t>{}, 0) == "[]");
}

}  // namespace
}  // namespace tilert::check
