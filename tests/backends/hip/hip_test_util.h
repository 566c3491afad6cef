// Shared by the hip backend tests: hand-built SIMT functions and an llc runner.
#pragma once

#include <string>
#include <vector>

#include "lowering/simt.h"

namespace tilert::hip::testing {

// A kernel using every SIMT expression kind, statement kind (but named barriers), builtin,
// function, operator, subgroup reduction and every conversion between two element types.
simt::Function every_kind_function();

// A small kernel: out[tid] = tile[threads - 1 - tid] after tile[tid] = in[tid] * scale, with a
// shared array of `threads` floats.
simt::Function reverse_function(int threads);

// The path of `tool` (e.g. "llc-14") on PATH, or "" when absent.
std::string find_tool(const std::string& tool);

struct ToolResult {
  bool ok = false;
  std::string output;  // stderr and stdout
};
// Whether `llc -march=amdgcn -mcpu=help` lists `cpu` (LLVM 14 lacks gfx940 and gfx1100).
bool llc_knows_cpu(const std::string& llc, const std::string& cpu);

// Runs `llc -march=amdgcn -mcpu=<cpu> <extra> -filetype=obj` on `ir`.
ToolResult run_llc(const std::string& llc, const std::string& ir, const std::string& cpu,
                   const std::vector<std::string>& extra = {});

}  // namespace tilert::hip::testing
