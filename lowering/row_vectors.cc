// Matrix row vectors (FragmentLayouts::matrix_row_vectors): one-dimensional fragments with a value
// per row of matrix accumulators, held where those rows are. In the mma.m16n8k16 C layout lane L
// holds rows L / 4 and L / 4 + 8 of each 16-row strip of its subgroup's accumulators, so a row's
// statistic (attention's running max m, its sum l, the rescale factor) can live in 2 tiles_m
// registers of each lane: a row reduction of the accumulator leaves it on all 4 lanes of the
// quad, and the parallel bodies over the accumulator that read it at their row find it in the
// lane's own registers. Without this it sits in shared memory, which costs a barrier after every
// write and a shared load per element read.
//
// A fragment qualifies when each of its mentions is one the lowering can do in that layout (see
// fragment_layout.h); fragments a one-dimensional parallel body or a copy links stand or fall
// together (the body is walked over the lane's rows or over the block's threads, not both). All
// accumulators the vectors follow must give each subgroup the same whole rows, since one layout
// serves them all.
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "lowering/fragment_layout.h"

namespace tilert::lowering {
namespace {

bool is_fragment(const Kernel& k, SymbolId id) {
  return id < k.symbols.size() && k.symbols[id].kind == SymbolKind::kFragment;
}

std::optional<int64_t> vector_length(const Kernel& k, SymbolId id) {
  const Symbol& s = k.symbol(id);
  if (s.kind != SymbolKind::kFragment || s.shape.size() != 1 || s.dtype != DType::kF32) return std::nullopt;
  return const_int_value(s.shape[0]);
}

bool is_var(const Expr& e, SymbolId var) { return e.kind == ExprKind::kSymbol && e.symbol == var; }

// Calls fn(symbol, indices, is_target) for every element access of a parallel body.
void body_accesses(const Block& body, const std::function<void(SymbolId, const std::vector<Expr>&, bool)>& fn) {
  std::function<void(const Expr&)> loads = [&](const Expr& e) {
    if (e.kind == ExprKind::kLoad) fn(e.symbol, e.args, false);
    for (const Expr& a : e.args) loads(a);
  };
  visit_stmts(body, [&](const Stmt& s) {
    if (const auto* a = s.as<AssignOp>()) {
      fn(a->target, a->indices, true);
      for (const Expr& i : a->indices) loads(i);
      loads(a->value);
    } else if (const auto* i = s.as<IfOp>()) {
      loads(i->condition);
    }
  });
}

class RowVectorSearch {
 public:
  RowVectorSearch(const Kernel& k, FragmentLayouts& out) : k_(k), out_(out) {
    for (const auto& [id, layout] : out.by_symbol)
      if ((layout == FragmentLayout::kDistributed || layout == FragmentLayout::kShared) && vector_length(k, id) &&
          !out.matrix_operand_fragments.contains(id) && !out.matrix_copy_destinations.contains(id))
        candidates_.insert(id);
  }

  void run() {
    if (candidates_.empty()) return;
    visit_stmts(k_.body, [&](const Stmt& s) { mention(s); });
    std::set<SymbolId> fallen;
    for (SymbolId v : candidates_)
      if (qualified_[v] != symbol_mentions(k_, v)) fallen.insert(v);
    for (bool changed = true; changed;) {  // a group falls with any of its members
      changed = false;
      for (const std::set<SymbolId>& group : links_) {
        bool any = false;
        for (SymbolId v : group) any |= fallen.contains(v) || !candidates_.contains(v);
        if (!any) continue;
        for (SymbolId v : group) changed |= fallen.insert(v).second;
      }
    }
    std::set<SymbolId> vectors;
    for (SymbolId v : candidates_)
      if (!fallen.contains(v)) vectors.insert(v);
    std::optional<MatrixGemmPlan> plan = common_rows();
    if (vectors.empty() || !plan) return;
    const int64_t rows = plan_rows(*plan);
    for (SymbolId v : vectors)
      if (*vector_length(k_, v) != rows) return;
    for (SymbolId v : vectors) out_.by_symbol[v] = FragmentLayout::kMatrixRows;
    out_.matrix_row_vectors = std::move(vectors);
    out_.row_vector_plan = *plan;
  }

 private:
  bool candidate(SymbolId id) const { return candidates_.contains(id); }

  // The plan every followed accumulator shares: whole rows per subgroup, the same rows (same_rows).
  std::optional<MatrixGemmPlan> common_rows() const {
    std::optional<MatrixGemmPlan> plan;
    for (SymbolId m : followed_) {
      auto it = out_.matrix_plans.find(m);
      if (out_.of(m) != FragmentLayout::kMatrix || it == out_.matrix_plans.end()) return std::nullopt;
      const MatrixGemmPlan& p = it->second;
      if (row_sharers(p) != 1 || (plan && !same_rows(*plan, p))) return std::nullopt;
      if (!plan) plan = p;
    }
    return plan;
  }

  // The matrix accumulator a two-dimensional parallel body walks: the fragment it accesses at
  // the iteration's own element, when that is a matrix accumulator.
  std::optional<SymbolId> walked_matrix(const ParallelOp& p) const {
    std::optional<SymbolId> m;
    visit_parallel_accesses(p, [&](SymbolId id, const std::vector<Expr>& idx) {
      if (out_.of(id) != FragmentLayout::kMatrix || !is_fragment(k_, id)) return;
      std::vector<int64_t> shape;
      for (const Expr& e : k_.symbol(id).shape) shape.push_back(const_int_value(e).value_or(-1));
      if (owner_local(p, idx, shape)) m = id;
    });
    return m;
  }

  void mention(const Stmt& s) {
    if (const auto* f = s.as<FillOp>()) {
      if (candidate(f->dst.buffer) && region_is_whole(k_, f->dst)) ++qualified_[f->dst.buffer];
    } else if (const auto* c = s.as<CopyOp>()) {
      copy(*c);
    } else if (const auto* r = s.as<ReduceOp>()) {
      if (candidate(r->dst.buffer) && region_is_whole(k_, r->dst) && out_.row_reduced_matrices.contains(r->src.buffer)) {
        ++qualified_[r->dst.buffer];
        followed_.insert(r->src.buffer);
      }
    } else if (const auto* p = s.as<ParallelOp>()) {
      if (p->vars.size() == 2) matrix_body(*p);
      if (p->vars.size() == 1) rows_body(*p);
    }
  }

  // Whole copies between two vectors (linked), or between a vector and memory (the quads' first
  // lanes store their rows; every lane loads its rows).
  void copy(const CopyOp& c) {
    const bool src = candidate(c.src.buffer) && region_is_whole(k_, c.src);
    const bool dst = candidate(c.dst.buffer) && region_is_whole(k_, c.dst);
    if (src && dst) {
      ++qualified_[c.src.buffer];
      ++qualified_[c.dst.buffer];
      links_.push_back({c.src.buffer, c.dst.buffer});
    } else if (src && !is_fragment(k_, c.dst.buffer)) {
      ++qualified_[c.src.buffer];
    } else if (dst && !is_fragment(k_, c.src.buffer)) {
      ++qualified_[c.dst.buffer];
    }
  }

  // Reads at the row's index in a body over a matrix accumulator (never writes: every element
  // of a row would write it).
  void matrix_body(const ParallelOp& p) {
    std::optional<SymbolId> m = walked_matrix(p);
    if (!m) return;
    const std::optional<int64_t> rows = const_int_value(k_.symbol(*m).shape[0]);
    body_accesses(p.body, [&](SymbolId id, const std::vector<Expr>& idx, bool target) {
      if (!candidate(id) || target || idx.size() != 1 || !is_var(idx[0], p.vars[0]) || vector_length(k_, id) != rows)
        return;
      ++qualified_[id];
      followed_.insert(*m);
    });
  }

  // A body over the vectors' own index: every fragment it accesses is a vector at that index,
  // every assignment writes one (each lane runs the body for its rows).
  void rows_body(const ParallelOp& p) {
    std::set<SymbolId> group;
    bool all = true;
    std::map<SymbolId, int> seen;
    body_accesses(p.body, [&](SymbolId id, const std::vector<Expr>& idx, bool target) {
      if (!is_fragment(k_, id)) {
        all &= !target;
        return;
      }
      const bool own = candidate(id) && idx.size() == 1 && owner_local(p, idx, {*vector_length(k_, id)});
      all &= own;
      group.insert(id);
      ++seen[id];
    });
    if (group.empty()) return;
    links_.push_back(group);
    if (!all) return;
    for (const auto& [id, n] : seen) qualified_[id] += n;
  }

  const Kernel& k_;
  FragmentLayouts& out_;
  std::set<SymbolId> candidates_;
  std::map<SymbolId, int> qualified_;     // mentions the layout can serve
  std::vector<std::set<SymbolId>> links_;  // vectors that stand or fall together
  std::set<SymbolId> followed_;           // the matrix accumulators whose rows they hold
};

}  // namespace

void place_matrix_row_vectors(const Kernel& kernel, FragmentLayouts& layouts) {
  RowVectorSearch(kernel, layouts).run();
}

}  // namespace tilert::lowering
