// Which private arrays live in registers: PTX registers cannot be indexed at run time, so an
// array qualifies only when every index is a constant once unrolled loops are unrolled. The
// walk unrolls exactly as the emitter does (same folding, same loop variables), so the two agree.
#include <algorithm>

#include "backends/cuda/ptx_function.h"
#include "ir/expr.h"

namespace tilert::cuda {

int64_t wrap_to(int64_t v, DType t) {
  switch (t) {
    case DType::kBool: return v != 0;
    case DType::kI8: return static_cast<int8_t>(v);
    case DType::kU8: return static_cast<uint8_t>(v);
    case DType::kI32: return static_cast<int32_t>(v);
    case DType::kU32: return static_cast<uint32_t>(v);
    default: return v;
  }
}

namespace {

using simt::Expr;
using simt::ExprKind;

class PrivateArrayUse {
 public:
  explicit PrivateArrayUse(const simt::Function& f) : f_(f), in_registers_(f.variables.size()) {
    for (size_t i = 0; i < f.variables.size(); ++i) in_registers_[i] = f.variables[i].count > 0;
  }

  std::vector<bool> result(const simt::Body& body) {
    visit(body);
    return in_registers_;
  }

 private:
  void index(uint32_t array, const Expr& e) {
    if (array < in_registers_.size() && !fold_constant(e, known_)) in_registers_[array] = false;
  }

  void visit(const Expr& e) {
    if (e.kind == ExprKind::kLoad && e.space == simt::Space::kPrivate && !e.args.empty())
      index(e.id, e.args[0]);
    for (const Expr& a : e.args) visit(a);
  }

  void visit(const simt::Body& body) {
    for (const simt::Stmt& s : body) {
      if (++visited_ > (int64_t{1} << 20)) return;  // the emitter reports the same excess
      for (const Expr& o : s.operands) visit(o);
      if (s.kind == simt::StmtKind::kAssign && s.operands.size() == 2) index(s.id, s.operands[0]);
      if (s.kind == simt::StmtKind::kStore && s.space == simt::Space::kPrivate &&
          !s.operands.empty())
        index(s.id, s.operands[0]);
      if (s.kind == simt::StmtKind::kFor && s.operands.size() == 3) {
        visit_loop(s);
        continue;
      }
      visit(s.body);
      visit(s.else_body);
    }
  }

  void visit_loop(const simt::Stmt& s) {
    std::optional<int64_t> outer;
    if (auto it = known_.find(s.id); it != known_.end()) outer = it->second;
    std::optional<int64_t> begin = fold_constant(s.operands[0], known_);
    std::optional<int64_t> end = fold_constant(s.operands[1], known_);
    std::optional<int64_t> step = fold_constant(s.operands[2], known_);
    if (s.unroll && begin && end && step && *step > 0) {
      for (int64_t k = *begin; k < *end && visited_ <= (int64_t{1} << 20); k += *step) {
        known_[s.id] = k;
        visit(s.body);
      }
    } else {
      known_.erase(s.id);
      visit(s.body);
    }
    if (outer) known_[s.id] = *outer; else known_.erase(s.id);
  }

  const simt::Function& f_;
  std::vector<bool> in_registers_;
  std::map<uint32_t, int64_t> known_;
  int64_t visited_ = 0;
};

}  // namespace

std::optional<int64_t> fold_binary(const Expr& e, int64_t a, int64_t b) {
  int64_t out = 0;
  if (!eval_int_binary(static_cast<BinaryOp>(e.op), a, b, &out)) return std::nullopt;
  return wrap_to(out, e.type);
}

std::optional<int64_t> fold_constant(const Expr& e, const std::map<uint32_t, int64_t>& known) {
  if (!is_integer(e.type) && e.type != DType::kBool) return std::nullopt;
  switch (e.kind) {
    case ExprKind::kConst: return wrap_to(e.int_value, e.type);
    case ExprKind::kVar: {
      auto it = known.find(e.id);
      if (it == known.end()) return std::nullopt;
      return wrap_to(it->second, e.type);
    }
    case ExprKind::kCast: {
      if (e.args.size() != 1) return std::nullopt;
      std::optional<int64_t> v = fold_constant(e.args[0], known);
      if (!v) return std::nullopt;
      return wrap_to(*v, e.type);
    }
    case ExprKind::kUnary: {
      if (e.args.size() != 1) return std::nullopt;
      std::optional<int64_t> v = fold_constant(e.args[0], known);
      if (!v) return std::nullopt;
      return wrap_to(static_cast<UnaryOp>(e.op) == UnaryOp::kNot ? !*v : -*v, e.type);
    }
    case ExprKind::kBinary: {
      if (e.args.size() != 2) return std::nullopt;
      // The emitter asks this of every integer subexpression: give up at the first operand that
      // is not known rather than walking the rest of the tree.
      std::optional<int64_t> a = fold_constant(e.args[0], known);
      if (!a) return std::nullopt;
      std::optional<int64_t> b = fold_constant(e.args[1], known);
      if (!b) return std::nullopt;
      return fold_binary(e, *a, *b);
    }
    case ExprKind::kCall: {
      auto f = static_cast<Func>(e.op);
      std::vector<int64_t> v;
      for (const Expr& a : e.args) {
        std::optional<int64_t> x = fold_constant(a, known);
        if (!x) return std::nullopt;
        v.push_back(*x);
      }
      if ((f == Func::kMin || f == Func::kMax) && v.size() == 2)
        return f == Func::kMin ? std::min(v[0], v[1]) : std::max(v[0], v[1]);
      if (f == Func::kSelect && v.size() == 3) return v[0] ? v[1] : v[2];
      return std::nullopt;
    }
    default: return std::nullopt;
  }
}

std::vector<bool> register_private_arrays(const simt::Function& f) {
  // Without private arrays there is nothing to decide, and no need to walk the unrolled body.
  if (std::none_of(f.variables.begin(), f.variables.end(), [](const simt::Variable& v) { return v.count > 0; }))
    return std::vector<bool>(f.variables.size(), false);
  return PrivateArrayUse(f).result(f.body);
}

}  // namespace tilert::cuda
