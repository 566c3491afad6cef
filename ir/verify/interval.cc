#include "ir/verify/interval.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"

namespace tilert {
namespace {

constexpr double kInf = Interval::kInf;

Interval hull4(double a, double b, double c, double d) {
  for (double* v : {&a, &b, &c, &d})
    if (std::isnan(*v)) return Interval::unknown();
  return {std::min({a, b, c, d}), std::max({a, b, c, d})};
}

// 0 * inf is 0 here: the finite end is exactly zero, so the product's end is zero too.
double mul_end(double a, double b) { return (a == 0 || b == 0) ? 0 : a * b; }

// With one operand a constant, an exact operand's ends map to the result's ends.
bool exact_with_constant(Interval a, Interval b) {
  return a.exact && b.exact && (a.is_point() || b.is_point());
}

Interval add(Interval a, Interval b) {
  Interval r{a.lo + b.lo, a.hi + b.hi};
  r.exact = exact_with_constant(a, b);
  r.dense = r.exact && a.dense && b.dense;
  return r;
}
Interval negate(Interval a) { return {-a.hi, -a.lo, a.exact, a.dense}; }
Interval mul(Interval a, Interval b) {
  Interval r =
      hull4(mul_end(a.lo, b.lo), mul_end(a.lo, b.hi), mul_end(a.hi, b.lo), mul_end(a.hi, b.hi));
  r.exact = exact_with_constant(a, b);
  r.dense = r.exact && (a.is_point() ? (a.lo == 1 || a.lo == -1) && b.dense
                                     : (b.lo == 1 || b.lo == -1) && a.dense);
  return r;
}
bool excludes_zero(Interval b) { return b.lo > 0 || b.hi < 0; }

// C division truncates toward zero; with a divisor of one sign the quotient is monotone in each
// operand, so the corners bound it. Dividing consecutive integers by a constant skips none.
Interval div(Interval a, Interval b) {
  if (!excludes_zero(b)) return Interval::unknown();
  Interval r = hull4(std::trunc(a.lo / b.lo), std::trunc(a.lo / b.hi), std::trunc(a.hi / b.lo),
                     std::trunc(a.hi / b.hi));
  r.exact = a.exact && b.exact && b.is_point();
  r.dense = r.exact && a.dense;
  return r;
}

// The remainder takes the dividend's sign and stays below the divisor's magnitude. A dividend not
// bounded below keeps an unknown lower end: a local used as `s % 2` is rarely negative, and a
// finite -1 there would be reported as out of bounds.
Interval mod(Interval a, Interval b) {
  if (!excludes_zero(b)) return Interval::unknown();
  double m = std::max(std::fabs(b.lo), std::fabs(b.hi)) - 1;
  if (a.lo >= 0 && a.hi <= m && b.is_point()) return a;  // no wrap-around: the identity
  Interval r;
  if (a.lo >= 0) {
    r = {0, std::min(a.hi, m)};
  } else if (a.hi <= 0) {
    r = {std::max(a.lo, -m), 0};
  } else {
    r = {a.lo == -kInf ? -kInf : std::max(a.lo, -m), std::min(a.hi, m)};
  }
  // Consecutive dividends spanning a whole period take every remainder.
  r.exact = a.exact && a.dense && b.exact && b.is_point() && a.hi - a.lo >= m;
  r.dense = r.exact;
  return r;
}

Interval ceildiv(Interval a, Interval b) {
  if (b.lo <= 0) return Interval::unknown();
  return div(add(a, {b.lo - 1, b.hi - 1, b.exact, b.dense}), b);
}

Interval shift(Interval a, Interval b, bool left) {
  if (!b.is_point() || b.lo < 0 || b.lo > 62) return Interval::unknown();
  double scale = std::ldexp(1.0, static_cast<int>(b.lo));
  if (left) return mul(a, {scale, scale, b.exact, b.exact});
  Interval r{std::floor(a.lo / scale), std::floor(a.hi / scale), a.exact && b.exact, false};
  r.dense = r.exact && a.dense;
  return r;
}

Interval bit_and(Interval a, Interval b) {
  // Two's complement: `x & m` with m >= 0 keeps only bits of m. A hull only: not exact.
  if (a.lo >= 0 && b.lo >= 0) return {0, std::min(a.hi, b.hi)};
  if (a.lo >= 0) return {0, a.hi};
  if (b.lo >= 0) return {0, b.hi};
  return Interval::unknown();
}

// min(x, c) and max(x, c) take x's attained ends or c itself.
Interval min_max(Interval a, Interval b, bool is_min) {
  Interval r = is_min ? Interval{std::min(a.lo, b.lo), std::min(a.hi, b.hi)}
                      : Interval{std::max(a.lo, b.lo), std::max(a.hi, b.hi)};
  r.exact = exact_with_constant(a, b);
  r.dense = r.exact && a.dense && b.dense;
  return r;
}

Interval binary(BinaryOp op, Interval a, Interval b) {
  switch (op) {
    case BinaryOp::kAdd: return add(a, b);
    case BinaryOp::kSub: return add(a, negate(b));
    case BinaryOp::kMul: return mul(a, b);
    case BinaryOp::kDiv: return div(a, b);
    case BinaryOp::kMod: return mod(a, b);
    case BinaryOp::kShl: return shift(a, b, true);
    case BinaryOp::kShr: return shift(a, b, false);
    case BinaryOp::kBitAnd: return bit_and(a, b);
    case BinaryOp::kBitOr: case BinaryOp::kBitXor: return Interval::unknown();
    default: return {0, 1};  // comparisons and logical operators
  }
}

std::string end_string(double v) {
  if (v == kInf) return "inf";
  if (v == -kInf) return "-inf";
  return absl::StrCat(static_cast<int64_t>(v));
}

}  // namespace

std::string Interval::to_string() const {
  if (is_point()) return end_string(lo);
  return absl::StrCat("[", end_string(lo), ", ", end_string(hi), "]");
}

IntervalEnv::IntervalEnv(const Kernel& kernel) : kernel_(&kernel) {
  thread_ = kernel.threads >= 1 ? Interval::all_of(0, kernel.threads - 1) : Interval::all_of(0, kInf);
}

Interval IntervalEnv::of(const Expr& e) const {
  if (is_float(e.type)) return Interval::unknown();
  switch (e.kind) {
    case ExprKind::kIntConst: case ExprKind::kBoolConst:
      return Interval::point(e.int_value);
    case ExprKind::kSymbol: {
      auto it = symbols_.find(e.symbol);
      return it == symbols_.end() ? Interval::unknown() : it->second;
    }
    case ExprKind::kBuiltin:
      return static_cast<Builtin>(e.op) == Builtin::kThreadX ? thread_ : Interval::all_of(0, kInf);
    case ExprKind::kUnary:
      return static_cast<UnaryOp>(e.op) == UnaryOp::kNeg ? negate(of(e.args[0])) : Interval{0, 1};
    case ExprKind::kBinary:
      return binary(static_cast<BinaryOp>(e.op), of(e.args[0]), of(e.args[1]));
    case ExprKind::kCall: {
      switch (static_cast<Func>(e.op)) {
        case Func::kMin: return min_max(of(e.args[0]), of(e.args[1]), true);
        case Func::kMax: return min_max(of(e.args[0]), of(e.args[1]), false);
        case Func::kCeilDiv: return ceildiv(of(e.args[0]), of(e.args[1]));
        case Func::kSelect: {
          Interval a = of(e.args[1]), b = of(e.args[2]);
          return {std::min(a.lo, b.lo), std::max(a.hi, b.hi)};
        }
        default: return Interval::unknown();
      }
    }
    case ExprKind::kCast:
      if (e.type == DType::kBool) return {0, 1};
      return is_integer(e.args[0].type) ? of(e.args[0]) : Interval::unknown();
    default:
      return Interval::unknown();
  }
}

// Only values that cannot change inside the branch may be narrowed: loop variables and tx.
Interval* IntervalEnv::narrowable(const Expr& e) {
  if (e.kind == ExprKind::kBuiltin && static_cast<Builtin>(e.op) == Builtin::kThreadX) return &thread_;
  if (e.kind == ExprKind::kSymbol) {
    auto it = symbols_.find(e.symbol);
    if (it != symbols_.end()) return &it->second;
  }
  return nullptr;
}

IntervalEnv IntervalEnv::narrowed(const Expr& condition, bool taken) const {
  IntervalEnv env = *this;
  env.narrow(condition, taken);
  return env;
}

void IntervalEnv::narrow(const Expr& c, bool taken) {
  if (c.kind == ExprKind::kUnary && static_cast<UnaryOp>(c.op) == UnaryOp::kNot)
    return narrow(c.args[0], !taken);
  if (c.kind != ExprKind::kBinary) return mark_inexact(c);
  auto op = static_cast<BinaryOp>(c.op);
  // a && b taken: both hold; a || b not taken: neither holds.
  if ((op == BinaryOp::kAnd && taken) || (op == BinaryOp::kOr && !taken)) {
    narrow(c.args[0], taken);
    narrow(c.args[1], taken);
    return;
  }
  if (!binary_op_is_comparison(op) || op == BinaryOp::kAnd || op == BinaryOp::kOr)
    return mark_inexact(c);
  if (!taken) {
    switch (op) {
      case BinaryOp::kLt: op = BinaryOp::kGe; break;
      case BinaryOp::kLe: op = BinaryOp::kGt; break;
      case BinaryOp::kGt: op = BinaryOp::kLe; break;
      case BinaryOp::kGe: op = BinaryOp::kLt; break;
      case BinaryOp::kNe: op = BinaryOp::kEq; break;
      default: return mark_inexact(c);  // not equal says nothing about a range
    }
  } else if (op == BinaryOp::kNe) {
    return mark_inexact(c);
  }
  narrow_comparison(c, op);
}

// `comparison` is `lhs OP' rhs`, where op is OP' or its negation (for an else branch).
void IntervalEnv::narrow_comparison(const Expr& comparison, BinaryOp op) {
  const Expr& lhs = comparison.args[0];
  const Expr& rhs = comparison.args[1];
  Interval* var = narrowable(lhs);
  Interval bound = of(rhs);
  if (!var) {
    // c < x is x > c.
    var = narrowable(rhs);
    bound = of(lhs);
    switch (op) {
      case BinaryOp::kLt: op = BinaryOp::kGt; break;
      case BinaryOp::kLe: op = BinaryOp::kGe; break;
      case BinaryOp::kGt: op = BinaryOp::kLt; break;
      case BinaryOp::kGe: op = BinaryOp::kLe; break;
      default: break;
    }
  }
  if (!var) return mark_inexact(comparison);
  switch (op) {
    case BinaryOp::kLt: var->hi = std::min(var->hi, bound.hi - 1); break;
    case BinaryOp::kLe: var->hi = std::min(var->hi, bound.hi); break;
    case BinaryOp::kGt: var->lo = std::max(var->lo, bound.lo + 1); break;
    case BinaryOp::kGe: var->lo = std::max(var->lo, bound.lo); break;
    case BinaryOp::kEq:
      var->lo = std::max(var->lo, bound.lo);
      var->hi = std::min(var->hi, bound.hi);
      break;
    default: break;
  }
  if (var->empty()) reachable_ = false;
  // A bound that is not one known value correlates the variable with something else.
  if (!(bound.exact && bound.is_point())) mark_inexact(comparison);
}

// A condition the ranges cannot express still restricts what reaches the branch. Variables it
// names lose exactness; if it reads a local or memory, which may mirror any variable, all do.
void IntervalEnv::mark_inexact(const Expr& condition) {
  bool opaque = false;
  visit_expr(condition, [&](const Expr& node) {
    if (node.kind == ExprKind::kLoad) opaque = true;
    if (node.kind == ExprKind::kSymbol && node.symbol < kernel_->symbols.size() &&
        kernel_->symbols[node.symbol].kind == SymbolKind::kLocal)
      opaque = true;
    if (Interval* var = narrowable(node)) var->exact = false;
  });
  if (!opaque) return;
  thread_.exact = false;
  for (auto& [id, range] : symbols_) range.exact = false;
}

namespace {

using StmtFn = std::function<void(const Stmt&, const IntervalEnv&)>;

// The range of a variable running over [begin, end); empty when the loop never runs. Its ends are
// attained when the begin is known and the end is known or unbounded.
Interval loop_range(const IntervalEnv& env, const Expr& begin, const Expr& end) {
  Interval b = env.of(begin), e = env.of(end);
  bool exact = b.exact && b.is_point() && ((e.exact && e.is_point()) || e.hi == kInf);
  return {b.lo, e.hi - 1, exact, exact};
}

void walk_block(const Block& block, const IntervalEnv& env, const StmtFn& fn) {
  double role_offset = 0;  // consecutive roles split the block's threads in order
  for (const Stmt& s : block) {
    fn(s, env);
    if (auto* r = s.as<RoleOp>()) {
      IntervalEnv inner = env;
      if (r->threads >= 1) inner.set_thread_range(Interval::all_of(role_offset, role_offset + r->threads - 1));
      role_offset += r->threads;
      walk_block(r->body, inner, fn);
      continue;
    }
    role_offset = 0;
    if (auto* f = s.as<ForOp>()) {
      Interval range = loop_range(env, f->begin, f->end);
      if (range.empty()) continue;
      IntervalEnv inner = env;
      inner.set_symbol(f->var, range);
      walk_block(f->body, inner, fn);
    } else if (auto* p = s.as<ParallelOp>()) {
      IntervalEnv inner = env;
      bool runs = true;
      for (size_t i = 0; i < p->vars.size(); ++i) {
        Interval range = loop_range(env, p->begins[i], p->ends[i]);
        runs = runs && !range.empty();
        inner.set_symbol(p->vars[i], range);
      }
      if (runs) walk_block(p->body, inner, fn);
    } else if (auto* i = s.as<IfOp>()) {
      IntervalEnv then_env = env.narrowed(i->condition, true);
      IntervalEnv else_env = env.narrowed(i->condition, false);
      if (then_env.reachable()) walk_block(i->then_body, then_env, fn);
      if (else_env.reachable()) walk_block(i->else_body, else_env, fn);
    }
  }
}

}  // namespace

void walk_with_intervals(const Kernel& kernel, const StmtFn& fn) {
  walk_block(kernel.body, IntervalEnv(kernel), fn);
}

}  // namespace tilert
