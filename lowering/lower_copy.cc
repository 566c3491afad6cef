// copy, fill and parallel loops: element-wise tile ops spread over the block's threads. A
// distributed fragment is walked by its owners (each thread its slots); anything else cyclically
// (element e of the region by thread e % threads, so neighbouring threads touch neighbouring
// elements and global accesses coalesce).
#include "absl/strings/str_cat.h"
#include "ir/status.h"
#include "lowering/lowerer.h"

namespace tilert::lowering {

using simt::Space;

absl::StatusOr<std::vector<int64_t>> Lowerer::shape_of(const Region& r) const {
  std::optional<std::vector<int64_t>> shape = region_shape(kernel_, r);
  if (!shape) return absl::InternalError(absl::StrCat("kernel ", kernel_.name, ": region of ",
                                                      kernel_.symbol(r.buffer).name, " has no constant shape"));
  return *shape;
}

absl::StatusOr<std::vector<simt::Expr>> Lowerer::region_coords(const Region& r, const std::vector<simt::Expr>& rel) {
  const Symbol& sym = kernel_.symbol(r.buffer);
  std::vector<simt::Expr> coords;
  size_t k = 0;
  for (size_t d = 0; d < sym.shape.size(); ++d) {
    if (d < r.ranges.size()) {
      ASSIGN_OR_RETURN(simt::Expr start, expr(r.ranges[d].start));
      start = simt::Expr::cast(DType::kI32, std::move(start));
      if (r.ranges[d].index) {
        coords.push_back(std::move(start));
      } else {
        if (k >= rel.size()) return absl::InternalError("region rank mismatch");
        coords.push_back(add(std::move(start), rel[k++]));
      }
    } else {
      if (k >= rel.size()) return absl::InternalError("region rank mismatch");
      coords.push_back(rel[k++]);
    }
  }
  return coords;
}

absl::Status Lowerer::for_owned(
    const Storage& frag,
    const std::function<absl::Status(const simt::Expr& slot, const std::vector<simt::Expr>& coords)>& fn) {
  const int64_t n = numel(frag.shape), threads = kernel_.threads;
  // Unrolled for PTX and AMDGCN (see simt_unroll.h): every slot index becomes a constant. SPIR-V
  // keeps the loop: its consumers decide, and a fully unrolled body makes a CPU implementation's
  // shader compile (lavapipe) take minutes.
  const bool unroll = target_.api != ApiKind::kSpirv;
  return for_range("slot", i32(0), i32(frag.slots), unroll, [&](const simt::Expr& slot) -> absl::Status {
    simt::Expr e = add(tid(), mul(slot, i32(threads)));
    auto body = [&]() -> absl::Status {
      uint32_t ev = new_var("e", DType::kI32);
      assign(ev, e);
      return fn(slot, unravel(var(ev), frag.shape));
    };
    if (n % threads == 0) return body();
    return if_then(bin(BinaryOp::kLt, e, i32(n)), body);
  });
}

absl::Status Lowerer::for_cyclic(const std::vector<int64_t>& shape, bool unroll,
                                 const std::function<absl::Status(const std::vector<simt::Expr>& rel)>& fn) {
  const int64_t n = numel(shape), threads = kernel_.threads;
  if (n == 0) return absl::OkStatus();
  const int64_t rounds = (n + threads - 1) / threads;
  auto one = [&](const simt::Expr& e) -> absl::Status {
    auto body = [&]() -> absl::Status {
      uint32_t ev = new_var("e", DType::kI32);
      assign(ev, e);
      return fn(unravel(var(ev), shape));
    };
    if (n % threads == 0) return body();
    return if_then(bin(BinaryOp::kLt, e, i32(n)), body);
  };
  if (rounds == 1) return one(tid());
  return for_range("round", i32(0), i32(rounds), unroll, [&](const simt::Expr& q) {
    return one(add(tid(), mul(q, i32(threads))));
  });
}

absl::Status Lowerer::lower_copy(const Stmt& s, const Region& src, const Region& dst) {
  const Storage& from = storage_[src.buffer];
  const Storage& to = storage_[dst.buffer];
  if (from.kind == Storage::Kind::kWorkgroupMatrix) return lower_workgroup_copy_out(from, dst);
  if (from.kind == Storage::Kind::kMatrixRows || to.kind == Storage::Kind::kMatrixRows)
    return lower_row_vector_copy(src, dst);
  if (from.kind == Storage::Kind::kMatrix && to.kind == Storage::Kind::kMatrixOperand)
    return lower_matrix_convert(from, to);
  if (from.kind == Storage::Kind::kMatrix)
    return copies_matrix_elements(from, to) ? lower_matrix_copy_elements(from, dst) : lower_matrix_copy_out(from, dst);
  if (to.kind == Storage::Kind::kDistributed) {
    return for_owned(to, [&](const simt::Expr& slot, const std::vector<simt::Expr>& coords) -> absl::Status {
      simt::Expr v;
      if (from.kind == Storage::Kind::kDistributed) {
        v = simt::Expr::load(Space::kPrivate, from.id, kernel_.symbol(src.buffer).dtype, slot);
      } else {
        ASSIGN_OR_RETURN(std::vector<simt::Expr> at, region_coords(src, coords));
        ASSIGN_OR_RETURN(v, read_element(src.buffer, at));
      }
      assign_at(to.id, slot, std::move(v));
      return absl::OkStatus();
    });
  }
  if (from.kind == Storage::Kind::kDistributed) {
    return for_owned(from, [&](const simt::Expr& slot, const std::vector<simt::Expr>& coords) -> absl::Status {
      ASSIGN_OR_RETURN(std::vector<simt::Expr> at, region_coords(dst, coords));
      return write_element(dst.buffer, at,
                           simt::Expr::load(Space::kPrivate, from.id, kernel_.symbol(src.buffer).dtype, slot));
    });
  }
  if (const auto* c = s.as<CopyOp>();
      c != nullptr && &c->src == &src && target_.has(TargetFeature::kAsyncCopy) && !in_async_pipeline_ &&
      copies_in_chunks(*c))
    return lower_chunked_copy(*c);
  ASSIGN_OR_RETURN(std::vector<int64_t> shape, shape_of(dst));
  return for_cyclic(shape, /*unroll=*/false, [&](const std::vector<simt::Expr>& rel) -> absl::Status {
    ASSIGN_OR_RETURN(std::vector<simt::Expr> from_at, region_coords(src, rel));
    ASSIGN_OR_RETURN(simt::Expr v, read_element(src.buffer, from_at));
    ASSIGN_OR_RETURN(std::vector<simt::Expr> to_at, region_coords(dst, rel));
    return write_element(dst.buffer, to_at, std::move(v));
  });
}

absl::Status Lowerer::lower_fill(const Stmt&, const FillOp& op) {
  const Storage& to = storage_[op.dst.buffer];
  ASSIGN_OR_RETURN(simt::Expr value, expr(op.value));
  if (to.kind == Storage::Kind::kMatrix) return lower_matrix_fill(to, std::move(value));
  if (to.kind == Storage::Kind::kWorkgroupMatrix) return lower_workgroup_fill(to, std::move(value));
  if (to.kind == Storage::Kind::kMatrixRows) return lower_row_vector_fill(to, value);
  if (to.kind == Storage::Kind::kDistributed) {
    return for_owned(to, [&](const simt::Expr& slot, const std::vector<simt::Expr>&) {
      assign_at(to.id, slot, value);
      return absl::OkStatus();
    });
  }
  ASSIGN_OR_RETURN(std::vector<int64_t> shape, shape_of(op.dst));
  return for_cyclic(shape, /*unroll=*/false, [&](const std::vector<simt::Expr>& rel) -> absl::Status {
    ASSIGN_OR_RETURN(std::vector<simt::Expr> at, region_coords(op.dst, rel));
    return write_element(op.dst.buffer, at, value);
  });
}

namespace {

// Statements of a parallel body, lowered for one iteration.
class ParallelBody {
 public:
  explicit ParallelBody(Lowerer& l) : l_(l) {}

  absl::Status block(const Block& b) {
    for (const Stmt& s : b) RETURN_IF_ERROR(stmt(s));
    return absl::OkStatus();
  }

 private:
  absl::Status stmt(const Stmt& s) {
    if (const auto* a = s.as<AssignOp>()) return assign(*a);
    if (const auto* i = s.as<IfOp>()) return l_.thread_if(*i, [&](const Block& b) { return block(b); });
    if (const auto* d = s.as<DeclareOp>()) return l_.declare(s, *d);
    return l_.unsupported(s, "this statement inside a parallel body");
  }

  absl::Status assign(const AssignOp& a) {
    ASSIGN_OR_RETURN(simt::Expr value, l_.expr(a.value));
    const Storage& st = l_.storage_[a.target];
    if (st.kind == Storage::Kind::kMatrix) {
      if (!l_.parallel_->matrix || l_.parallel_->matrix != &st || !owner_local(*l_.parallel_->op, a.indices, st.shape))
        return absl::InternalError(absl::StrCat("kernel ", l_.kernel_.name, ": matrix accumulator ",
                                                l_.kernel_.symbol(a.target).name,
                                                " written outside the walk over its elements"));
      simt::Stmt s;
      s.kind = simt::StmtKind::kMatrixElementStore;
      s.id = l_.parallel_->matrix_id;
      s.a = static_cast<uint32_t>(l_.parallel_->element);
      s.operands = {simt::Expr::cast(DType::kF32, std::move(value))};
      l_.emit(std::move(s));
      return absl::OkStatus();
    }
    if (st.kind == Storage::Kind::kMatrixRows) {
      if (l_.parallel_->row_slot < 0)
        return absl::InternalError(absl::StrCat("kernel ", l_.kernel_.name, ": matrix row vector ",
                                                l_.kernel_.symbol(a.target).name, " written outside a walk over its rows"));
      l_.assign_at(st.id, l_.i32(l_.parallel_->row_slot), std::move(value));
      return absl::OkStatus();
    }
    if (st.kind == Storage::Kind::kDistributed) {
      if (!owner_local(*l_.parallel_->op, a.indices, st.shape))
        return absl::InternalError(absl::StrCat("kernel ", l_.kernel_.name, ": fragment ",
                                                l_.kernel_.symbol(a.target).name,
                                                " written outside its owner's iteration"));
      l_.assign_at(st.id, l_.parallel_->slot, std::move(value));
      return absl::OkStatus();
    }
    std::vector<simt::Expr> idx;
    for (const Expr& i : a.indices) {
      ASSIGN_OR_RETURN(simt::Expr v, l_.expr(i));
      idx.push_back(simt::Expr::cast(DType::kI32, std::move(v)));
    }
    return l_.write_element(a.target, idx, std::move(value));
  }

  Lowerer& l_;
};

}  // namespace

// Each element the lane holds (for_matrix_elements) is one iteration of the loop, its variables
// set from the element's coordinates. The inference admits only loops over the accumulator's
// whole shape, so every iteration is one element and each element is visited by its holder.
absl::Status Lowerer::lower_parallel_over_matrix(const ParallelOp& op, const Storage& m) {
  if (op.vars.size() != 2)
    return absl::InternalError(absl::StrCat("kernel ", kernel_.name, ": a parallel loop over a matrix accumulator "
                                            "not over two dimensions"));
  RETURN_IF_ERROR(for_matrix_elements(m, [&](uint32_t matrix, int element, int row_slot, const simt::Expr& row,
                                              const simt::Expr& col) -> absl::Status {
    uint32_t i = new_var(kernel_.symbol(op.vars[0]).name, DType::kI32);
    uint32_t j = new_var(kernel_.symbol(op.vars[1]).name, DType::kI32);
    assign(i, row);
    assign(j, col);
    bound_[op.vars[0]] = var(i);
    bound_[op.vars[1]] = var(j);
    ParallelFrame frame;
    frame.op = &op;
    frame.slot = i32(0);
    frame.matrix = &m;
    frame.matrix_id = matrix;
    frame.element = element;
    frame.row_slot = row_slot;
    parallel_ = frame;
    absl::Status st = ParallelBody(*this).block(op.body);
    parallel_.reset();
    return st;
  }));
  for (SymbolId v : op.vars) bound_.erase(v);
  return absl::OkStatus();
}

// Each row the lane holds (for_matrix_rows) is one iteration; the 4 lanes of a quad run the same
// rows, each updating its own copy of the vectors (the inference admits no other writes).
absl::Status Lowerer::lower_parallel_over_rows(const ParallelOp& op, const MatrixGemmPlan& p) {
  if (op.vars.size() != 1)
    return absl::InternalError(absl::StrCat("kernel ", kernel_.name, ": a parallel loop over matrix row vectors "
                                            "not over one dimension"));
  RETURN_IF_ERROR(for_matrix_rows(p, [&](int slot, const simt::Expr& row) -> absl::Status {
    uint32_t i = new_var(kernel_.symbol(op.vars[0]).name, DType::kI32);
    assign(i, row);
    bound_[op.vars[0]] = var(i);
    ParallelFrame frame;
    frame.op = &op;
    frame.slot = i32(0);
    frame.row_slot = slot;
    parallel_ = frame;
    absl::Status st = ParallelBody(*this).block(op.body);
    parallel_.reset();
    return st;
  }));
  bound_.erase(op.vars[0]);
  return absl::OkStatus();
}

absl::Status Lowerer::lower_parallel(const Stmt& s, const ParallelOp& op) {
  std::vector<int64_t> begins, extents;
  for (size_t d = 0; d < op.vars.size(); ++d) {
    std::optional<int64_t> b = const_int_value(op.begins[d]);
    std::optional<int64_t> e = const_int_value(op.ends[d]);
    if (!b || !e) return unsupported(s, "a parallel loop with non-constant bounds");
    begins.push_back(*b);
    extents.push_back(std::max<int64_t>(0, *e - *b));
  }
  // A parallel body over a matrix accumulator walks the elements each lane holds; one over
  // matrix row vectors only, the rows each lane holds.
  const Storage* matrix = nullptr;
  const Storage* rows = nullptr;
  visit_parallel_accesses(op, [&](SymbolId id, const std::vector<Expr>&) {
    if (storage_[id].kind == Storage::Kind::kMatrix) matrix = &storage_[id];
    if (storage_[id].kind == Storage::Kind::kMatrixRows) rows = &storage_[id];
  });
  if (matrix) return lower_parallel_over_matrix(op, *matrix);
  if (rows) return lower_parallel_over_rows(op, rows->plan);
  Storage iteration;  // the iteration space walked like a distributed fragment of its shape
  iteration.shape = extents;
  const int64_t n = numel(extents);
  iteration.slots = static_cast<int32_t>((n + kernel_.threads - 1) / kernel_.threads);
  if (n == 0) return absl::OkStatus();
  return for_owned(iteration, [&](const simt::Expr& slot, const std::vector<simt::Expr>& coords) -> absl::Status {
    for (size_t d = 0; d < op.vars.size(); ++d) {
      uint32_t v = new_var(kernel_.symbol(op.vars[d]).name, DType::kI32);
      assign(v, add(coords[d], i32(begins[d])));
      bound_[op.vars[d]] = var(v);
    }
    parallel_ = ParallelFrame{&op, extents, slot};
    absl::Status st = ParallelBody(*this).block(op.body);
    parallel_.reset();
    for (SymbolId v : op.vars) bound_.erase(v);
    return st;
  });
}

}  // namespace tilert::lowering
