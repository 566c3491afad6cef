// Gemms on the matrix unit whose accumulator stays a fragment held element-wise (distributed
// registers or shared-backed), and whose operands may be such fragments too: the shape of
// attention, where the scores of one gemm are rescaled, masked and exponentiated element by
// element and then multiplied again. The accumulator cannot live in matrix registers there (its
// layout is the emitter's and parallel bodies read it by element), so the product is computed in
// temporary accumulators and passed through shared memory:
//
//   [operands held in registers -> operand staging tile]   barrier
//   per 16-row strip of the subgroup's tile (mma plan):
//     temporaries = 0; temporaries += A * B; temporaries -> product staging tile (f32)
//                                                          barrier
//   C[i, j] += product[i, j]  (each thread its own elements)
//
// Staging tiles are padded by 8 elements per row: the 8 rows an ldmatrix phase reads, and the
// rows a warp's accumulator stores cover, then fall in different banks. The leading barrier
// also orders this gemm's stores after the previous staged gemm's reads of both tiles, so no
// barrier follows the read-back. Targets without a matrix unit, and gemms whose staging tiles do
// not fit in shared memory, keep the plain path (lower_compute.cc).
#include "absl/strings/str_cat.h"
#include "ir/status.h"
#include "lowering/lowerer.h"

namespace tilert::lowering {

using simt::Space;

namespace {

constexpr int kTile = kMatrixTile;
constexpr int64_t kStagePadding = 8;  // elements per staged row: 16 bytes of f16, 32 of f32
// Shared memory left to the reductions' scratch when staging is added (see scratch()).
constexpr int64_t kScratchReserveBytes = 4096;

// Gemms outside roles, in program order (roles run on part of the block; matrix statements need
// every subgroup of the plan).
void block_gemms(const Block& block, std::vector<const GemmOp*>& out) {
  for (const Stmt& s : block) {
    if (const auto* g = s.as<GemmOp>()) out.push_back(g);
    if (const auto* i = s.as<IfOp>()) { block_gemms(i->then_body, out); block_gemms(i->else_body, out); }
    if (const auto* f = s.as<ForOp>()) block_gemms(f->body, out);
  }
}

}  // namespace

void Lowerer::plan_staged_gemms() {
  std::vector<const GemmOp*> gemms;
  block_gemms(kernel_.body, gemms);
  for (const GemmOp* op : gemms) {
    const Storage& c = storage_[op->c.buffer];
    if (c.kind == Storage::Kind::kMatrix || c.kind == Storage::Kind::kWorkgroupMatrix) continue;
    std::optional<MatrixGemmPlan> plan = plan_matrix_gemm(kernel_, *op, target_, false, /*stage_fragments=*/true).plan;
    if (!plan) continue;
    // Shared tiles stored swizzled for warpgroup gemms are not row-major: the plain path reads them.
    bool swizzled = false;
    for (const Region* r : {&op->a, &op->b}) swizzled |= storage_[r->buffer].swizzled;
    if (swizzled) continue;
    const int64_t m = c.shape[0], n = c.shape[1], k = int64_t{plan->k_steps} * kTile;
    StagedGemm g;
    g.plan = *plan;
    g.c_pitch = n + kStagePadding;
    const bool stage_a = kernel_.symbol(op->a.buffer).kind == SymbolKind::kFragment;
    const bool stage_b = kernel_.symbol(op->b.buffer).kind == SymbolKind::kFragment;
    if (stage_a) g.a_pitch = k + kStagePadding;
    if (stage_b) {
      g.b_pitch = n + kStagePadding;
      g.b_offset = stage_a ? m * g.a_pitch : 0;
    }
    // Grow the staging arrays, or leave this gemm on the plain path if they would not fit.
    const int64_t product_elements = m * g.c_pitch;
    const int64_t operand_elements = g.b_offset + (stage_b ? k * g.b_pitch : stage_a ? m * g.a_pitch : 0);
    const int64_t before = fn_.shared_bytes();
    simt::Function trial;  // the shared arrays with this gemm's staging
    trial.shared = fn_.shared;
    auto grow = [&](simt::Function& f, std::optional<uint32_t>& id, const std::string& name, DType type,
                    int64_t elements) {
      if (!id) {
        id = static_cast<uint32_t>(f.shared.size());
        f.shared.push_back({name, type, 0});
      }
      f.shared[*id].count = std::max(f.shared[*id].count, elements);
    };
    std::optional<uint32_t> product = product_stage_, operand;
    if (auto it = operand_stages_.find(plan->input); it != operand_stages_.end()) operand = it->second;
    grow(trial, product, "matrix_product", DType::kF32, product_elements);
    if (operand_elements > 0)
      grow(trial, operand, absl::StrCat("matrix_operand_", av(dtype_name(plan->input))), plan->input, operand_elements);
    if (trial.shared_bytes() + kScratchReserveBytes > target_.shared_memory_per_block && trial.shared_bytes() > before)
      continue;
    fn_.shared = std::move(trial.shared);
    product_stage_ = product;
    if (operand) operand_stages_[plan->input] = *operand;
    if (!staged_gemm(*op)) staged_gemms_.emplace_back(*op, g);
  }
}

const Lowerer::StagedGemm* Lowerer::staged_gemm(const GemmOp& op) const {
  for (const auto& [gemm, staged] : staged_gemms_)
    if (gemm == op) return &staged;
  return nullptr;
}

absl::Status Lowerer::stage_matrix_operand(const Region& r, bool transposed, uint32_t array, int64_t offset,
                                           int64_t pitch) {
  const Storage& st = storage_[r.buffer];
  const DType type = fn_.shared[array].type;
  auto store = [&](const std::vector<simt::Expr>& xy, simt::Expr value) {
    const simt::Expr& row = transposed ? xy[1] : xy[0];
    const simt::Expr& col = transposed ? xy[0] : xy[1];
    simt::Stmt s;
    s.kind = simt::StmtKind::kStore;
    s.space = Space::kShared;
    s.id = array;
    s.operands = {add(i32(offset), add(mul(row, i32(pitch)), col)), simt::Expr::cast(type, std::move(value))};
    emit(std::move(s));
  };
  if (st.kind == Storage::Kind::kDistributed)
    return for_owned(st, [&](const simt::Expr& slot, const std::vector<simt::Expr>& xy) -> absl::Status {
      store(xy, simt::Expr::load(Space::kPrivate, st.id, kernel_.symbol(r.buffer).dtype, slot));
      return absl::OkStatus();
    });
  return for_cyclic(st.shape, /*unroll=*/false, [&](const std::vector<simt::Expr>& xy) -> absl::Status {
    ASSIGN_OR_RETURN(simt::Expr value, read_element(r.buffer, xy));
    store(xy, std::move(value));
    return absl::OkStatus();
  });
}

absl::Status Lowerer::lower_staged_matrix_gemm(const GemmOp& op, const StagedGemm& g) {
  RETURN_IF_ERROR(finish_warpgroup_products());
  const MatrixGemmPlan& p = g.plan;
  fn_.uses_subgroup_ops = true;
  const uint32_t product = *product_stage_;
  if (g.a_pitch > 0 || g.b_pitch > 0) {
    const uint32_t operand = operand_stages_.at(p.input);
    barrier_now();  // the previous staged gemm has loaded its operands from the staging tile
    if (g.a_pitch > 0) RETURN_IF_ERROR(stage_matrix_operand(op.a, op.transpose_a, operand, 0, g.a_pitch));
    if (g.b_pitch > 0) RETURN_IF_ERROR(stage_matrix_operand(op.b, op.transpose_b, operand, g.b_offset, g.b_pitch));
  }
  // Staged operands are visible, and every thread has read the previous product back out.
  barrier_now();

  const MatrixOrigin origin = subgroup_origin(p, simt::Expr::builtin(simt::Builtin::kSubgroupId));
  auto staged = [&](uint32_t array, int64_t offset, int64_t pitch) {
    MatrixSource src;
    src.array = array;
    src.stride = pitch;
    src.at = [this, offset, pitch](simt::Expr row, simt::Expr col) -> absl::StatusOr<simt::Expr> {
      return add(i32(offset), add(mul(std::move(row), i32(pitch)), std::move(col)));
    };
    return src;
  };
  const Storage& a = storage_[op.a.buffer];
  const Storage& b = storage_[op.b.buffer];
  MatrixSource a_src = g.a_pitch > 0 ? staged(operand_stages_.at(p.input), 0, g.a_pitch)
                                     : shared_operand(op.a, a, op.transpose_a);
  MatrixSource b_src = g.b_pitch > 0 ? staged(operand_stages_.at(p.input), g.b_offset, g.b_pitch)
                                     : shared_operand(op.b, b, op.transpose_b);
  // One 16-row strip of the subgroup's tile at a time: the product leaves the registers right
  // after, so only tiles_n accumulators are live (the element-wise accumulator C already holds
  // registers of its own); the B strip is loaded again per strip, which costs shared-memory reads
  // instead of spills.
  std::vector<uint32_t> accumulators;
  for (int j = 0; j < p.tiles_n; ++j) {
    accumulators.push_back(static_cast<uint32_t>(fn_.matrices.size()));
    fn_.matrices.push_back({absl::StrCat("product", temp_counter_, "_", j), simt::MatrixUse::kAccumulator,
                            DType::kF32, kTile, kTile});
  }
  MatrixGemmPlan strip = p;
  strip.tiles_m = 1;
  for (int i = 0; i < p.tiles_m; ++i) {
    for (uint32_t m : accumulators) {
      simt::Stmt fill;
      fill.kind = simt::StmtKind::kMatrixFill;
      fill.id = m;
      fill.operands = {simt::Expr::float_const(0, DType::kF32)};
      emit(std::move(fill));
    }
    simt::Expr row = add(origin.row, i32(i * kTile));
    RETURN_IF_ERROR(emit_matrix_products(strip, a_src, b_src, accumulators, row, origin.col));
    for (int j = 0; j < p.tiles_n; ++j) {
      simt::Stmt st;
      st.kind = simt::StmtKind::kMatrixStore;
      st.id = accumulators[j];
      st.space = Space::kShared;
      st.array = product;
      st.operands = {add(mul(row, i32(g.c_pitch)), add(origin.col, i32(j * kTile))), i32(g.c_pitch)};
      emit(std::move(st));
    }
  }
  barrier_now();  // the whole product is in the staging tile

  const Storage& c = storage_[op.c.buffer];
  auto staged_element = [&](const std::vector<simt::Expr>& ij) {
    return simt::Expr::load(Space::kShared, product, DType::kF32, add(mul(ij[0], i32(g.c_pitch)), ij[1]));
  };
  if (c.kind == Storage::Kind::kDistributed)
    return for_owned(c, [&](const simt::Expr& slot, const std::vector<simt::Expr>& ij) -> absl::Status {
      assign_at(c.id, slot, add(simt::Expr::load(Space::kPrivate, c.id, DType::kF32, slot), staged_element(ij)));
      return absl::OkStatus();
    });
  return for_cyclic(c.shape, /*unroll=*/false, [&](const std::vector<simt::Expr>& ij) -> absl::Status {
    ASSIGN_OR_RETURN(simt::Expr old, read_element(op.c.buffer, ij));
    return write_element(op.c.buffer, ij, add(std::move(old), staged_element(ij)));
  });
}

}  // namespace tilert::lowering
