// tilert verify IN [--shared-limit BYTES]: run the verifier and print its diagnostics.
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "frontends/cli/commands.h"
#include "ir/verify/verify.h"

namespace tilert::cli {
namespace {

int run_verify(std::span<const std::string> args) {
  ArgCursor cursor(args);
  std::string input, limit_text;
  VerifyOptions options;
  while (!cursor.done()) {
    absl::StatusOr<bool> took = cursor.take_option("--shared-limit", &limit_text);
    if (!took.ok()) return usage_error(kVerifyCommand, took.status());
    if (*took) {
      absl::StatusOr<int64_t> limit = parse_count("--shared-limit", limit_text);
      if (!limit.ok()) return usage_error(kVerifyCommand, limit.status());
      options.shared_memory_limit = *limit;
      continue;
    }
    if (cursor.at_option()) {
      return usage_error(kVerifyCommand, absl::StrCat("unknown option '", cursor.current(), "'"));
    }
    if (!input.empty()) {
      return usage_error(kVerifyCommand,
                         absl::StrCat("unexpected argument '", cursor.current(), "'"));
    }
    input = cursor.take_positional();
  }
  if (input.empty()) return usage_error(kVerifyCommand, "missing input file");
  absl::StatusOr<InputModule> in = read_input_module(input);
  if (!in.ok()) return report_error(kExitBadInput, in.status());
  std::vector<Diagnostic> diagnostics = verify_module(in->module, options);
  if (diagnostics.empty()) {
    std::printf("ok: %zu kernel%s\n", in->module.kernels.size(),
                in->module.kernels.size() == 1 ? "" : "s");
    return kExitOk;
  }
  for (const Diagnostic& d : diagnostics) {
    std::printf("%s: %s\n", input.c_str(), d.to_string().c_str());
  }
  std::fprintf(stderr, "tilert: %s: %zu diagnostic%s\n", input.c_str(), diagnostics.size(),
               diagnostics.size() == 1 ? "" : "s");
  return kExitBadInput;
}

}  // namespace

const Command kVerifyCommand = {
    "verify",
    "check a module's types, shapes, memory and synchronization",
    "usage: tilert verify IN [--shared-limit BYTES]\n"
    "\n"
    "Runs the verifier on IN (.tile or .tbc). Prints 'ok: N kernels', or one line per\n"
    "diagnostic and exits with 2.\n"
    "  --shared-limit BYTES  shared memory one block may use (default: not checked)\n",
    run_verify,
};

}  // namespace tilert::cli
