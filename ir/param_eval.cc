#include "ir/param_eval.h"

#include "absl/strings/str_cat.h"
#include "ir/status.h"

namespace tilert {

absl::StatusOr<int64_t> eval_param_expr(const Kernel& kernel, const Expr& e,
                                        std::span<const int64_t> param_values,
                                        std::string_view what) {
  switch (e.kind) {
    case ExprKind::kIntConst:
    case ExprKind::kBoolConst:
      return e.int_value;
    case ExprKind::kSymbol:
      if (e.symbol >= kernel.num_params || e.symbol >= param_values.size() ||
          kernel.symbols[e.symbol].kind != SymbolKind::kScalarParam)
        return absl::InvalidArgumentError(
            absl::StrCat(av(what), ": may only use integer scalar parameters"));
      return param_values[e.symbol];
    case ExprKind::kUnary: {
      ASSIGN_OR_RETURN(int64_t a, eval_param_expr(kernel, e.args[0], param_values, what));
      return static_cast<UnaryOp>(e.op) == UnaryOp::kNeg ? -a : static_cast<int64_t>(a == 0);
    }
    case ExprKind::kBinary: {
      ASSIGN_OR_RETURN(int64_t a, eval_param_expr(kernel, e.args[0], param_values, what));
      ASSIGN_OR_RETURN(int64_t b, eval_param_expr(kernel, e.args[1], param_values, what));
      int64_t out;
      if (!eval_int_binary(static_cast<BinaryOp>(e.op), a, b, &out))
        return absl::InvalidArgumentError(absl::StrCat(av(what), ": division by zero"));
      return out;
    }
    case ExprKind::kCall: {
      std::vector<int64_t> v;
      for (const Expr& arg : e.args) {
        ASSIGN_OR_RETURN(int64_t x, eval_param_expr(kernel, arg, param_values, what));
        v.push_back(x);
      }
      switch (static_cast<Func>(e.op)) {
        case Func::kMin: return std::min(v[0], v[1]);
        case Func::kMax: return std::max(v[0], v[1]);
        case Func::kAbs: return v[0] < 0 ? -v[0] : v[0];
        case Func::kSelect: return v[0] != 0 ? v[1] : v[2];
        case Func::kCeilDiv:
          if (v[1] <= 0)
            return absl::InvalidArgumentError(absl::StrCat(av(what), ": ceildiv by a non-positive value"));
          return (v[0] + v[1] - 1) / v[1];
        default:
          return absl::InvalidArgumentError(
              absl::StrCat(av(what), ": ", av(func_name(static_cast<Func>(e.op))), " is not integer math"));
      }
      return absl::InternalError("unreachable");
    }
    case ExprKind::kCast:
      if (is_float(e.type))
        return absl::InvalidArgumentError(absl::StrCat(av(what), ": float cast in integer expression"));
      return eval_param_expr(kernel, e.args[0], param_values, what);
    default:
      return absl::InvalidArgumentError(
          absl::StrCat(av(what), ": may only use integer scalar parameters and constants"));
  }
}

absl::StatusOr<LaunchShape> eval_launch_shape(const Kernel& kernel,
                                              std::span<const int64_t> param_values) {
  LaunchShape out;
  out.threads = kernel.threads;
  for (size_t d = 0; d < kernel.grid.size() && d < 3; ++d) {
    std::string what = absl::StrCat("kernel ", kernel.name, ": grid dimension ", d);
    ASSIGN_OR_RETURN(int64_t g, eval_param_expr(kernel, kernel.grid[d], param_values, what));
    if (g < 1 || g > 0x7fffffff)
      return absl::InvalidArgumentError(absl::StrCat(av(what), " evaluates to ", g, " (must be 1 .. 2^31-1)"));
    out.grid[d] = g;
  }
  out.tensor_shapes.resize(kernel.num_params);
  for (uint32_t p = 0; p < kernel.num_params; ++p) {
    const Symbol& s = kernel.symbols[p];
    if (s.kind != SymbolKind::kTensorParam) continue;
    for (size_t d = 0; d < s.shape.size(); ++d) {
      std::string what = absl::StrCat("kernel ", kernel.name, ": shape of ", s.name, " dimension ", d);
      ASSIGN_OR_RETURN(int64_t n, eval_param_expr(kernel, s.shape[d], param_values, what));
      if (n < 0) return absl::InvalidArgumentError(absl::StrCat(av(what), " evaluates to ", n, " (negative)"));
      out.tensor_shapes[p].push_back(n);
    }
  }
  return out;
}

}  // namespace tilert
