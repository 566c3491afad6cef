// Structure: everything the other rules take for granted. Symbol ids in range, symbols of the
// right kind for each operand, uses inside the declaration's scope, expressions with the right
// number of operands, regions with no more ranges than their buffer has dimensions. Bytecode that
// decodes can still break any of these, so this rule never evaluates or indexes anything it has not
// checked first, and a kernel that fails it is not looked at by any other rule.
#include <functional>
#include <string>

#include "absl/strings/str_cat.h"
#include "ir/status.h"
#include "ir/verify/rules.h"

namespace tilert {
namespace {

using Reporter = std::function<void(std::string_view rule, std::string message)>;

constexpr int kNumExprKinds = 10;
constexpr int kNumSymbolKinds = 7;
constexpr int kNumBuiltins = 4;
constexpr int kNumUnaryOps = 2;
constexpr int kNumBinaryOps = 18;
#define TILERT_COUNT_FUNC(e, s, n) +1
constexpr int kNumFuncs = 0 TILERT_FUNCS(TILERT_COUNT_FUNC);
#undef TILERT_COUNT_FUNC

bool is_tile(SymbolKind k) { return k == SymbolKind::kShared || k == SymbolKind::kFragment; }
bool is_region_buffer(SymbolKind k) { return k == SymbolKind::kTensorParam || is_tile(k); }

class StructureChecker {
 public:
  explicit StructureChecker(VerifyContext& ctx)
      : ctx_(ctx), kernel_(ctx.kernel()), in_scope_(kernel_.symbols.size(), false),
        declared_(kernel_.symbols.size(), false) {}

  bool run() {
    if (!check_symbol_table()) return false;
    check_block(kernel_.body);
    return ok_;
  }

 private:
  // ---- symbol table and signature expressions ----
  bool check_symbol_table() {
    auto report = [&](std::string message) {
      ctx_.report_kernel("symbol-table", kernel_.loc, std::move(message));
      ok_ = false;
    };
    if (kernel_.num_params > kernel_.symbols.size()) {
      report(absl::StrCat("the kernel declares ", kernel_.num_params, " parameters but has only ",
                          kernel_.symbols.size(), " symbols"));
      return false;
    }
    for (size_t id = 0; id < kernel_.symbols.size(); ++id) {
      const Symbol& s = kernel_.symbols[id];
      bool is_param = id < kernel_.num_params;
      if (static_cast<int>(s.kind) >= kNumSymbolKinds) {
        report(absl::StrCat("symbol ", s.name, " has unknown kind ", static_cast<int>(s.kind)));
      } else if (static_cast<int>(s.dtype) >= kNumDTypes) {
        report(absl::StrCat("symbol ", s.name, " has unknown dtype ", static_cast<int>(s.dtype)));
      } else if (is_param != (s.kind == SymbolKind::kScalarParam ||
                              s.kind == SymbolKind::kTensorParam)) {
        report(absl::StrCat(symbol_kind_phrase(s.kind), " ", s.name,
                            is_param ? " is listed among the parameters"
                                     : " is listed after the parameters"));
      } else if (s.kind == SymbolKind::kMbarrier && s.shape.size() > 1) {
        report(absl::StrCat("mbarrier ", s.name, " has ", s.shape.size(),
                            " dimensions; mbarrier arrays have one"));
      }
      if (is_param) in_scope_[id] = true;
    }
    if (!ok_) return false;
    Reporter kernel_report = [&](std::string_view rule, std::string message) {
      ctx_.report_kernel(rule, kernel_.loc, std::move(message));
      ok_ = false;
    };
    for (uint32_t id = 0; id < kernel_.num_params; ++id)
      for (const Expr& e : kernel_.symbols[id].shape) check_expr(e, kernel_report);
    for (const Expr& e : kernel_.grid) check_expr(e, kernel_report);
    return ok_;
  }

  // ---- expressions ----
  // Reports the first problem of `e` and returns false; children are checked only after their
  // parent's shape is known to be sound.
  bool check_expr(const Expr& e, const Reporter& report) {
    if (static_cast<int>(e.kind) >= kNumExprKinds) {
      report("malformed-expr", absl::StrCat("expression of unknown kind ", static_cast<int>(e.kind)));
      return false;
    }
    if (static_cast<int>(e.type) >= kNumDTypes) {
      report("malformed-expr", absl::StrCat("expression of unknown dtype ", static_cast<int>(e.type)));
      return false;
    }
    size_t arity = 0;
    switch (e.kind) {
      case ExprKind::kIntConst: case ExprKind::kFloatConst: case ExprKind::kBoolConst:
        break;
      case ExprKind::kSymbol:
        if (!check_value_symbol(e.symbol, report)) return false;
        break;
      case ExprKind::kBuiltin:
        if (e.op >= kNumBuiltins) return bad_code(report, "builtin", e.op);
        break;
      case ExprKind::kUnary:
        if (e.op >= kNumUnaryOps) return bad_code(report, "unary operator", e.op);
        arity = 1;
        break;
      case ExprKind::kBinary:
        if (e.op >= kNumBinaryOps) return bad_code(report, "binary operator", e.op);
        arity = 2;
        break;
      case ExprKind::kCall:
        if (e.op >= kNumFuncs) return bad_code(report, "function", e.op);
        arity = static_cast<size_t>(func_arity(static_cast<Func>(e.op)));
        break;
      case ExprKind::kCast:
        arity = 1;
        break;
      case ExprKind::kLoad:
        if (!check_load(e, report)) return false;
        arity = e.args.size();
        break;
    }
    if (e.args.size() != arity) {
      report("malformed-expr", absl::StrCat(expr_what(e), " has ", e.args.size(),
                                            " operands; it takes ", arity));
      return false;
    }
    for (const Expr& a : e.args)
      if (!check_expr(a, report)) return false;
    return true;
  }

  static bool bad_code(const Reporter& report, std::string_view what, int code) {
    report("malformed-expr", absl::StrCat("unknown ", av(what), " code ", code));
    return false;
  }

  static std::string expr_what(const Expr& e) {
    switch (e.kind) {
      case ExprKind::kUnary: return absl::StrCat("unary ", av(unary_op_name(static_cast<UnaryOp>(e.op))));
      case ExprKind::kBinary:
        return absl::StrCat("binary ", av(binary_op_name(static_cast<BinaryOp>(e.op))));
      case ExprKind::kCall: return absl::StrCat("call of ", av(func_name(static_cast<Func>(e.op))));
      case ExprKind::kCast: return "cast";
      default: return "constant";
    }
  }

  bool check_symbol_ref(SymbolId id, const Reporter& report) {
    if (!ctx_.has_symbol(id)) {
      report("symbol-reference", absl::StrCat("reference to symbol #", id, ", but the kernel has ",
                                              kernel_.symbols.size(), " symbols"));
      return false;
    }
    if (!in_scope_[id]) {
      report("symbol-scope", absl::StrCat(kernel_.symbols[id].name,
                                          " is used outside the scope of its declaration"));
      return false;
    }
    return true;
  }

  // A symbol read as a value: a scalar parameter, loop variable or scalar local.
  bool check_value_symbol(SymbolId id, const Reporter& report) {
    if (!check_symbol_ref(id, report)) return false;
    const Symbol& s = kernel_.symbols[id];
    bool scalar = s.kind == SymbolKind::kScalarParam || s.kind == SymbolKind::kLoopVar ||
                  (s.kind == SymbolKind::kLocal && s.shape.empty());
    if (!scalar) {
      report("operand-kind", absl::StrCat(s.name, " is a ", symbol_kind_phrase(s.kind),
                                          (s.shape.empty() ? "" : " with dimensions"),
                                          "; only scalars can be read without indices"));
      return false;
    }
    return true;
  }

  bool check_load(const Expr& e, const Reporter& report) {
    if (!check_symbol_ref(e.symbol, report)) return false;
    const Symbol& s = kernel_.symbols[e.symbol];
    bool indexable = is_region_buffer(s.kind) || (s.kind == SymbolKind::kLocal && !s.shape.empty());
    if (!indexable) {
      report("operand-kind", absl::StrCat(s.name, " is a ", symbol_kind_phrase(s.kind),
                                          " and has no elements to load"));
      return false;
    }
    if (e.args.size() != s.shape.size()) {
      report("index-rank", absl::StrCat(s.name, " has ", s.shape.size(), " dimensions but is indexed with ",
                                        e.args.size()));
      return false;
    }
    return true;
  }

  // ---- statements ----
  void check_block(const Block& block) {
    std::vector<SymbolId> opened;
    for (const Stmt& s : block) {
      check_stmt(s);
      if (auto* d = s.as<DeclareOp>(); d && ctx_.has_symbol(d->symbol)) {
        in_scope_[d->symbol] = true;
        opened.push_back(d->symbol);
      }
    }
    for (SymbolId id : opened) in_scope_[id] = false;
  }

  void fail(std::string_view rule, const Stmt& s, std::string message) {
    ctx_.report(rule, s, std::move(message));
    ok_ = false;
  }

  void check_stmt(const Stmt& s) {
    Reporter report = [&](std::string_view rule, std::string message) {
      fail(rule, s, std::move(message));
    };
    if (std::holds_alternative<std::monostate>(s.op)) {
      fail("malformed-op", s, "statement has no operation");
      return;
    }
    if (auto* r = s.as<ReduceOp>(); r && static_cast<int>(r->kind) > 2)
      return fail("malformed-op", s, absl::StrCat("unknown reduce kind ", static_cast<int>(r->kind)));
    if (auto* f = s.as<FenceOp>(); f && static_cast<int>(f->scope) > 2)
      return fail("malformed-op", s, absl::StrCat("unknown fence scope ", static_cast<int>(f->scope)));
    if (auto* d = s.as<DeclareOp>()) return check_declare(s, *d);
    if (!check_regions(s, report)) return;
    if (const MbarrierRef* ref = stmt_mbarrier(s); ref && !check_mbarrier_ref(s, *ref, report)) return;
    if (auto* a = s.as<AssignOp>()) {
      if (!check_store_target(a->target, a->indices.size(), true, report)) return;
    }
    if (auto* a = s.as<AtomicAddOp>()) {
      if (!check_store_target(a->target, a->indices.size(), false, report)) return;
    }
    if (auto* p = s.as<ParallelOp>()) return check_parallel(s, *p, report);
    if (auto* f = s.as<ForOp>()) return check_for(s, *f, report);
    bool exprs_ok = true;
    for_each_stmt_expr(s, [&](const Expr& e) {
      if (exprs_ok) exprs_ok = check_expr(e, report);
    });
    if (!exprs_ok) return;
    for (const Block* b : child_blocks(s)) check_block(*b);
  }

  void check_declare(const Stmt& s, const DeclareOp& d) {
    if (!ctx_.has_symbol(d.symbol))
      return fail("symbol-reference", s, absl::StrCat("declaration of symbol #", d.symbol,
                                                      ", but the kernel has ", kernel_.symbols.size(),
                                                      " symbols"));
    const Symbol& sym = kernel_.symbols[d.symbol];
    if (!is_tile(sym.kind) && sym.kind != SymbolKind::kLocal && sym.kind != SymbolKind::kMbarrier)
      return fail("declaration", s, absl::StrCat("cannot declare ", sym.name, ", a ",
                                                 symbol_kind_phrase(sym.kind)));
    if (declared_[d.symbol])
      return fail("declaration", s, absl::StrCat(sym.name, " is declared twice"));
    declared_[d.symbol] = true;
    if ((is_tile(sym.kind)) && sym.shape.empty())
      return fail("declaration", s, absl::StrCat(symbol_kind_phrase(sym.kind), " ", sym.name,
                                                 " has no dimensions"));
    for (size_t dim = 0; dim < sym.shape.size(); ++dim) {
      std::optional<int64_t> n;
      Reporter quiet = [](std::string_view, std::string) {};
      if (check_expr(sym.shape[dim], quiet)) n = const_int_value(sym.shape[dim]);
      if (!n || *n < 1)
        return fail("declaration", s, absl::StrCat("dimension ", dim, " of ", sym.name,
                                                   " must be a constant of at least 1"));
    }
  }

  bool check_regions(const Stmt& s, const Reporter& report) {
    bool ok = true;
    std::string_view op = safe_op_name(s);
    for_each_region(s, [&](const Region& r) {
      if (!ok) return;
      if (!check_symbol_ref(r.buffer, report)) {
        ok = false;
        return;
      }
      const Symbol& b = kernel_.symbols[r.buffer];
      if (!is_region_buffer(b.kind)) {
        report("operand-kind", absl::StrCat(av(op), " operand ", b.name, " is a ", symbol_kind_phrase(b.kind),
                                            "; it must be a tensor, shared tile or fragment tile"));
        ok = false;
      } else if (r.ranges.size() > b.shape.size()) {
        report("region-rank", absl::StrCat(r.ranges.size(), " ranges for ", b.name, ", which has ",
                                           b.shape.size(), " dimensions"));
        ok = false;
      }
    });
    if (!ok) return false;
    if (auto* g = s.as<GemmOp>(); g && kernel_.symbols[g->c.buffer].kind != SymbolKind::kFragment) {
      const Symbol& c = kernel_.symbols[g->c.buffer];
      report("operand-kind", absl::StrCat("gemm accumulator ", c.name, " is a ",
                                          symbol_kind_phrase(c.kind), "; it must be a fragment tile"));
      return false;
    }
    return true;
  }

  bool check_mbarrier_ref(const Stmt& s, const MbarrierRef& ref, const Reporter& report) {
    if (!check_symbol_ref(ref.barrier, report)) return false;
    const Symbol& b = kernel_.symbols[ref.barrier];
    if (b.kind != SymbolKind::kMbarrier) {
      report("mbarrier-operand", absl::StrCat(av(safe_op_name(s)), " on ", b.name, ", which is a ",
                                              symbol_kind_phrase(b.kind), ", not an mbarrier"));
      return false;
    }
    return true;
  }

  // Assignment (`assign`) or atomic_add target with `num_indices` indices.
  bool check_store_target(SymbolId id, size_t num_indices, bool assign, const Reporter& report) {
    if (!check_symbol_ref(id, report)) return false;
    const Symbol& t = kernel_.symbols[id];
    bool allowed = assign ? (is_region_buffer(t.kind) || t.kind == SymbolKind::kLocal)
                          : (t.kind == SymbolKind::kTensorParam || t.kind == SymbolKind::kShared);
    if (!allowed) {
      report(assign ? "assign-target" : "operand-kind",
             absl::StrCat("cannot ", assign ? "assign to " : "atomic_add to ", t.name, ", a ",
                          symbol_kind_phrase(t.kind),
                          assign ? "; only tensors, shared and fragment tiles and locals are written"
                                 : "; atomic_add targets a tensor or a shared tile"));
      return false;
    }
    if (num_indices != t.shape.size()) {
      report("index-rank", absl::StrCat(t.name, " has ", t.shape.size(),
                                        " dimensions but is indexed with ", num_indices));
      return false;
    }
    return true;
  }

  bool check_loop_var(SymbolId id, const Reporter& report) {
    if (!ctx_.has_symbol(id)) {
      report("symbol-reference", absl::StrCat("loop variable is symbol #", id, ", but the kernel has ",
                                              kernel_.symbols.size(), " symbols"));
      return false;
    }
    const Symbol& v = kernel_.symbols[id];
    if (v.kind != SymbolKind::kLoopVar) {
      report("operand-kind", absl::StrCat("loop variable ", v.name, " is a ", symbol_kind_phrase(v.kind)));
      return false;
    }
    return true;
  }

  void check_parallel(const Stmt& s, const ParallelOp& p, const Reporter& report) {
    if (p.vars.empty() || p.begins.size() != p.vars.size() || p.ends.size() != p.vars.size())
      return fail("malformed-op", s, absl::StrCat("parallel with ", p.vars.size(), " variables, ",
                                                  p.begins.size(), " begins and ", p.ends.size(), " ends"));
    for (size_t i = 0; i < p.vars.size(); ++i) {
      if (!check_loop_var(p.vars[i], report) || !check_expr(p.begins[i], report) ||
          !check_expr(p.ends[i], report))
        return;
    }
    with_vars_in_scope(p.vars, p.body);
  }

  void check_for(const Stmt& s, const ForOp& f, const Reporter& report) {
    if (static_cast<int>(f.kind) > 2)
      return fail("malformed-op", s, absl::StrCat("unknown loop kind ", static_cast<int>(f.kind)));
    if (f.stages < 0) return fail("malformed-op", s, absl::StrCat("stages(", f.stages, ") is negative"));
    if (!check_loop_var(f.var, report) || !check_expr(f.begin, report) || !check_expr(f.end, report))
      return;
    with_vars_in_scope({f.var}, f.body);
  }

  void with_vars_in_scope(const std::vector<SymbolId>& vars, const Block& body) {
    std::vector<bool> saved;
    for (SymbolId v : vars) {
      saved.push_back(in_scope_[v]);
      in_scope_[v] = true;
    }
    check_block(body);
    for (size_t i = vars.size(); i-- > 0;) in_scope_[vars[i]] = saved[i];
  }

  VerifyContext& ctx_;
  const Kernel& kernel_;
  std::vector<bool> in_scope_;
  std::vector<bool> declared_;
  bool ok_ = true;
};

}  // namespace

bool verify_structure(VerifyContext& ctx) { return StructureChecker(ctx).run(); }

}  // namespace tilert
