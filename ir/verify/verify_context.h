// What every verifier rule shares while it checks one kernel: the diagnostic sink, safe symbol
// lookups, op positions for modules without source lines, and small formatting helpers.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "ir/kernel.h"
#include "ir/verify/verify.h"

namespace tilert {

class VerifyContext {
 public:
  VerifyContext(const Kernel& kernel, const VerifyOptions& options, std::vector<Diagnostic>* out);

  const Kernel& kernel() const { return kernel_; }
  const VerifyOptions& options() const { return options_; }

  // A problem with statement `stmt` of this kernel.
  void report(std::string_view rule, const Stmt& stmt, std::string message);
  // A problem with the kernel as a whole (signature, totals), placed at `loc`.
  void report_kernel(std::string_view rule, SourceLoc loc, std::string message);
  // Diagnostics reported so far (all kernels): a rule compares before/after to see if it fired.
  size_t diagnostic_count() const { return out_->size(); }

  bool has_symbol(SymbolId id) const { return id < kernel_.symbols.size(); }
  // Only for ids that passed has_symbol (the structure rule guarantees it for later rules).
  const Symbol& symbol(SymbolId id) const { return kernel_.symbols[id]; }
  // The symbol's name, or "symbol #N" for an id out of range.
  std::string symbol_name(SymbolId id) const;

  // "wait at line 12", or "wait, op #12" when the module carries no source lines.
  std::string describe(const Stmt& stmt) const;
  int64_t op_index(const Stmt& stmt) const;

 private:
  const Kernel& kernel_;
  const VerifyOptions& options_;
  std::vector<Diagnostic>* out_;
  absl::flat_hash_map<const Stmt*, int64_t> op_index_;
};

// The op's mnemonic; never indexes a name table with an out-of-range enum value.
std::string_view safe_op_name(const Stmt& stmt);

// "[128, 32]"
std::string format_shape(const std::vector<int64_t>& shape);

// "shared tile", "fragment tile", "scalar parameter", ... for messages.
absl::string_view symbol_kind_phrase(SymbolKind kind);

// Calls `fn` on every expression the statement itself holds (region starts, indices, values,
// conditions, bounds, barrier operands), not on those of nested blocks.
void for_each_stmt_expr(const Stmt& stmt, const std::function<void(const Expr&)>& fn);

// Calls `fn` on every region and every mbarrier reference the statement holds.
void for_each_region(const Stmt& stmt, const std::function<void(const Region&)>& fn);
const MbarrierRef* stmt_mbarrier(const Stmt& stmt);

// The blocks a statement owns (loop / parallel / role bodies, both branches of an if).
std::vector<const Block*> child_blocks(const Stmt& stmt);

}  // namespace tilert
