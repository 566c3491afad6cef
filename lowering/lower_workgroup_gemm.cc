// GEMM loops on workgroup-scope matrices (TargetDescription::workgroup_matrices): the whole
// block holds one accumulator for its C tile, and the driver stages the operands through shared
// memory of its own. A loop of the shape
//
//   fill acc, v                               (any number, before the loop)
//   for k in begin .. end {
//     copy A[r0 +: M, f(k) +: K] -> As        (global -> a whole shared tile, either order)
//     copy B[g(k) +: K, c0 +: N] -> Bs
//     gemm As, Bs -> acc
//   }
//   copy acc -> C[.. +: M, .. +: N]           (any number, after the loop)
//
// with As, Bs and acc used nowhere else becomes
//
//   acc = fill(v)
//   pos = 0
//   if the M x N tile lies inside A's rows and B's columns, rows 16-byte aligned:
//     while a whole step is left and its K window lies inside both tensors, aligned:
//       a = matrix_load A[r0, f(k)] (M x D); b = matrix_load B[g(k), c0] (D x N); acc += a * b
//       pos += fuse
//   while pos < trip:            the steps the test above refused: the edges of the tensors
//     a = matrix_tensor_load (the window clamped to the tensor and to the loop's last iteration)
//     b = likewise; acc += a * b; pos += fuse
//   copy out: matrix_store (converted to C's type) where the tile lies inside C, aligned;
//             matrix_tensor_store otherwise
//
// D, the depth of one step, is kWorkgroupStepDepth when the tile's K divides it and the loop's
// windows advance by K per iteration (`fuse` iterations make one step), else K: NVIDIA's driver
// stages a 64-deep step markedly faster than a 32-deep one (tests/bench/RESULTS.md, 2026-12-06
// night). The two loops keep the interior free of the clamped loads, which cost the driver's
// bulk staging (same entry). The shared tiles As and Bs get no storage: nothing reads them.
#include "absl/strings/str_cat.h"
#include "ir/status.h"
#include "lowering/lowerer.h"

namespace tilert::lowering {

using simt::Space;

namespace {

// The depth of one workgroup matrix step the lowering aims for (see the file comment).
constexpr int64_t kWorkgroupStepDepth = 64;
// Plain matrix loads and stores want 16-byte aligned rows (Vulkan's cooperative-matrix rule).
constexpr int64_t kAlignBytes = 16;

bool mentions(const Expr& e, SymbolId var) {
  bool found = false;
  visit_expr(e, [&](const Expr& x) { found |= x.kind == ExprKind::kSymbol && x.symbol == var; });
  return found;
}

// The coefficient c of `var` in `e` when e = c * var + (terms without var); nullopt otherwise.
std::optional<int64_t> slope(const Expr& e, SymbolId var) {
  if (!mentions(e, var)) return 0;
  if (e.kind == ExprKind::kSymbol) return 1;
  if (e.kind == ExprKind::kCast && is_integer(e.type)) return slope(e.args[0], var);
  if (e.kind != ExprKind::kBinary) return std::nullopt;
  const auto op = static_cast<BinaryOp>(e.op);
  std::optional<int64_t> a = slope(e.args[0], var), b = slope(e.args[1], var);
  if (!a || !b) return std::nullopt;
  if (op == BinaryOp::kAdd) return *a + *b;
  if (op == BinaryOp::kSub) return *a - *b;
  if (op == BinaryOp::kMul) {
    if (*b == 0) {
      std::optional<int64_t> c = const_int_value(e.args[1]);
      return c ? std::optional<int64_t>(*a * *c) : std::nullopt;
    }
    if (*a == 0) {
      std::optional<int64_t> c = const_int_value(e.args[0]);
      return c ? std::optional<int64_t>(*b * *c) : std::nullopt;
    }
  }
  return std::nullopt;
}

// A copy from a whole 2-D window of a rank-2 global tensor (no index dimensions) of `shape`.
bool global_window(const Kernel& k, const Region& r, const std::vector<int64_t>& shape) {
  const Symbol& t = k.symbol(r.buffer);
  if (t.kind != SymbolKind::kTensorParam || t.shape.size() != 2 || r.ranges.size() != 2) return false;
  for (size_t d = 0; d < 2; ++d)
    if (r.ranges[d].index || r.ranges[d].extent != shape[d]) return false;
  return true;
}

bool is_whole_2d(const Kernel& k, const Region& r, SymbolKind kind) {
  const Symbol& s = k.symbol(r.buffer);
  return s.kind == kind && s.shape.size() == 2 && region_is_whole(k, r);
}

// The constant shape of a tile (region_is_whole has made sure it is one).
std::vector<int64_t> tile_shape(const Symbol& s) {
  std::vector<int64_t> shape;
  for (const Expr& e : s.shape) shape.push_back(const_int_value(e).value_or(0));
  return shape;
}

bool storable(DType t) { return t == DType::kF32 || t == DType::kF16 || t == DType::kBF16; }

}  // namespace

void Lowerer::plan_workgroup_gemms() {
  const WorkgroupMatrices& wm = target_.workgroup_matrices;
  if (wm.granules.empty() || !wm.tensor_addressing || target_.api != ApiKind::kSpirv) return;
  // Every shared symbol must be one the plan elides: the driver's staging takes the shared memory.
  int shared_symbols = 0;
  for (SymbolId id = kernel_.num_params; id < kernel_.symbols.size(); ++id)
    shared_symbols += kernel_.symbols[id].kind == SymbolKind::kShared;
  int elided = 0;
  const Block& body = kernel_.body;
  for (size_t at = 0; at < body.size(); ++at) {
    const Stmt& loop = body[at];
    const auto* op = loop.as<ForOp>();
    if (op == nullptr || op->body.size() != 3 || thread_dep_.makes_divergent(loop)) continue;
    const auto* gemm = op->body[2].as<GemmOp>();
    const auto* c0 = op->body[0].as<CopyOp>();
    const auto* c1 = op->body[1].as<CopyOp>();
    if (gemm == nullptr || c0 == nullptr || c1 == nullptr || gemm->transpose_a || gemm->transpose_b) continue;
    const CopyOp* ca = c0->dst.buffer == gemm->a.buffer ? c0 : c1->dst.buffer == gemm->a.buffer ? c1 : nullptr;
    const CopyOp* cb = c0->dst.buffer == gemm->b.buffer ? c0 : c1->dst.buffer == gemm->b.buffer ? c1 : nullptr;
    if (ca == nullptr || cb == nullptr || ca == cb) continue;
    if (!is_whole_2d(kernel_, gemm->a, SymbolKind::kShared) || !is_whole_2d(kernel_, gemm->b, SymbolKind::kShared) ||
        !is_whole_2d(kernel_, ca->dst, SymbolKind::kShared) || !is_whole_2d(kernel_, cb->dst, SymbolKind::kShared) ||
        !is_whole_2d(kernel_, gemm->c, SymbolKind::kFragment))
      continue;
    const Symbol &as = kernel_.symbol(gemm->a.buffer), &bs = kernel_.symbol(gemm->b.buffer),
                 &acc = kernel_.symbol(gemm->c.buffer);
    const std::vector<int64_t> a_shape = tile_shape(as), b_shape = tile_shape(bs), c_shape = tile_shape(acc);
    const int64_t m = c_shape[0], n = c_shape[1], k = a_shape[1];
    const DType input = as.dtype;
    if (acc.dtype != DType::kF32 || bs.dtype != input || a_shape[0] != m || b_shape[0] != k || b_shape[1] != n ||
        kernel_.symbol(ca->src.buffer).dtype != input || kernel_.symbol(cb->src.buffer).dtype != input ||
        !global_window(kernel_, ca->src, a_shape) || !global_window(kernel_, cb->src, b_shape))
      continue;
    // A's rows and B's columns stay put; A's columns and B's rows step with the loop.
    const Expr &a_row = ca->src.ranges[0].start, &a_col = ca->src.ranges[1].start;
    const Expr &b_row = cb->src.ranges[0].start, &b_col = cb->src.ranges[1].start;
    if (mentions(a_row, op->var) || mentions(b_col, op->var)) continue;
    // Uses: the gemm and the two copies for the tiles; for the accumulator, the gemm, fills
    // before the loop and copies into rank-2 global windows after it, all at the top level.
    if (symbol_mentions(kernel_, gemm->a.buffer) != 2 || symbol_mentions(kernel_, gemm->b.buffer) != 2) continue;
    int acc_uses = 1;
    bool acc_ok = true;
    for (size_t j = 0; j < body.size(); ++j) {
      if (const auto* f = body[j].as<FillOp>(); f && f->dst.buffer == gemm->c.buffer) {
        acc_ok = acc_ok && j < at && region_is_whole(kernel_, f->dst);
        ++acc_uses;
      }
      if (const auto* c = body[j].as<CopyOp>(); c && c->src.buffer == gemm->c.buffer) {
        acc_ok = acc_ok && j > at && region_is_whole(kernel_, c->src) && global_window(kernel_, c->dst, c_shape) &&
                 storable(kernel_.symbol(c->dst.buffer).dtype);
        ++acc_uses;
      }
    }
    if (!acc_ok || symbol_mentions(kernel_, gemm->c.buffer) != acc_uses) continue;
    // The step depth: several iterations at once where the windows advance by K each.
    int64_t fuse = 1;
    if (k < kWorkgroupStepDepth && kWorkgroupStepDepth % k == 0 && slope(a_col, op->var) == k &&
        slope(b_row, op->var) == k)
      fuse = kWorkgroupStepDepth / k;
    const int64_t depth = fuse * k;
    const WorkgroupMatrixGranule* g = wm.granule(kernel_.threads, input);
    if (g == nullptr || m % g->m || n % g->n || depth % g->k || std::max({m, n, depth}) > wm.max_dimension) continue;
    WorkgroupGemm w;
    w.loop = &loop;
    w.copy_a = ca;
    w.copy_b = cb;
    w.gemm = gemm;
    w.m = m;
    w.n = n;
    w.k = k;
    w.fuse = static_cast<int>(fuse);
    w.a_advance = std::max<int64_t>(0, slope(a_col, op->var).value_or(0));
    w.b_advance = std::max<int64_t>(0, slope(b_row, op->var).value_or(0));
    workgroup_gemms_.push_back(w);
    elided += 2;
  }
  if (elided != shared_symbols) workgroup_gemms_.clear();
}

const Lowerer::WorkgroupGemm* Lowerer::workgroup_gemm(const Stmt& loop) const {
  for (const WorkgroupGemm& w : workgroup_gemms_)
    if (w.loop == &loop) return &w;
  return nullptr;
}

bool Lowerer::elided_by_workgroup_gemm(SymbolId id) const {
  for (const WorkgroupGemm& w : workgroup_gemms_)
    if (w.gemm->a.buffer == id || w.gemm->b.buffer == id) return true;
  return false;
}

bool Lowerer::is_workgroup_accumulator(SymbolId id) const {
  for (const WorkgroupGemm& w : workgroup_gemms_)
    if (w.gemm->c.buffer == id) return true;
  return false;
}

void Lowerer::declare_workgroup_accumulator(const Symbol& sym, Storage& st) {
  st.kind = Storage::Kind::kWorkgroupMatrix;
  st.id = static_cast<uint32_t>(fn_.matrices.size());
  fn_.matrices.push_back({sym.name, simt::MatrixUse::kAccumulator, DType::kF32, static_cast<int32_t>(st.shape[0]),
                          static_cast<int32_t>(st.shape[1]), simt::MatrixScope::kWorkgroup});
}

absl::StatusOr<Lowerer::TensorWindow> Lowerer::tensor_window(const Region& r) {
  TensorWindow w;
  const Symbol& t = kernel_.symbol(r.buffer);
  w.array = storage_[r.buffer].id;
  ASSIGN_OR_RETURN(simt::Expr row, expr(r.ranges[0].start));
  ASSIGN_OR_RETURN(simt::Expr col, expr(r.ranges[1].start));
  ASSIGN_OR_RETURN(simt::Expr rows, expr(t.shape[0]));
  ASSIGN_OR_RETURN(simt::Expr cols, expr(t.shape[1]));
  // Each once into a variable: the tests, the offsets and the windows all read them.
  auto keep = [&](const char* name, simt::Expr v) {
    uint32_t id = new_var(name, DType::kI32);
    assign(id, simt::Expr::cast(DType::kI32, std::move(v)));
    return var(id);
  };
  w.row = keep("win_row", std::move(row));
  w.col = keep("win_col", std::move(col));
  w.rows = keep("win_rows", std::move(rows));
  w.cols = keep("win_cols", std::move(cols));
  w.align = kAlignBytes / dtype_size(t.dtype);
  return w;
}

simt::Expr Lowerer::window_fits(const TensorWindow& w, bool rows, int64_t extent, bool aligned_start) const {
  const simt::Expr& start = rows ? w.row : w.col;
  const simt::Expr& limit = rows ? w.rows : w.cols;
  simt::Expr ok = bin(BinaryOp::kAnd, bin(BinaryOp::kGe, start, i32(0)),
                      bin(BinaryOp::kLe, add(start, i32(extent)), limit));
  if (aligned_start) ok = bin(BinaryOp::kAnd, std::move(ok), bin(BinaryOp::kEq, bin(BinaryOp::kMod, start, i32(w.align)), i32(0)));
  return ok;
}

void Lowerer::emit_window_access(simt::StmtKind kind, uint32_t matrix, const TensorWindow& w,
                                 std::optional<simt::Expr> rows, std::optional<simt::Expr> cols) {
  simt::Stmt s;
  s.kind = kind;
  s.id = matrix;
  s.space = Space::kGlobal;
  s.array = w.array;
  if (kind == simt::StmtKind::kMatrixLoad || kind == simt::StmtKind::kMatrixStore) {
    s.operands.push_back(add(mul(w.row, w.cols), w.col));
    s.operands.push_back(w.cols);
  } else {
    s.operands.push_back(w.row);
    s.operands.push_back(w.col);
    s.operands.push_back(rows ? std::move(*rows) : w.rows);
    s.operands.push_back(cols ? std::move(*cols) : w.cols);
    s.operands.push_back(w.cols);
  }
  emit(std::move(s));
}

absl::Status Lowerer::lower_workgroup_gemm(const ForOp& op, const WorkgroupGemm& w) {
  const Storage& acc = storage_[w.gemm->c.buffer];
  const DType input = kernel_.symbol(w.gemm->a.buffer).dtype;
  const int64_t depth = w.fuse * w.k;
  const uint32_t a_matrix = static_cast<uint32_t>(fn_.matrices.size());
  fn_.matrices.push_back({absl::StrCat(kernel_.symbol(w.gemm->a.buffer).name, "_step"), simt::MatrixUse::kA, input,
                          static_cast<int32_t>(w.m), static_cast<int32_t>(depth), simt::MatrixScope::kWorkgroup});
  const uint32_t b_matrix = static_cast<uint32_t>(fn_.matrices.size());
  fn_.matrices.push_back({absl::StrCat(kernel_.symbol(w.gemm->b.buffer).name, "_step"), simt::MatrixUse::kB, input,
                          static_cast<int32_t>(depth), static_cast<int32_t>(w.n), simt::MatrixScope::kWorkgroup});

  ASSIGN_OR_RETURN(simt::Expr begin, expr(op.begin));
  ASSIGN_OR_RETURN(simt::Expr end, expr(op.end));
  const uint32_t first = new_var("wg_first", DType::kI32), trip = new_var("wg_trip", DType::kI32),
                 pos = new_var("wg_pos", DType::kI32);
  assign(first, simt::Expr::cast(DType::kI32, std::move(begin)));
  assign(trip, bin(BinaryOp::kSub, simt::Expr::cast(DType::kI32, std::move(end)), var(first)));
  assign(pos, i32(0));
  bound_[op.var] = add(var(first), var(pos));

  auto multiply = [&] {
    simt::Stmt m;
    m.kind = simt::StmtKind::kMatrixMulAdd;
    m.id = acc.id;
    m.a = a_matrix;
    m.b = b_matrix;
    emit(std::move(m));
  };
  auto advance = [&] { assign(pos, add(var(pos), i32(w.fuse))); };
  auto loop_while = [&](simt::Expr cond, const std::function<absl::Status()>& fn) -> absl::Status {
    simt::Stmt s;
    s.kind = simt::StmtKind::kWhile;
    s.operands.push_back(std::move(cond));
    RETURN_IF_ERROR(into(s.body, fn));
    emit(std::move(s));
    return absl::OkStatus();
  };

  // The tile's rows of A and columns of B do not change with k: tested once.
  ASSIGN_OR_RETURN(TensorWindow a_fixed, tensor_window(w.copy_a->src));
  ASSIGN_OR_RETURN(TensorWindow b_fixed, tensor_window(w.copy_b->src));
  simt::Expr tile_inside = bin(BinaryOp::kAnd, window_fits(a_fixed, true, w.m, false),
                               window_fits(b_fixed, false, w.n, true));
  tile_inside = bin(BinaryOp::kAnd, std::move(tile_inside),
                    bin(BinaryOp::kAnd, bin(BinaryOp::kEq, bin(BinaryOp::kMod, a_fixed.cols, i32(a_fixed.align)), i32(0)),
                        bin(BinaryOp::kEq, bin(BinaryOp::kMod, b_fixed.cols, i32(b_fixed.align)), i32(0))));
  // The interior steps, counted before the loop so that it is a plain counted loop (NVIDIA's
  // driver stages the operands of such a loop ahead; a loop on a compound condition ran 1.4x
  // slower with the same loads, tests/bench/RESULTS.md, 2026-12-07 (afternoon)). Step j reads
  // A's columns and B's rows from start(0) + advance * fuse * j, `depth` deep: all inside and
  // aligned while start(0) >= 0 (A's aligned, and A's advance keeps it so) and
  // start(0) + advance * fuse * j + depth <= the tensor's extent.
  const uint32_t steps = new_var("wg_steps", DType::kI32);
  assign(steps, i32(0));
  const int64_t a_move = w.a_advance * w.fuse, b_move = w.b_advance * w.fuse;
  if (a_move > 0 && b_move > 0 && a_move % a_fixed.align == 0) {
    auto fitting = [&](const simt::Expr& start, const simt::Expr& extent, int64_t move) {
      simt::Expr room = bin(BinaryOp::kSub, bin(BinaryOp::kSub, extent, i32(depth)), start);
      // (room + move) / move steps, floored at zero (room / move + 1 would round a negative room up).
      return bin(BinaryOp::kDiv, simt::Expr::call(Func::kMax, {i32(0), add(std::move(room), i32(move))}), i32(move));
    };
    simt::Expr starts_ok = bin(BinaryOp::kAnd, window_fits(a_fixed, false, 0, true), window_fits(b_fixed, true, 0, false));
    simt::Expr cond = bin(BinaryOp::kAnd, std::move(tile_inside), std::move(starts_ok));
    RETURN_IF_ERROR(if_then(std::move(cond), [&]() -> absl::Status {
      simt::Expr whole = bin(BinaryOp::kDiv, simt::Expr::call(Func::kMax, {i32(0), var(trip)}), i32(w.fuse));
      simt::Expr fit = simt::Expr::call(Func::kMin, {fitting(a_fixed.col, a_fixed.cols, a_move),
                                                     fitting(b_fixed.row, b_fixed.rows, b_move)});
      assign(steps, simt::Expr::call(Func::kMin, {std::move(whole), std::move(fit)}));
      return absl::OkStatus();
    }));
  }
  RETURN_IF_ERROR(for_range("wg_step", i32(0), var(steps), false, [&](const simt::Expr& j) -> absl::Status {
    assign(pos, mul(j, i32(w.fuse)));
    ASSIGN_OR_RETURN(TensorWindow a, tensor_window(w.copy_a->src));
    ASSIGN_OR_RETURN(TensorWindow b, tensor_window(w.copy_b->src));
    emit_window_access(simt::StmtKind::kMatrixLoad, a_matrix, a);
    emit_window_access(simt::StmtKind::kMatrixLoad, b_matrix, b);
    multiply();
    return absl::OkStatus();
  }));
  assign(pos, mul(var(steps), i32(w.fuse)));
  // What is left: windows clamped to the tensors and to the loop's last iteration (a step of
  // fewer than `fuse` iterations reads zeros past it).
  RETURN_IF_ERROR(loop_while(bin(BinaryOp::kLt, var(pos), var(trip)), [&]() -> absl::Status {
    ASSIGN_OR_RETURN(TensorWindow a, tensor_window(w.copy_a->src));
    ASSIGN_OR_RETURN(TensorWindow b, tensor_window(w.copy_b->src));
    const simt::Expr span = mul(simt::Expr::call(Func::kMin, {bin(BinaryOp::kSub, var(trip), var(pos)), i32(w.fuse)}),
                                i32(w.k));
    emit_window_access(simt::StmtKind::kMatrixTensorLoad, a_matrix, a, std::nullopt,
                       simt::Expr::call(Func::kMin, {a.cols, add(a.col, span)}));
    emit_window_access(simt::StmtKind::kMatrixTensorLoad, b_matrix, b,
                       simt::Expr::call(Func::kMin, {b.rows, add(b.row, span)}), std::nullopt);
    multiply();
    advance();
    return absl::OkStatus();
  }));
  bound_.erase(op.var);
  return absl::OkStatus();
}

absl::Status Lowerer::lower_workgroup_fill(const Storage& acc, simt::Expr value) {
  simt::Stmt st;
  st.kind = simt::StmtKind::kMatrixFill;
  st.id = acc.id;
  st.operands.push_back(simt::Expr::cast(DType::kF32, std::move(value)));
  emit(std::move(st));
  return absl::OkStatus();
}

absl::Status Lowerer::lower_workgroup_copy_out(const Storage& acc, const Region& dst) {
  ASSIGN_OR_RETURN(TensorWindow c, tensor_window(dst));
  const int64_t m = acc.shape[0], n = acc.shape[1];
  simt::Expr inside = bin(BinaryOp::kAnd, window_fits(c, true, m, false), window_fits(c, false, n, true));
  inside = bin(BinaryOp::kAnd, std::move(inside), bin(BinaryOp::kEq, bin(BinaryOp::kMod, c.cols, i32(c.align)), i32(0)));
  simt::Stmt branch;
  branch.kind = simt::StmtKind::kIf;
  branch.operands.push_back(std::move(inside));
  RETURN_IF_ERROR(into(branch.body, [&] {
    emit_window_access(simt::StmtKind::kMatrixStore, acc.id, c);
    return absl::OkStatus();
  }));
  RETURN_IF_ERROR(into(branch.else_body, [&] {
    emit_window_access(simt::StmtKind::kMatrixTensorStore, acc.id, c);
    return absl::OkStatus();
  }));
  emit(std::move(branch));
  return absl::OkStatus();
}

}  // namespace tilert::lowering
