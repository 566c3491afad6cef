// Expressions of the AMDGCN emitter: every SIMT expression kind to SSA values. Operands are
// emitted left to right; && and || evaluate both sides (SIMT expressions have no side effects
// and the lowering guards every global access with an if).
#include "absl/strings/str_cat.h"
#include "backends/hip/emitter.h"
#include "ir/status.h"

namespace tilert::hip {
namespace {

absl::Status arity_error(const simt::Expr& e, size_t want) {
  return absl::InvalidArgumentError(absl::StrCat("simt expression ", static_cast<int>(e.kind),
                                                 ": expected ", want, " operands, got ",
                                                 e.args.size()));
}

// LLVM's spelling of a binary operator on `t` (comparisons without the compare instruction).
std::string_view binary_instruction(BinaryOp op, DType t) {
  bool f = is_float(t);
  bool s = dtype_kind(t) == DTypeKind::kSigned;
  switch (op) {
    case BinaryOp::kAdd: return f ? "fadd" : "add";
    case BinaryOp::kSub: return f ? "fsub" : "sub";
    case BinaryOp::kMul: return f ? "fmul" : "mul";
    case BinaryOp::kDiv: return f ? "fdiv" : s ? "sdiv" : "udiv";
    case BinaryOp::kMod: return f ? "frem" : s ? "srem" : "urem";
    case BinaryOp::kShl: return "shl";
    case BinaryOp::kShr: return s ? "ashr" : "lshr";
    case BinaryOp::kBitAnd: case BinaryOp::kAnd: return "and";
    case BinaryOp::kBitOr: case BinaryOp::kOr: return "or";
    case BinaryOp::kBitXor: return "xor";
    case BinaryOp::kEq: return f ? "fcmp oeq" : "icmp eq";
    case BinaryOp::kNe: return f ? "fcmp une" : "icmp ne";
    case BinaryOp::kLt: return f ? "fcmp olt" : s ? "icmp slt" : "icmp ult";
    case BinaryOp::kLe: return f ? "fcmp ole" : s ? "icmp sle" : "icmp ule";
    case BinaryOp::kGt: return f ? "fcmp ogt" : s ? "icmp sgt" : "icmp ugt";
    case BinaryOp::kGe: return f ? "fcmp oge" : s ? "icmp sge" : "icmp uge";
  }
  return "?";
}

}  // namespace

absl::StatusOr<std::string> Emitter::element_pointer(simt::Space space, uint32_t id,
                                                     const std::string& index,
                                                     DType* element_type) {
  switch (space) {
    case simt::Space::kGlobal: {
      if (id >= f_.params.size() || !f_.params[id].is_array) {
        return absl::InvalidArgumentError(absl::StrCat("global array ", id, " is not an array parameter"));
      }
      *element_type = f_.params[id].type;
      std::string_view t = memory_type(*element_type);
      return op(absl::StrCat("getelementptr inbounds ", av(t), ", ", av(t), " addrspace(1)* %p", id,
                             ", i32 ", index));
    }
    case simt::Space::kShared: {
      if (id >= f_.shared.size()) {
        return absl::InvalidArgumentError(absl::StrCat("shared array ", id, " does not exist"));
      }
      *element_type = f_.shared[id].type;
      std::string array = absl::StrCat("[", f_.shared[id].count, " x ", av(memory_type(*element_type)), "]");
      return op(absl::StrCat("getelementptr inbounds ", array, ", ", array, " addrspace(3)* @shared",
                             id, ", i32 0, i32 ", index));
    }
    case simt::Space::kPrivate: {
      RETURN_IF_ERROR(check_var(id, true, "private array"));
      *element_type = f_.variables[id].type;
      std::string array = absl::StrCat("[", f_.variables[id].count, " x ",
                                       av(memory_type(*element_type)), "]");
      return op(absl::StrCat("getelementptr inbounds ", array, ", ", array, " addrspace(5)* %v", id,
                             ", i32 0, i32 ", index));
    }
  }
  return absl::InvalidArgumentError("unknown memory space");
}

absl::StatusOr<std::string> Emitter::expr(const simt::Expr& e) {
  using simt::ExprKind;
  switch (e.kind) {
    case ExprKind::kConst: return constant(e);
    case ExprKind::kVar: {
      RETURN_IF_ERROR(check_var(e.id, false, "variable"));
      DType t = f_.variables[e.id].type;
      std::string_view m = memory_type(t);
      std::string loaded = op(absl::StrCat("load ", av(m), ", ", av(m), " addrspace(5)* %v", e.id));
      return cast(from_memory(loaded, t), t, e.type);
    }
    case ExprKind::kParam: {
      if (e.id >= f_.params.size() || f_.params[e.id].is_array) {
        return absl::InvalidArgumentError(absl::StrCat("parameter ", e.id, " is not a scalar parameter"));
      }
      DType t = f_.params[e.id].type;
      return cast(from_memory(absl::StrCat("%p", e.id), t), t, e.type);
    }
    case ExprKind::kBuiltin: return builtin(static_cast<simt::Builtin>(e.op));
    case ExprKind::kUnary: {
      if (e.args.size() != 1) return arity_error(e, 1);
      ASSIGN_OR_RETURN(std::string a, expr(e.args[0]));
      std::string_view t = value_type(e.type);
      if (static_cast<UnaryOp>(e.op) == UnaryOp::kNot) return op(absl::StrCat("xor i1 ", a, ", true"));
      if (is_float(e.type)) return op(absl::StrCat("fneg ", av(t), " ", a));
      return op(absl::StrCat("sub ", av(t), " 0, ", a));
    }
    case ExprKind::kBinary: {
      if (e.args.size() != 2) return arity_error(e, 2);
      ASSIGN_OR_RETURN(std::string a, expr(e.args[0]));
      ASSIGN_OR_RETURN(std::string b, expr(e.args[1]));
      DType t = e.args[0].type;
      return op(absl::StrCat(av(binary_instruction(static_cast<BinaryOp>(e.op), t)), " ",
                             av(value_type(t)), " ", a, ", ", b));
    }
    case ExprKind::kCall: return call(e);
    case ExprKind::kCast: {
      if (e.args.size() != 1) return arity_error(e, 1);
      ASSIGN_OR_RETURN(std::string a, expr(e.args[0]));
      return cast(a, e.args[0].type, e.type);
    }
    case ExprKind::kLoad: {
      if (e.args.size() != 1) return arity_error(e, 1);
      ASSIGN_OR_RETURN(std::string index, expr(e.args[0]));
      DType t = DType::kI32;
      ASSIGN_OR_RETURN(std::string pointer, element_pointer(e.space, e.id, index, &t));
      std::string_view m = memory_type(t);
      int space = e.space == simt::Space::kGlobal ? 1 : e.space == simt::Space::kShared ? 3 : 5;
      std::string loaded = op(absl::StrCat("load ", av(m), ", ", av(m), " addrspace(", space, ")* ",
                                           pointer, ", align ", memory_align(t)));
      return cast(from_memory(loaded, t), t, e.type);
    }
    case ExprKind::kSubgroupReduce: return subgroup_reduce(e);
    case ExprKind::kMbarrierTest:
      return absl::UnimplementedError("hardware mbarriers are not emitted for AMDGCN");
    case ExprKind::kMatrixElement:
      return absl::UnimplementedError("matrix statements (MFMA / WMMA) are not emitted for AMDGCN yet");
  }
  return absl::InvalidArgumentError("unknown simt expression kind");
}

}  // namespace tilert::hip
