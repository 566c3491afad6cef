// The verifier: one rule per file under ir/verify/, chained in verify.cc.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "ir/kernel.h"

namespace tilert {

struct VerifyOptions {
  // Shared memory available to one block in bytes; 0: do not check.
  int64_t shared_memory_limit = 0;
};

struct Diagnostic {
  std::string rule;     // stable rule name, e.g. "barrier-divergence"
  std::string kernel;   // kernel name
  std::string op;       // op mnemonic, e.g. "wait"; empty for kernel-level problems
  SourceLoc loc;        // line 0 when unknown (bytecode input)
  int64_t op_index = -1;  // the op's pre-order index in its kernel (visit_stmts order, from 0);
                          // -1 for kernel-level problems
  std::string message;  // what is wrong
  // "kernel K, line L: wait: message [rule]" (", op #N" instead of the line where it is unknown)
  std::string to_string() const;
};

std::vector<Diagnostic> verify_module(const Module& module, const VerifyOptions& options = {});

// OK, or InvalidArgument whose message lists every diagnostic, one per line.
absl::Status verify_module_status(const Module& module, const VerifyOptions& options = {});

}  // namespace tilert
