// Kernel signatures as the C API describes them.
#include <cmath>

#include "absl/strings/str_cat.h"
#include "runtime/errors.h"
#include "runtime/objects.h"

namespace tilert::runtime {

namespace {

// A scalar parameter's default: a constant, possibly negated. False for anything else.
bool constant_value(const Expr& e, int64_t* as_int, double* as_float) {
  switch (e.kind) {
    case ExprKind::kIntConst:
    case ExprKind::kBoolConst:
      *as_int = e.int_value;
      *as_float = static_cast<double>(e.int_value);
      return true;
    case ExprKind::kFloatConst:
      *as_float = e.float_value;
      // Truncated like a C cast, where that is defined (finite and in range).
      *as_int = std::fabs(e.float_value) < 9.2e18 ? static_cast<int64_t>(e.float_value) : 0;
      return true;
    case ExprKind::kUnary:
      if (static_cast<UnaryOp>(e.op) != UnaryOp::kNeg || e.args.size() != 1) return false;
      if (!constant_value(e.args[0], as_int, as_float)) return false;
      *as_int = -*as_int;
      *as_float = -*as_float;
      return true;
    default:
      return false;
  }
}

void describe_param(const Symbol& param, tilert_param_info* out) {
  *out = tilert_param_info{};
  out->name = param.name.c_str();
  out->is_tensor = param.kind == SymbolKind::kTensorParam ? 1 : 0;
  out->dtype = static_cast<tilert_dtype>(param.dtype);
  out->rank = out->is_tensor ? static_cast<int32_t>(param.shape.size()) : 0;
  if (param.default_value.has_value() &&
      constant_value(*param.default_value, &out->default_int, &out->default_float)) {
    out->has_default = 1;
  }
}

}  // namespace

}  // namespace tilert::runtime

using tilert::runtime::guarded;
using tilert::runtime::guarded_value;
using tilert::runtime::null_argument;

extern "C" {

int32_t tilert_kernel_param_count(tilert_kernel kernel) {
  return guarded_value("tilert_kernel_param_count", int32_t{0},
                       [&](int32_t* count) -> absl::Status {
                         if (kernel == nullptr) {
                           return null_argument("tilert_kernel_param_count", "kernel");
                         }
                         *count = static_cast<int32_t>(kernel->kernel().num_params);
                         return absl::OkStatus();
                       });
}

tilert_status tilert_kernel_param_info(tilert_kernel kernel, int32_t i, tilert_param_info* out) {
  static constexpr const char* kFunction = "tilert_kernel_param_info";
  return guarded(kFunction, [&]() -> absl::Status {
    if (out == nullptr) return null_argument(kFunction, "out");
    if (kernel == nullptr) return null_argument(kFunction, "kernel");
    const tilert::Kernel& k = kernel->kernel();
    if (i < 0 || static_cast<uint32_t>(i) >= k.num_params) {
      return absl::NotFoundError(absl::StrCat(kFunction, ": kernel ", k.name, " has no parameter ",
                                              i, " (", k.num_params, " parameters)"));
    }
    tilert::runtime::describe_param(k.symbols[static_cast<size_t>(i)], out);
    return absl::OkStatus();
  });
}

}  // extern "C"
