// Shared memory budget: every shared tile the kernel declares (in any role or scope: the lowerer
// does not overlap them) plus options.mbarrier_bytes per mbarrier must fit the block's shared memory.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/verify/rules.h"

namespace tilert {
namespace {

// Saturates instead of overflowing: hostile bytecode may declare absurd shapes.
int64_t symbol_bytes(const Symbol& s, int64_t mbarrier_bytes) {
  constexpr int64_t kMax = int64_t{1} << 62;
  int64_t bytes = s.kind == SymbolKind::kMbarrier ? mbarrier_bytes : dtype_size(s.dtype);
  if (bytes == 0) return 0;
  for (const Expr& dim : s.shape) {
    int64_t n = *const_int_value(dim);
    bytes = n > kMax / bytes ? kMax : bytes * n;
  }
  return bytes;
}

}  // namespace

void verify_shared_memory(VerifyContext& ctx) {
  int64_t limit = ctx.options().shared_memory_limit;
  if (limit <= 0) return;
  int64_t total = 0;
  std::vector<std::string> parts;
  visit_stmts(ctx.kernel().body, [&](const Stmt& s) {
    auto* d = s.as<DeclareOp>();
    if (!d) return;
    const Symbol& sym = ctx.symbol(d->symbol);
    if (sym.kind != SymbolKind::kShared && sym.kind != SymbolKind::kMbarrier) return;
    int64_t bytes = symbol_bytes(sym, ctx.options().mbarrier_bytes);
    if (bytes == 0) return;
    total = std::min(total + bytes, int64_t{1} << 62);
    parts.push_back(absl::StrCat(sym.name, " ", bytes));
  });
  if (total <= limit) return;
  ctx.report_kernel("shared-memory", ctx.kernel().loc,
                    absl::StrCat("shared memory ", total, " bytes exceeds the limit ", limit, " (",
                                 absl::StrJoin(parts, ", "), ")"));
}

}  // namespace tilert
