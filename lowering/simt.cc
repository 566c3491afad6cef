#include "lowering/simt.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "ir/status.h"

namespace tilert::simt {
namespace {

// The type arithmetic happens in: narrow floats compute in f32, narrow integers and bool in i32.
DType arithmetic_type(DType t) {
  switch (t) {
    case DType::kF16: case DType::kBF16: return DType::kF32;
    case DType::kBool: case DType::kI8: case DType::kU8: return DType::kI32;
    default: return t;
  }
}

DType common_type(const Expr& a, const Expr& b) {
  return arithmetic_type(promote(arithmetic_type(a.type), arithmetic_type(b.type)));
}

bool is_logic(BinaryOp op) { return op == BinaryOp::kAnd || op == BinaryOp::kOr; }

}  // namespace

std::string_view builtin_name(Builtin b) {
  switch (b) {
#define TILERT_X(e, s) case Builtin::e: return s;
    TILERT_SIMT_BUILTINS(TILERT_X)
#undef TILERT_X
  }
  return "?";
}

std::string_view stmt_kind_name(StmtKind k) {
  switch (k) {
#define TILERT_X(e, s) case StmtKind::e: return s;
    TILERT_SIMT_STMT_KINDS(TILERT_X)
#undef TILERT_X
  }
  return "?";
}

std::string_view matrix_use_name(MatrixUse u) {
  switch (u) {
    case MatrixUse::kA: return "a";
    case MatrixUse::kB: return "b";
    case MatrixUse::kAccumulator: return "accumulator";
  }
  return "?";
}

std::string_view barrier_kind_name(BarrierKind k) {
  switch (k) {
    case BarrierKind::kWorkgroup: return "workgroup";
    case BarrierKind::kSubgroup: return "subgroup";
    case BarrierKind::kNamed: return "named";
    case BarrierKind::kNamedArrive: return "named_arrive";
    case BarrierKind::kCluster: return "cluster";
  }
  return "?";
}

Expr Expr::int_const(int64_t v, DType type) {
  Expr e;
  e.kind = ExprKind::kConst;
  e.type = type;
  e.int_value = v;
  return e;
}
Expr Expr::float_const(double v, DType type) {
  Expr e;
  e.kind = ExprKind::kConst;
  e.type = type;
  e.float_value = v;
  return e;
}
Expr Expr::bool_const(bool v) { return int_const(v ? 1 : 0, DType::kBool); }
Expr Expr::var(uint32_t id, DType type) {
  Expr e;
  e.kind = ExprKind::kVar;
  e.type = type;
  e.id = id;
  return e;
}
Expr Expr::param(uint32_t id, DType type) {
  Expr e = var(id, type);
  e.kind = ExprKind::kParam;
  return e;
}
Expr Expr::builtin(Builtin b) {
  Expr e;
  e.kind = ExprKind::kBuiltin;
  e.op = static_cast<uint8_t>(b);
  e.type = b == Builtin::kClock || b == Builtin::kCycles ? DType::kI64 : DType::kI32;
  return e;
}
Expr Expr::unary(UnaryOp op, Expr a) {
  Expr e;
  e.kind = ExprKind::kUnary;
  e.op = static_cast<uint8_t>(op);
  e.type = op == UnaryOp::kNot ? DType::kBool : arithmetic_type(a.type);
  e.args.push_back(op == UnaryOp::kNot ? cast(DType::kBool, std::move(a)) : cast(e.type, std::move(a)));
  return e;
}
Expr Expr::binary(BinaryOp op, Expr a, Expr b) {
  Expr e;
  e.kind = ExprKind::kBinary;
  e.op = static_cast<uint8_t>(op);
  DType operand = is_logic(op) ? DType::kBool : common_type(a, b);
  e.type = binary_op_is_comparison(op) ? DType::kBool : operand;
  e.args.reserve(2);  // one allocation, not a second one and a move on the second push_back
  e.args.push_back(cast(operand, std::move(a)));
  e.args.push_back(cast(operand, std::move(b)));
  return e;
}
Expr Expr::call(Func f, std::vector<Expr> args) {
  Expr e;
  e.kind = ExprKind::kCall;
  e.op = static_cast<uint8_t>(f);
  switch (f) {
    case Func::kMin: case Func::kMax: case Func::kCeilDiv:
      e.type = common_type(args[0], args[1]);
      for (Expr& a : args) a = cast(e.type, std::move(a));
      break;
    case Func::kSelect:
      e.type = common_type(args[1], args[2]);
      args[0] = cast(DType::kBool, std::move(args[0]));
      args[1] = cast(e.type, std::move(args[1]));
      args[2] = cast(e.type, std::move(args[2]));
      break;
    case Func::kAbs:
      e.type = arithmetic_type(args[0].type);
      args[0] = cast(e.type, std::move(args[0]));
      break;
    case Func::kFma:  // f32 unless an argument is f64
      e.type = DType::kF32;
      for (const Expr& a : args) e.type = a.type == DType::kF64 ? DType::kF64 : e.type;
      for (Expr& a : args) a = cast(e.type, std::move(a));
      break;
    default:  // transcendentals and rounding: f32 unless the argument is f64
      e.type = args[0].type == DType::kF64 ? DType::kF64 : DType::kF32;
      args[0] = cast(e.type, std::move(args[0]));
      break;
  }
  e.args = std::move(args);
  return e;
}
Expr Expr::cast(DType to, Expr a) {
  if (a.type == to) return a;
  Expr e;
  e.kind = ExprKind::kCast;
  e.type = to;
  e.args.push_back(std::move(a));
  return e;
}
Expr Expr::load(Space space, uint32_t array, DType element_type, Expr index) {
  Expr e;
  e.kind = ExprKind::kLoad;
  e.type = element_type;
  e.space = space;
  e.id = array;
  e.args.push_back(cast(DType::kI32, std::move(index)));
  return e;
}
Expr Expr::subgroup_reduce(ReduceKind kind, Expr value, int cluster) {
  Expr e;
  e.kind = ExprKind::kSubgroupReduce;
  e.op = static_cast<uint8_t>(kind);
  e.int_value = cluster;
  e.type = arithmetic_type(value.type);
  e.args.push_back(cast(e.type, std::move(value)));
  return e;
}

Expr Expr::matrix_element(uint32_t matrix, int element) {
  Expr e;
  e.kind = ExprKind::kMatrixElement;
  e.type = DType::kF32;
  e.id = matrix;
  e.int_value = element;
  return e;
}

Expr Expr::mbarrier_test(uint32_t array, Expr index, Expr parity) {
  Expr e;
  e.kind = ExprKind::kMbarrierTest;
  e.type = DType::kBool;
  e.space = Space::kShared;
  e.id = array;
  e.args.push_back(cast(DType::kI32, std::move(index)));
  e.args.push_back(cast(DType::kI32, std::move(parity)));
  return e;
}

std::vector<int64_t> Function::shared_offsets() const {
  std::vector<int64_t> offsets;
  int64_t offset = 0;
  for (const SharedArray& s : shared) {
    const int64_t align = std::max<int64_t>(s.align, 16);
    offset = (offset + align - 1) / align * align;
    offsets.push_back(offset);
    offset += (s.bytes() + 15) / 16 * 16;
  }
  return offsets;
}

int64_t Function::shared_bytes() const {
  if (shared.empty()) return 0;
  return shared_offsets().back() + (shared.back().bytes() + 15) / 16 * 16;
}

std::string_view space_name(Space s) {
  switch (s) {
    case Space::kGlobal: return "global";
    case Space::kShared: return "shared";
    case Space::kPrivate: return "private";
  }
  return "?";
}

namespace {

class Printer {
 public:
  explicit Printer(const Function& f) : f_(f) {}

  std::string array_name(Space space, uint32_t id) const {
    switch (space) {
      case Space::kGlobal: return id < f_.params.size() ? f_.params[id].name : absl::StrCat("?param", id);
      case Space::kShared: return id < f_.shared.size() ? f_.shared[id].name : absl::StrCat("?shared", id);
      case Space::kPrivate:
        return id < f_.variables.size() ? f_.variables[id].name : absl::StrCat("?var", id);
    }
    return "?";
  }

  std::string expr(const Expr& e) const {
    switch (e.kind) {
      case ExprKind::kConst:
        if (is_float(e.type)) return absl::StrFormat("%.9g:%s", e.float_value, av(dtype_name(e.type)));
        if (e.type == DType::kBool) return e.int_value ? "true" : "false";
        return e.type == DType::kI32 ? absl::StrCat(e.int_value)
                                     : absl::StrCat(e.int_value, ":", av(dtype_name(e.type)));
      case ExprKind::kVar: return array_name(Space::kPrivate, e.id);
      case ExprKind::kParam: return array_name(Space::kGlobal, e.id);
      case ExprKind::kBuiltin: return std::string(builtin_name(static_cast<Builtin>(e.op)));
      case ExprKind::kUnary:
        return absl::StrCat(av(unary_op_name(static_cast<UnaryOp>(e.op))), "(", expr(e.args[0]), ")");
      case ExprKind::kBinary:
        return absl::StrCat("(", expr(e.args[0]), " ", av(binary_op_name(static_cast<BinaryOp>(e.op))), " ",
                            expr(e.args[1]), ")");
      case ExprKind::kCall: {
        std::string s = absl::StrCat(av(func_name(static_cast<Func>(e.op))), "(");
        for (size_t i = 0; i < e.args.size(); ++i) absl::StrAppend(&s, i ? ", " : "", expr(e.args[i]));
        return s + ")";
      }
      case ExprKind::kCast: return absl::StrCat(av(dtype_name(e.type)), "(", expr(e.args[0]), ")");
      case ExprKind::kLoad:
        return absl::StrCat(array_name(e.space, e.id), "[", expr(e.args[0]), "]");
      case ExprKind::kSubgroupReduce:
        return absl::StrCat("subgroup_", av(reduce_kind_name(static_cast<ReduceKind>(e.op))), "(",
                            expr(e.args[0]),
                            e.int_value > 0 ? absl::StrCat(", cluster ", e.int_value) : std::string(), ")");
      case ExprKind::kMatrixElement: return absl::StrCat(matrix_name(e.id), ".element[", e.int_value, "]");
      case ExprKind::kMbarrierTest:
        return absl::StrCat("mbarrier_test(", array_name(Space::kShared, e.id), "[", expr(e.args[0]),
                            "], parity ", expr(e.args[1]), ")");
    }
    return "?";
  }

  void body(const Body& b, int depth, std::string* out) const {
    for (const Stmt& s : b) stmt(s, depth, out);
  }

  void stmt(const Stmt& s, int depth, std::string* out) const {
    std::string pad(2 * depth, ' ');
    if (!s.comment.empty()) absl::StrAppend(out, pad, "// ", s.comment, "\n");
    switch (s.kind) {
      case StmtKind::kAssign:
        if (s.operands.size() == 2)
          absl::StrAppend(out, pad, array_name(Space::kPrivate, s.id), "[", expr(s.operands[0]),
                          "] = ", expr(s.operands[1]), "\n");
        else
          absl::StrAppend(out, pad, array_name(Space::kPrivate, s.id), " = ", expr(s.operands[0]), "\n");
        return;
      case StmtKind::kStore:
      case StmtKind::kAtomicAdd:
        absl::StrAppend(out, pad, s.kind == StmtKind::kAtomicAdd ? "atomic_add " : "",
                        array_name(s.space, s.id), "[", expr(s.operands[0]), "] ",
                        s.kind == StmtKind::kAtomicAdd ? "+= " : "= ", expr(s.operands[1]), "\n");
        return;
      case StmtKind::kIf:
        absl::StrAppend(out, pad, "if ", expr(s.operands[0]), " {\n");
        body(s.body, depth + 1, out);
        if (!s.else_body.empty()) {
          absl::StrAppend(out, pad, "} else {\n");
          body(s.else_body, depth + 1, out);
        }
        absl::StrAppend(out, pad, "}\n");
        return;
      case StmtKind::kFor:
        absl::StrAppend(out, pad, s.unroll ? "unrolled " : "", "for ", array_name(Space::kPrivate, s.id),
                        " = ", expr(s.operands[0]), "; < ", expr(s.operands[1]), "; += ",
                        expr(s.operands[2]), " {\n");
        body(s.body, depth + 1, out);
        absl::StrAppend(out, pad, "}\n");
        return;
      case StmtKind::kWhile:
        absl::StrAppend(out, pad, "while ", expr(s.operands[0]), " {\n");
        body(s.body, depth + 1, out);
        absl::StrAppend(out, pad, "}\n");
        return;
      case StmtKind::kBarrier:
        absl::StrAppend(out, pad, "barrier ", av(barrier_kind_name(s.barrier)));
        for (const Expr& o : s.operands) absl::StrAppend(out, " ", expr(o));
        absl::StrAppend(out, "\n");
        return;
      case StmtKind::kReturn:
        absl::StrAppend(out, pad, "return\n");
        return;
      case StmtKind::kMatrixFill:
        absl::StrAppend(out, pad, matrix_name(s.id), " = fill(", expr(s.operands[0]), ")\n");
        return;
      case StmtKind::kMatrixLoad:
        absl::StrAppend(out, pad, matrix_name(s.id), " = matrix_load ", array_name(s.space, s.array), "[",
                        expr(s.operands[0]), "] stride ", expr(s.operands[1]), s.a ? " column_major" : "", "\n");
        return;
      case StmtKind::kMatrixStore:
        absl::StrAppend(out, pad, "matrix_store ", array_name(s.space, s.array), "[", expr(s.operands[0]),
                        "] stride ", expr(s.operands[1]), " = ", matrix_name(s.id), "\n");
        return;
      case StmtKind::kMatrixTensorLoad:
      case StmtKind::kMatrixTensorStore: {
        std::string window = absl::StrCat(array_name(s.space, s.array), "[", expr(s.operands[0]), " +.., ",
                                          expr(s.operands[1]), " +..] of ", expr(s.operands[2]), "x",
                                          expr(s.operands[3]), " stride ", expr(s.operands[4]));
        if (s.kind == StmtKind::kMatrixTensorLoad)
          absl::StrAppend(out, pad, matrix_name(s.id), " = matrix_tensor_load ", window, "\n");
        else
          absl::StrAppend(out, pad, "matrix_tensor_store ", window, " = ", matrix_name(s.id), "\n");
        return;
      }
      case StmtKind::kMatrixMulAdd:
        absl::StrAppend(out, pad, matrix_name(s.id), " += ", matrix_name(s.a), " * ", matrix_name(s.b), "\n");
        return;
      case StmtKind::kMatrixElementStore:
        absl::StrAppend(out, pad, matrix_name(s.id), ".element[", s.a, "] = ", expr(s.operands[0]), "\n");
        return;
      case StmtKind::kMatrixConvert:
        absl::StrAppend(out, pad, matrix_name(s.id), " = convert(", matrix_name(s.a), ")\n");
        return;
      case StmtKind::kAsyncCopy:
        absl::StrAppend(out, pad, "async_copy ", s.a, " bytes ", array_name(Space::kShared, s.id), "[",
                        expr(s.operands[0]), "] <- ", array_name(Space::kGlobal, s.array), "[",
                        expr(s.operands[1]), "]\n");
        return;
      case StmtKind::kChunkLoad:
        absl::StrAppend(out, pad, "chunk_load ", array_name(Space::kPrivate, s.id), "[", expr(s.operands[0]),
                        " +: 4] <- ", array_name(Space::kGlobal, s.array), "[", expr(s.operands[1]), "]\n");
        return;
      case StmtKind::kChunkStore:
        absl::StrAppend(out, pad, "chunk_store ", array_name(Space::kShared, s.id), "[", expr(s.operands[0]),
                        "] <- ", array_name(Space::kPrivate, s.array), "[", expr(s.operands[1]), " +: 4]\n");
        return;
      case StmtKind::kAsyncCommit:
        absl::StrAppend(out, pad, "async_commit\n");
        return;
      case StmtKind::kAsyncWait:
        absl::StrAppend(out, pad, "async_wait ", s.a, "\n");
        return;
      case StmtKind::kProxyFence:
        absl::StrAppend(out, pad, "proxy_fence\n");
        return;
      case StmtKind::kWarpgroupFence:
        absl::StrAppend(out, pad, "warpgroup_fence\n");
        return;
      case StmtKind::kWarpgroupMma: {
        auto op = [&](size_t i) { return i < s.operands.size() ? expr(s.operands[i]) : std::string("?"); };
        const std::string a = s.space == Space::kShared
                                  ? absl::StrCat(array_name(Space::kShared, s.array), "[", op(0), "] strides ", op(1),
                                                 ", ", op(2))
                                  : matrix_name(s.array);
        const bool b_k_major = s.operands.size() > 8 && expr(s.operands[8]) != "0";
        absl::StrAppend(out, pad, matrix_name(s.id), "..+", s.a, " += warpgroup_mma ", a, " * ",
                        array_name(Space::kShared, s.b), "[", op(3), "] strides ", op(4), ", ", op(5),
                        b_k_major ? " k-major" : "", "\n");
        return;
      }
      case StmtKind::kWarpgroupCommit:
        absl::StrAppend(out, pad, "warpgroup_commit\n");
        return;
      case StmtKind::kWarpgroupWait:
        absl::StrAppend(out, pad, "warpgroup_wait ", s.a, "\n");
        return;
      case StmtKind::kMbarrierInit:
      case StmtKind::kMbarrierExpectTx:
      case StmtKind::kMbarrierArriveAsync:
        absl::StrAppend(out, pad, av(stmt_kind_name(s.kind)), " ", array_name(Space::kShared, s.id), "[",
                        expr(s.operands[0]), "]");
        if (s.operands.size() > 1) absl::StrAppend(out, " ", expr(s.operands[1]));
        absl::StrAppend(out, "\n");
        return;
      case StmtKind::kTensorCopy: {
        absl::StrAppend(out, pad, "tensor_copy ", array_name(Space::kShared, s.id), "[", expr(s.operands[0]),
                        "] <- map ", s.a, " at (");
        for (size_t i = 2; i < s.operands.size(); ++i) absl::StrAppend(out, i > 2 ? ", " : "", expr(s.operands[i]));
        absl::StrAppend(out, ") completes ", array_name(Space::kShared, s.array), "[", expr(s.operands[1]), "]\n");
        return;
      }
    }
  }

  std::string matrix_name(uint32_t id) const {
    return id < f_.matrices.size() ? f_.matrices[id].name : absl::StrCat("?matrix", id);
  }

 private:
  const Function& f_;
};

}  // namespace

std::string print(const Function& f) {
  Printer p(f);
  std::string out = absl::StrCat("function ", f.name, " threads(", f.threads, ")\n");
  for (size_t i = 0; i < f.params.size(); ++i) {
    const Param& prm = f.params[i];
    absl::StrAppend(&out, "  param ", prm.name, ": ", av(dtype_name(prm.type)),
                    prm.is_array ? (prm.written ? "[] global written" : "[] global") : "", "\n");
  }
  for (const SharedArray& s : f.shared)
    absl::StrAppend(&out, "  shared ", s.name, ": ", av(dtype_name(s.type)), "[", s.count, "]\n");
  for (const MatrixVariable& m : f.matrices)
    absl::StrAppend(&out, "  matrix ", m.name, ": ", av(matrix_use_name(m.use)), " ", av(dtype_name(m.type)),
                    "[", m.rows, "x", m.cols, "]", m.scope == MatrixScope::kWorkgroup ? " workgroup" : "", "\n");
  for (const Variable& v : f.variables) {
    absl::StrAppend(&out, "  private ", v.name, ": ", av(dtype_name(v.type)));
    if (v.count > 0) absl::StrAppend(&out, "[", v.count, "]");
    absl::StrAppend(&out, "\n");
  }
  out += "{\n";
  p.body(f.body, 1, &out);
  out += "}\n";
  return out;
}

}  // namespace tilert::simt
