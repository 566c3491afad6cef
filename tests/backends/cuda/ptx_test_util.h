// Helpers for the PTX emitter tests: SIMT statement builders and ptxas, the test oracle.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "lowering/simt.h"

namespace tilert::cuda::testing {

simt::Stmt assign(uint32_t var, simt::Expr value);
simt::Stmt assign_at(uint32_t var, simt::Expr index, simt::Expr value);
simt::Stmt store(simt::Space space, uint32_t array, simt::Expr index, simt::Expr value);
simt::Stmt atomic_add(simt::Space space, uint32_t array, simt::Expr index, simt::Expr value);
simt::Stmt if_else(simt::Expr condition, simt::Body then_body, simt::Body else_body = {});
simt::Stmt for_loop(uint32_t var, simt::Expr begin, simt::Expr end, simt::Expr step,
                    simt::Body body, bool unroll = false);
simt::Stmt while_loop(simt::Expr condition, simt::Body body);
simt::Stmt barrier(simt::BarrierKind kind, std::vector<simt::Expr> operands = {});
simt::Stmt return_stmt();
simt::Expr i32(int64_t v);
simt::Expr f32(double v);

// The result of assembling PTX text with ptxas for `arch`.
struct PtxasResult {
  bool ran = false;      // false: ptxas is not installed (skip_reason says where it looked)
  bool ok = false;
  std::string output;    // ptxas's messages
  std::string skip_reason;
};
PtxasResult run_ptxas(const std::string& ptx, const std::string& arch);

}  // namespace tilert::cuda::testing
