// Parallel bodies and fragments. A parallel loop's iterations are spread over the group's threads
// by the lowerer, so its body holds only element-wise code (assignments, ifs, local declarations)
// and must not ask which thread runs it (tx). Conversely, which thread holds a fragment element
// is the lowerer's choice, so fragment elements are read and written only inside parallel bodies;
// tile ops take fragments whole.
#include <string>

#include "absl/strings/str_cat.h"
#include "ir/status.h"
#include "ir/verify/rules.h"

namespace tilert {
namespace {

class ParallelChecker {
 public:
  explicit ParallelChecker(VerifyContext& ctx) : ctx_(ctx) {}

  void check_block(const Block& block, const Stmt* parallel) {
    for (const Stmt& s : block) {
      if (parallel) check_in_parallel(s, *parallel);
      check_fragment_access(s, parallel != nullptr);
      const Stmt* inner = s.as<ParallelOp>() ? &s : parallel;
      for (const Block* b : child_blocks(s)) check_block(*b, inner);
    }
  }

 private:
  void check_in_parallel(const Stmt& s, const Stmt& parallel) {
    bool allowed = s.as<AssignOp>() || s.as<IfOp>();
    if (auto* d = s.as<DeclareOp>()) allowed = ctx_.symbol(d->symbol).kind == SymbolKind::kLocal;
    if (!allowed)
      ctx_.report("parallel-body", s, absl::StrCat(av(safe_op_name(s)), " inside the body of ",
                                                   ctx_.describe(parallel),
                                                   "; parallel bodies hold only assignments, ifs "
                                                   "and local declarations"));
    bool uses_tx = false;
    for_each_stmt_expr(s, [&](const Expr& e) {
      visit_expr(e, [&](const Expr& node) {
        uses_tx = uses_tx || (node.kind == ExprKind::kBuiltin &&
                              static_cast<Builtin>(node.op) == Builtin::kThreadX);
      });
    });
    if (uses_tx)
      ctx_.report("parallel-thread-index", s,
                  absl::StrCat("tx used inside the body of ", ctx_.describe(parallel),
                               "; which thread runs an iteration is the lowerer's choice"));
  }

  void check_fragment_access(const Stmt& s, bool in_parallel) {
    if (in_parallel) return;
    auto report = [&](SymbolId id, std::string_view how) {
      ctx_.report("fragment-access", s, absl::StrCat(av(how), " element of fragment ", ctx_.symbol(id).name,
                                                     " outside a parallel body; fragments are "
                                                     "accessed element-wise only in parallel loops"));
    };
    if (auto* a = s.as<AssignOp>(); a && ctx_.symbol(a->target).kind == SymbolKind::kFragment)
      report(a->target, "write to an");
    for_each_stmt_expr(s, [&](const Expr& e) {
      visit_expr(e, [&](const Expr& node) {
        if (node.kind == ExprKind::kLoad && ctx_.symbol(node.symbol).kind == SymbolKind::kFragment)
          report(node.symbol, "read of an");
      });
    });
  }

  VerifyContext& ctx_;
};

}  // namespace

void verify_parallel(VerifyContext& ctx) { ParallelChecker(ctx).check_block(ctx.kernel().body, nullptr); }

}  // namespace tilert
