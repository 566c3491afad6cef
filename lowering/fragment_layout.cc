#include "lowering/fragment_layout.h"

#include <functional>
#include <map>
#include <set>

#include "lowering/matrix_plan.h"

namespace tilert::lowering {
namespace {

std::vector<int64_t> constant_shape(const Symbol& s) {
  std::vector<int64_t> shape;
  for (const Expr& e : s.shape) shape.push_back(const_int_value(e).value_or(-1));
  return shape;
}

}  // namespace

int symbol_mentions(const Kernel& k, SymbolId id) {
  int n = 0;
  std::function<void(const Expr&)> expr = [&](const Expr& e) {
    n += e.kind == ExprKind::kLoad && e.symbol == id;
    for (const Expr& a : e.args) expr(a);
  };
  auto region = [&](const Region& r) {
    n += r.buffer == id;
    for (const Range& range : r.ranges) expr(range.start);
  };
  visit_stmts(k.body, [&](const Stmt& s) {
    if (const auto* c = s.as<CopyOp>()) { region(c->src); region(c->dst); }
    if (const auto* c = s.as<CopyAsyncOp>()) { region(c->src); region(c->dst); expr(c->barrier.index); }
    if (const auto* g = s.as<GemmOp>()) { region(g->a); region(g->b); region(g->c); }
    if (const auto* f = s.as<FillOp>()) { region(f->dst); expr(f->value); }
    if (const auto* r = s.as<ReduceOp>()) { region(r->src); region(r->dst); }
    if (const auto* p = s.as<ParallelOp>()) {
      for (const Expr& e : p->begins) expr(e);
      for (const Expr& e : p->ends) expr(e);
    }
    if (const auto* f = s.as<ForOp>()) { expr(f->begin); expr(f->end); }
    if (const auto* i = s.as<IfOp>()) expr(i->condition);
    if (const auto* a = s.as<AssignOp>()) {
      n += a->target == id;
      for (const Expr& e : a->indices) expr(e);
      expr(a->value);
    }
    if (const auto* a = s.as<AtomicAddOp>()) {
      n += a->target == id;
      for (const Expr& e : a->indices) expr(e);
      expr(a->value);
    }
    if (const auto* b = s.as<NamedBarrierOp>()) { expr(b->id); expr(b->thread_count); }
    if (const auto* m = s.as<MbarrierArriveOp>()) expr(m->barrier.index);
    if (const auto* m = s.as<MbarrierExpectTxOp>()) { expr(m->barrier.index); expr(m->bytes); }
    if (const auto* m = s.as<MbarrierWaitOp>()) { expr(m->barrier.index); expr(m->parity); }
  });
  return n;
}

namespace {

class LayoutInference {
 public:
  LayoutInference(const Kernel& k, const TargetDescription& target, bool allow_warpgroup)
      : k_(k), target_(target), allow_warpgroup_(allow_warpgroup) {
    for (SymbolId id = 0; id < k.symbols.size(); ++id)
      if (k.symbols[id].kind == SymbolKind::kFragment) out_.by_symbol[id] = FragmentLayout::kDistributed;
    // Known before the walk reaches the gemms: their plans keep the rows of these in one subgroup.
    visit_stmts(k.body, [&](const Stmt& s) {
      if (const auto* r = s.as<ReduceOp>(); r != nullptr && row_reducible(*r)) row_reduced_.insert(r->src.buffer);
    });
    find_register_operands();
    whole_rows_ = row_reduced_;
    // Accumulators whose parallel bodies read one-dimensional fragments at their row's index:
    // with whole rows per subgroup those can be matrix row vectors (place_matrix_row_vectors).
    visit_stmts(k.body, [&](const Stmt& s) {
      const auto* p = s.as<ParallelOp>();
      if (p == nullptr || p->vars.size() != 2) return;
      std::set<SymbolId> own;
      bool row_read = false;
      visit_parallel_accesses(*p, [&](SymbolId id, const std::vector<Expr>& idx) {
        if (!is_fragment(id)) return;
        if (owner_local(*p, idx, constant_shape(k_.symbol(id)))) own.insert(id);
        row_read |= idx.size() == 1 && idx[0].kind == ExprKind::kSymbol && idx[0].symbol == p->vars[0];
      });
      if (row_read) whole_rows_.insert(own.begin(), own.end());
    });
    for (const auto& [operand, source] : operand_sources_) {
      whole_rows_.insert(source);
      for (const GemmOp* g : operand_readers_.at(operand)) whole_rows_.insert(g->c.buffer);
    }
  }

  FragmentLayouts run() {
    const FragmentLayouts initial = out_;
    walk(k_.body);
    // A shared tile read by warpgroup gemms is stored swizzled, which the row-major
    // matrix loads of the other plans cannot read, and an accumulator's gemms share one plan
    // kind: on any mix the kernel does without warpgroup plans (rare: one gemm shape per tile).
    // So it does when a warpgroup gemm's fragment operand cannot stay in registers.
    bool mixed = warpgroup_mixed_;
    for (const auto& [tile, acc] : warpgroup_tiles_) mixed |= row_major_tiles_.contains(tile);
    if (mixed || !settle()) {
      out_ = initial;
      gemm_accumulators_.clear();
      not_matrix_.clear();
      warpgroup_tiles_.clear();
      row_major_tiles_.clear();
      elementwise_.clear();
      copied_to_fragments_.clear();
      matrix_gemms_.clear();
      allow_warpgroup_ = false;
      walk(k_.body);
      settle();
    }
    return out_;
  }

 private:
  // Places the accumulators, operands and swizzled tiles the walk found; false when a warpgroup
  // gemm reads a fragment operand that does not stay in matrix registers (wgmma reads A from
  // registers or swizzled shared tiles only).
  bool settle() {
    // A matrix gemm reads fragment operands from shared memory; one that is itself a matrix
    // accumulator cannot be, so its reader is not one either.
    for (const GemmOp* g : matrix_gemms_)
      for (SymbolId operand : {g->a.buffer, g->b.buffer})
        if (is_fragment(operand) && gemm_accumulators_.contains(operand) && !not_matrix_.contains(operand))
          not_matrix_.insert(g->c.buffer);
    for (SymbolId id : gemm_accumulators_) {
      if (!not_matrix_.contains(id)) {
        out_.by_symbol[id] = FragmentLayout::kMatrix;
        if (elementwise_.contains(id)) out_.elementwise_matrices.insert(id);
        if (row_reduced_.contains(id)) out_.row_reduced_matrices.insert(id);
      } else {
        out_.matrix_plans.erase(id);
      }
    }
    for (const GemmOp* g : matrix_gemms_) {
      if (!out_.matrix_plans.contains(g->c.buffer)) continue;
      for (SymbolId operand : {g->a.buffer, g->b.buffer})
        if (is_fragment(operand)) {
          out_.by_symbol[operand] = FragmentLayout::kShared;
          out_.matrix_operand_fragments.insert(operand);
        }
    }
    // A lane stores its own elements of a matrix accumulator into the fragment it is copied to,
    // which every lane can reach only in shared memory.
    for (const auto& [src, dst] : copied_to_fragments_)
      if (out_.by_symbol[src] == FragmentLayout::kMatrix) {
        out_.by_symbol[dst] = FragmentLayout::kShared;
        out_.matrix_copy_destinations.insert(dst);
      }
    // A operands that can stay in matrix registers: the source accumulator and every reader keep
    // whole rows in a subgroup (mma plans, warps_n = 1) and give each subgroup the same rows.
    for (const auto& [operand, source] : operand_sources_) {
      auto s = out_.matrix_plans.find(source);
      if (out_.by_symbol[source] != FragmentLayout::kMatrix || s == out_.matrix_plans.end()) continue;
      const MatrixGemmPlan& sp = s->second;
      bool rows_match = row_sharers(sp) == 1;
      for (const GemmOp* g : operand_readers_.at(operand)) {
        auto r = out_.matrix_plans.find(g->c.buffer);
        rows_match = rows_match && out_.by_symbol[g->c.buffer] == FragmentLayout::kMatrix &&
                     r != out_.matrix_plans.end() && same_rows(r->second, sp) && r->second.k_steps == sp.tiles_n;
      }
      if (!rows_match) continue;
      out_.by_symbol[operand] = FragmentLayout::kMatrixOperand;
      out_.register_operands[operand] = source;
      out_.matrix_operand_fragments.erase(operand);
      out_.matrix_copy_destinations.erase(operand);
    }
    // Operand tiles of warpgroup gemms whose accumulator stayed in matrix registers.
    for (const auto& [tile, acc] : warpgroup_tiles_)
      if (out_.matrix_plans.contains(acc) && !is_fragment(tile)) out_.swizzled_tiles.insert(tile);
    for (const GemmOp* g : matrix_gemms_) {
      auto plan = out_.matrix_plans.find(g->c.buffer);
      if (plan == out_.matrix_plans.end() || !plan->second.warpgroup) continue;
      if (is_fragment(g->b.buffer) || (is_fragment(g->a.buffer) && !out_.register_operands.contains(g->a.buffer)))
        return false;
    }
    for (const GemmOp* g : matrix_gemms_) {
      auto plan = out_.matrix_plans.find(g->c.buffer);
      if (plan == out_.matrix_plans.end() || plan->second.warpgroup) continue;
      for (SymbolId operand : {g->a.buffer, g->b.buffer})
        if (operand < k_.symbols.size() && k_.symbols[operand].kind == SymbolKind::kShared &&
            !out_.swizzled_tiles.contains(operand))
          out_.padded_operand_tiles.insert(operand);
    }
    return true;
  }

  bool is_fragment(SymbolId id) const {
    return id < k_.symbols.size() && k_.symbols[id].kind == SymbolKind::kFragment;
  }
  void make_shared(SymbolId id) { out_.by_symbol[id] = FragmentLayout::kShared; }

  // Fragments that may become register A operands (FragmentLayouts::register_operands): copied
  // whole only from one fragment of their shape, read only as the whole, untransposed A of
  // gemms into fragments, and mentioned nowhere else. Whether the source and the readers become
  // matrix accumulators with matching plans is settled in run().
  void find_register_operands() {
    if (!elementwise_ok_) return;
    std::map<SymbolId, std::set<SymbolId>> sources;
    std::map<SymbolId, int> uses;
    std::map<SymbolId, std::vector<const GemmOp*>> readers;
    visit_stmts(k_.body, [&](const Stmt& s) {
      if (const auto* c = s.as<CopyOp>(); c != nullptr && is_fragment(c->dst.buffer) && is_fragment(c->src.buffer) &&
                                          region_is_whole(k_, c->src) && region_is_whole(k_, c->dst) &&
                                          constant_shape(k_.symbol(c->src.buffer)) ==
                                              constant_shape(k_.symbol(c->dst.buffer))) {
        sources[c->dst.buffer].insert(c->src.buffer);
        ++uses[c->dst.buffer];
      }
      if (const auto* g = s.as<GemmOp>();
          g != nullptr && is_fragment(g->a.buffer) && !g->transpose_a && region_is_whole(k_, g->a) &&
          is_fragment(g->c.buffer) && g->a.buffer != g->b.buffer && g->a.buffer != g->c.buffer) {
        readers[g->a.buffer].push_back(g);
        ++uses[g->a.buffer];
      }
    });
    for (const auto& [operand, from] : sources) {
      auto r = readers.find(operand);
      if (from.size() != 1 || r == readers.end() || symbol_mentions(k_, operand) != uses[operand]) continue;
      const DType type = k_.symbol(operand).dtype;
      if ((type != DType::kF16 && type != DType::kBF16) || k_.symbol(operand).shape.size() != 2) continue;
      operand_sources_[operand] = *from.begin();
      operand_readers_[operand] = r->second;
    }
  }

  // A reduction of a whole two-dimensional fragment along its rows, which a matrix accumulator
  // can do in its own registers where the target reduces clusters of lanes (a row of an
  // mma.m16n8k16 accumulator lies in the 4 lanes of a quad).
  bool row_reducible(const ReduceOp& r) const {
    if (!elementwise_ok_ || !target_.has(TargetFeature::kSubgroupClustered) || !is_fragment(r.src.buffer)) return false;
    const Symbol& src = k_.symbol(r.src.buffer);
    return src.shape.size() == 2 && r.dim == 1 && src.dtype == DType::kF32 && region_is_whole(k_, r.src);
  }

  // Every statement once; parallel bodies are handled by visit() of their loop.
  void walk(const Block& block) {
    for (const Stmt& s : block) {
      visit(s);
      if (const auto* i = s.as<IfOp>()) { walk(i->then_body); walk(i->else_body); }
      if (const auto* f = s.as<ForOp>()) walk(f->body);
      if (const auto* r = s.as<RoleOp>()) walk(r->body);
    }
  }

  // Matrix accumulators: every mention of a fragment other than as a planned gemm's accumulator,
  // a whole fill's destination or a whole copy's source (to a non-fragment) rules it out.
  void matrix_uses(const Stmt& s) {
    if (const auto* g = s.as<GemmOp>()) {
      not_matrix(g->a.buffer);
      not_matrix(g->b.buffer);
      if (is_fragment(g->c.buffer)) {
        gemm_accumulators_.insert(g->c.buffer);
        matrix_gemms_.push_back(g);
        if (std::optional<MatrixGemmPlan> plan =
                plan_matrix_gemm(k_, *g, target_, allow_warpgroup_, /*stage_fragments=*/elementwise_ok_,
                                 /*whole_rows=*/whole_rows_.contains(g->c.buffer)).plan) {
          auto [it, fresh] = out_.matrix_plans.emplace(g->c.buffer, *plan);
          if (!fresh && it->second.warpgroup != plan->warpgroup) warpgroup_mixed_ = true;
          for (SymbolId tile : {g->a.buffer, g->b.buffer}) {
            if (plan->warpgroup) warpgroup_tiles_.emplace(tile, g->c.buffer);
            else row_major_tiles_.insert(tile);
          }
        } else {
          not_matrix(g->c.buffer);
        }
      }
      region_exprs(g->a);
      region_exprs(g->b);
      region_exprs(g->c);
    } else if (const auto* f = s.as<FillOp>()) {
      if (!region_is_whole(k_, f->dst)) not_matrix(f->dst.buffer);
      region_exprs(f->dst);
      exprs(f->value);
    } else if (const auto* c = s.as<CopyOp>()) {
      if (!region_is_whole(k_, c->src)) {
        not_matrix(c->src.buffer);
      } else if (is_fragment(c->dst.buffer)) {
        // Into a whole fragment of the same shape: each lane stores its own elements (targets
        // whose accumulator elements the lowering can address).
        const bool same_shape = constant_shape(k_.symbol(c->src.buffer)) == constant_shape(k_.symbol(c->dst.buffer));
        if (elementwise_ok_ && is_fragment(c->src.buffer) && same_shape && region_is_whole(k_, c->dst))
          copied_to_fragments_.emplace(c->src.buffer, c->dst.buffer);
        else
          not_matrix(c->src.buffer);
      }
      not_matrix(c->dst.buffer);
      region_exprs(c->src);
      region_exprs(c->dst);
    } else if (const auto* p = s.as<ParallelOp>()) {
      parallel_matrix_uses(*p);
    } else {
      // Any other statement mentioning a fragment (its regions, loads, targets) rules it out.
      visit_mentions(s);
    }
  }

  // A parallel body may keep one matrix accumulator (on targets whose elements the lowering can
  // address) when it accesses it only at the iteration's own element and no other fragment so.
  void parallel_matrix_uses(const ParallelOp& p) {
    std::map<SymbolId, bool> own;  // fragment -> every access at the iteration's own element
    auto access = [&](SymbolId id, const std::vector<Expr>& indices) {
      if (!is_fragment(id)) return;
      const bool local = owner_local(p, indices, constant_shape(k_.symbol(id)));
      auto [it, fresh] = own.emplace(id, local);
      if (!fresh) it->second = it->second && local;
    };
    visit_parallel_accesses(p, access);
    visit_stmts(p.body, [&](const Stmt& b) {
      if (b.as<AssignOp>() == nullptr && b.as<IfOp>() == nullptr) visit_mentions(b);
    });
    int local_count = 0;
    for (const auto& [id, local] : own) local_count += local;
    for (const auto& [id, local] : own) {
      if (!local || !elementwise_ok_ || local_count > 1) not_matrix(id);
      else elementwise_.insert(id);
    }
  }

  void visit_mentions(const Stmt& s) {
    if (const auto* c = s.as<CopyAsyncOp>()) { not_matrix(c->src.buffer); not_matrix(c->dst.buffer); }
    if (const auto* r = s.as<ReduceOp>()) {
      if (!row_reducible(*r)) not_matrix(r->src.buffer);
      not_matrix(r->dst.buffer);
    }
    if (const auto* a = s.as<AssignOp>()) { not_matrix(a->target); exprs(a->value); for (const Expr& e : a->indices) exprs(e); }
    if (const auto* a = s.as<AtomicAddOp>()) { not_matrix(a->target); exprs(a->value); }
    if (const auto* i = s.as<IfOp>()) exprs(i->condition);
    if (const auto* f = s.as<ForOp>()) { exprs(f->begin); exprs(f->end); }
    if (const auto* p = s.as<ParallelOp>())
      visit_stmts(p->body, [&](const Stmt& b) { visit_mentions(b); });
  }

  void region_exprs(const Region& r) {
    for (const Range& range : r.ranges) exprs(range.start);
  }
  void exprs(const Expr& e) {
    if (e.kind == ExprKind::kLoad) not_matrix(e.symbol);
    for (const Expr& a : e.args) exprs(a);
  }
  void not_matrix(SymbolId id) {
    if (is_fragment(id)) not_matrix_.insert(id);
  }

  void visit(const Stmt& s) {
    matrix_uses(s);
    if (const auto* p = s.as<ParallelOp>()) {
      visit_parallel_accesses(*p, [&](SymbolId id, const std::vector<Expr>& indices) { check_access(*p, id, indices); });
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

  void check_access(const ParallelOp& p, SymbolId id, const std::vector<Expr>& indices) {
    if (!is_fragment(id)) return;
    if (!owner_local(p, indices, constant_shape(k_.symbol(id)))) make_shared(id);
  }

  const Kernel& k_;
  const TargetDescription& target_;
  FragmentLayouts out_;
  std::set<SymbolId> gemm_accumulators_, not_matrix_;
  bool allow_warpgroup_ = false, warpgroup_mixed_ = false;
  std::multimap<SymbolId, SymbolId> warpgroup_tiles_;  // operand tile -> accumulator
  std::set<SymbolId> row_major_tiles_;                   // operand tiles of other matrix plans
  const bool elementwise_ok_ = matrix_elements_addressable(target_);
  std::set<SymbolId> elementwise_;                       // accumulators parallel bodies access
  std::set<SymbolId> row_reduced_;                       // fragments reduced along their rows
  std::multimap<SymbolId, SymbolId> copied_to_fragments_;  // whole copies: source -> fragment
  // Candidate register A operands: their one source, the gemms that read them; and the
  // accumulators whose plans keep whole rows in a subgroup.
  std::map<SymbolId, SymbolId> operand_sources_;
  std::map<SymbolId, std::vector<const GemmOp*>> operand_readers_;
  std::set<SymbolId> whole_rows_;
  std::vector<const GemmOp*> matrix_gemms_;              // gemms into fragments
};

}  // namespace

FragmentLayout FragmentLayouts::of(SymbolId id) const {
  auto it = by_symbol.find(id);
  return it == by_symbol.end() ? FragmentLayout::kShared : it->second;
}

void visit_parallel_accesses(const ParallelOp& op,
                             const std::function<void(SymbolId, const std::vector<Expr>&)>& fn) {
  std::function<void(const Expr&)> loads = [&](const Expr& e) {
    if (e.kind == ExprKind::kLoad) fn(e.symbol, e.args);
    for (const Expr& a : e.args) loads(a);
  };
  std::function<void(const Block&)> block = [&](const Block& b) {
    for (const Stmt& s : b) {
      if (const auto* a = s.as<AssignOp>()) {
        fn(a->target, a->indices);
        loads(a->value);
        for (const Expr& i : a->indices) loads(i);
      } else if (const auto* i = s.as<IfOp>()) {
        loads(i->condition);
        block(i->then_body);
        block(i->else_body);
      }
    }
  };
  block(op.body);
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

FragmentLayouts infer_fragment_layouts(const Kernel& kernel, const TargetDescription& target,
                                       bool allow_warpgroup) {
  FragmentLayouts layouts = LayoutInference(kernel, target, allow_warpgroup).run();
  place_matrix_row_vectors(kernel, layouts);
  return layouts;
}

}  // namespace tilert::lowering
