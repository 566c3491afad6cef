#include "tests/backends/hip/hip_test_util.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace tilert::hip::testing {

using simt::Builtin;
using simt::Expr;
using simt::Space;
using simt::Stmt;
using simt::StmtKind;

namespace {

Stmt assign(uint32_t var, Expr value) {
  Stmt s;
  s.kind = StmtKind::kAssign;
  s.id = var;
  s.operands = {std::move(value)};
  return s;
}

Stmt assign_element(uint32_t var, Expr index, Expr value) {
  Stmt s = assign(var, std::move(index));
  s.operands.push_back(std::move(value));
  return s;
}

Stmt store(Space space, uint32_t array, Expr index, Expr value, StmtKind kind = StmtKind::kStore) {
  Stmt s;
  s.kind = kind;
  s.space = space;
  s.id = array;
  s.operands = {std::move(index), std::move(value)};
  return s;
}

Stmt barrier(simt::BarrierKind kind) {
  Stmt s;
  s.kind = StmtKind::kBarrier;
  s.barrier = kind;
  return s;
}

Expr i32(int64_t v) { return Expr::int_const(v); }

}  // namespace

simt::Function every_kind_function() {
  simt::Function f;
  f.name = "every_kind";
  f.threads = 128;
  f.uses_subgroup_ops = true;
  // One global array per element type (parameter index = position in kArrays), then scalars.
  const DType kArrays[] = {DType::kBool, DType::kI8,   DType::kU8,  DType::kI32, DType::kU32,
                           DType::kI64,  DType::kF16,  DType::kBF16, DType::kF32, DType::kF64};
  for (DType t : kArrays) {
    f.params.push_back({std::string("a_") + std::string(dtype_name(t)), true, t, true});
  }
  f.params.push_back({"input", true, DType::kF32, false});           // 10, read only
  const uint32_t kInput = 10, kN = 11, kAlpha = 12, kBig = 13, kFlag = 14, kStatus = 15;
  f.params.push_back({"n", false, DType::kI32, false});
  f.params.push_back({"alpha", false, DType::kF32, false});
  f.params.push_back({"big", false, DType::kI64, false});
  f.params.push_back({"flag", false, DType::kBool, false});
  f.params.push_back({"status", true, DType::kU32, true});
  f.status_param = kStatus;
  f.shared = {{"tile", DType::kF32, 256}, {"counts", DType::kI32, 64}};
  f.variables = {{"i", DType::kI32, 0},  {"acc", DType::kF32, 0}, {"priv", DType::kF32, 8},
                 {"j", DType::kI32, 0},  {"u", DType::kU32, 0},   {"w", DType::kI64, 0},
                 {"d", DType::kF64, 0},  {"b", DType::kBool, 0},  {"h", DType::kF16, 0},
                 {"bf", DType::kBF16, 0}, {"c8", DType::kI8, 0}, {"chunk", DType::kU32, 8}};
  const uint32_t kChunk = 11;
  auto array_of = [&](DType t) -> uint32_t {
    for (uint32_t k = 0; k < 10; ++k) if (kArrays[k] == t) return k;
    return 0;
  };
  auto var = [&](uint32_t id) { return Expr::var(id, f.variables[id].type); };
  Expr i = var(0);
  auto load = [&](DType t, Expr index) { return Expr::load(Space::kGlobal, array_of(t), t, std::move(index)); };
  simt::Body& b = f.body;

  b.push_back(assign(0, Expr::binary(BinaryOp::kAdd, Expr::builtin(Builtin::kLocalId),
                                     Expr::binary(BinaryOp::kMul, Expr::builtin(Builtin::kWorkgroupIdX), i32(128)))));
  b.push_back(assign(1, Expr::load(Space::kGlobal, kInput, DType::kF32, i)));

  // Every conversion: a_<to>[i + k] = <to>(a_<from>[i]).
  int k = 0;
  for (DType from : kArrays) {
    for (DType to : kArrays) {
      b.push_back(store(Space::kGlobal, array_of(to), Expr::binary(BinaryOp::kAdd, i, i32(k++)),
                        Expr::cast(to, load(from, i))));
    }
  }
  // Narrow private scalars written and read back, constants of every type.
  b.push_back(assign(8, Expr::cast(DType::kF16, var(1))));
  b.push_back(assign(9, Expr::cast(DType::kBF16, var(1))));
  b.push_back(assign(10, Expr::cast(DType::kI8, i)));
  b.push_back(assign(7, Expr::binary(BinaryOp::kLt, i, Expr::param(kN, DType::kI32))));
  b.push_back(assign(1, Expr::binary(BinaryOp::kAdd, Expr::cast(DType::kF32, var(8)), Expr::cast(DType::kF32, var(9)))));
  b.push_back(assign(1, Expr::binary(BinaryOp::kAdd, var(1), Expr::cast(DType::kF32, var(10)))));
  b.push_back(assign(1, Expr::binary(BinaryOp::kAdd, var(1), Expr::cast(DType::kF32, Expr::float_const(1.5, DType::kF16)))));
  b.push_back(assign(1, Expr::binary(BinaryOp::kAdd, var(1), Expr::cast(DType::kF32, Expr::float_const(-2.25, DType::kBF16)))));
  b.push_back(assign(4, Expr::int_const(0xFFFFFFFFll, DType::kU32)));
  b.push_back(assign(5, Expr::binary(BinaryOp::kAdd, Expr::int_const(1ll << 40, DType::kI64), Expr::param(kBig, DType::kI64))));
  b.push_back(assign(6, Expr::float_const(0.1, DType::kF64)));
  b.push_back(assign(7, Expr::binary(BinaryOp::kAnd, var(7), Expr::param(kFlag, DType::kBool))));

  // Every operator on every arithmetic type; comparisons and logic into the bool array.
  const DType kArithmetic[] = {DType::kI32, DType::kU32, DType::kI64, DType::kF32, DType::kF64};
  const uint32_t kVarOf[] = {0, 4, 5, 1, 6};
  for (int t = 0; t < 5; ++t) {
    DType type = kArithmetic[t];
    Expr x = var(kVarOf[t]);
    Expr y = Expr::cast(type, load(type, i));
#define TILERT_X(e, s, p)                                                                        \
    if (!(is_float(type) && (BinaryOp::e == BinaryOp::kShl || BinaryOp::e == BinaryOp::kShr ||   \
                             BinaryOp::e == BinaryOp::kBitAnd || BinaryOp::e == BinaryOp::kBitOr || \
                             BinaryOp::e == BinaryOp::kBitXor)) &&                               \
        BinaryOp::e != BinaryOp::kAnd && BinaryOp::e != BinaryOp::kOr) {                         \
      Expr r = Expr::binary(BinaryOp::e, x, y);                                                  \
      b.push_back(store(Space::kGlobal, array_of(r.type), Expr::binary(BinaryOp::kAdd, i, i32(k++)), r)); \
    }
    TILERT_BINARY_OPS(TILERT_X)
#undef TILERT_X
    b.push_back(store(Space::kGlobal, array_of(type), i, Expr::unary(UnaryOp::kNeg, x)));
    for (Func fn : {Func::kMin, Func::kMax, Func::kAbs, Func::kSelect, Func::kSqrt, Func::kRsqrt,
                    Func::kFloor, Func::kCeil}) {
      if (!is_float(type) && fn != Func::kMin && fn != Func::kMax && fn != Func::kAbs && fn != Func::kSelect) continue;
      std::vector<Expr> args = {x};
      if (func_arity(fn) == 2) args.push_back(y);
      if (fn == Func::kSelect) args = {var(7), x, y};
      Expr r = Expr::call(fn, args);
      b.push_back(store(Space::kGlobal, array_of(r.type), Expr::binary(BinaryOp::kAdd, i, i32(k++)), r));
    }
    for (ReduceKind kind : {ReduceKind::kSum, ReduceKind::kMax, ReduceKind::kMin}) {
      b.push_back(store(Space::kGlobal, array_of(type), Expr::binary(BinaryOp::kAdd, i, i32(k++)),
                        Expr::subgroup_reduce(kind, x)));
    }
  }
  b.push_back(store(Space::kGlobal, array_of(DType::kBool), i,
                    Expr::binary(BinaryOp::kOr, Expr::unary(UnaryOp::kNot, var(7)),
                                 Expr::binary(BinaryOp::kAnd, var(7), load(DType::kBool, i)))));
  // Every f32 function.
  for (Func fn : {Func::kExp, Func::kExp2, Func::kLog, Func::kLog2, Func::kSqrt, Func::kRsqrt,
                  Func::kAbs, Func::kTanh, Func::kErf, Func::kSin, Func::kCos, Func::kFloor, Func::kCeil}) {
    b.push_back(assign(1, Expr::binary(BinaryOp::kAdd, var(1), Expr::call(fn, {var(1)}))));
  }
  // Every builtin.
  for (Builtin bi : {Builtin::kSubgroupSize, Builtin::kSubgroupLane, Builtin::kSubgroupId,
                     Builtin::kWorkgroupIdY, Builtin::kWorkgroupIdZ}) {
    b.push_back(store(Space::kGlobal, array_of(DType::kI32), Expr::binary(BinaryOp::kAdd, i, i32(k++)), Expr::builtin(bi)));
  }
  b.push_back(store(Space::kGlobal, array_of(DType::kI64), i, Expr::builtin(Builtin::kClock)));

  // Shared memory, barriers, atomics.
  Expr tid = Expr::builtin(Builtin::kLocalId);
  b.push_back(store(Space::kShared, 0, tid, var(1)));
  b.push_back(barrier(simt::BarrierKind::kWorkgroup));
  b.push_back(assign(1, Expr::load(Space::kShared, 0, DType::kF32, Expr::binary(BinaryOp::kSub, i32(255), tid))));
  b.push_back(barrier(simt::BarrierKind::kSubgroup));
  b.push_back(store(Space::kGlobal, array_of(DType::kI32), i, i32(1), StmtKind::kAtomicAdd));
  b.push_back(store(Space::kGlobal, array_of(DType::kU32), i, var(4), StmtKind::kAtomicAdd));
  b.push_back(store(Space::kGlobal, array_of(DType::kF32), i, var(1), StmtKind::kAtomicAdd));
  b.push_back(store(Space::kShared, 1, i32(0), i32(1), StmtKind::kAtomicAdd));
  b.push_back(store(Space::kShared, 0, i32(0), var(1), StmtKind::kAtomicAdd));
  // Register staging: 16 bytes of a_f16 (8 elements) and of input (4) through the chunk words
  // into the shared tile.
  Stmt chunk_in;
  chunk_in.kind = StmtKind::kChunkLoad;
  chunk_in.id = kChunk;
  chunk_in.array = array_of(DType::kF16);
  chunk_in.operands = {i32(0), Expr::binary(BinaryOp::kMul, tid, i32(8))};
  b.push_back(chunk_in);
  chunk_in.array = kInput;
  chunk_in.operands = {i32(4), Expr::binary(BinaryOp::kMul, tid, i32(4))};
  b.push_back(chunk_in);
  Stmt chunk_out;
  chunk_out.kind = StmtKind::kChunkStore;
  chunk_out.id = 0;
  chunk_out.array = kChunk;
  chunk_out.operands = {Expr::binary(BinaryOp::kMul, Expr::binary(BinaryOp::kBitAnd, tid, i32(31)), i32(8)), i32(4)};
  b.push_back(chunk_out);

  // Loops: an unrolled one over the private array, a counted one, a while.
  Stmt unrolled;
  unrolled.kind = StmtKind::kFor;
  unrolled.id = 3;
  unrolled.unroll = true;
  unrolled.operands = {i32(0), i32(8), i32(1)};
  unrolled.body.push_back(assign_element(2, var(3), Expr::cast(DType::kF32, var(3))));
  b.push_back(unrolled);
  Stmt counted;
  counted.kind = StmtKind::kFor;
  counted.id = 3;
  counted.operands = {i32(0), Expr::param(kN, DType::kI32), i32(2)};
  counted.body.push_back(assign(1, Expr::binary(BinaryOp::kAdd, var(1),
      Expr::load(Space::kPrivate, 2, DType::kF32, Expr::binary(BinaryOp::kBitAnd, var(3), i32(7))))));
  b.push_back(counted);
  Stmt loop;
  loop.kind = StmtKind::kWhile;
  loop.operands = {Expr::binary(BinaryOp::kLt, var(1), Expr::float_const(100.0))};
  loop.body.push_back(assign(1, Expr::binary(BinaryOp::kAdd, Expr::binary(BinaryOp::kMul, var(1),
                                                                       Expr::param(kAlpha, DType::kF32)),
                                             Expr::float_const(1.0))));
  b.push_back(loop);
  Stmt branch;
  branch.kind = StmtKind::kIf;
  branch.operands = {var(7)};
  branch.body.push_back(store(Space::kGlobal, array_of(DType::kF32), i, var(1)));
  branch.else_body.push_back(store(Space::kGlobal, kStatus, i32(0), Expr::int_const(1, DType::kU32)));
  b.push_back(branch);
  Stmt ret;
  ret.kind = StmtKind::kReturn;
  b.push_back(ret);
  b.push_back(store(Space::kGlobal, array_of(DType::kF32), i, Expr::float_const(0.0)));  // unreachable
  return f;
}

simt::Function reverse_function(int threads) {
  simt::Function f;
  f.name = "reverse";
  f.threads = threads;
  f.params = {{"in", true, DType::kF32, false}, {"out", true, DType::kF32, true},
              {"scale", false, DType::kF32, false}};
  f.shared = {{"tile", DType::kF32, threads}};
  Expr tid = Expr::builtin(Builtin::kLocalId);
  f.body.push_back(store(Space::kShared, 0, tid,
                         Expr::binary(BinaryOp::kMul, Expr::load(Space::kGlobal, 0, DType::kF32, tid),
                                      Expr::param(2, DType::kF32))));
  f.body.push_back(barrier(simt::BarrierKind::kWorkgroup));
  f.body.push_back(store(Space::kGlobal, 1, tid,
                         Expr::load(Space::kShared, 0, DType::kF32,
                                    Expr::binary(BinaryOp::kSub, i32(threads - 1), tid))));
  return f;
}

std::string find_tool(const std::string& tool) {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "/usr/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    std::string candidate = dir + "/" + tool;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

bool llc_knows_cpu(const std::string& llc, const std::string& cpu) {
  std::string command = llc + " -march=amdgcn -mcpu=help 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return false;
  std::string out;
  char buffer[4096];
  while (size_t n = fread(buffer, 1, sizeof(buffer), pipe)) out.append(buffer, n);
  pclose(pipe);
  return out.find("  " + cpu + " ") != std::string::npos;
}

ToolResult run_llc(const std::string& llc, const std::string& ir, const std::string& cpu,
                   const std::vector<std::string>& extra) {
  char dir_template[] = "/tmp/tilert_hip_llc_XXXXXX";
  ToolResult result;
  if (mkdtemp(dir_template) == nullptr) {
    result.output = "mkdtemp failed";
    return result;
  }
  std::string dir = dir_template;
  std::ofstream(dir + "/kernel.ll") << ir;
  std::string command = llc + " -march=amdgcn -mcpu=" + cpu;
  for (const std::string& e : extra) command += " " + e;
  command += " -filetype=obj " + dir + "/kernel.ll -o " + dir + "/kernel.o > " + dir + "/log 2>&1";
  int status = std::system(command.c_str());
  std::ifstream log(dir + "/log");
  std::stringstream text;
  text << log.rdbuf();
  result.output = command + "\n" + text.str();
  result.ok = status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  int removed = std::system(("rm -rf " + dir).c_str());
  (void)removed;
  return result;
}

}  // namespace tilert::hip::testing
