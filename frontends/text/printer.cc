// Printer of the .tile format. Every choice here serves parse_tile(print_tile(m)) == m: parentheses
// wherever the tree would otherwise re-associate, negative constants as one token (`-1`) but a
// negation of a constant as `-(1)`, floats with the shortest digits that read back exactly.
#include "frontends/text/printer.h"

#include <charconv>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "ir/status.h"

namespace tilert {
namespace {

std::string format_float(double v) {
  if (std::isnan(v)) return std::signbit(v) ? "-nan" : "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  std::string text(buf, ec == std::errc() ? end : buf);
  // An integral value would read back as an integer literal.
  if (text.find_first_of(".e") == std::string::npos) text += ".0";
  return text;
}

bool is_constant(const Expr& e) {
  return e.kind == ExprKind::kIntConst || e.kind == ExprKind::kFloatConst ||
         e.kind == ExprKind::kBoolConst;
}

class ExprPrinter {
 public:
  explicit ExprPrinter(const Kernel& kernel) : kernel_(kernel) {}

  void print(const Expr& e, std::string* out) const {
    switch (e.kind) {
      case ExprKind::kIntConst: absl::StrAppend(out, e.int_value); return;
      case ExprKind::kFloatConst: out->append(format_float(e.float_value)); return;
      case ExprKind::kBoolConst: out->append(e.int_value ? "true" : "false"); return;
      case ExprKind::kSymbol: out->append(name(e.symbol)); return;
      case ExprKind::kBuiltin: out->append(builtin_name(static_cast<Builtin>(e.op))); return;
      case ExprKind::kUnary: print_unary(e, out); return;
      case ExprKind::kBinary: print_binary(e, out); return;
      case ExprKind::kCall:
        out->append(func_name(static_cast<Func>(e.op)));
        print_list(e.args, "(", ")", out);
        return;
      case ExprKind::kCast:
        out->append(dtype_name(e.type));
        print_list(e.args, "(", ")", out);
        return;
      case ExprKind::kLoad:
        out->append(name(e.symbol));
        print_list(e.args, "[", "]", out);
        return;
    }
    out->append("<bad expression>");
  }

  std::string name(SymbolId id) const {
    if (id < kernel_.symbols.size()) return kernel_.symbols[id].name;
    return absl::StrCat("<symbol ", id, ">");
  }

 private:
  void print_list(const std::vector<Expr>& list, std::string_view open, std::string_view close,
                  std::string* out) const {
    out->append(open);
    for (size_t i = 0; i < list.size(); ++i) {
      if (i > 0) out->append(", ");
      print(list[i], out);
    }
    out->append(close);
  }

  void print_operand(const Expr* e, bool parenthesize, std::string* out) const {
    if (e == nullptr) {
      out->append("<missing operand>");
      return;
    }
    if (parenthesize) out->append("(");
    print(*e, out);
    if (parenthesize) out->append(")");
  }

  // `-x`, `!x`; `-(a + b)` and `-(1)` (a bare `-1` would read back as a constant).
  void print_unary(const Expr& e, std::string* out) const {
    auto op = static_cast<UnaryOp>(e.op);
    out->append(unary_op_name(op));
    const Expr* operand = e.args.empty() ? nullptr : &e.args[0];
    bool parenthesize = operand != nullptr && (operand->kind == ExprKind::kBinary ||
                                               (op == UnaryOp::kNeg && is_constant(*operand)));
    print_operand(operand, parenthesize, out);
  }

  // Operators of equal precedence associate left, so a right operand of equal precedence needs
  // parentheses: a - (b - c).
  void print_binary(const Expr& e, std::string* out) const {
    auto op = static_cast<BinaryOp>(e.op);
    int precedence = binary_op_precedence(op);
    auto binds_looser = [&](const Expr* child, bool right) {
      if (child == nullptr || child->kind != ExprKind::kBinary) return false;
      int p = binary_op_precedence(static_cast<BinaryOp>(child->op));
      return right ? p <= precedence : p < precedence;
    };
    const Expr* lhs = e.args.size() > 0 ? &e.args[0] : nullptr;
    const Expr* rhs = e.args.size() > 1 ? &e.args[1] : nullptr;
    print_operand(lhs, binds_looser(lhs, false), out);
    absl::StrAppend(out, " ", av(binary_op_name(op)), " ");
    print_operand(rhs, binds_looser(rhs, true), out);
  }

  const Kernel& kernel_;
};

class KernelPrinter {
 public:
  explicit KernelPrinter(const Kernel& kernel) : kernel_(kernel), exprs_(kernel) {}

  std::string print() {
    print_signature();
    print_block(kernel_.body, 1);
    out_.append("}\n");
    return std::move(out_);
  }

 private:
  std::string expr(const Expr& e) const {
    std::string s;
    exprs_.print(e, &s);
    return s;
  }
  std::string expr_list(const std::vector<Expr>& list) const {
    std::string s;
    for (size_t i = 0; i < list.size(); ++i) {
      if (i > 0) s.append(", ");
      exprs_.print(list[i], &s);
    }
    return s;
  }
  std::string name(SymbolId id) const { return exprs_.name(id); }

  std::string region(const Region& r) const {
    std::string s = name(r.buffer);
    if (r.ranges.empty()) return s;
    s.append("[");
    for (size_t i = 0; i < r.ranges.size(); ++i) {
      if (i > 0) s.append(", ");
      exprs_.print(r.ranges[i].start, &s);
      if (!r.ranges[i].index) absl::StrAppend(&s, " +: ", r.ranges[i].extent);
    }
    s.append("]");
    return s;
  }

  // Index 0 is what a bare name reads as.
  std::string mbref(const MbarrierRef& ref) const {
    if (ref.index == Expr::int_const(0)) return name(ref.barrier);
    return absl::StrCat(name(ref.barrier), "[", expr(ref.index), "]");
  }

  std::string param(const Symbol& s) const {
    std::string text = absl::StrCat(s.name, ": ", av(dtype_name(s.dtype)));
    if (s.kind == SymbolKind::kTensorParam) return absl::StrCat(text, "[", expr_list(s.shape), "]");
    if (!s.default_value) return text;
    const Expr& v = *s.default_value;
    if (v.kind == ExprKind::kFloatConst) return absl::StrCat(text, " = ", format_float(v.float_value));
    return absl::StrCat(text, " = ", expr(v));  // integers and booleans print as literals
  }

  void print_signature() {
    absl::StrAppend(&out_, "kernel ", kernel_.name, "(");
    for (uint32_t i = 0; i < kernel_.num_params && i < kernel_.symbols.size(); ++i)
      absl::StrAppend(&out_, i > 0 ? ", " : "", param(kernel_.symbols[i]));
    absl::StrAppend(&out_, ")\n    grid(", expr_list(kernel_.grid), ") threads(", kernel_.threads, ")");
    if (!kernel_.cluster.empty()) {
      out_.append(" cluster(");
      for (size_t i = 0; i < kernel_.cluster.size(); ++i)
        absl::StrAppend(&out_, i > 0 ? ", " : "", kernel_.cluster[i]);
      out_.append(")");
    }
    if (kernel_.capabilities != 0) {
      std::string caps;
      for (uint32_t bit = 0; bit < 32; ++bit) {
        if ((kernel_.capabilities & (1u << bit)) == 0) continue;
        std::string_view cap = capability_name(static_cast<Capability>(bit));
        absl::StrAppend(&caps, caps.empty() ? "" : ", ", av(cap));
      }
      absl::StrAppend(&out_, " requires(", caps, ")");
    }
    out_.append(" {\n");
  }

  void line(int indent, std::string_view text) {
    out_.append(2 * indent, ' ');
    out_.append(text);
    out_.append("\n");
  }

  void print_block(const Block& block, int indent) {
    for (const Stmt& s : block) print_stmt(s, indent);
  }

  // `header {`, the body one level deeper, then `}` (or `} else ...` written by the caller).
  void print_nested(int indent, std::string_view header, const Block& body) {
    line(indent, absl::StrCat(av(header), " {"));
    print_block(body, indent + 1);
  }

  void print_declaration(const DeclareOp& d, int indent) {
    if (d.symbol >= kernel_.symbols.size()) {
      line(indent, absl::StrCat("# declaration of unknown symbol ", d.symbol));
      return;
    }
    const Symbol& s = kernel_.symbols[d.symbol];
    std::string shape = s.shape.empty() ? "" : absl::StrCat("[", expr_list(s.shape), "]");
    if (s.kind == SymbolKind::kMbarrier) {
      if (s.shape.size() == 1 && s.shape[0] == Expr::int_const(1)) shape.clear();
      line(indent, absl::StrCat("mbarrier ", s.name, shape, "(arrivals: ", s.arrivals, ")"));
      return;
    }
    line(indent, absl::StrCat(av(symbol_kind_name(s.kind)), " ", s.name, ": ",
                              av(dtype_name(s.dtype)), shape));
  }

  void print_if(const IfOp& op, int indent, std::string_view prefix) {
    print_nested(indent, absl::StrCat(av(prefix), "if ", expr(op.condition)), op.then_body);
    if (op.else_body.empty()) {
      line(indent, "}");
    } else if (op.else_body.size() == 1 && op.else_body[0].as<IfOp>()) {
      print_if(*op.else_body[0].as<IfOp>(), indent, "} else ");
    } else {
      print_nested(indent, "} else", op.else_body);
      line(indent, "}");
    }
  }

  void print_stmt(const Stmt& stmt, int indent);

  const Kernel& kernel_;
  ExprPrinter exprs_;
  std::string out_;
};

void KernelPrinter::print_stmt(const Stmt& stmt, int indent) {
  std::string_view op = stmt_op_name(stmt);
  if (auto* d = stmt.as<DeclareOp>()) {
    print_declaration(*d, indent);
  } else if (auto* c = stmt.as<CopyOp>()) {
    line(indent, absl::StrCat("copy ", region(c->src), " -> ", region(c->dst)));
  } else if (auto* a = stmt.as<CopyAsyncOp>()) {
    line(indent, absl::StrCat("copy_async ", region(a->src), " -> ", region(a->dst), " complete(",
                              mbref(a->barrier), ")"));
  } else if (auto* g = stmt.as<GemmOp>()) {
    line(indent, absl::StrCat("gemm ", region(g->a), ", ", region(g->b), " -> ", region(g->c),
                              g->transpose_a ? " transpose_a" : "", g->transpose_b ? " transpose_b" : ""));
  } else if (auto* f = stmt.as<FillOp>()) {
    if (f->value == Expr::int_const(0)) line(indent, absl::StrCat("clear ", region(f->dst)));
    else line(indent, absl::StrCat("fill ", region(f->dst), ", ", expr(f->value)));
  } else if (auto* r = stmt.as<ReduceOp>()) {
    line(indent, absl::StrCat(av(op), " ", region(r->src), " -> ", region(r->dst), " dim(", r->dim, ")",
                              r->accumulate ? " accumulate" : ""));
  } else if (auto* p = stmt.as<ParallelOp>()) {
    std::string vars, spans;
    for (size_t i = 0; i < p->vars.size(); ++i) absl::StrAppend(&vars, i ? ", " : "", name(p->vars[i]));
    for (size_t i = 0; i < p->begins.size() && i < p->ends.size(); ++i)
      absl::StrAppend(&spans, i ? ", " : "", expr(p->begins[i]), " .. ", expr(p->ends[i]));
    print_nested(indent, absl::StrCat("parallel ", vars, " in ", spans), p->body);
    line(indent, "}");
  } else if (auto* l = stmt.as<ForOp>()) {
    std::string header =
        absl::StrCat(av(op), " ", name(l->var), " in ", expr(l->begin), " .. ", expr(l->end));
    if (l->stages != 0) absl::StrAppend(&header, " stages(", l->stages, ")");
    print_nested(indent, header, l->body);
    line(indent, "}");
  } else if (auto* i = stmt.as<IfOp>()) {
    print_if(*i, indent, "");
  } else if (auto* s = stmt.as<AssignOp>()) {
    std::string index = s->indices.empty() ? "" : absl::StrCat("[", expr_list(s->indices), "]");
    line(indent, absl::StrCat(name(s->target), index, " = ", expr(s->value)));
  } else if (auto* at = stmt.as<AtomicAddOp>()) {
    std::string index = at->indices.empty() ? "" : absl::StrCat("[", expr_list(at->indices), "]");
    line(indent, absl::StrCat("atomic_add ", name(at->target), index, ", ", expr(at->value)));
  } else if (auto* n = stmt.as<NamedBarrierOp>()) {
    line(indent, absl::StrCat(av(op), " id(", expr(n->id), ") threads(", expr(n->thread_count), ")"));
  } else if (auto* ar = stmt.as<MbarrierArriveOp>()) {
    line(indent, absl::StrCat("arrive ", mbref(ar->barrier)));
  } else if (auto* tx = stmt.as<MbarrierExpectTxOp>()) {
    line(indent, absl::StrCat("arrive_expect_tx ", mbref(tx->barrier), " bytes(", expr(tx->bytes), ")"));
  } else if (auto* w = stmt.as<MbarrierWaitOp>()) {
    line(indent, absl::StrCat("wait ", mbref(w->barrier), " parity(", expr(w->parity), ")"));
  } else if (auto* fe = stmt.as<FenceOp>()) {
    line(indent, absl::StrCat("fence ", av(fence_scope_name(fe->scope))));
  } else if (auto* role = stmt.as<RoleOp>()) {
    std::string header = absl::StrCat("role ", role->name, "(threads: ", role->threads);
    if (role->regs != 0) absl::StrAppend(&header, ", regs: ", role->regs);
    print_nested(indent, absl::StrCat(header, ")"), role->body);
    line(indent, "}");
  } else if (std::holds_alternative<std::monostate>(stmt.op)) {
    line(indent, "# empty statement");
  } else {
    line(indent, op);  // barrier, subgroup_barrier, cluster_sync: the keyword alone
  }
}

}  // namespace

std::string print_tile(const Module& module) {
  std::string out;
  for (size_t i = 0; i < module.kernels.size(); ++i) {
    if (i > 0) out.append("\n");
    out.append(print_kernel(module.kernels[i]));
  }
  return out;
}

std::string print_kernel(const Kernel& kernel) { return KernelPrinter(kernel).print(); }

std::string print_expr(const Kernel& kernel, const Expr& e) {
  std::string out;
  ExprPrinter(kernel).print(e, &out);
  return out;
}

}  // namespace tilert
