// The lowering's working state (internal to lowering/): one kernel being turned into a
// simt::Function. The member functions are spread over files by concern:
//   lower_kernel.cc   driver, statement dispatch, thread-level statements, the barrier tracker
//   lower_expr.cc     tile expressions to SIMT expressions, element addressing
//   lower_copy.cc     copy, fill and parallel loops
//   lower_compute.cc  gemm and reductions
//   lower_matrix.cc   gemm, fill and copy of matrix accumulators (the target's matrix unit)
//   lower_matrix_elements.cc  matrix accumulators worked on in the lane's own registers
//   lower_pipeline.cc pipelined loops as multi-stage asynchronous-copy pipelines
//   lower_sync.cc     emulated mbarriers and named barriers, the merged role schedule
//   lower_workgroup_gemm.cc  gemm loops on workgroup-scope matrices
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ir/kernel.h"
#include "ir/passes/access_sets.h"
#include "ir/verify/thread_dependence.h"
#include "lowering/fragment_layout.h"
#include "lowering/lower_kernel.h"
#include "lowering/simt.h"
#include "lowering/sync_profile.h"
#include "lowering/target.h"

namespace tilert::lowering {

// Elements of a constant shape.
inline int64_t numel(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

// One matrix load (an ldmatrix phase) reads 16 bytes from each of 8 consecutive rows; they hit
// distinct banks only when the row pitch is an odd number of 16-byte units. Rows of an even
// number of units (64, 128, 256 bytes...) are padded by 16 bytes. Returns the pitch in elements,
// 0 for dense rows.
inline int64_t padded_row_pitch(const std::vector<int64_t>& shape, int64_t elem) {
  if (shape.size() < 2 || (shape.back() * elem) % 32 != 0) return 0;
  return shape.back() + 16 / elem;
}

// The type reductions and gemm staging compute and keep partial values in (f32 for floats
// other than f64, i32 for integers other than i64), and how a reduction combines two values.
DType scratch_type(DType t);
simt::Expr reduce_combine(ReduceKind kind, simt::Expr a, simt::Expr b);

// Where one tile-IR symbol lives in the SIMT function.
struct Storage {
  enum class Kind : uint8_t {
    kNone,
    kScalarParam,   // id: SIMT param
    kTensor,        // id: SIMT param (global array); shape: expressions over scalar params
    kShared,        // id: shared array (shared tiles and shared-backed fragments)
    kDistributed,   // id: private array of `slots` elements, element e on thread e % threads
    kPrivate,       // id: private variable (scalar: shape empty) or private array
    kMbarrier,      // the emulated state, see MbarrierState
    kMatrix,        // matrices: 16x16 accumulators per subgroup, laid out by `plan`
    kMatrixOperand, // matrices: 16x16 A operands per subgroup, tiles_m x tiles_n of `plan` (the
                    // plan of the accumulator they are converted from)
    kMatrixRows,    // id: private array of `slots` = 2 tiles_m elements, the rows of `plan` the
                    // lane holds (row strip i, half h in slot 2 i + h; see for_matrix_rows)
    kWorkgroupMatrix, // id: one workgroup-scope accumulator matrix of the whole shape
                      // (lower_workgroup_gemm.cc)
  };
  Kind kind = Kind::kNone;
  uint32_t id = 0;
  std::vector<int64_t> shape;  // constant shape (shared, fragments, local arrays)
  int32_t slots = 0;
  // kShared tiles staged by a pipelined loop: the element offset of the buffer in use, and the
  // padded row pitch in elements (0: rows are dense). Padding by 16 bytes puts the rows that one
  // ldmatrix phase reads in different shared-memory banks.
  std::optional<simt::Expr> stage_offset;
  int64_t pitch = 0;
  // kShared tiles read by warpgroup gemms: dense and swizzled the way wgmma descriptors read them
  // (Lowerer::tile_offset): rows of `swizzle` bytes (32, 64 or 128), the 16-byte chunks of each
  // row permuted by its place in an 8-row pattern. The two 16-byte halves of a global 32-byte
  // sector stay side by side, and the 8 rows of a pattern spread over all banks.
  bool swizzled = false;
  int64_t swizzle = 0;
  // Elements of one buffer (one pipeline stage) of shared storage.
  int64_t buffer_elements() const { return numel(padded_shape()); }
  // The shape with padded rows (the shape itself when dense).
  std::vector<int64_t> padded_shape() const {
    std::vector<int64_t> s = shape;
    if (pitch > 0 && !s.empty()) s.back() = pitch;
    return s;
  }
  // kMatrix / kMatrixOperand: the subgroup's tiles_m x tiles_n matrices, row-major (simt ids).
  std::vector<uint32_t> matrices;
  MatrixGemmPlan plan;
};

// Emulated mbarrier array: per barrier, the arrivals still expected in the current phase, the
// transaction bytes still pending, and the current phase parity. Kept in private variables that
// every thread updates identically (the merged stream is uniform), so no shared memory is used.
struct MbarrierState {
  uint32_t pending_arrivals = 0, pending_bytes = 0, parity = 0;  // private arrays
  int64_t count = 1;      // barriers in the array
  int64_t expected = 1;   // arrivals per phase
};

// Which shared / global memory has been touched since the last workgroup barrier.
class BarrierTracker {
 public:
  // Returns whether a barrier must come before an op making `accesses`; records them.
  bool needs_barrier(const std::vector<Access>& accesses) const;
  void record(const std::vector<Access>& accesses);
  void clear() { pending_.clear(); }
  void merge(const BarrierTracker& other) {
    pending_.insert(pending_.end(), other.pending_.begin(), other.pending_.end());
  }
  bool empty() const { return pending_.empty(); }

 private:
  std::vector<Access> pending_;
};

class Lowerer {
 public:
  Lowerer(const Kernel& kernel, const TargetDescription& target, const LowerOptions& options);
  absl::StatusOr<simt::Function> run();
  // Register-staged pipelines that fit only by keeping a small shared reserve (see
  // plan_pipeline) were planned; a lowering that then runs out of shared memory is redone with
  // the full reserve (full_pipeline_reserve).
  bool used_small_pipeline_reserve() const { return small_reserve_used_; }
  void full_pipeline_reserve() { full_reserve_ = true; }
  // Likewise for register-staged pipelines with one buffer (padded rows, where a serial loop
  // keeps dense ones): a lowering that runs out of shared memory is redone without them.
  bool used_single_buffer_pipeline() const { return single_buffer_used_; }
  void no_single_buffer_pipelines() { no_single_buffer_ = true; }

  // ---- lower_kernel.cc ----
  absl::Status lower_block(const Block& block);
  // Remaps bx / by so that blocks run in groups of grid rows (order_blocks in lower_kernel.cc).
  absl::Status order_blocks();
  absl::Status lower_stmt(const Stmt& s);
  absl::Status lower_thread_stmt(const Stmt& s);  // assignments, atomics, thread-dependent ifs
  absl::Status lower_for(const Stmt& s, const ForOp& op);
  absl::Status lower_if(const Stmt& s, const IfOp& op);
  // An if whose branches each thread takes for itself (thread-level code, parallel bodies):
  // the condition, then both branches through `lower_body`. No barrier bookkeeping.
  absl::Status thread_if(const IfOp& op, const std::function<absl::Status(const Block&)>& lower_body);
  absl::Status declare(const Stmt& s, const DeclareOp& op);
  // Emits a workgroup barrier first when `accesses` conflict with what is pending.
  void order_accesses(const std::vector<Access>& accesses);
  void barrier_now();
  std::vector<Access> accesses_of(const Stmt& s) const;
  absl::Status unsupported(const Stmt& s, std::string_view what) const;
  absl::Status unsupported(SourceLoc loc, std::string_view what) const;

  // ---- lower_expr.cc ----
  // Tile expression to SIMT. Loads of global tensors are bounds-checked: they are hoisted into a
  // temporary that stays zero when the element lies outside the tensor.
  absl::StatusOr<simt::Expr> expr(const Expr& e);
  simt::Expr i32(int64_t v) const { return simt::Expr::int_const(v); }
  simt::Expr tid() const { return simt::Expr::builtin(simt::Builtin::kLocalId); }
  simt::Expr add(simt::Expr a, simt::Expr b) const;
  simt::Expr mul(simt::Expr a, simt::Expr b) const;
  simt::Expr bin(BinaryOp op, simt::Expr a, simt::Expr b) const;
  // Row-major flat index of `idx` in `shape` (constant) / the tensor's shape (run-time).
  simt::Expr flat_index(const std::vector<simt::Expr>& idx, const std::vector<int64_t>& shape) const;
  // The element of shared storage `st` at `idx`, in the pipeline buffer in use if it is staged.
  simt::Expr shared_index(const Storage& st, const std::vector<simt::Expr>& idx) const;
  // The element of `idx` within one buffer of shared storage `st` (no stage offset): row-major
  // with padded rows, or for swizzled tiles (trailing dims R x C; W = swizzle bytes, E = W / size
  // elements per row, U elements per 16 bytes) the column block c / E of R rows of E, then
  //   lead * R * C + (c / E) * R * E + r * E + ((c % E / U) ^ p(r)) * U + c % U
  // where p(r) = (r * W / 128) % (W / 16) is the row's place in its 8-row pattern (the hardware's
  // swizzle: byte-address bits 4.. XOR bits 7..; coordinates are non-negative).
  simt::Expr tile_offset(const Storage& st, const std::vector<simt::Expr>& idx) const;
  absl::StatusOr<simt::Expr> tensor_flat_index(const Storage& t, const std::vector<simt::Expr>& idx);
  absl::StatusOr<simt::Expr> tensor_in_bounds(const Storage& t, const std::vector<simt::Expr>& idx);
  // The i-th coordinates of flat element `e` of `shape`.
  std::vector<simt::Expr> unravel(const simt::Expr& e, const std::vector<int64_t>& shape) const;
  // A read of element `idx` of a symbol that is not a distributed fragment (global guarded).
  absl::StatusOr<simt::Expr> read_element(SymbolId sym, const std::vector<simt::Expr>& idx);
  // A write (global: skipped outside the tensor; distributed fragments are written by slot).
  absl::Status write_element(SymbolId sym, const std::vector<simt::Expr>& idx, simt::Expr value);
  uint32_t new_var(std::string name, DType type, int32_t count = 0);
  simt::Expr var(uint32_t id) const;
  void assign(uint32_t var, simt::Expr value);
  void assign_at(uint32_t array, simt::Expr index, simt::Expr value);
  // Element `index` of shared array `array` = `value`, cast to the array's element type.
  void store_shared(uint32_t array, simt::Expr index, simt::Expr value);
  void emit(simt::Stmt s) { out_->push_back(std::move(s)); }
  // Runs `fn` with statements going into `body`.
  absl::Status into(simt::Body& body, const std::function<absl::Status()>& fn);
  // for (v = begin; v < end; ++v) { fn(v) } with constant bounds; unrolled when asked.
  absl::Status for_range(std::string name, simt::Expr begin, simt::Expr end, bool unroll,
                         const std::function<absl::Status(const simt::Expr&)>& fn);
  absl::Status if_then(simt::Expr cond, const std::function<absl::Status()>& fn);

  // ---- lower_copy.cc ----
  absl::Status lower_copy(const Stmt& s, const Region& src, const Region& dst);
  absl::Status lower_fill(const Stmt& s, const FillOp& op);
  absl::Status lower_parallel(const Stmt& s, const ParallelOp& op);
  // Calls fn(slot, coords) for every element of a distributed fragment this thread holds.
  absl::Status for_owned(const Storage& frag, const std::function<absl::Status(const simt::Expr& slot,
                                                                                const std::vector<simt::Expr>& coords)>& fn);
  // Calls fn(rel) for this thread's share of a region of `shape` (cyclic over threads), the
  // rounds unrolled when asked.
  absl::Status for_cyclic(const std::vector<int64_t>& shape, bool unroll,
                          const std::function<absl::Status(const std::vector<simt::Expr>& rel)>& fn);
  // Full buffer coordinates of region-relative coordinates `rel` (index dims inserted).
  absl::StatusOr<std::vector<simt::Expr>> region_coords(const Region& r, const std::vector<simt::Expr>& rel);
  absl::StatusOr<std::vector<int64_t>> shape_of(const Region& r) const;

  // ---- lower_compute.cc ----
  absl::Status lower_gemm(const Stmt& s, const GemmOp& op);
  absl::Status lower_reduce(const Stmt& s, const ReduceOp& op);
  // The reduction along rows of a distributed source whose every subgroup lies in one row (see
  // lower_compute.cc); false when the source, target or scratch do not allow it.
  absl::StatusOr<bool> lower_reduce_rows_by_subgroups(const ReduceOp& op);
  // The last step of a row reduction by parts: `parts` partial results per output row lie in
  // shared scratch array `sc` (row o's at o * parts ..); each output's owner combines them in
  // order (and with the old value when accumulating) and writes the destination.
  absl::Status combine_row_parts(const ReduceOp& op, uint32_t sc, int64_t parts);
  // A shared scratch array of `type` with room for `elements`.
  uint32_t scratch(DType type, int64_t elements);

  // ---- lower_pipeline.cc ----
  // A staged tile filled by the tensor-copy engine: its map (Function::tensor_maps), one copy
  // per column block of `block_columns` columns, `bytes` per stage.
  struct TensorCopyPlan {
    int32_t map = -1;
    int64_t column_blocks = 1, block_columns = 0, bytes = 0;
  };
  struct PipelinePlan {
    std::vector<const CopyOp*> copies;  // the body's leading global -> shared tile copies
    size_t rest_begin = 0;              // index of the first body statement after them
    int stages = 2;
    // Buffers per staged tile: stages, or one more when the body's warpgroup gemms keep their
    // product in flight across the next iteration's copy issue (it still reads its buffer).
    int buffers = 2;
    // One per copy when the tensor-copy engine fills the stages (lower_tensor_copy.cc); else empty.
    std::vector<TensorCopyPlan> tensor;
    // Targets without asynchronous copies: the next iteration's 16-byte chunks are loaded into
    // registers before the body and stored after it (lower_register_pipeline.cc); two buffers,
    // or one where two do not fit.
    bool register_staged = false;
  };
  std::optional<PipelinePlan> plan_pipeline(const Stmt& loop, const ForOp& op);
  absl::Status lower_pipelined(const Stmt& loop, const ForOp& op, const PipelinePlan& plan);
  absl::Status issue_stage_copies(const PipelinePlan& plan, const simt::Expr& stage);
  // Whether staged copy `c` reads a tile that lies wholly inside its tensor with rows starting
  // 16-byte aligned (every chunk then moves whole, untested); uniform across the block.
  absl::StatusOr<simt::Expr> staged_tile_in_chunks(const CopyOp& c);
  // Whether copy `c` moves a global tensor region into a whole shared tile whose rows are whole
  // 16-byte chunks of 16- or 32-bit elements, contiguous in the tensor (pipelines stage such
  // copies; plain ones go chunk by chunk where the target copies asynchronously).
  bool copies_in_chunks(const CopyOp& c) const;
  // A copy outside a pipeline on a target with asynchronous copies: its chunks issued at once
  // (cp.async, the same code as a pipeline stage), then waited for. Element by element, every
  // load would wait for the one before it to reach shared memory.
  absl::Status lower_chunked_copy(const CopyOp& c);
  // cp.async group statements: close this thread's group; wait until at most `in_flight` remain.
  void async_commit();
  void async_wait(int in_flight);
  // Binds the loop variable of pipelined `op` to `first` + `i` (a fresh variable).
  void bind_pipeline_var(const ForOp& op, uint32_t first, const simt::Expr& i);
  // The body after the staged copies for iteration `i`, reading the staged tiles' `buffer`.
  absl::Status lower_pipeline_body(const ForOp& op, const PipelinePlan& plan, uint32_t first, const simt::Expr& i,
                                   const simt::Expr& buffer);

  // ---- lower_register_pipeline.cc ----
  // Chunks (16 bytes) of staged tile copy `c` each thread moves per stage, and the loop's total.
  int64_t register_chunks_per_thread(const CopyOp& c) const;
  absl::Status lower_register_pipelined(const ForOp& op, const PipelinePlan& plan);

  // ---- lower_tensor_copy.cc ----
  // Fills plan.tensor (and the function's tensor maps) when every staged tile can be copied by
  // the tensor-copy engine; false (nothing recorded) otherwise.
  bool plan_tensor_copies(PipelinePlan& plan);
  std::optional<TensorCopyPlan> plan_tensor_copy(const CopyOp& c);
  absl::Status lower_tensor_pipelined(const ForOp& op, const PipelinePlan& plan, const Stmt& loop);
  // One thread's stage issue: expect the stage's bytes on mbarrier `buffer` of `full`, then the copies.
  absl::Status issue_tensor_copies(const PipelinePlan& plan, uint32_t full, const simt::Expr& buffer);
  // Waits for the phase of mbarrier `buffer` of `full` with `parity`, bounded in time.
  absl::Status wait_stage(uint32_t full, const simt::Expr& buffer, const simt::Expr& parity, uint32_t site);

  // ---- lower_matrix.cc ----
  absl::Status lower_matrix_gemm(const Stmt& s, const GemmOp& op);
  absl::Status lower_matrix_fill(const Storage& acc, simt::Expr value);
  absl::Status lower_matrix_copy_out(const Storage& acc, const Region& dst);
  void declare_matrix_accumulator(const Symbol& sym, Storage& st, const MatrixGemmPlan& plan);
  // A fragment held as A matrices (FragmentLayouts::register_operands), laid out as `plan`.
  void declare_matrix_operand(const Symbol& sym, Storage& st, const MatrixGemmPlan& plan);
  // A copy of matrix accumulator `from` into register A operands `to`: one matrix_convert each.
  absl::Status lower_matrix_convert(const Storage& from, const Storage& to);
  absl::Status lower_warpgroup_gemm(const GemmOp& op, const Storage& a, const Storage& b, const Storage& c);
  // Waits for warpgroup products left in flight (before their accumulators are read or written).
  absl::Status finish_warpgroup_products();
  // Puts a proxy_fence before every workgroup barrier of `body` (nested ones included).
  static void add_proxy_fences(simt::Body& body);
  // Subgroup `sg`'s accumulator (0, 0): its first row and column in the C tile; accumulator
  // (i, j) is `row_step` * i rows and 16 j columns further.
  struct MatrixOrigin {
    simt::Expr row, col;
    int64_t row_step = 16;
  };
  MatrixOrigin matrix_origin(const MatrixGemmPlan& plan, const simt::Expr& sg);
  // The same, computed once into two variables (row and col are those variables).
  MatrixOrigin subgroup_origin(const MatrixGemmPlan& plan, const simt::Expr& sg);
  // Where a matrix product reads one operand: logical element (row, col) of the operand (A is
  // m x k, B k x n) lies at flat offset at(row, col) of shared array `array`, whose stored rows
  // are `stride` elements apart; a transposed operand is stored column-major.
  struct MatrixSource {
    uint32_t array = 0;
    std::function<absl::StatusOr<simt::Expr>(simt::Expr row, simt::Expr col)> at;
    int64_t stride = 0;
    bool column_major = false;
    // An A operand held in registers (Storage::Kind::kMatrixOperand) instead: the subgroup's
    // matrices, its tile (i, k step) at i * k_steps + k step.
    const std::vector<uint32_t>* registers = nullptr;
  };
  // A shared tile's region as an operand, transposed or not.
  MatrixSource shared_operand(const Region& r, const Storage& st, bool transposed);
  // The k loop of a gemm on mma plan `p`: per k step, the subgroup's A strip and B strip are
  // loaded into fresh operand matrices and multiplied into `accumulators` (tiles_m x tiles_n,
  // row-major) at the subgroup's origin (row0, col0).
  absl::Status emit_matrix_products(const MatrixGemmPlan& p, const MatrixSource& a, const MatrixSource& b,
                                    const std::vector<uint32_t>& accumulators, const simt::Expr& row0,
                                    const simt::Expr& col0);

  // ---- lower_staged_gemm.cc ----
  // A gemm whose accumulator (or an operand) is a fragment held element-wise, run on the matrix
  // unit through shared staging tiles: operands from registers are stored to a staging tile
  // first, the product lands in an f32 staging tile and each thread adds its elements of it.
  struct StagedGemm {
    MatrixGemmPlan plan;
    int64_t a_pitch = 0, b_pitch = 0;  // rows of the staged A / B (0: read from its shared tile)
    int64_t b_offset = 0;              // where the staged B starts in the operand staging array
    int64_t c_pitch = 0;               // rows of the product in the f32 staging array
  };
  // Chooses the gemms that take this path and sizes their staging arrays (before the shared
  // memory of the kernel is laid out): those with an mma plan whose staging fits.
  void plan_staged_gemms();
  const StagedGemm* staged_gemm(const GemmOp& op) const;
  absl::Status lower_staged_matrix_gemm(const GemmOp& op, const StagedGemm& g);
  // Stores operand `r` (a whole fragment) into staging array `array` from `offset` on, as the
  // logical operand matrix (transposed back when the gemm transposes it), rows `pitch` apart.
  absl::Status stage_matrix_operand(const Region& r, bool transposed, uint32_t array, int64_t offset, int64_t pitch);

  // ---- lower_workgroup_gemm.cc ----
  // A loop whose body copies two global windows into shared tiles and multiplies them into an
  // accumulator used only around it, run on workgroup-scope matrices (see the file).
  struct WorkgroupGemm {
    const Stmt* loop = nullptr;
    const CopyOp* copy_a = nullptr;
    const CopyOp* copy_b = nullptr;
    const GemmOp* gemm = nullptr;
    int64_t m = 0, n = 0, k = 0;  // the tile; k per iteration
    int fuse = 1;                 // iterations per matrix step
    // How far A's column window and B's row window move per iteration (0: not a known
    // positive constant; such loops run every step through the clamped windows).
    int64_t a_advance = 0, b_advance = 0;
  };
  // Chooses the loops that take this path (before storage is laid out), all or none of the
  // kernel's: their shared tiles get no storage, and no other shared tile may compete with the
  // driver's staging.
  void plan_workgroup_gemms();
  const WorkgroupGemm* workgroup_gemm(const Stmt& loop) const;
  bool elided_by_workgroup_gemm(SymbolId id) const;
  bool is_workgroup_accumulator(SymbolId id) const;
  void declare_workgroup_accumulator(const Symbol& sym, Storage& st);
  absl::Status lower_workgroup_gemm(const ForOp& op, const WorkgroupGemm& w);
  absl::Status lower_workgroup_fill(const Storage& acc, simt::Expr value);
  absl::Status lower_workgroup_copy_out(const Storage& acc, const Region& dst);
  // A window of a rank-2 global tensor (a region of it), its values held in variables.
  struct TensorWindow {
    uint32_t array = 0;
    simt::Expr row, col, rows, cols;  // the window's start and the tensor's extents
    int64_t align = 1;                // elements in 16 bytes
  };
  absl::StatusOr<TensorWindow> tensor_window(const Region& r);
  // Whether `extent` rows (or columns) from the window's start lie inside the tensor (and the
  // start is 16-byte aligned, with `aligned_start`).
  simt::Expr window_fits(const TensorWindow& w, bool rows, int64_t extent, bool aligned_start) const;
  // matrix_load / matrix_store at the window's start, or matrix_tensor_load / _store of it with
  // the tensor's extents (or `rows` / `cols` in their place).
  void emit_window_access(simt::StmtKind kind, uint32_t matrix, const TensorWindow& w,
                          std::optional<simt::Expr> rows = std::nullopt, std::optional<simt::Expr> cols = std::nullopt);
  std::vector<WorkgroupGemm> workgroup_gemms_;

  // ---- lower_sync.cc ----
  absl::Status lower_mbarrier_op(const Stmt& s);
  absl::Status lower_named_barrier(const Stmt& s, const NamedBarrierOp& op, const std::string& role);
  // The emulated wait condition of a wait statement (mbarrier wait / named barrier wait).
  absl::StatusOr<simt::Expr> wait_condition(const Stmt& s);
  // Lowers the kernel body as a merged schedule of its roles (or of the block as one role).
  absl::Status lower_scheduled(const Block& body);
  absl::Status copy_async_done(const CopyAsyncOp& op);
  absl::StatusOr<simt::Expr> mbarrier_index(const MbarrierRef& ref);
  uint32_t add_sync_site(std::string barrier, uint32_t line);
  // Writes a deadlock status record naming sync sites `first` and `second` (kNoSyncSite: none)
  // and the block; word 0 last.
  static constexpr int64_t kNoSyncSite = 0xffff;
  void record_deadlock(simt::Expr first, simt::Expr second);
  // Sync profiling: the block's linear index from the grid, then the emitter's finishing pass.
  absl::Status finish_profile();

  const Kernel& kernel_;
  const TargetDescription& target_;
  const LowerOptions options_;
  simt::Function fn_;
  std::optional<SyncProfileEmitter> profile_;  // when lowering with sync profiling
  simt::Body* out_ = nullptr;
  std::vector<Storage> storage_;  // by SymbolId
  std::map<SymbolId, MbarrierState> mbarriers_;
  FragmentLayouts layouts_;
  ThreadDependence thread_dep_;
  BarrierTracker tracker_;
  int64_t scratch_budget_bytes_ = 0;
  bool full_reserve_ = false, small_reserve_used_ = false;
  bool no_single_buffer_ = false, single_buffer_used_ = false;
  std::map<DType, uint32_t> scratch_arrays_;
  std::optional<uint32_t> matrix_out_;  // per-subgroup staging of accumulators being copied out
  // By the gemm's content: pipelined loops lower copies of their statements.
  std::vector<std::pair<GemmOp, StagedGemm>> staged_gemms_;
  std::optional<uint32_t> product_stage_;        // f32 staging of staged gemms' products
  std::map<DType, uint32_t> operand_stages_;     // staged gemms' register operands, by type
  bool scheduled_ = false;  // lowered as a merged role schedule (no asynchronous pipelines)
  // Some gemm reads shared tiles through the async proxy (wgmma). Asynchronous copies into them
  // become visible to it through their wait and the barrier (as with an mbarrier completion);
  // ordinary stores need a proxy fence: the pipeline's element-wise fallback fences its own, and
  // if any other store reaches a swizzled tile (generic_core_writes_), every workgroup barrier
  // of the function is preceded by one (add_proxy_fences).
  bool async_proxy_reads_ = false, generic_core_writes_ = false;
  // Inside a pipeline with a spare buffer: a warpgroup gemm leaves its product in flight (waits
  // only for the one before), and warpgroup_pending_ records that one may be.
  bool defer_warpgroup_wait_ = false, warpgroup_pending_ = false;
  // Inside the body of a cp.async pipeline (lower_pipelined): its groups are in flight.
  bool in_async_pipeline_ = false;
  // Parallel-loop context: loop variables bound to SIMT values, the iteration's slot.
  struct ParallelFrame {
    const ParallelOp* op = nullptr;
    std::vector<int64_t> extents;
    simt::Expr slot;
    // Iterating over the elements of a matrix accumulator a parallel body accesses
    // (FragmentLayouts::elementwise_matrices): the accumulator, and this iteration's matrix and
    // element of the lane's share.
    const Storage* matrix = nullptr;
    uint32_t matrix_id = 0;
    int element = 0;
    // The iteration's slot of matrix row vectors (its row among the lane's rows); -1: none.
    int row_slot = -1;
  };
  // Runs parallel loop `op` over the lane's elements of matrix accumulator `m`.
  absl::Status lower_parallel_over_matrix(const ParallelOp& op, const Storage& m);

  // ---- lower_matrix_elements.cc ----
  // Calls fn(matrix, element, row, col) for every element of matrix accumulator `m` (an mma
  // plan, on a target with matrix_elements_addressable) that this lane holds: element `element`
  // of simt matrix `matrix`, at (row, col) of the accumulator's tile.
  // `row_slot` is the row's slot in matrix row vectors of the same rows (for_matrix_rows).
  using MatrixElementFn = std::function<absl::Status(uint32_t matrix, int element, int row_slot,
                                                     const simt::Expr& row, const simt::Expr& col)>;
  absl::Status for_matrix_elements(const Storage& m, const MatrixElementFn& fn);
  // Calls fn(slot, row) for every row of mma plan `p` (warps_n = 1) the lane holds: rows g and
  // g + 8 (g = lane / 4) of each of the subgroup's 16-row strips i, in slot 2 i + h.
  absl::Status for_matrix_rows(const MatrixGemmPlan& p, const std::function<absl::Status(int slot, const simt::Expr& row)>& fn);
  // A one-dimensional parallel loop over matrix row vectors: each lane runs it for its rows.
  absl::Status lower_parallel_over_rows(const ParallelOp& op, const MatrixGemmPlan& p);
  // fill and copy with matrix row vectors (a copy between two of them, or to / from memory).
  absl::Status lower_row_vector_fill(const Storage& v, const simt::Expr& value);
  absl::Status lower_row_vector_copy(const Region& src, const Region& dst);
  // Whether a copy out of matrix accumulator `from` into `to` stores each lane's own elements.
  bool copies_matrix_elements(const Storage& from, const Storage& to) const;
  // A copy of matrix accumulator `from` into shared memory: every lane stores its own elements.
  absl::Status lower_matrix_copy_elements(const Storage& from, const Region& dst);
  // A reduction of matrix accumulator `op.src` along its rows (lowering/README.md).
  absl::Status lower_matrix_row_reduce(const Stmt& s, const ReduceOp& op);
  std::optional<ParallelFrame> parallel_;
  std::map<SymbolId, simt::Expr> bound_;  // loop variables -> their SIMT value
  // The block's place in the grid as the kernel sees it (bx, by) when order_blocks remapped it.
  std::optional<uint32_t> block_x_, block_y_;
  // The role being lowered ("block" outside roles) and its thread range.
  std::string role_ = "block";
  int64_t role_begin_ = 0, role_threads_ = 0;
  // Named-barrier emulation: arrivals in the current generation and the generation, per id.
  uint32_t named_count_ = 0, named_gen_ = 0;
  bool named_used_ = false;
  std::map<const Stmt*, uint32_t> named_targets_;  // named_barrier -> its generation to wait for
  int temp_counter_ = 0;
};

}  // namespace tilert::lowering
