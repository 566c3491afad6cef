#include "lowering/fragment_layout.h"

namespace tilert::lowering {
namespace {

std::vector<int64_t> constant_shape(const Symbol& s) {
  std::vector<int64_t> shape;
  for (const Expr& e : s.shape) shape.push_back(const_int_value(e).value_or(-1));
  return shape;
}

class LayoutInference {
 public:
  explicit LayoutInference(const Kernel& k) : k_(k) {
    for (SymbolId id = 0; id < k.symbols.size(); ++id)
      if (k.symbols[id].kind == SymbolKind::kFragment) out_.by_symbol[id] = FragmentLayout::kDistributed;
  }

  FragmentLayouts run() {
    walk(k_.body);
    return out_;
  }

 private:
  bool is_fragment(SymbolId id) const {
    return id < k_.symbols.size() && k_.symbols[id].kind == SymbolKind::kFragment;
  }
  void make_shared(SymbolId id) { out_.by_symbol[id] = FragmentLayout::kShared; }

  // Every statement once; parallel bodies are handled by visit() of their loop.
  void walk(const Block& block) {
    for (const Stmt& s : block) {
      visit(s);
      if (const auto* i = s.as<IfOp>()) { walk(i->then_body); walk(i->else_body); }
      if (const auto* f = s.as<ForOp>()) walk(f->body);
      if (const auto* r = s.as<RoleOp>()) walk(r->body);
    }
  }

  void visit(const Stmt& s) {
    if (const auto* p = s.as<ParallelOp>()) {
      for (const Stmt& b : p->body) visit_parallel_stmt(*p, b);
    } else if (const auto* c = s.as<CopyOp>()) {
      if (is_fragment(c->src.buffer) && is_fragment(c->dst.buffer) &&
          constant_shape(k_.symbol(c->src.buffer)) != constant_shape(k_.symbol(c->dst.buffer)))
        make_shared(c->src.buffer);
    } else if (const auto* a = s.as<AssignOp>()) {
      // Thread-level code outside parallel bodies (the verifier forbids fragment elements there;
      // a fragment still reached is kept where every thread can see it).
      if (is_fragment(a->target)) make_shared(a->target);
    }
  }

  void visit_parallel_stmt(const ParallelOp& p, const Stmt& s) {
    if (const auto* a = s.as<AssignOp>()) {
      check_access(p, a->target, a->indices);
      visit_expr(p, a->value);
      for (const Expr& i : a->indices) visit_expr(p, i);
    } else if (const auto* i = s.as<IfOp>()) {
      visit_expr(p, i->condition);
      for (const Stmt& b : i->then_body) visit_parallel_stmt(p, b);
      for (const Stmt& b : i->else_body) visit_parallel_stmt(p, b);
    }
  }

  void visit_expr(const ParallelOp& p, const Expr& e) {
    if (e.kind == ExprKind::kLoad) check_access(p, e.symbol, e.args);
    for (const Expr& a : e.args) visit_expr(p, a);
  }

  void check_access(const ParallelOp& p, SymbolId id, const std::vector<Expr>& indices) {
    if (!is_fragment(id)) return;
    if (!owner_local(p, indices, constant_shape(k_.symbol(id)))) make_shared(id);
  }

  const Kernel& k_;
  FragmentLayouts out_;
};

}  // namespace

FragmentLayout FragmentLayouts::of(SymbolId id) const {
  auto it = by_symbol.find(id);
  return it == by_symbol.end() ? FragmentLayout::kShared : it->second;
}

bool owner_local(const ParallelOp& op, const std::vector<Expr>& indices,
                 const std::vector<int64_t>& frag_shape) {
  if (indices.size() != op.vars.size() || frag_shape.size() != op.vars.size()) return false;
  for (size_t d = 0; d < op.vars.size(); ++d) {
    std::optional<int64_t> b = const_int_value(op.begins[d]);
    std::optional<int64_t> e = const_int_value(op.ends[d]);
    if (!b || !e || *b != 0 || *e != frag_shape[d]) return false;
    if (indices[d].kind != ExprKind::kSymbol || indices[d].symbol != op.vars[d]) return false;
  }
  return true;
}

FragmentLayouts infer_fragment_layouts(const Kernel& kernel) { return LayoutInference(kernel).run(); }

}  // namespace tilert::lowering
