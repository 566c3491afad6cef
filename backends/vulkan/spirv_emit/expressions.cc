// Expressions: constants, variables, parameters, builtins, operators with C semantics
// (truncating integer division, arithmetic shift of signed values), casts and subgroup
// reductions.
#include "absl/strings/str_cat.h"
#include "backends/vulkan/spirv_emit/emitter.h"
#include "ir/status.h"

namespace tilert::vulkan::spirv_emit {
namespace {

using spv::Op;

// The type a value of `t` is computed in, as a DType.
DType repr_dtype(DType t) {
  switch (t) {
    case DType::kF16: case DType::kBF16: return DType::kF32;
    case DType::kI8: return DType::kI32;
    case DType::kU8: return DType::kU32;
    default: return t;
  }
}

bool is_signed(DType t) { return dtype_kind(t) == DTypeKind::kSigned; }
int bits(DType t) { return dtype_size(t) * 8; }

struct BinaryOps {
  Op float_op, signed_op, unsigned_op, bool_op;
};

// Per tilert::BinaryOp, in its declaration order; OpNop where the operand kind cannot occur.
BinaryOps binary_ops(BinaryOp op) {
  switch (op) {
    case BinaryOp::kOr: return {Op::OpNop, Op::OpNop, Op::OpNop, Op::OpLogicalOr};
    case BinaryOp::kAnd: return {Op::OpNop, Op::OpNop, Op::OpNop, Op::OpLogicalAnd};
    case BinaryOp::kBitOr: return {Op::OpNop, Op::OpBitwiseOr, Op::OpBitwiseOr, Op::OpLogicalOr};
    case BinaryOp::kBitXor:
      return {Op::OpNop, Op::OpBitwiseXor, Op::OpBitwiseXor, Op::OpLogicalNotEqual};
    case BinaryOp::kBitAnd:
      return {Op::OpNop, Op::OpBitwiseAnd, Op::OpBitwiseAnd, Op::OpLogicalAnd};
    case BinaryOp::kEq: return {Op::OpFOrdEqual, Op::OpIEqual, Op::OpIEqual, Op::OpLogicalEqual};
    // C's != is true when either side is NaN.
    case BinaryOp::kNe:
      return {Op::OpFUnordNotEqual, Op::OpINotEqual, Op::OpINotEqual, Op::OpLogicalNotEqual};
    case BinaryOp::kLt: return {Op::OpFOrdLessThan, Op::OpSLessThan, Op::OpULessThan, Op::OpNop};
    case BinaryOp::kLe:
      return {Op::OpFOrdLessThanEqual, Op::OpSLessThanEqual, Op::OpULessThanEqual, Op::OpNop};
    case BinaryOp::kGt:
      return {Op::OpFOrdGreaterThan, Op::OpSGreaterThan, Op::OpUGreaterThan, Op::OpNop};
    case BinaryOp::kGe:
      return {Op::OpFOrdGreaterThanEqual, Op::OpSGreaterThanEqual, Op::OpUGreaterThanEqual,
              Op::OpNop};
    case BinaryOp::kShl:
      return {Op::OpNop, Op::OpShiftLeftLogical, Op::OpShiftLeftLogical, Op::OpNop};
    case BinaryOp::kShr:
      return {Op::OpNop, Op::OpShiftRightArithmetic, Op::OpShiftRightLogical, Op::OpNop};
    case BinaryOp::kAdd: return {Op::OpFAdd, Op::OpIAdd, Op::OpIAdd, Op::OpNop};
    case BinaryOp::kSub: return {Op::OpFSub, Op::OpISub, Op::OpISub, Op::OpNop};
    case BinaryOp::kMul: return {Op::OpFMul, Op::OpIMul, Op::OpIMul, Op::OpNop};
    case BinaryOp::kDiv: return {Op::OpFDiv, Op::OpSDiv, Op::OpUDiv, Op::OpNop};
    // C's % on floats (fmod) keeps the dividend's sign, as OpFRem does; on signed integers
    // OpSRem stands for a - (a / b) * b (see Emitter::expr).
    case BinaryOp::kMod: return {Op::OpFRem, Op::OpSRem, Op::OpUMod, Op::OpNop};
  }
  return {Op::OpNop, Op::OpNop, Op::OpNop, Op::OpNop};
}

}  // namespace

Id Emitter::expr(const simt::Expr& e) {
  using simt::ExprKind;
  if (failed()) return 0;
  switch (e.kind) {
    case ExprKind::kConst:
      return is_float(e.type) ? constant_float(e.type, e.float_value) : constant_int(e.type, e.int_value);
    case ExprKind::kVar:
      if (e.id >= f_.variables.size() || f_.variables[e.id].count != 0) {
        return fail(absl::InvalidArgumentError(absl::StrCat("variable ", e.id, " is not a private scalar")));
      }
      return b_.load(repr_type(f_.variables[e.id].type), variables_[e.id]);
    case ExprKind::kParam: return scalar_param(e.id);
    case ExprKind::kBuiltin: return builtin(static_cast<simt::Builtin>(e.op));
    case ExprKind::kUnary: {
      Id a = expr(e.args.at(0));
      if (static_cast<UnaryOp>(e.op) == UnaryOp::kNot) return b_.emit(Op::OpLogicalNot, bool_type(), {a});
      return b_.emit(is_float(e.type) ? Op::OpFNegate : Op::OpSNegate, repr_type(e.type), {a});
    }
    case ExprKind::kBinary: {
      Id a = expr(e.args.at(0));
      Id b = expr(e.args.at(1));
      DType operand = e.args[0].type;
      BinaryOps ops = binary_ops(static_cast<BinaryOp>(e.op));
      Op op = operand == DType::kBool ? ops.bool_op
              : is_float(operand)     ? ops.float_op
              : is_signed(operand)    ? ops.signed_op
                                      : ops.unsigned_op;
      if (op == Op::OpNop) {
        return fail(absl::InvalidArgumentError(
            absl::StrCat("operator ", av(binary_op_name(static_cast<BinaryOp>(e.op))), " on ",
                         av(dtype_name(operand)), " operands")));
      }
      if (op == Op::OpSRem) {
        // Vulkan leaves OpSRem undefined for negative operands (its SPIR-V environment), and
        // NVIDIA's driver does give other results: C's a % b is a - (a / b) * b with the
        // truncating OpSDiv, which Vulkan defines for every sign.
        Id type = repr_type(e.type);
        Id quotient = b_.emit(Op::OpSDiv, type, {a, b});
        return b_.emit(Op::OpISub, type, {a, b_.emit(Op::OpIMul, type, {quotient, b})});
      }
      return b_.emit(op, repr_type(e.type), {a, b});
    }
    case ExprKind::kCall: return call(e);
    case ExprKind::kCast: return cast(expr(e.args.at(0)), e.args[0].type, e.type);
    case ExprKind::kLoad: {
      const ArrayInfo* a = array(e.space, e.id);
      Id index = expr(e.args.at(0));
      return a == nullptr ? 0 : load_element(*a, index);
    }
    case ExprKind::kMbarrierTest:
      return fail(absl::UnimplementedError("hardware mbarriers have no SPIR-V counterpart"));
    case ExprKind::kMatrixElement:
      return fail(absl::UnimplementedError(
          "cooperative matrices do not expose which element a lane holds; the lowering reads them "
          "element by element only on PTX targets"));
    case ExprKind::kSubgroupReduce: {
      if (!o_.subgroup_arithmetic) {
        return fail(absl::UnimplementedError(
            "a subgroup reduction needs subgroup arithmetic, which this device lacks"));
      }
      // Clusters of lanes (ClusteredReduce, a constant cluster size) need their own capability,
      // which a device offers with VK_SUBGROUP_FEATURE_CLUSTERED_BIT.
      const bool clustered = e.int_value > 0;
      if (clustered && !o_.subgroup_clustered) {
        return fail(absl::UnimplementedError(
            "a clustered subgroup reduction needs the device's clustered subgroup operations"));
      }
      if (clustered) b_.add_capability(spv::Capability::GroupNonUniformClustered);
      else b_.add_capability(spv::Capability::GroupNonUniformArithmetic);
      DType t = e.args.at(0).type;
      Id value = expr(e.args[0]);
      auto kind = static_cast<ReduceKind>(e.op);
      Op op = Op::OpNop;
      if (is_float(t)) {
        op = kind == ReduceKind::kSum ? Op::OpGroupNonUniformFAdd
             : kind == ReduceKind::kMax ? Op::OpGroupNonUniformFMax
                                        : Op::OpGroupNonUniformFMin;
      } else if (is_integer(t)) {
        bool s = is_signed(t);
        op = kind == ReduceKind::kSum ? Op::OpGroupNonUniformIAdd
             : kind == ReduceKind::kMax ? (s ? Op::OpGroupNonUniformSMax : Op::OpGroupNonUniformUMax)
                                        : (s ? Op::OpGroupNonUniformSMin : Op::OpGroupNonUniformUMin);
      } else {
        return fail(absl::InvalidArgumentError(
            absl::StrCat("subgroup reduction of a ", av(dtype_name(t)), " value")));
      }
      if (clustered) {
        return b_.emit(op, repr_type(t),
                       {u32(static_cast<uint32_t>(spv::Scope::Subgroup)),
                        static_cast<uint32_t>(spv::GroupOperation::ClusteredReduce), value,
                        u32(static_cast<uint32_t>(e.int_value))});
      }
      return b_.emit(op, repr_type(t),
                     {u32(static_cast<uint32_t>(spv::Scope::Subgroup)),
                      static_cast<uint32_t>(spv::GroupOperation::Reduce), value});
    }
  }
  return fail(absl::InvalidArgumentError(absl::StrCat("unknown expression kind ", static_cast<int>(e.kind))));
}

Id Emitter::cast(Id value, DType from, DType to) {
  if (failed() || from == to) return value;
  DType source = repr_dtype(from);
  DType target = repr_dtype(to);
  Id type = repr_type(target);
  // Floats to 8-bit integers wrap like the reference: through i32.
  if (is_float(source) && (to == DType::kI8 || to == DType::kU8)) {
    value = b_.emit(Op::OpConvertFToS, i32_type(), {value});
    source = DType::kI32;
  }
  if (source != target) {
    if (target == DType::kBool) {
      value = is_float(source)
                  ? b_.emit(Op::OpFUnordNotEqual, type, {value, constant_float(source, 0.0)})
                  : b_.emit(Op::OpINotEqual, type, {value, constant_int(source, 0)});
    } else if (source == DType::kBool) {
      value = b_.emit(Op::OpSelect, type,
                      {value, constant_int(target, 1), constant_int(target, 0)});
    } else if (is_float(source) && is_float(target)) {
      value = b_.emit(Op::OpFConvert, type, {value});
    } else if (is_float(target)) {
      value = b_.emit(is_signed(source) ? Op::OpConvertSToF : Op::OpConvertUToF, type, {value});
    } else if (is_float(source)) {
      value = b_.emit(is_signed(target) ? Op::OpConvertFToS : Op::OpConvertFToU, type, {value});
    } else if (bits(source) == bits(target)) {
      value = b_.emit(Op::OpBitcast, type, {value});
    } else if (bits(target) < bits(source)) {  // 64 -> 32 keeps the low bits
      value = b_.emit(is_signed(target) ? Op::OpSConvert : Op::OpUConvert, type, {value});
    } else if (is_signed(source)) {  // sign-extends
      value = b_.emit(Op::OpSConvert, type, {value});
    } else {  // zero-extends; OpUConvert needs an unsigned result
      value = b_.emit(Op::OpUConvert, b_.type_int(static_cast<uint32_t>(bits(target)), false), {value});
      if (is_signed(target)) value = b_.emit(Op::OpBitcast, type, {value});
    }
  }
  switch (to) {
    case DType::kF16: return round_to_f16(value);
    case DType::kBF16: return bf16_bits_to_f32(f32_to_bf16_bits(value));
    case DType::kI8: {
      Id up = b_.emit(Op::OpShiftLeftLogical, type, {value, i32(24)});
      return b_.emit(Op::OpShiftRightArithmetic, type, {up, i32(24)});
    }
    case DType::kU8: return b_.emit(Op::OpBitwiseAnd, type, {value, u32(0xff)});
    default: return value;
  }
}

}  // namespace tilert::vulkan::spirv_emit
