#include "lowering/simt_unroll.h"

namespace tilert::lowering {
namespace {

void substitute(simt::Expr& e, uint32_t var, int64_t value) {
  if (e.kind == simt::ExprKind::kVar && e.id == var) {
    e = simt::Expr::int_const(value, e.type);
    return;
  }
  for (simt::Expr& a : e.args) substitute(a, var, value);
}

void substitute(simt::Body& body, uint32_t var, int64_t value) {
  for (simt::Stmt& s : body) {
    for (simt::Expr& e : s.operands) substitute(e, var, value);
    substitute(s.body, var, value);
    substitute(s.else_body, var, value);
  }
}

bool constant(const simt::Expr& e, int64_t* out) {
  if (e.kind != simt::ExprKind::kConst || !is_integer(e.type)) return false;
  *out = e.int_value;
  return true;
}

void unroll(simt::Body& body) {
  simt::Body out;
  for (simt::Stmt& s : body) {
    unroll(s.body);
    unroll(s.else_body);
    int64_t begin = 0, end = 0, step = 0;
    if (s.kind == simt::StmtKind::kFor && s.unroll && constant(s.operands[0], &begin) &&
        constant(s.operands[1], &end) && constant(s.operands[2], &step) && step > 0) {
      for (int64_t v = begin; v < end; v += step) {
        simt::Body copy = s.body;
        substitute(copy, s.id, v);
        for (simt::Stmt& c : copy) out.push_back(std::move(c));
      }
      continue;
    }
    out.push_back(std::move(s));
  }
  body = std::move(out);
}

}  // namespace

void unroll_marked_loops(simt::Function& function) { unroll(function.body); }

}  // namespace tilert::lowering
