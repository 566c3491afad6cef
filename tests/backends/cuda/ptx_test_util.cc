#include "ptx_test_util.h"

#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "backends/cuda/ptx_emit.h"

namespace tilert::cuda::testing {

using simt::Expr;
using simt::Stmt;
using simt::StmtKind;

Stmt assign(uint32_t var, Expr value) {
  Stmt s;
  s.kind = StmtKind::kAssign;
  s.id = var;
  s.operands = {std::move(value)};
  return s;
}
Stmt assign_at(uint32_t var, Expr index, Expr value) {
  Stmt s = assign(var, std::move(index));
  s.operands.push_back(std::move(value));
  return s;
}
Stmt store(simt::Space space, uint32_t array, Expr index, Expr value) {
  Stmt s;
  s.kind = StmtKind::kStore;
  s.space = space;
  s.id = array;
  s.operands = {std::move(index), std::move(value)};
  return s;
}
Stmt atomic_add(simt::Space space, uint32_t array, Expr index, Expr value) {
  Stmt s = store(space, array, std::move(index), std::move(value));
  s.kind = StmtKind::kAtomicAdd;
  return s;
}
Stmt if_else(Expr condition, simt::Body then_body, simt::Body else_body) {
  Stmt s;
  s.kind = StmtKind::kIf;
  s.operands = {std::move(condition)};
  s.body = std::move(then_body);
  s.else_body = std::move(else_body);
  return s;
}
Stmt for_loop(uint32_t var, Expr begin, Expr end, Expr step, simt::Body body, bool unroll) {
  Stmt s;
  s.kind = StmtKind::kFor;
  s.id = var;
  s.operands = {std::move(begin), std::move(end), std::move(step)};
  s.body = std::move(body);
  s.unroll = unroll;
  return s;
}
Stmt while_loop(Expr condition, simt::Body body) {
  Stmt s;
  s.kind = StmtKind::kWhile;
  s.operands = {std::move(condition)};
  s.body = std::move(body);
  return s;
}
Stmt barrier(simt::BarrierKind kind, std::vector<Expr> operands) {
  Stmt s;
  s.kind = StmtKind::kBarrier;
  s.barrier = kind;
  s.operands = std::move(operands);
  return s;
}
Stmt return_stmt() {
  Stmt s;
  s.kind = StmtKind::kReturn;
  return s;
}
Stmt matrix_fill(uint32_t matrix, Expr value) {
  Stmt s;
  s.kind = StmtKind::kMatrixFill;
  s.id = matrix;
  s.operands = {std::move(value)};
  return s;
}
Stmt matrix_load(uint32_t matrix, uint32_t shared_array, Expr offset, Expr stride) {
  Stmt s;
  s.kind = StmtKind::kMatrixLoad;
  s.id = matrix;
  s.space = simt::Space::kShared;
  s.array = shared_array;
  s.operands = {std::move(offset), std::move(stride)};
  return s;
}
Stmt matrix_store(uint32_t matrix, uint32_t shared_array, Expr offset, Expr stride) {
  Stmt s = matrix_load(matrix, shared_array, std::move(offset), std::move(stride));
  s.kind = StmtKind::kMatrixStore;
  return s;
}
Stmt matrix_mul_add(uint32_t c, uint32_t a, uint32_t b) {
  Stmt s;
  s.kind = StmtKind::kMatrixMulAdd;
  s.id = c;
  s.a = a;
  s.b = b;
  return s;
}
Expr i32(int64_t v) { return Expr::int_const(v); }
Expr f32(double v) { return Expr::float_const(v); }

simt::Function matrix_product_kernel(DType input, int warps) {
  constexpr int kStrideA = 40, kStrideB = 24, kStrideC = 20;  // padded rows, multiples of 8 (4 for C)
  const int m = 16 * warps;
  simt::Function f;
  f.name = "matrix_product";
  f.threads = 32 * warps;
  f.params.push_back({"A", true, input, false});
  f.params.push_back({"B", true, input, false});
  f.params.push_back({"C", true, DType::kF32, true});
  f.shared.push_back({"a_tile", input, int64_t{m} * kStrideA});
  f.shared.push_back({"b_tile", input, int64_t{kMatrixTestK} * kStrideB});
  f.shared.push_back({"c_tile", DType::kF32, int64_t{m} * kStrideC});
  f.variables.push_back({"i", DType::kI32, 0});
  f.variables.push_back({"row0", DType::kI32, 0});
  f.variables.push_back({"kb", DType::kI32, 0});
  f.variables.push_back({"c_offset", DType::kI32, 0});
  f.matrices.push_back({"acc", simt::MatrixUse::kAccumulator, DType::kF32});
  f.matrices.push_back({"a", simt::MatrixUse::kA, input});
  f.matrices.push_back({"b", simt::MatrixUse::kB, input});

  const Expr tid = Expr::builtin(simt::Builtin::kLocalId);
  const Expr i = Expr::var(0, DType::kI32), kb = Expr::var(2, DType::kI32);
  auto add = [](Expr a, Expr b) { return Expr::binary(BinaryOp::kAdd, std::move(a), std::move(b)); };
  auto mul = [](Expr a, Expr b) { return Expr::binary(BinaryOp::kMul, std::move(a), std::move(b)); };
  auto div = [](Expr a, int64_t b) { return Expr::binary(BinaryOp::kDiv, std::move(a), i32(b)); };
  auto mod = [](Expr a, int64_t b) { return Expr::binary(BinaryOp::kMod, std::move(a), i32(b)); };
  // Copies a rows x cols global array into a shared one with row stride `stride`.
  auto copy_in = [&](uint32_t param, uint32_t shared, int rows, int cols, int stride) {
    Expr element = Expr::load(simt::Space::kGlobal, param, input, i);
    return for_loop(0, tid, i32(int64_t{rows} * cols), i32(f.threads),
                    {store(simt::Space::kShared, shared, add(mul(div(i, cols), i32(stride)), mod(i, cols)),
                           element)});
  };
  simt::Body& body = f.body;
  body.push_back(copy_in(0, 0, m, kMatrixTestK, kStrideA));
  body.push_back(copy_in(1, 1, kMatrixTestK, kMatrixTestN, kStrideB));
  body.push_back(barrier(simt::BarrierKind::kWorkgroup));
  // The warp's first row: a constant with one warp, the subgroup id's rows with more.
  Expr row0 = i32(0);
  if (warps > 1) {
    body.push_back(assign(1, mul(Expr::builtin(simt::Builtin::kSubgroupId), i32(16))));
    row0 = Expr::var(1, DType::kI32);
  }
  body.push_back(matrix_fill(0, f32(0.25)));
  body.push_back(for_loop(
      2, i32(0), i32(kMatrixTestK / 16), i32(1),
      {matrix_load(1, 0, add(mul(row0, i32(kStrideA)), mul(kb, i32(16))), i32(kStrideA)),
       matrix_load(2, 1, mul(kb, i32(16 * kStrideB)), i32(kStrideB)), matrix_mul_add(0, 1, 2)},
      true));
  // With more warps the store offset is a variable, which the emitter cannot prove even: that
  // store goes out element by element, the one-warp store (a constant offset) in pairs.
  Expr c_offset = mul(row0, i32(kStrideC));
  if (warps > 1) {
    body.push_back(assign(3, c_offset));
    c_offset = Expr::var(3, DType::kI32);
  }
  body.push_back(matrix_store(0, 2, c_offset, i32(kStrideC)));
  body.push_back(barrier(simt::BarrierKind::kWorkgroup));
  body.push_back(for_loop(
      0, tid, i32(int64_t{m} * kMatrixTestN), i32(f.threads),
      {store(simt::Space::kGlobal, 2, i,
             Expr::load(simt::Space::kShared, 2, DType::kF32,
                        add(mul(div(i, kMatrixTestN), i32(kStrideC)), mod(i, kMatrixTestN))))}));
  return f;
}

lowering::TargetDescription target(const char* name) {
  absl::StatusOr<lowering::TargetDescription> t = lowering::parse_target(name);
  REQUIRE(t.ok());
  return *t;
}

void check_assembles(const simt::Function& f) {
  for (const char* name : {"ptx:sm_80", "ptx:sm_90a"}) {
    lowering::TargetDescription t = target(name);
    absl::StatusOr<std::string> ptx = emit_ptx(f, t);
    INFO(name, ": ", ptx.status().ToString());
    REQUIRE(ptx.ok());
    PtxasResult r = run_ptxas(*ptx, t.arch);
    if (!r.ran) {
      MESSAGE("ptxas check skipped: ", r.skip_reason);
      continue;
    }
    INFO("ptxas output:\n", r.output, "\nPTX:\n", *ptx);
    CHECK(r.ok);
  }
}

void check_ptx_assembles(const std::string& ptx, const std::string& arch) {
  PtxasResult r = run_ptxas(ptx, arch);
  if (!r.ran) {
    MESSAGE("ptxas not run: ", r.skip_reason);
    return;
  }
  INFO(r.output);
  CHECK(r.ok);
}

PtxasResult run_ptxas(const std::string& ptx, const std::string& arch) {
  PtxasResult result;
  const char* cuda_path = std::getenv("CUDA_PATH");
  std::string ptxas = std::string(cuda_path ? cuda_path : "/usr/local/cuda") + "/bin/ptxas";
  if (access(ptxas.c_str(), X_OK) != 0) {
    result.skip_reason = ptxas + " not found";
    return result;
  }
  char dir_template[] = "/tmp/tilert_ptx_XXXXXX";
  const char* dir = mkdtemp(dir_template);
  if (dir == nullptr) {
    result.skip_reason = "cannot create a temporary directory";
    return result;
  }
  std::string input = std::string(dir) + "/kernel.ptx", cubin = std::string(dir) + "/kernel.cubin";
  std::ofstream(input) << ptx;
  std::string command = ptxas + " -arch=" + arch + " " + input + " -o " + cubin + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) {
    result.skip_reason = "cannot run " + ptxas;
    return result;
  }
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) result.output.append(buffer, n);
  int status = pclose(pipe);
  result.ran = true;
  result.ok = status == 0;
  std::remove(input.c_str());
  std::remove(cubin.c_str());
  rmdir(dir);
  return result;
}

}  // namespace tilert::cuda::testing
