// Statements: assignments, stores and atomics, structured control flow (each if a selection
// construct, each loop a loop construct whose header tests the condition), barriers and returns;
// matrix statements are matrices.cc's.
// A return ends its block; the statements after it in the same body are dead and not emitted.
#include "absl/strings/str_cat.h"
#include "backends/vulkan/spirv_emit/emitter.h"
#include "ir/status.h"

namespace tilert::vulkan::spirv_emit {
namespace {
using spv::Op;

// What both barriers order: workgroup (shared) and buffer memory, acquire-release, as GLSL's
// barrier() with memoryBarrierBuffer().
constexpr uint32_t kBarrierSemantics =
    static_cast<uint32_t>(spv::MemorySemanticsMask::AcquireRelease) |
    static_cast<uint32_t>(spv::MemorySemanticsMask::WorkgroupMemory) |
    static_cast<uint32_t>(spv::MemorySemanticsMask::UniformMemory);
// Under the Vulkan memory model a release does not by itself make earlier writes available, nor
// an acquire later reads visible: the barrier says so for its storage classes.
constexpr uint32_t kAvailableVisible =
    static_cast<uint32_t>(spv::MemorySemanticsMask::MakeAvailable) |
    static_cast<uint32_t>(spv::MemorySemanticsMask::MakeVisible);
}  // namespace

void Emitter::body(const simt::Body& statements) {
  for (const simt::Stmt& s : statements) {
    if (block_terminated_ || failed()) return;
    statement(s);
  }
}

Id Emitter::variable(uint32_t id) {
  if (id >= f_.variables.size() || f_.variables[id].count != 0) {
    return fail(absl::InvalidArgumentError(absl::StrCat("variable ", id, " is not a private scalar")));
  }
  return variables_[id];
}

void Emitter::statement(const simt::Stmt& s) {
  using simt::StmtKind;
  auto operands = [&](size_t n) {
    if (s.operands.size() == n) return true;
    fail(absl::InvalidArgumentError(absl::StrCat("statement kind ", static_cast<int>(s.kind), " has ",
                                                 s.operands.size(), " operands, expected ", n)));
    return false;
  };
  switch (s.kind) {
    case StmtKind::kAssign: {
      if (s.operands.size() == 1) {
        Id var = variable(s.id);
        if (var == 0) return;
        Id value = cast(expr(s.operands[0]), s.operands[0].type, f_.variables[s.id].type);
        if (!failed()) b_.store(var, value);
        return;
      }
      if (!operands(2)) return;
      const ArrayInfo* a = array(simt::Space::kPrivate, s.id);
      if (a == nullptr) return;
      Id index = expr(s.operands[0]);
      store_element(*a, index, cast(expr(s.operands[1]), s.operands[1].type, a->type));
      return;
    }
    case StmtKind::kStore:
    case StmtKind::kAtomicAdd: {
      if (!operands(2)) return;
      const ArrayInfo* a = array(s.space, s.id);
      if (a == nullptr) return;
      Id index = expr(s.operands[0]);
      Id value = cast(expr(s.operands[1]), s.operands[1].type, a->type);
      if (s.kind == StmtKind::kStore) {
        store_element(*a, index, value);
      } else {
        atomic_add(*a, index, value);
      }
      return;
    }
    case StmtKind::kIf: if (operands(1)) if_statement(s); return;
    case StmtKind::kFor: if (operands(3)) for_statement(s); return;
    case StmtKind::kWhile: if (operands(1)) while_statement(s); return;
    case StmtKind::kBarrier: barrier(s); return;
    case StmtKind::kReturn:
      b_.return_void();
      block_terminated_ = true;
      return;
    case StmtKind::kMatrixFill:
    case StmtKind::kMatrixLoad:
    case StmtKind::kMatrixStore:
    case StmtKind::kMatrixTensorLoad:
    case StmtKind::kMatrixTensorStore:
    case StmtKind::kMatrixMulAdd:
      matrix_statement(s);
      return;
    case StmtKind::kMatrixElementStore:
    case StmtKind::kMatrixConvert:
      fail(absl::UnimplementedError(
          "cooperative matrices do not expose which element a lane holds; the lowering writes them "
          "element by element only on PTX targets"));
      return;
    case StmtKind::kChunkLoad:
      chunk_load(s);
      return;
    case StmtKind::kChunkStore:
      chunk_store(s);
      return;
    case StmtKind::kAsyncCopy:
    case StmtKind::kAsyncCommit:
    case StmtKind::kAsyncWait:
      // Vulkan has no asynchronous global-to-shared copy; the lowering does not produce them for
      // SPIR-V targets (they lack TargetFeature::kAsyncCopy).
      fail(absl::UnimplementedError(absl::StrCat("function ", f_.name,
                                                 ": asynchronous copies have no SPIR-V counterpart")));
      return;
    case StmtKind::kProxyFence:
    case StmtKind::kWarpgroupFence:
    case StmtKind::kWarpgroupMma:
    case StmtKind::kWarpgroupCommit:
    case StmtKind::kWarpgroupWait:
      // Warpgroup products are PTX's (wgmma); the lowering plans them only for targets that list it.
      fail(absl::UnimplementedError(absl::StrCat("function ", f_.name,
                                                 ": warpgroup matrix products have no SPIR-V counterpart")));
      return;
    case StmtKind::kMbarrierInit:
    case StmtKind::kMbarrierExpectTx:
    case StmtKind::kMbarrierArriveAsync:
    case StmtKind::kTensorCopy:
      // Hardware mbarriers and the tensor-copy engine are PTX's; Vulkan targets list neither.
      fail(absl::UnimplementedError(absl::StrCat("function ", f_.name, ": ", av(simt::stmt_kind_name(s.kind)),
                                                 " has no SPIR-V counterpart")));
      return;
  }
  fail(absl::InvalidArgumentError(absl::StrCat("unknown statement kind ", static_cast<int>(s.kind))));
}

void Emitter::if_statement(const simt::Stmt& s) {
  Id condition = cast(expr(s.operands[0]), s.operands[0].type, DType::kBool);
  Id then_label = b_.new_id(), merge = b_.new_id();
  Id else_label = s.else_body.empty() ? merge : b_.new_id();
  b_.selection_merge(merge);
  b_.branch_conditional(condition, then_label, else_label);
  b_.begin_block(then_label);
  body(s.body);
  if (!block_terminated_) b_.branch(merge);
  block_terminated_ = false;
  if (!s.else_body.empty()) {
    b_.begin_block(else_label);
    body(s.else_body);
    if (!block_terminated_) b_.branch(merge);
    block_terminated_ = false;
  }
  b_.begin_block(merge);
}

// for (v = begin; v < end; v += step): the header loads v and tests it; the continue block
// steps it. begin, end and step are evaluated once, before the loop.
void Emitter::for_statement(const simt::Stmt& s) {
  Id var = variable(s.id);
  if (var == 0) return;
  DType t = f_.variables[s.id].type;
  Id type = repr_type(t);
  Id begin = cast(expr(s.operands[0]), s.operands[0].type, t);
  Id end = cast(expr(s.operands[1]), s.operands[1].type, t);
  Id step = cast(expr(s.operands[2]), s.operands[2].type, t);
  if (failed()) return;
  b_.store(var, begin);
  Id header = b_.new_id(), body_label = b_.new_id(), latch = b_.new_id(), merge = b_.new_id();
  b_.branch(header);
  b_.begin_block(header);
  Id v = b_.load(type, var);
  Op less = is_float(t) ? Op::OpFOrdLessThan
            : dtype_kind(t) == DTypeKind::kUnsigned ? Op::OpULessThan : Op::OpSLessThan;
  Id keep_going = b_.emit(less, bool_type(), {v, end});
  uint32_t control = static_cast<uint32_t>(s.unroll ? spv::LoopControlMask::Unroll : spv::LoopControlMask::MaskNone);
  b_.emit_void(Op::OpLoopMerge, {merge, latch, control});
  b_.branch_conditional(keep_going, body_label, merge);
  b_.begin_block(body_label);
  body(s.body);
  if (!block_terminated_) b_.branch(latch);
  block_terminated_ = false;
  b_.begin_block(latch);
  Id next = b_.emit(is_float(t) ? Op::OpFAdd : Op::OpIAdd, type, {b_.load(type, var), step});
  b_.store(var, next);
  b_.branch(header);
  b_.begin_block(merge);
}

void Emitter::while_statement(const simt::Stmt& s) {
  Id header = b_.new_id(), body_label = b_.new_id(), latch = b_.new_id(), merge = b_.new_id();
  b_.branch(header);
  b_.begin_block(header);
  Id condition = cast(expr(s.operands[0]), s.operands[0].type, DType::kBool);
  if (failed()) return;
  b_.loop_merge(merge, latch);
  b_.branch_conditional(condition, body_label, merge);
  b_.begin_block(body_label);
  body(s.body);
  if (!block_terminated_) b_.branch(latch);
  block_terminated_ = false;
  b_.begin_block(latch);
  b_.branch(header);
  b_.begin_block(merge);
}

void Emitter::barrier(const simt::Stmt& s) {
  auto semantics = static_cast<spv::MemorySemanticsMask>(
      kBarrierSemantics | (vulkan_memory_model_ ? kAvailableVisible : 0u));
  switch (s.barrier) {
    case simt::BarrierKind::kWorkgroup:
      b_.control_barrier(spv::Scope::Workgroup, spv::Scope::Workgroup, semantics);
      return;
    case simt::BarrierKind::kSubgroup:
      b_.control_barrier(spv::Scope::Subgroup, spv::Scope::Subgroup, semantics);
      return;
    case simt::BarrierKind::kNamed:
    case simt::BarrierKind::kNamedArrive:
      fail(absl::UnimplementedError(absl::StrCat(
          av(simt::barrier_kind_name(s.barrier)),
          " barrier: Vulkan has no named barriers (the lowering emulates them for this target)")));
      return;
    case simt::BarrierKind::kCluster:
      fail(absl::UnimplementedError("cluster barrier: Vulkan has no thread-block clusters"));
      return;
  }
}

}  // namespace tilert::vulkan::spirv_emit
