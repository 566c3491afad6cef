#include "ir/verify/sync_eval.h"

#include <algorithm>

namespace tilert {

SyncEvaluator::SyncEvaluator(const Kernel& kernel) : kernel_(kernel) {
  param_values_.resize(kernel.num_params);
  for (uint32_t i = 0; i < kernel.num_params && i < kernel.symbols.size(); ++i) {
    const Symbol& p = kernel.symbols[i];
    if (p.kind == SymbolKind::kScalarParam && p.default_value) param_values_[i] = const_int_value(*p.default_value);
  }
}

bool SyncEvaluator::reads_tx(const Expr& e) {
  bool found = false;
  visit_expr(e, [&](const Expr& n) {
    if (n.kind == ExprKind::kBuiltin && static_cast<Builtin>(n.op) == Builtin::kThreadX) found = true;
  });
  return found;
}

std::optional<int64_t> SyncEvaluator::eval(const Expr& e,
                                           const absl::flat_hash_map<SymbolId, int64_t>& loop_values,
                                           std::optional<int64_t> tx) const {
  auto arg = [&](size_t i) { return eval(e.args[i], loop_values, tx); };
  switch (e.kind) {
    case ExprKind::kIntConst:
    case ExprKind::kBoolConst:
      return e.int_value;
    case ExprKind::kFloatConst:
    case ExprKind::kLoad:
      return std::nullopt;
    case ExprKind::kSymbol: {
      if (e.symbol < param_values_.size()) return param_values_[e.symbol];
      auto it = loop_values.find(e.symbol);
      if (it == loop_values.end()) return std::nullopt;
      return it->second;
    }
    case ExprKind::kBuiltin:
      if (static_cast<Builtin>(e.op) == Builtin::kThreadX) return tx;
      return std::nullopt;
    case ExprKind::kUnary: {
      if (e.args.size() != 1 || is_float(e.type)) return std::nullopt;
      auto a = arg(0);
      if (!a) return std::nullopt;
      return static_cast<UnaryOp>(e.op) == UnaryOp::kNeg ? -*a : static_cast<int64_t>(*a == 0);
    }
    case ExprKind::kBinary: {
      if (e.args.size() != 2) return std::nullopt;
      if (is_float(e.args[0].type) || is_float(e.args[1].type)) return std::nullopt;
      auto a = arg(0), b = arg(1);
      int64_t out = 0;
      if (!a || !b || !eval_int_binary(static_cast<BinaryOp>(e.op), *a, *b, &out)) return std::nullopt;
      return out;
    }
    case ExprKind::kCall: {
      if (is_float(e.type)) return std::nullopt;
      std::vector<int64_t> v;
      for (size_t i = 0; i < e.args.size(); ++i) {
        auto x = arg(i);
        if (!x) return std::nullopt;
        v.push_back(*x);
      }
      switch (static_cast<Func>(e.op)) {
        case Func::kMin: return v.size() == 2 ? std::optional(std::min(v[0], v[1])) : std::nullopt;
        case Func::kMax: return v.size() == 2 ? std::optional(std::max(v[0], v[1])) : std::nullopt;
        case Func::kAbs: return v.size() == 1 ? std::optional(v[0] < 0 ? -v[0] : v[0]) : std::nullopt;
        case Func::kCeilDiv:
          if (v.size() != 2 || v[1] <= 0) return std::nullopt;
          return (v[0] + v[1] - 1) / v[1];
        case Func::kSelect: return v.size() == 3 ? std::optional(v[0] != 0 ? v[1] : v[2]) : std::nullopt;
        default: return std::nullopt;
      }
    }
    case ExprKind::kCast: {
      if (e.args.size() != 1 || is_float(e.type) || is_float(e.args[0].type)) return std::nullopt;
      auto a = arg(0);
      if (!a) return std::nullopt;
      if (e.type == DType::kBool) return static_cast<int64_t>(*a != 0);
      return a;
    }
  }
  return std::nullopt;
}

std::optional<std::pair<int64_t, int64_t>> SyncEvaluator::range_over(
    const Expr& e, const absl::flat_hash_map<SymbolId, int64_t>& loop_values,
    const std::vector<int32_t>& threads, int64_t* work) const {
  if (!reads_tx(e)) {
    ++*work;
    auto v = eval(e, loop_values, std::nullopt);
    if (!v) return std::nullopt;
    return std::pair(*v, *v);
  }
  if (threads.empty()) return std::nullopt;
  std::optional<std::pair<int64_t, int64_t>> range;
  for (int32_t t : threads) {
    ++*work;
    auto v = eval(e, loop_values, t);
    if (!v) return std::nullopt;
    if (!range) range = std::pair(*v, *v);
    range->first = std::min(range->first, *v);
    range->second = std::max(range->second, *v);
  }
  return range;
}

}  // namespace tilert
