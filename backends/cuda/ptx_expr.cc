// PTX for SIMT expressions: constants, variables, parameters, builtins, loads, operators and
// conversions. Every expression yields a fresh register (or a variable's own register), typed by
// reg_class: bool in predicates, 8- and 32-bit integers in .b32 (8-bit ones kept sign- or
// zero-extended), i64 in .b64, f16 / bf16 as raw .b16 bits, f32 / f64 in float registers.
#include <bit>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "backends/cuda/ptx_function.h"
#include "ir/status.h"

namespace tilert::cuda {
namespace {

using simt::Expr;
using simt::ExprKind;

// Instruction type suffix of arithmetic in `t`.
const char* arith(DType t) {
  switch (t) {
    case DType::kI8: case DType::kI32: return "s32";
    case DType::kU8: case DType::kU32: return "u32";
    case DType::kI64: return "s64";
    case DType::kF32: return "f32";
    case DType::kF64: return "f64";
    default: return "b32";
  }
}

// Type suffix of a load or store of one element of `t`.
const char* memory_type(DType t) {
  switch (t) {
    case DType::kBool: case DType::kU8: return "u8";
    case DType::kI8: return "s8";
    case DType::kI32: return "s32";
    case DType::kU32: return "u32";
    case DType::kI64: return "s64";
    case DType::kF16: case DType::kBF16: return "b16";
    case DType::kF32: return "f32";
    case DType::kF64: return "f64";
  }
  return "b32";
}

const char* space_qualifier(simt::Space s) {
  switch (s) {
    case simt::Space::kGlobal: return "global";
    case simt::Space::kShared: return "shared";
    case simt::Space::kPrivate: return "local";
  }
  return "global";
}

bool narrow_float(DType t) { return t == DType::kF16 || t == DType::kBF16; }

bool commutative(BinaryOp op) {
  return op == BinaryOp::kAdd || op == BinaryOp::kMul || op == BinaryOp::kBitAnd || op == BinaryOp::kBitOr ||
         op == BinaryOp::kBitXor || op == BinaryOp::kEq || op == BinaryOp::kNe;
}

// Whether evaluating `e` can neither fault, touch memory nor need converged lanes, so it may run
// where the source would have skipped it.
bool speculatable(const Expr& e) {
  switch (e.kind) {
    case ExprKind::kConst: case ExprKind::kVar: case ExprKind::kParam: case ExprKind::kBuiltin: return true;
    case ExprKind::kUnary: case ExprKind::kBinary: case ExprKind::kCast:
      for (const Expr& a : e.args)
        if (!speculatable(a)) return false;
      return true;
    default: return false;
  }
}

std::string f32_literal(float v) { return absl::StrFormat("0f%08X", std::bit_cast<uint32_t>(v)); }
std::string f64_literal(double v) {
  return absl::StrFormat("0d%016X", std::bit_cast<uint64_t>(v));
}

}  // namespace

PtxValue FunctionEmitter::int_value(int64_t v, DType t) {
  PtxValue out = new_value(t);
  if (reg_class(t) == RegClass::kB64) {
    line("mov.b64 ", out.reg, ", ", v);
  } else {
    line("mov.b32 ", out.reg, ", ", static_cast<int32_t>(v));
  }
  return out;
}

PtxValue FunctionEmitter::f32_value(float v) {
  PtxValue out = new_value(DType::kF32);
  line("mov.f32 ", out.reg, ", ", f32_literal(v));
  return out;
}

absl::StatusOr<PtxValue> FunctionEmitter::constant(const Expr& e) {
  switch (e.type) {
    case DType::kBool: {
      PtxValue out = new_value(DType::kBool);
      line("setp.ne.u32 ", out.reg, ", ", int_value(e.int_value != 0, DType::kU32).reg,
           ", 0");
      return out;
    }
    case DType::kF32: return f32_value(static_cast<float>(e.float_value));
    case DType::kF64: {
      PtxValue out = new_value(DType::kF64);
      line("mov.f64 ", out.reg, ", ", f64_literal(e.float_value));
      return out;
    }
    case DType::kF16: case DType::kBF16: {
      float v = static_cast<float>(e.float_value);
      PtxValue out = new_value(e.type);
      line(absl::StrFormat("mov.b16 %s, 0x%04X", out.reg,
                           e.type == DType::kF16 ? f32_to_f16_bits(v) : f32_to_bf16_bits(v)));
      return out;
    }
    default: {
      int64_t v = e.int_value;
      if (e.type == DType::kI8) v = static_cast<int8_t>(v);
      if (e.type == DType::kU8) v = static_cast<uint8_t>(v);
      return int_value(v, e.type);
    }
  }
}

absl::StatusOr<PtxValue> FunctionEmitter::expr(const Expr& e) {
  auto need = [&](size_t n) -> absl::Status {
    if (e.args.size() < n)
      return error(absl::StrCat("a ", e.kind == ExprKind::kCall ? "call" : "expression",
                                " needs ", n, " arguments, has ", e.args.size()));
    return absl::OkStatus();
  };
  switch (e.kind) {
    case ExprKind::kConst: return constant(e);
    case ExprKind::kVar: {
      if (auto it = unrolled_.find(e.id); it != unrolled_.end()) return int_value(it->second, e.type);
      if (e.id >= f_.variables.size() || f_.variables[e.id].count != 0)
        return error(absl::StrCat("variable #", e.id, " is not a private scalar"));
      return cast(PtxValue{var_reg(e.id, -1), f_.variables[e.id].type}, e.type);
    }
    case ExprKind::kParam:
      if (e.id >= f_.params.size() || f_.params[e.id].is_array)
        return error(absl::StrCat("parameter #", e.id, " is not a scalar parameter"));
      return cast(PtxValue{param_regs_[e.id], f_.params[e.id].type}, e.type);
    case ExprKind::kBuiltin: return builtin(e);
    case ExprKind::kUnary: {
      RETURN_IF_ERROR(need(1));
      ASSIGN_OR_RETURN(PtxValue a, expr(e.args[0]));
      if (static_cast<UnaryOp>(e.op) == UnaryOp::kNot) {
        ASSIGN_OR_RETURN(a, cast(a, DType::kBool));
        PtxValue out = new_value(DType::kBool);
        line("not.pred ", out.reg, ", ", a.reg);
        return out;
      }
      ASSIGN_OR_RETURN(a, cast(a, e.type));
      if (e.type == DType::kU32) {  // -x of an unsigned value wraps
        PtxValue out = new_value(e.type);
        line("neg.s32 ", out.reg, ", ", a.reg);
        return out;
      }
      if (reg_class(e.type) == RegClass::kPred || narrow_float(e.type))
        return error(absl::StrCat("negation of ", av(dtype_name(e.type))));
      PtxValue out = new_value(e.type);
      line("neg.", arith(e.type), " ", out.reg, ", ", a.reg);
      return out;
    }
    case ExprKind::kBinary: RETURN_IF_ERROR(need(2)); return binary(e);
    case ExprKind::kCall: return call(e);
    case ExprKind::kCast: {
      RETURN_IF_ERROR(need(1));
      ASSIGN_OR_RETURN(PtxValue a, expr(e.args[0]));
      return cast(a, e.type);
    }
    case ExprKind::kLoad: RETURN_IF_ERROR(need(1)); return load(e);
    case ExprKind::kSubgroupReduce: RETURN_IF_ERROR(need(1)); return subgroup_reduce(e);
    case ExprKind::kMbarrierTest: RETURN_IF_ERROR(need(2)); return mbarrier_test(e);
    case ExprKind::kMatrixElement: {
      RETURN_IF_ERROR(check_matrix_element(e.id, e.int_value, "matrix_element"));
      return cast(PtxValue{matrix_reg(e.id, static_cast<int>(e.int_value)), DType::kF32}, e.type);
    }
  }
  return error(absl::StrCat("unknown expression kind #", static_cast<int>(e.kind)));
}

absl::StatusOr<PtxValue> FunctionEmitter::builtin(const Expr& e) {
  // Ids are fixed for a thread's lifetime: each is read once, in the entry's prologue, so every
  // use (in any branch) sees the same register.
  const auto b = static_cast<simt::Builtin>(e.op);
  auto special = [&](const char* reg) {
    return PtxValue{prologue_register(reg, RegClass::kB32, [&](const std::string& r) {
                      return absl::StrCat("\tmov.u32 ", r, ", ", reg, ";\n");
                    }),
                    DType::kI32};
  };
  switch (b) {
    case simt::Builtin::kLocalId: return special("%tid.x");
    case simt::Builtin::kWorkgroupIdX: return special("%ctaid.x");
    case simt::Builtin::kWorkgroupIdY: return special("%ctaid.y");
    case simt::Builtin::kWorkgroupIdZ: return special("%ctaid.z");
    case simt::Builtin::kSubgroupSize: return int_value(32, DType::kI32);
    case simt::Builtin::kSubgroupLane: return special("%laneid");
    case simt::Builtin::kSubgroupId:
      return PtxValue{prologue_register("subgroup id", RegClass::kB32, [](const std::string& r) {
                        return absl::StrCat("\tmov.u32 ", r, ", %tid.x;\n\tshr.u32 ", r, ", ", r, ", 5;\n");
                      }),
                      DType::kI32};
    case simt::Builtin::kClock: {
      PtxValue out = new_value(DType::kI64);
      line("mov.u64 ", out.reg, ", %globaltimer");
      return out;
    }
    case simt::Builtin::kCycles: {
      PtxValue out = new_value(DType::kI64);
      line("mov.u64 ", out.reg, ", %clock64");
      return out;
    }
  }
  return error(absl::StrCat("unknown builtin #", static_cast<int>(e.op)));
}

absl::StatusOr<PtxValue> FunctionEmitter::load(const Expr& e) {
  if (e.space == simt::Space::kPrivate && e.id < f_.variables.size() && array_in_registers_[e.id]) {
    ASSIGN_OR_RETURN(int64_t k, register_array_index(e.id, e.args[0]));
    return cast(PtxValue{var_reg(e.id, k), f_.variables[e.id].type}, e.type);
  }
  ASSIGN_OR_RETURN(std::string addr, address(e.space, e.id, e.args[0], e.type));
  if (e.type == DType::kBool) {
    PtxValue byte = new_value(DType::kU32), out = new_value(DType::kBool);
    line("ld.", space_qualifier(e.space), ".u8 ", byte.reg, ", [", addr, "]");
    line("setp.ne.u32 ", out.reg, ", ", byte.reg, ", 0");
    return out;
  }
  PtxValue out = new_value(e.type);
  line("ld.", space_qualifier(e.space), ".", memory_type(e.type), " ", out.reg, ", [",
       addr, "]");
  return out;
}

absl::Status FunctionEmitter::store(simt::Space space, uint32_t array, const Expr& index, const Expr& stored) {
  DType element;
  switch (space) {
    case simt::Space::kGlobal:
      if (array >= f_.params.size()) return error(absl::StrCat("store to no parameter #", array));
      element = f_.params[array].type;
      break;
    case simt::Space::kShared:
      if (array >= f_.shared.size()) return error(absl::StrCat("store to no shared array #", array));
      element = f_.shared[array].type;
      break;
    default:
      if (array >= f_.variables.size()) return error(absl::StrCat("store to no variable #", array));
      element = f_.variables[array].type;
      break;
  }
  ASSIGN_OR_RETURN(std::string addr, address(space, array, index, element));
  ASSIGN_OR_RETURN(PtxValue value, expr(stored));
  ASSIGN_OR_RETURN(value, cast(value, element));
  if (element == DType::kBool) {
    PtxValue byte = new_value(DType::kU32);
    line("selp.u32 ", byte.reg, ", 1, 0, ", value.reg);
    value = byte;
  }
  line("st.", space_qualifier(space), ".", memory_type(element), " [", addr, "], ",
       value.reg);
  return absl::OkStatus();
}

absl::Status FunctionEmitter::atomic_add(const simt::Stmt& s) {
  if (s.space == simt::Space::kPrivate) return error("atomic add on private memory");
  DType element = s.space == simt::Space::kGlobal
                      ? (s.id < f_.params.size() ? f_.params[s.id].type : DType::kBool)
                      : (s.id < f_.shared.size() ? f_.shared[s.id].type : DType::kBool);
  if (element != DType::kI32 && element != DType::kU32 && element != DType::kF32)
    return error(absl::StrCat("atomic add on ", av(dtype_name(element)),
                              " (only i32, u32, f32)"));
  ASSIGN_OR_RETURN(std::string addr, address(s.space, s.id, s.operands[0], element));
  ASSIGN_OR_RETURN(PtxValue value, expr(s.operands[1]));
  ASSIGN_OR_RETURN(value, cast(value, element));
  PtxValue old = new_value(element);
  line("atom.", space_qualifier(s.space), ".add.", arith(element), " ", old.reg,
       ", [", addr, "], ", value.reg);
  return absl::OkStatus();
}

absl::StatusOr<PtxValue> FunctionEmitter::logic(const Expr& e) {
  // && and || short-circuit as in C: the right side may guard on the left (`i < n && A[i] > 0`).
  // A right side that cannot fault or reach memory is evaluated anyway, without a branch.
  bool is_and = static_cast<BinaryOp>(e.op) == BinaryOp::kAnd;
  ASSIGN_OR_RETURN(PtxValue a, expr(e.args[0]));
  ASSIGN_OR_RETURN(a, cast(a, DType::kBool));
  PtxValue out = new_value(DType::kBool);
  if (speculatable(e.args[1])) {
    ASSIGN_OR_RETURN(PtxValue b, expr(e.args[1]));
    ASSIGN_OR_RETURN(b, cast(b, DType::kBool));
    line(is_and ? "and.pred " : "or.pred ", out.reg, ", ", a.reg, ", ", b.reg);
    return out;
  }
  line("mov.pred ", out.reg, ", ", a.reg);
  std::string done = new_label();
  line(is_and ? "@!" : "@", out.reg, " bra ", done);
  ASSIGN_OR_RETURN(PtxValue b, expr(e.args[1]));
  ASSIGN_OR_RETURN(b, cast(b, DType::kBool));
  line("mov.pred ", out.reg, ", ", b.reg);
  label(done);
  return out;
}

absl::StatusOr<PtxValue> FunctionEmitter::binary(const Expr& e) {
  auto op = static_cast<BinaryOp>(e.op);
  if (op == BinaryOp::kAnd || op == BinaryOp::kOr) return logic(e);
  // Integer operands known here (constants, unrolled loop variables) fold or become immediates:
  // fewer instructions to write, and fewer for ptxas to read. Each operand is folded once, and the
  // whole from the two (folding `e` itself would walk both operands again).
  const Expr* lhs = &e.args[0];
  const Expr* rhs = &e.args[1];
  std::optional<int64_t> lhs_known = integer_operand(*lhs), rhs_known = integer_operand(*rhs);
  if (is_integer(e.type) && lhs_known && rhs_known) {
    if (std::optional<int64_t> v = fold_binary(e, *lhs_known, *rhs_known)) return int_value(*v, e.type);
  }
  if (!rhs_known && lhs_known && commutative(op)) {
    std::swap(lhs, rhs);
    std::swap(lhs_known, rhs_known);
  }
  ASSIGN_OR_RETURN(PtxValue a, expr(*lhs));
  PtxValue b;
  if (rhs_known && is_integer(a.type) && a.type == e.type) {  // x + 0, x * 1 and the like are x
    const bool zero = *rhs_known == 0, one = *rhs_known == 1;
    if ((zero && (op == BinaryOp::kAdd || op == BinaryOp::kSub || op == BinaryOp::kBitOr ||
                  op == BinaryOp::kBitXor || op == BinaryOp::kShl || op == BinaryOp::kShr)) ||
        (one && (op == BinaryOp::kMul || op == BinaryOp::kDiv)))
      return a;
  }
  if (rhs_known && is_integer(a.type) && a.type == e.type &&
      (op == BinaryOp::kDiv || op == BinaryOp::kMod)) {
    if (*rhs_known == 1) return int_value(0, e.type);  // x % 1 (x / 1 returned above)
    if (std::optional<PtxValue> q = divide_by_constant(
            a, *rhs_known, op == BinaryOp::kMod, known_nonnegative(*lhs, unrolled_)))
      return *q;
  }
  if (rhs_known && is_integer(a.type)) {
    b = {absl::StrCat(wrap_to(*rhs_known, a.type)), a.type};
  } else {
    ASSIGN_OR_RETURN(b, expr(*rhs));
    ASSIGN_OR_RETURN(b, cast(b, a.type));
  }
  const DType t = a.type;
  const bool flt = t == DType::kF32 || t == DType::kF64;
  if (narrow_float(t)) return error(absl::StrCat("arithmetic on ", av(dtype_name(t))));
  if (t == DType::kBool) {  // only bit operators and equality apply to predicates
    const char* inst = op == BinaryOp::kBitAnd ? "and.pred" : op == BinaryOp::kBitOr ? "or.pred"
                       : (op == BinaryOp::kBitXor || op == BinaryOp::kNe) ? "xor.pred" : nullptr;
    if (op == BinaryOp::kEq) {
      PtxValue x = new_value(DType::kBool), out = new_value(DType::kBool);
      line("xor.pred ", x.reg, ", ", a.reg, ", ", b.reg);
      line("not.pred ", out.reg, ", ", x.reg);
      return out;
    }
    if (inst == nullptr) return error(absl::StrCat("operator ", av(binary_op_name(op)), " on bool"));
    PtxValue out = new_value(DType::kBool);
    line(inst, " ", out.reg, ", ", a.reg, ", ", b.reg);
    return out;
  }
  if (binary_op_is_comparison(op)) {
    const char* cmp = op == BinaryOp::kEq ? "eq" : op == BinaryOp::kNe ? (flt ? "neu" : "ne")
                      : op == BinaryOp::kLt ? "lt" : op == BinaryOp::kLe ? "le"
                      : op == BinaryOp::kGt ? "gt" : "ge";
    PtxValue out = new_value(DType::kBool);
    line("setp.", cmp, ".", arith(t), " ", out.reg, ", ", a.reg, ", ", b.reg);
    return out;
  }
  const bool wide = reg_class(t) == RegClass::kB64;
  PtxValue out = new_value(t);
  auto emit = [&](const auto&... inst) { line(inst..., " ", out.reg, ", ", a.reg, ", ", b.reg); };
  switch (op) {
    case BinaryOp::kAdd: emit("add.", flt ? "rn." : "", arith(t)); return out;
    case BinaryOp::kSub: emit("sub.", flt ? "rn." : "", arith(t)); return out;
    case BinaryOp::kMul: emit("mul.", flt ? "rn." : "lo.", arith(t)); return out;
    case BinaryOp::kDiv: emit("div.", flt ? "rn." : "", arith(t)); return out;
    case BinaryOp::kMod:
      if (!flt) {
        emit("rem.", arith(t));
        return out;
      } else {
        // fmod: a - trunc(a / b) * b.
        PtxValue q = new_value(t);
        line("div.rn.", arith(t), " ", q.reg, ", ", a.reg, ", ", b.reg);
        line("cvt.rzi.", arith(t), ".", arith(t), " ", q.reg, ", ", q.reg);
        line("neg.", arith(t), " ", q.reg, ", ", q.reg);
        line("fma.rn.", arith(t), " ", out.reg, ", ", q.reg, ", ", b.reg, ", ", a.reg);
        return out;
      }
    default: break;
  }
  if (flt) return error(absl::StrCat("operator ", av(binary_op_name(op)), " on ", av(dtype_name(t))));
  const char* bits = wide ? "b64" : "b32";
  switch (op) {
    case BinaryOp::kBitAnd: emit("and.", bits); return out;
    case BinaryOp::kBitOr: emit("or.", bits); return out;
    case BinaryOp::kBitXor: emit("xor.", bits); return out;
    case BinaryOp::kShl: case BinaryOp::kShr: {
      std::string amount = b.reg;
      if (wide && !rhs_known) {  // shift amounts are 32-bit
        amount = new_reg(RegClass::kB32);
        line("cvt.u32.u64 ", amount, ", ", b.reg);
      }
      line(op == BinaryOp::kShl ? absl::StrCat("shl.", bits)
                                : absl::StrCat("shr.", arith(t)),
           " ", out.reg, ", ", a.reg, ", ", amount);
      return out;
    }
    default: break;
  }
  return error(absl::StrCat("unknown binary operator #", static_cast<int>(e.op)));
}

absl::StatusOr<PtxValue> FunctionEmitter::cast(PtxValue v, DType to) {
  const DType from = v.type;
  if (from == to) return v;
  if (reg_class(from) == reg_class(to) && reg_class(to) == RegClass::kB32 && to != DType::kI8 &&
      to != DType::kU8)
    return PtxValue{v.reg, to};  // i32 <-> u32 and widening of 8-bit values keep their bits
  if (to == DType::kBool) {
    if (narrow_float(from)) {
      ASSIGN_OR_RETURN(v, cast(v, DType::kF32));
    }
    PtxValue out = new_value(DType::kBool);
    if (v.type == DType::kF32) line("setp.neu.f32 ", out.reg, ", ", v.reg, ", 0f00000000");
    else if (v.type == DType::kF64) line("setp.neu.f64 ", out.reg, ", ", v.reg, ", 0d0000000000000000");
    else line("setp.ne.", reg_class(v.type) == RegClass::kB64 ? "s64" : "s32", " ",
              out.reg, ", ", v.reg, ", 0");
    return out;
  }
  if (from == DType::kBool) {
    PtxValue word = new_value(DType::kI32);
    line("selp.u32 ", word.reg, ", 1, 0, ", v.reg);
    return cast(word, to);
  }
  // 16-bit floats convert through f32.
  if (narrow_float(from) && to != DType::kF32) {
    ASSIGN_OR_RETURN(v, cast(v, DType::kF32));
    return cast(v, to);
  }
  if (narrow_float(to) && from != DType::kF32) {
    ASSIGN_OR_RETURN(v, cast(v, DType::kF32));
    return cast(v, to);
  }
  PtxValue out = new_value(to);
  if (from == DType::kF16) { line("cvt.f32.f16 ", out.reg, ", ", v.reg); return out; }
  if (from == DType::kBF16) {
    if (target_.arch.rfind("sm_9", 0) == 0) {
      line("cvt.f32.bf16 ", out.reg, ", ", v.reg);
    } else {  // bf16 is the high half of an f32
      std::string zero = new_reg(RegClass::kB16);
      line("mov.b16 ", zero, ", 0");
      line("mov.b32 ", out.reg, ", {", zero, ", ", v.reg, "}");
    }
    return out;
  }
  if (to == DType::kF16) { line("cvt.rn.f16.f32 ", out.reg, ", ", v.reg); return out; }
  if (to == DType::kBF16) { line("cvt.rn.bf16.f32 ", out.reg, ", ", v.reg); return out; }
  const bool from_float = is_float(from), to_float = is_float(to);
  if (from_float && to_float) {
    line(to == DType::kF64 ? "cvt.f64.f32 " : "cvt.rn.f32.f64 ", out.reg, ", ", v.reg);
    return out;
  }
  if (!from_float && to_float) {
    line("cvt.rn.", arith(to), ".", arith(from), " ", out.reg, ", ", v.reg);
    return out;
  }
  // To an integer: from a float truncate toward zero (through s64 for unsigned targets, so
  // negative values wrap as in the reference), from an integer keep the low bits.
  if (to == DType::kI64) {
    if (from_float) line("cvt.rzi.s64.", arith(from), " ", out.reg, ", ", v.reg);
    else line("cvt.", from == DType::kI32 || from == DType::kI8 ? "s64.s32 " : "u64.u32 ",
              out.reg, ", ", v.reg);
    return out;
  }
  std::string word = v.reg;
  if (from_float && (to == DType::kI32 || to == DType::kI8)) {
    word = new_reg(RegClass::kB32);
    line("cvt.rzi.s32.", arith(from), " ", word, ", ", v.reg);
  } else if (from_float || from == DType::kI64) {
    std::string wide = v.reg;
    if (from_float) {
      wide = new_reg(RegClass::kB64);
      line("cvt.rzi.s64.", arith(from), " ", wide, ", ", v.reg);
    }
    word = new_reg(RegClass::kB32);
    line("cvt.u32.u64 ", word, ", ", wide);
  }
  switch (to) {
    case DType::kI8: line("bfe.s32 ", out.reg, ", ", word, ", 0, 8"); break;
    case DType::kU8: line("and.b32 ", out.reg, ", ", word, ", 255"); break;
    default: line("mov.b32 ", out.reg, ", ", word); break;
  }
  return out;
}

}  // namespace tilert::cuda
