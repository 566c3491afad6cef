// Shapes: the operands of tile ops must fit together once index dimensions are dropped. Copies
// move equal shapes; gemm multiplies [M, K] by [K, N] into [M, N] (after the requested
// transposes); a reduction removes exactly its dimension.
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "ir/status.h"
#include "ir/verify/rules.h"

namespace tilert {
namespace {

class ShapeChecker {
 public:
  explicit ShapeChecker(VerifyContext& ctx) : ctx_(ctx) {}

  void check(const Stmt& s) {
    if (auto* c = s.as<CopyOp>()) check_copy(s, c->src, c->dst);
    if (auto* c = s.as<CopyAsyncOp>()) check_copy(s, c->src, c->dst);
    if (auto* g = s.as<GemmOp>()) check_gemm(s, *g);
    if (auto* r = s.as<ReduceOp>()) check_reduce(s, *r);
    if (auto* f = s.as<FillOp>()) shape_of(s, f->dst);
  }

 private:
  // The region's shape, or nullopt after reporting a whole dimension of non-constant size.
  std::optional<std::vector<int64_t>> shape_of(const Stmt& s, const Region& r) {
    auto shape = region_shape(ctx_.kernel(), r);
    if (shape) return shape;
    const Symbol& b = ctx_.symbol(r.buffer);
    size_t dim = r.ranges.size();
    while (dim < b.shape.size() && const_int_value(b.shape[dim])) ++dim;
    ctx_.report("region-shape", s, absl::StrCat("dimension ", dim, " of ", b.name,
                                                " is taken whole but its size is not a constant; "
                                                "give it a range"));
    return std::nullopt;
  }

  void check_copy(const Stmt& s, const Region& src, const Region& dst) {
    auto a = shape_of(s, src);
    auto b = shape_of(s, dst);
    if (!a || !b || *a == *b) return;
    ctx_.report("copy-shape", s, absl::StrCat("source shape ", format_shape(*a),
                                              " does not match destination shape ", format_shape(*b)));
  }

  bool require_matrix(const Stmt& s, std::string_view role, const Region& r,
                      const std::vector<int64_t>& shape) {
    if (shape.size() == 2) return true;
    ctx_.report("gemm-shape", s, absl::StrCat("operand ", av(role), " (", ctx_.symbol(r.buffer).name,
                                              ") has shape ", format_shape(shape),
                                              "; gemm operands are 2-D"));
    return false;
  }

  void check_gemm(const Stmt& s, const GemmOp& g) {
    auto a = shape_of(s, g.a);
    auto b = shape_of(s, g.b);
    auto c = shape_of(s, g.c);
    if (!a || !b || !c) return;
    if (!require_matrix(s, "a", g.a, *a) || !require_matrix(s, "b", g.b, *b) ||
        !require_matrix(s, "c", g.c, *c))
      return;
    int64_t m = g.transpose_a ? (*a)[1] : (*a)[0];
    int64_t ka = g.transpose_a ? (*a)[0] : (*a)[1];
    int64_t kb = g.transpose_b ? (*b)[1] : (*b)[0];
    int64_t n = g.transpose_b ? (*b)[0] : (*b)[1];
    if (ka != kb) {
      ctx_.report("gemm-shape", s, absl::StrCat("a ", format_shape(*a), " and b ", format_shape(*b),
                                                " disagree on K: ", ka, " vs ", kb));
      return;
    }
    if ((*c)[0] != m || (*c)[1] != n)
      ctx_.report("gemm-shape", s, absl::StrCat("c has shape ", format_shape(*c), " but a @ b is ",
                                                format_shape({m, n})));
  }

  void check_reduce(const Stmt& s, const ReduceOp& r) {
    auto src = shape_of(s, r.src);
    auto dst = shape_of(s, r.dst);
    if (!src || !dst) return;
    if (r.dim < 0 || static_cast<size_t>(r.dim) >= src->size()) {
      ctx_.report("reduce-dim", s, absl::StrCat("dim(", r.dim, ") is out of range for source shape ",
                                                format_shape(*src)));
      return;
    }
    std::vector<int64_t> expected = *src;
    expected.erase(expected.begin() + r.dim);
    if (*dst != expected)
      ctx_.report("reduce-shape", s, absl::StrCat("destination shape ", format_shape(*dst),
                                                  " does not match source shape ", format_shape(*src),
                                                  " without dimension ", r.dim, " (",
                                                  format_shape(expected), ")"));
  }

  VerifyContext& ctx_;
};

}  // namespace

void verify_shapes(VerifyContext& ctx) {
  ShapeChecker checker(ctx);
  visit_stmts(ctx.kernel().body, [&](const Stmt& s) { checker.check(s); });
}

}  // namespace tilert
