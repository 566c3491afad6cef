#include "ptx_test_util.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>

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
Expr i32(int64_t v) { return Expr::int_const(v); }
Expr f32(double v) { return Expr::float_const(v); }

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
