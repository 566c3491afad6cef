// Bounds: regions and element accesses of shared, fragment and local tiles must stay inside the
// tile wherever the index can be bounded statically (constants, loop variables with known bounds,
// tx, `k % 2`, ...). Global tensors are bounds-checked at run time (out-of-range elements read as
// zero and are not written), so only their extents are checked here.
#include <string>

#include "absl/strings/str_cat.h"
#include "ir/status.h"
#include "ir/verify/interval.h"
#include "ir/verify/rules.h"

namespace tilert {
namespace {

class BoundsChecker {
 public:
  explicit BoundsChecker(VerifyContext& ctx) : ctx_(ctx) {}

  void check(const Stmt& s, const IntervalEnv& env) {
    for_each_region(s, [&](const Region& r) { check_region(s, r, env); });
    for_each_stmt_expr(s, [&](const Expr& e) {
      visit_expr(e, [&](const Expr& node) {
        if (node.kind == ExprKind::kLoad) check_element(s, node.symbol, node.args, env);
      });
    });
    if (auto* a = s.as<AssignOp>()) check_element(s, a->target, a->indices, env);
    if (auto* a = s.as<AtomicAddOp>()) check_element(s, a->target, a->indices, env);
  }

 private:
  static bool checked_statically(const Symbol& b) {
    return b.kind == SymbolKind::kShared || b.kind == SymbolKind::kFragment ||
           b.kind == SymbolKind::kLocal;
  }

  // " (dimension 1, size 128)" for tiles of rank > 1, " (size 2)" otherwise.
  static std::string extent_phrase(const Symbol& b, size_t dim, int64_t size) {
    if (b.shape.size() > 1) return absl::StrCat(" (dimension ", dim, ", size ", size, ")");
    return absl::StrCat(" (size ", size, ")");
  }

  void check_region(const Stmt& s, const Region& r, const IntervalEnv& env) {
    const Symbol& b = ctx_.symbol(r.buffer);
    for (size_t dim = 0; dim < r.ranges.size(); ++dim) {
      const Range& range = r.ranges[dim];
      if (!range.index && range.extent < 1) {
        ctx_.report("extent", s, absl::StrCat("extent ", range.extent, " of dimension ", dim, " of ",
                                              b.name, " must be at least 1"));
        continue;
      }
      if (!checked_statically(b)) continue;
      int64_t size = *const_int_value(b.shape[dim]);
      Interval start = env.of(range.start);
      int64_t extent = range.index ? 1 : range.extent;
      if (!start.exceeds(0, static_cast<double>(size - extent))) continue;
      std::string what = range.index
                             ? absl::StrCat("index ", start.to_string())
                             : absl::StrCat("range ", start.to_string(), " +: ", range.extent);
      ctx_.report("index-bounds", s, absl::StrCat(what, " out of bounds of ", b.name,
                                                  extent_phrase(b, dim, size)));
    }
  }

  void check_element(const Stmt& s, SymbolId buffer, const std::vector<Expr>& indices,
                     const IntervalEnv& env) {
    const Symbol& b = ctx_.symbol(buffer);
    if (!checked_statically(b)) return;
    for (size_t dim = 0; dim < indices.size(); ++dim) {
      int64_t size = *const_int_value(b.shape[dim]);
      Interval index = env.of(indices[dim]);
      if (!index.exceeds(0, static_cast<double>(size - 1))) continue;
      ctx_.report("index-bounds", s, absl::StrCat("index ", index.to_string(), " out of bounds of ",
                                                  b.name, extent_phrase(b, dim, size)));
    }
  }

  VerifyContext& ctx_;
};

}  // namespace

void verify_bounds(VerifyContext& ctx) {
  BoundsChecker checker(ctx);
  walk_with_intervals(ctx.kernel(), [&](const Stmt& s, const IntervalEnv& env) { checker.check(s, env); });
}

}  // namespace tilert
