// Types: indices, region starts and loop bounds are integers; conditions are bool or integer;
// barrier operands (mbarrier index, parity, expect_tx bytes, named barrier id and thread count) are
// integers; gemm takes a and b of one dtype and accumulates in f32 or that dtype.
#include <string>

#include "absl/strings/str_cat.h"
#include "ir/status.h"
#include "ir/verify/rules.h"

namespace tilert {
namespace {

class TypeChecker {
 public:
  explicit TypeChecker(VerifyContext& ctx) : ctx_(ctx) {}

  void check(const Stmt& s) {
    for_each_region(s, [&](const Region& r) {
      for (size_t d = 0; d < r.ranges.size(); ++d)
        require_integer(s, "index-type", r.ranges[d].start,
                        absl::StrCat("start of dimension ", d, " of ", ctx_.symbol(r.buffer).name));
    });
    for_each_stmt_expr(s, [&](const Expr& e) { check_loads(s, e); });
    if (auto* a = s.as<AssignOp>()) check_indices(s, a->target, a->indices);
    if (auto* a = s.as<AtomicAddOp>()) check_indices(s, a->target, a->indices);
    if (const MbarrierRef* ref = stmt_mbarrier(s))
      require_integer(s, "index-type", ref->index, absl::StrCat("index of mbarrier ",
                                                                ctx_.symbol(ref->barrier).name));
    if (auto* f = s.as<ForOp>()) {
      require_integer(s, "loop-bound-type", f->begin, "loop begin");
      require_integer(s, "loop-bound-type", f->end, "loop end");
    }
    if (auto* p = s.as<ParallelOp>()) {
      for (size_t i = 0; i < p->begins.size(); ++i) {
        require_integer(s, "loop-bound-type", p->begins[i], "parallel begin");
        require_integer(s, "loop-bound-type", p->ends[i], "parallel end");
      }
    }
    if (auto* i = s.as<IfOp>(); i && is_float(i->condition.type))
      ctx_.report("condition-type", s, absl::StrCat("condition has type ", av(dtype_name(i->condition.type)),
                                                    "; it must be bool or an integer"));
    if (auto* w = s.as<MbarrierWaitOp>()) require_integer(s, "operand-type", w->parity, "parity");
    if (auto* x = s.as<MbarrierExpectTxOp>()) require_integer(s, "operand-type", x->bytes, "bytes");
    if (auto* n = s.as<NamedBarrierOp>()) {
      require_integer(s, "operand-type", n->id, "barrier id");
      require_integer(s, "operand-type", n->thread_count, "thread count");
    }
    if (auto* g = s.as<GemmOp>()) check_gemm(s, *g);
  }

 private:
  void require_integer(const Stmt& s, std::string_view rule, const Expr& e, const std::string& what) {
    if (is_integer(e.type)) return;
    ctx_.report(rule, s, absl::StrCat(what, " has type ", av(dtype_name(e.type)),
                                      "; it must be an integer"));
  }

  void check_indices(const Stmt& s, SymbolId buffer, const std::vector<Expr>& indices) {
    for (size_t d = 0; d < indices.size(); ++d)
      require_integer(s, "index-type", indices[d],
                      absl::StrCat("index ", d, " of ", ctx_.symbol(buffer).name));
  }

  void check_loads(const Stmt& s, const Expr& e) {
    visit_expr(e, [&](const Expr& node) {
      if (node.kind == ExprKind::kLoad) check_indices(s, node.symbol, node.args);
    });
  }

  void check_gemm(const Stmt& s, const GemmOp& g) {
    DType a = ctx_.symbol(g.a.buffer).dtype;
    DType b = ctx_.symbol(g.b.buffer).dtype;
    DType c = ctx_.symbol(g.c.buffer).dtype;
    bool input_ok = a == DType::kF16 || a == DType::kBF16 || a == DType::kF32 || a == DType::kI8;
    if (!input_ok || a != b) {
      ctx_.report("gemm-dtype", s, absl::StrCat("a is ", av(dtype_name(a)), " and b is ", av(dtype_name(b)),
                                                "; they must share one of f16, bf16, f32, i8"));
      return;
    }
    // i8 products accumulate exactly in i32.
    bool accumulator_ok = c == DType::kF32 || c == a || (a == DType::kI8 && c == DType::kI32);
    if (accumulator_ok) return;
    std::string allowed = "f32";
    if (a != DType::kF32) absl::StrAppend(&allowed, " or ", av(dtype_name(a)));
    if (a == DType::kI8) absl::StrAppend(&allowed, " or i32");
    ctx_.report("gemm-dtype", s, absl::StrCat("accumulator c is ", av(dtype_name(c)), " for ",
                                              av(dtype_name(a)), " inputs; it must be ", allowed));
  }

  VerifyContext& ctx_;
};

}  // namespace

void verify_types(VerifyContext& ctx) {
  TypeChecker checker(ctx);
  visit_stmts(ctx.kernel().body, [&](const Stmt& s) { checker.check(s); });
}

}  // namespace tilert
