// Capabilities: a backend refuses a kernel whose requires(...) names something it lacks, so a
// kernel that uses a feature without declaring it would be accepted and then fail (or silently
// emulate) at lowering time. Each undeclared capability is reported once, at its first use.
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "ir/status.h"
#include "ir/verify/rules.h"

namespace tilert {
namespace {

std::optional<Capability> dtype_capability(DType t) {
  switch (t) {
    case DType::kF16: return Capability::kF16;
    case DType::kBF16: return Capability::kBF16;
    case DType::kI8: return Capability::kI8;
    case DType::kF64: return Capability::kF64;
    default: return std::nullopt;
  }
}

std::optional<Capability> op_capability(const Stmt& s) {
  if (s.as<MbarrierArriveOp>() || s.as<MbarrierExpectTxOp>() || s.as<MbarrierWaitOp>())
    return Capability::kMbarrier;
  if (s.as<NamedBarrierOp>()) return Capability::kNamedBarrier;
  if (s.as<SubgroupBarrierOp>()) return Capability::kSubgroup;
  if (s.as<ClusterSyncOp>()) return Capability::kCluster;
  if (s.as<RoleOp>()) return Capability::kRoles;
  if (s.as<CopyAsyncOp>()) return Capability::kAsyncCopy;
  if (s.as<AtomicAddOp>()) return Capability::kAtomic;
  return std::nullopt;
}

class CapabilityChecker {
 public:
  explicit CapabilityChecker(VerifyContext& ctx) : ctx_(ctx), kernel_(ctx.kernel()) {}

  void run() {
    for (uint32_t id = 0; id < kernel_.num_params; ++id) {
      const Symbol& p = kernel_.symbols[id];
      if (auto cap = dtype_capability(p.dtype))
        use_in_kernel(*cap, p.loc, absl::StrCat("parameter ", p.name, at_line(p.loc)));
    }
    if (!kernel_.cluster.empty())
      use_in_kernel(Capability::kCluster, kernel_.loc, "cluster(...) in the kernel header");
    visit_stmts(kernel_.body, [&](const Stmt& s) { check_stmt(s); });
  }

 private:
  static std::string at_line(SourceLoc loc) {
    return loc.line ? absl::StrCat(" at line ", loc.line) : std::string();
  }

  bool missing(Capability c) {
    CapabilitySet bit = capability_bit(c);
    if ((kernel_.capabilities & bit) || (reported_ & bit)) return false;
    reported_ |= bit;
    return true;
  }

  static std::string message(Capability c, const std::string& where) {
    return absl::StrCat("uses ", av(capability_name(c)), " (", where,
                        ") but does not declare it in requires(...)");
  }

  void use_in_kernel(Capability c, SourceLoc loc, const std::string& where) {
    if (missing(c)) ctx_.report_kernel("capability", loc, message(c, where));
  }
  void use_in_stmt(Capability c, const Stmt& s, const std::string& where) {
    if (missing(c)) ctx_.report("capability", s, message(c, where));
  }

  void check_stmt(const Stmt& s) {
    if (auto cap = op_capability(s)) use_in_stmt(*cap, s, ctx_.describe(s));
    if (auto* d = s.as<DeclareOp>()) {
      const Symbol& sym = ctx_.symbol(d->symbol);
      std::string where = absl::StrCat(av(symbol_kind_name(sym.kind)), " ", sym.name, at_line(s.loc));
      if (sym.kind == SymbolKind::kMbarrier)
        use_in_stmt(Capability::kMbarrier, s, where);
      else if (auto cap = dtype_capability(sym.dtype))
        use_in_stmt(*cap, s, where);
    }
    for_each_stmt_expr(s, [&](const Expr& e) {
      visit_expr(e, [&](const Expr& node) {
        if (auto cap = dtype_capability(node.type))
          use_in_stmt(*cap, s, absl::StrCat("a ", av(dtype_name(node.type)), " value in ", ctx_.describe(s)));
      });
    });
  }

  VerifyContext& ctx_;
  const Kernel& kernel_;
  CapabilitySet reported_ = 0;
};

}  // namespace

void verify_capabilities(VerifyContext& ctx) { CapabilityChecker(ctx).run(); }

}  // namespace tilert
