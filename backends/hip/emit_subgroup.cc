// Subgroup reductions of the AMDGCN emitter. The result must combine exactly the active lanes, so
// the emitter walks the wave's active mask (a ballot, uniform across the wave) and reads each
// active lane's value with readlane: a scalar loop of at most wave-size steps that is correct in
// any control flow. A butterfly over ds_bpermute would be faster for full waves but would read
// the registers of inactive lanes.
#include <cmath>

#include "absl/strings/str_cat.h"
#include "backends/hip/emitter.h"
#include "ir/status.h"

namespace tilert::hip {
namespace {

// The value a reduction starts from, in LLVM spelling.
std::string identity(ReduceKind kind, DType t, const Emitter& emitter) {
  if (kind == ReduceKind::kSum) return is_float(t) ? "0.0" : "0";
  bool max = kind == ReduceKind::kMax;
  if (is_float(t)) return emitter.float_literal(max ? -INFINITY : INFINITY, t);
  switch (t) {
    case DType::kI32: return max ? "-2147483648" : "2147483647";
    case DType::kU32: return max ? "0" : "-1";
    case DType::kI64: return max ? "-9223372036854775808" : "9223372036854775807";
    default: return "0";
  }
}

}  // namespace

std::string Emitter::read_lane(const std::string& value, DType t, const std::string& lane) {
  declare("declare i32 @llvm.amdgcn.readlane(i32, i32)");
  auto read32 = [&](const std::string& bits) {
    return op(absl::StrCat("call i32 @llvm.amdgcn.readlane(i32 ", bits, ", i32 ", lane, ")"));
  };
  if (dtype_size(t) == 4) {
    if (!is_float(t)) return read32(value);
    std::string bits = op(absl::StrCat("bitcast float ", value, " to i32"));
    return op(absl::StrCat("bitcast i32 ", read32(bits), " to float"));
  }
  // 64-bit values: two 32-bit halves.
  std::string bits = t == DType::kF64 ? op(absl::StrCat("bitcast double ", value, " to i64")) : value;
  std::string low = op(absl::StrCat("trunc i64 ", bits, " to i32"));
  std::string shifted = op(absl::StrCat("lshr i64 ", bits, ", 32"));
  std::string high = op(absl::StrCat("trunc i64 ", shifted, " to i32"));
  std::string low_wide = op(absl::StrCat("zext i32 ", read32(low), " to i64"));
  std::string high_wide = op(absl::StrCat("zext i32 ", read32(high), " to i64"));
  std::string high_placed = op(absl::StrCat("shl i64 ", high_wide, ", 32"));
  std::string joined = op(absl::StrCat("or i64 ", high_placed, ", ", low_wide));
  if (t != DType::kF64) return joined;
  return op(absl::StrCat("bitcast i64 ", joined, " to double"));
}

absl::StatusOr<std::string> Emitter::subgroup_reduce(const simt::Expr& e) {
  if (e.args.size() != 1) return absl::InvalidArgumentError("subgroup_reduce takes one operand");
  DType t = e.type;
  if (t != DType::kI32 && t != DType::kU32 && t != DType::kI64 && t != DType::kF32 &&
      t != DType::kF64) {
    return absl::InvalidArgumentError(absl::StrCat("subgroup_reduce on ", av(dtype_name(t))));
  }
  // The AMDGCN targets do not list kSubgroupClustered, so the lowering keeps to whole-wave
  // reductions there (its plans that would reduce clusters of lanes are not taken).
  if (e.int_value > 0)
    return absl::UnimplementedError(absl::StrCat("subgroup reductions over clusters of ", e.int_value,
                                                 " lanes are not emitted for AMDGCN"));
  ReduceKind kind = static_cast<ReduceKind>(e.op);
  ASSIGN_OR_RETURN(std::string value, expr(e.args[0]));
  std::string_view type = value_type(t);
  std::string mask_type = absl::StrCat("i", wave_size_);

  declare(absl::StrCat("declare ", mask_type, " @llvm.amdgcn.ballot.", mask_type, "(i1)"));
  declare(absl::StrCat("declare ", mask_type, " @llvm.cttz.", mask_type, "(", mask_type, ", i1)"));
  std::string active = op(absl::StrCat("call ", mask_type, " @llvm.amdgcn.ballot.", mask_type, "(i1 true)"));
  std::string before = current_label_;
  std::string head = new_label("reduce.head"), step = new_label("reduce.step"),
              done = new_label("reduce.done");
  branch(head);

  start_block(head);
  std::string mask = fresh(), accumulated = fresh(), next_mask = fresh();
  absl::StrAppend(&body_, "  ", mask, " = phi ", mask_type, " [", active, ", %", before, "], [",
                  next_mask, ", %", step, "]\n");
  size_t accumulated_phi_at = body_.size();
  std::string finished = op(absl::StrCat("icmp eq ", mask_type, " ", mask, ", 0"));
  line(absl::StrCat("br i1 ", finished, ", label %", done, ", label %", step));

  start_block(step);
  std::string lowest = op(absl::StrCat("call ", mask_type, " @llvm.cttz.", mask_type, "(", mask_type,
                                       " ", mask, ", i1 true)"));
  std::string lane = wave_size_ == 32 ? lowest : op(absl::StrCat("trunc i64 ", lowest, " to i32"));
  std::string lane_value = read_lane(value, t, lane);
  std::string combined = combine(kind, t, accumulated, lane_value);
  std::string mask_minus_one = op(absl::StrCat("sub ", mask_type, " ", mask, ", 1"));
  absl::StrAppend(&body_, "  ", next_mask, " = and ", mask_type, " ", mask, ", ", mask_minus_one, "\n");
  branch(head);
  // The accumulator's phi names the step block's combined value, known only now.
  body_.insert(accumulated_phi_at,
               absl::StrCat("  ", accumulated, " = phi ", av(type), " [", identity(kind, t, *this),
                            ", %", before, "], [", combined, ", %", current_label_, "]\n"));

  start_block(done);
  return accumulated;
}

}  // namespace tilert::hip
