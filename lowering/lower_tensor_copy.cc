// Pipelined loops fed by the tensor-copy engine (TargetFeature::kTensorMemoryAccelerator: PTX
// cp.async.bulk.tensor, "TMA"), completing on hardware mbarriers. Used instead of per-thread
// cp.async when every staged tile of the pipeline is a swizzled warpgroup operand whose source
// region is a box of the tensor's last two dimensions: one thread then issues a whole stage (one
// tensor copy per W-byte column block of each tile, the engine writing the same swizzled layout
// the wgmma descriptors read) and every thread waits on the stage's mbarrier. See
// lowering/README.md, "Asynchronous pipelines".
//
// The runtime encodes one tensor map per (tensor, box) at launch. Where it cannot (an address or a
// row length that is not a multiple of 16 bytes), it passes 0 in Function::tensor_maps_param and
// the same loop copies with cp.async instead, each thread's copies arriving on the stage's
// mbarrier when they land (cp.async.mbarrier.arrive.noinc); the mbarriers then expect one arrival
// per thread instead of one.
#include "absl/strings/str_cat.h"
#include "ir/status.h"
#include "lowering/lowerer.h"

namespace tilert::lowering {

using simt::Space;

namespace {

constexpr int kMaxTensorRank = 5;
constexpr int kMaxBoxExtent = 256;  // cuTensorMapEncodeTiled: boxDim[i] <= 256

// How long one stage wait may take before the kernel gives up and reports it: far beyond any
// copy's latency, inside the runtime's own synchronization timeout (10 s by default).
constexpr int64_t kStageWaitLimitNs = 4'000'000'000;

}  // namespace

std::optional<Lowerer::TensorCopyPlan> Lowerer::plan_tensor_copy(const CopyOp& c) {
  const Storage& dst = storage_[c.dst.buffer];
  const Symbol& src = kernel_.symbol(c.src.buffer);
  const int64_t elem = dtype_size(src.dtype);
  const int rank = static_cast<int>(src.shape.size());
  if (!dst.swizzled || dst.shape.size() != 2 || rank < 2 || rank > kMaxTensorRank) return std::nullopt;
  // The tile's rows and columns are the tensor's last two dimensions; the others are single indices.
  for (int d = 0; d < rank; ++d) {
    const bool ranged = d >= static_cast<int>(c.src.ranges.size()) || !c.src.ranges[d].index;
    if (ranged != (d >= rank - 2)) return std::nullopt;
  }
  const int64_t rows = dst.shape[0], block = dst.swizzle / elem;
  if (rows > kMaxBoxExtent || block <= 0 || dst.shape[1] % block != 0) return std::nullopt;
  simt::TensorMap map;
  map.param = storage_[c.src.buffer].id;
  map.rank = rank;
  map.box.fill(1);
  map.box[0] = static_cast<int32_t>(block);
  map.box[1] = static_cast<int32_t>(rows);
  map.swizzle = static_cast<int32_t>(dst.swizzle);
  TensorCopyPlan plan;
  for (size_t i = 0; i < fn_.tensor_maps.size(); ++i)
    if (fn_.tensor_maps[i] == map) plan.map = static_cast<int32_t>(i);
  if (plan.map < 0) {
    plan.map = static_cast<int32_t>(fn_.tensor_maps.size());
    fn_.tensor_maps.push_back(map);
  }
  plan.column_blocks = dst.shape[1] / block;
  plan.block_columns = block;
  plan.bytes = rows * dst.shape[1] * elem;
  return plan;
}

bool Lowerer::plan_tensor_copies(PipelinePlan& plan) {
  if (!options_.tensor_copies || !target_.has(TargetFeature::kTensorMemoryAccelerator) ||
      !target_.has(TargetFeature::kHardwareMbarrier))
    return false;
  // Decide for every tile before recording maps: all of them or none go through the engine.
  for (const CopyOp* c : plan.copies) {
    const Storage& dst = storage_[c->dst.buffer];
    if (!dst.swizzled || dst.shape.size() != 2) return false;
  }
  const size_t maps_before = fn_.tensor_maps.size();
  std::vector<TensorCopyPlan> tensor;
  for (const CopyOp* c : plan.copies) {
    std::optional<TensorCopyPlan> t = plan_tensor_copy(*c);
    if (!t) {
      fn_.tensor_maps.resize(maps_before);
      return false;
    }
    tensor.push_back(*t);
  }
  plan.tensor = std::move(tensor);
  if (fn_.tensor_maps_param < 0) {
    fn_.tensor_maps_param = static_cast<int32_t>(fn_.params.size());
    fn_.params.push_back({"tensor_maps_ready", false, DType::kU32, false});
  }
  return true;
}

absl::Status Lowerer::issue_tensor_copies(const PipelinePlan& plan, uint32_t full, const simt::Expr& buffer) {
  int64_t stage_bytes = 0;
  for (const TensorCopyPlan& t : plan.tensor) stage_bytes += t.bytes;
  simt::Stmt expect;
  expect.kind = simt::StmtKind::kMbarrierExpectTx;
  expect.id = full;
  expect.operands = {buffer, i32(stage_bytes)};
  expect.comment = "the stage's tensor copies: their bytes complete its mbarrier";
  emit(std::move(expect));
  for (size_t i = 0; i < plan.copies.size(); ++i) {
    const CopyOp& c = *plan.copies[i];
    const TensorCopyPlan& t = plan.tensor[i];
    const Storage& dst = storage_[c.dst.buffer];
    ASSIGN_OR_RETURN(std::vector<simt::Expr> origin, region_coords(c.src, {i32(0), i32(0)}));
    for (int64_t j = 0; j < t.column_blocks; ++j) {
      simt::Stmt copy;
      copy.kind = simt::StmtKind::kTensorCopy;
      copy.id = dst.id;
      copy.a = static_cast<uint32_t>(t.map);
      copy.array = full;
      copy.operands.push_back(
          add(mul(buffer, i32(dst.buffer_elements())), tile_offset(dst, {i32(0), i32(j * t.block_columns)})));
      copy.operands.push_back(buffer);
      // Coordinates innermost first.
      for (size_t d = origin.size(); d-- > 0;)
        copy.operands.push_back(d + 1 == origin.size() ? add(origin[d], i32(j * t.block_columns)) : origin[d]);
      emit(std::move(copy));
    }
  }
  return absl::OkStatus();
}

absl::Status Lowerer::wait_stage(uint32_t full, const simt::Expr& buffer, const simt::Expr& parity, uint32_t site) {
  // The first test usually passes; a thread that has to wait keeps testing (each test suspends it
  // for a while in hardware) until the phase completes or the limit passes, which is recorded as
  // a deadlock at this wait and ends the wait (the launch then reports an error, not a hang).
  uint32_t ready = new_var("stage_ready", DType::kBool);
  assign(ready, simt::Expr::mbarrier_test(full, buffer, parity));
  return if_then(simt::Expr::unary(UnaryOp::kNot, var(ready)), [&]() -> absl::Status {
    uint32_t since = new_var("stage_wait_since", DType::kI64);
    assign(since, simt::Expr::builtin(simt::Builtin::kClock));
    simt::Stmt loop;
    loop.kind = simt::StmtKind::kWhile;
    loop.operands = {simt::Expr::unary(UnaryOp::kNot, var(ready))};
    RETURN_IF_ERROR(into(loop.body, [&]() -> absl::Status {
      assign(ready, simt::Expr::mbarrier_test(full, buffer, parity));
      simt::Expr waited = bin(BinaryOp::kSub, simt::Expr::builtin(simt::Builtin::kClock), var(since));
      simt::Expr too_long = bin(BinaryOp::kAnd, simt::Expr::unary(UnaryOp::kNot, var(ready)),
                                bin(BinaryOp::kGt, waited, simt::Expr::int_const(kStageWaitLimitNs, DType::kI64)));
      return if_then(too_long, [&] {
        record_deadlock(i32(site), i32(kNoSyncSite));
        assign(ready, simt::Expr::bool_const(true));
        return absl::OkStatus();
      });
    }));
    emit(std::move(loop));
    return absl::OkStatus();
  });
}

absl::Status Lowerer::lower_tensor_pipelined(const ForOp& op, const PipelinePlan& plan, const Stmt& loop) {
  const int S = plan.stages, buffers = plan.buffers;
  const uint32_t full = static_cast<uint32_t>(fn_.shared.size());
  fn_.shared.push_back({"pipe_full", DType::kI64, buffers, 16});
  const simt::Expr maps_ready = bin(BinaryOp::kNe, simt::Expr::param(static_cast<uint32_t>(fn_.tensor_maps_param), DType::kU32),
                                    simt::Expr::int_const(0, DType::kU32));
  const uint32_t site = add_sync_site("pipeline stage mbarrier", loop.loc.line);

  // One thread sets the stage barriers up; the barrier below publishes them to every thread and
  // to the copy engine.
  RETURN_IF_ERROR(if_then(bin(BinaryOp::kEq, tid(), i32(0)), [&] {
    return for_range("pipe_b", i32(0), i32(buffers), false, [&](const simt::Expr& b) {
      simt::Stmt init;
      init.kind = simt::StmtKind::kMbarrierInit;
      init.id = full;
      init.operands = {b, simt::Expr::call(Func::kSelect, {maps_ready, i32(1), i32(kernel_.threads)})};
      emit(std::move(init));
      return absl::OkStatus();
    });
  }));
  barrier_now();

  ASSIGN_OR_RETURN(simt::Expr begin, expr(op.begin));
  ASSIGN_OR_RETURN(simt::Expr end, expr(op.end));
  uint32_t first = new_var("pipe_begin", DType::kI32), trip = new_var("pipe_trip", DType::kI32);
  assign(first, simt::Expr::cast(DType::kI32, begin));
  assign(trip, bin(BinaryOp::kSub, simt::Expr::cast(DType::kI32, end), var(first)));
  // Issues the copies of iteration `i` (relative to the loop's start) into `buffer`.
  auto issue = [&](const simt::Expr& i, const simt::Expr& buffer) -> absl::Status {
    bind_pipeline_var(op, first, i);
    return if_then(bin(BinaryOp::kLt, i, var(trip)), [&]() -> absl::Status {
      simt::Stmt choice;
      choice.kind = simt::StmtKind::kIf;
      choice.operands = {maps_ready};
      RETURN_IF_ERROR(into(choice.body, [&] {
        return if_then(bin(BinaryOp::kEq, tid(), i32(0)), [&] { return issue_tensor_copies(plan, full, buffer); });
      }));
      RETURN_IF_ERROR(into(choice.else_body, [&]() -> absl::Status {
        RETURN_IF_ERROR(issue_stage_copies(plan, buffer));
        simt::Stmt arrive;
        arrive.kind = simt::StmtKind::kMbarrierArriveAsync;
        arrive.id = full;
        arrive.operands = {buffer};
        emit(std::move(arrive));
        return absl::OkStatus();
      }));
      emit(std::move(choice));
      return absl::OkStatus();
    });
  };

  RETURN_IF_ERROR(for_range("pipe_s", i32(0), i32(S - 1), false, [&](const simt::Expr& s) { return issue(s, s); }));
  RETURN_IF_ERROR(for_range("pipe_i", i32(0), var(trip), false, [&](const simt::Expr& i) -> absl::Status {
    // Everyone is done with iteration i - 1 (with a spare buffer, i - 2's products are complete):
    // its buffer may be refilled.
    barrier_now();
    uint32_t next = new_var("pipe_next", DType::kI32);
    assign(next, add(i, i32(S - 1)));
    RETURN_IF_ERROR(issue(var(next), bin(BinaryOp::kMod, var(next), i32(buffers))));
    // Iteration i's buffer is in its (i / buffers)-th use: that phase's completion is the data.
    uint32_t buffer = new_var("pipe_buffer", DType::kI32);
    assign(buffer, bin(BinaryOp::kMod, i, i32(buffers)));
    RETURN_IF_ERROR(wait_stage(full, var(buffer), bin(BinaryOp::kMod, bin(BinaryOp::kDiv, i, i32(buffers)), i32(2)), site));
    return lower_pipeline_body(op, plan, first, i, var(buffer));
  }));
  bound_.erase(op.var);
  RETURN_IF_ERROR(finish_warpgroup_products());
  barrier_now();
  return absl::OkStatus();
}

}  // namespace tilert::lowering
