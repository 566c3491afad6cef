#include "frontends/cli/tensor_compare.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace tilert::check {
namespace {

// Special values compare by identity; finite ones by the tolerance formula.
bool element_matches(double device, double reference, Tolerance tol) {
  if (std::isnan(reference) || std::isnan(device)) {
    return std::isnan(reference) && std::isnan(device);
  }
  if (std::isinf(reference) || std::isinf(device)) return device == reference;
  return std::fabs(device - reference) <= tol.abs + tol.rel * std::fabs(reference);
}

}  // namespace

TensorComparison compare_tensor(std::string name, DType dtype, std::vector<int64_t> shape,
                                std::span<const double> device, std::span<const double> reference,
                                Tolerance tolerance) {
  TensorComparison c;
  c.name = std::move(name);
  c.dtype = dtype;
  c.shape = std::move(shape);
  c.tolerance = tolerance;
  c.elements = static_cast<int64_t>(std::min(device.size(), reference.size()));
  if (device.size() != reference.size()) {
    // Cannot happen through checked_run; counted as one mismatch rather than read past an end.
    c.mismatches = 1;
  }
  for (int64_t i = 0; i < c.elements; ++i) {
    double d = device[i], r = reference[i];
    if (std::isfinite(d) && std::isfinite(r)) {
      double abs_err = std::fabs(d - r);
      c.max_abs_err = std::max(c.max_abs_err, abs_err);
      if (r != 0.0) c.max_rel_err = std::max(c.max_rel_err, abs_err / std::fabs(r));
    }
    if (!element_matches(d, r, tolerance)) {
      if (c.first_mismatch < 0) {
        c.first_mismatch = i;
        c.first_device = d;
        c.first_reference = r;
      }
      ++c.mismatches;
    }
  }
  return c;
}

std::string format_index(std::span<const int64_t> shape, int64_t flat) {
  std::vector<int64_t> index(shape.size(), 0);
  for (size_t d = shape.size(); d-- > 0;) {
    if (shape[d] <= 0) continue;
    index[d] = flat % shape[d];
    flat /= shape[d];
  }
  std::string out = "[";
  for (size_t d = 0; d < index.size(); ++d) absl::StrAppend(&out, d ? ", " : "", index[d]);
  return out + "]";
}

std::string format_comparison(const TensorComparison& c) {
  std::string out = absl::StrFormat(
      "%s: max abs err %.1e, max rel err %.1e, tolerance abs %.1e rel %.1e, ", c.name,
      c.max_abs_err, c.max_rel_err, c.tolerance.abs, c.tolerance.rel);
  if (c.ok()) return out + "ok";
  absl::StrAppend(&out, "FAIL (", c.mismatches, " of ", c.elements,
                  " elements outside tolerance");
  if (c.first_mismatch >= 0) {
    absl::StrAppend(&out, "; first at ", format_index(c.shape, c.first_mismatch),
                    absl::StrFormat(": device %.9g, reference %.9g", c.first_device,
                                    c.first_reference));
  }
  return out + ")";
}

}  // namespace tilert::check
