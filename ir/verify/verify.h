// The verifier: one rule per file under ir/verify/, chained in verify.cc.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "ir/kernel.h"

namespace tilert {

// Errors make a module invalid; warnings are findings that may not hold for every launch.
enum class Severity : uint8_t { kError, kWarning };

struct VerifyOptions {
  // Shared memory available to one block in bytes; 0: do not check.
  int64_t shared_memory_limit = 0;
  // Bytes of shared memory one mbarrier takes: 8 where the hardware keeps them there, 0 for a
  // backend that emulates them in registers (see lowering/README.md).
  int64_t mbarrier_bytes = 8;
  // How the static sync rules (mbarrier-deadlock, mbarrier-arrival-count, shared-race) report.
  // They evaluate the kernel with its parameter defaults, so callers that launch with other
  // arguments (module load, `tilert run`) make them warnings.
  Severity sync_protocol_severity = Severity::kError;
};

struct Diagnostic {
  std::string rule;     // stable rule name, e.g. "barrier-divergence"
  std::string kernel;   // kernel name
  std::string op;       // op mnemonic, e.g. "wait"; empty for kernel-level problems
  SourceLoc loc;        // line 0 when unknown (bytecode input)
  int64_t op_index = -1;  // the op's pre-order index in its kernel (visit_stmts order, from 0);
                          // -1 for kernel-level problems
  std::string message;  // what is wrong
  Severity severity = Severity::kError;
  // "kernel K, line L: wait: message [rule]" (", op #N" instead of the line where it is unknown;
  // "warning: " before the op for warnings)
  std::string to_string() const;
};

std::vector<Diagnostic> verify_module(const Module& module, const VerifyOptions& options = {});

// OK, or InvalidArgument whose message lists every error, one per line (warnings are left out).
absl::Status verify_module_status(const Module& module, const VerifyOptions& options = {});

}  // namespace tilert
