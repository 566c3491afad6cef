// Element-wise comparison of a device result with the float64 reference.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "ir/dtype.h"

namespace tilert::check {

struct TensorComparison {
  std::string name;
  DType dtype = DType::kF32;
  std::vector<int64_t> shape;
  Tolerance tolerance{0.0, 0.0};
  int64_t elements = 0;
  double max_abs_err = 0.0;
  double max_rel_err = 0.0;  // over elements whose reference is not zero
  int64_t mismatches = 0;    // elements outside tolerance
  int64_t first_mismatch = -1;  // flat index of the first one
  double first_device = 0.0, first_reference = 0.0;

  bool ok() const { return mismatches == 0; }
};

// An element matches when |device - reference| <= tol.abs + tol.rel * |reference|; NaN matches only
// NaN and an infinity only the same infinity. `device` and `reference` have one value per element.
TensorComparison compare_tensor(std::string name, DType dtype, std::vector<int64_t> shape,
                                std::span<const double> device, std::span<const double> reference,
                                Tolerance tolerance);

// "C: max abs err 1.2e-03, max rel err 3.1e-04, tolerance abs 1.0e-03 rel 2.0e-03, ok", or with
// "FAIL (n of m elements outside tolerance; first at [i, j]: device x, reference y)".
std::string format_comparison(const TensorComparison& c);

// "[3, 5]": the multi-dimensional index of flat (row-major) index `flat` in `shape`.
std::string format_index(std::span<const int64_t> shape, int64_t flat);

}  // namespace tilert::check
