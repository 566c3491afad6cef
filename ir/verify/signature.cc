// Kernel signature: the launch shape every backend must be able to honour (threads, grid, cluster),
// parameter names a host binds arguments by, and tensor shapes / grid sizes that the runtime
// evaluates from scalar integer arguments alone (ir/param_eval.h).
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "ir/status.h"
#include "ir/verify/rules.h"

namespace tilert {
namespace {

constexpr int32_t kMaxThreads = 1024;

class SignatureChecker {
 public:
  explicit SignatureChecker(VerifyContext& ctx) : ctx_(ctx), kernel_(ctx.kernel()) {}

  void run() {
    if (kernel_.threads < 1 || kernel_.threads > kMaxThreads)
      report("kernel-threads", absl::StrCat("threads(", kernel_.threads, ") is outside 1..", kMaxThreads));
    check_grid();
    check_cluster();
    check_names();
    for (uint32_t id = 0; id < kernel_.num_params; ++id) {
      const Symbol& p = kernel_.symbols[id];
      if (p.kind != SymbolKind::kTensorParam) continue;
      for (size_t d = 0; d < p.shape.size(); ++d)
        if (auto problem = param_expr_problem(p.shape[d]))
          ctx_.report_kernel("tensor-shape", p.loc, absl::StrCat("dimension ", d, " of ", p.name, " ",
                                                                 *problem));
    }
  }

 private:
  void report(std::string_view rule, std::string message) {
    ctx_.report_kernel(rule, kernel_.loc, std::move(message));
  }

  // Why `e` cannot be evaluated from scalar integer parameters, or nullopt.
  std::optional<std::string> param_expr_problem(const Expr& e) const {
    std::optional<std::string> problem;
    visit_expr(e, [&](const Expr& node) {
      if (problem) return;
      if (node.kind == ExprKind::kBuiltin) {
        problem = absl::StrCat("uses ", av(builtin_name(static_cast<Builtin>(node.op))),
                               "; only integer scalar parameters and constants may appear");
      } else if (node.kind == ExprKind::kLoad || node.kind == ExprKind::kSymbol) {
        const Symbol& s = kernel_.symbols[node.symbol];
        if (node.kind == ExprKind::kLoad || s.kind != SymbolKind::kScalarParam || !is_integer(s.dtype))
          problem = absl::StrCat("uses ", s.name, ", a ", av(dtype_name(s.dtype)), " ",
                                 symbol_kind_phrase(s.kind),
                                 "; only integer scalar parameters and constants may appear");
      } else if (is_float(node.type)) {
        problem = absl::StrCat("has a ", av(dtype_name(node.type)), " value; it must be an integer");
      }
    });
    return problem;
  }

  void check_grid() {
    if (kernel_.grid.empty() || kernel_.grid.size() > 3)
      report("kernel-grid", absl::StrCat("grid has ", kernel_.grid.size(), " dimensions; it needs 1 to 3"));
    for (size_t d = 0; d < kernel_.grid.size(); ++d) {
      if (auto problem = param_expr_problem(kernel_.grid[d])) {
        report("kernel-grid", absl::StrCat("grid dimension ", d, " ", *problem));
      } else if (auto n = const_int_value(kernel_.grid[d]); n && *n < 1) {
        report("kernel-grid", absl::StrCat("grid dimension ", d, " is ", *n, "; it must be at least 1"));
      }
    }
  }

  void check_cluster() {
    if (kernel_.cluster.size() > 3)
      report("kernel-cluster", absl::StrCat("cluster has ", kernel_.cluster.size(),
                                            " dimensions; it takes 1 to 3"));
    for (size_t d = 0; d < kernel_.cluster.size(); ++d)
      if (kernel_.cluster[d] < 1)
        report("kernel-cluster", absl::StrCat("cluster dimension ", d, " is ", kernel_.cluster[d],
                                              "; it must be at least 1"));
  }

  // Parameters are visible everywhere, so no other symbol may take a parameter's name.
  void check_names() {
    absl::flat_hash_map<std::string, uint32_t> params;
    for (uint32_t id = 0; id < kernel_.symbols.size(); ++id) {
      const Symbol& s = kernel_.symbols[id];
      auto it = params.find(s.name);
      if (it != params.end()) {
        const Symbol& first = kernel_.symbols[it->second];
        ctx_.report_kernel("param-name", s.loc,
                           absl::StrCat(symbol_kind_phrase(s.kind), " ", s.name,
                                        " has the same name as parameter ", it->second,
                                        first.loc.line ? absl::StrCat(" at line ", first.loc.line) : ""));
      } else if (id < kernel_.num_params) {
        params.emplace(s.name, id);
      }
    }
  }

  VerifyContext& ctx_;
  const Kernel& kernel_;
};

}  // namespace

void verify_signature(VerifyContext& ctx) { SignatureChecker(ctx).run(); }

}  // namespace tilert
