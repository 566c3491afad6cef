// tilert compile IN -o OUT.tbc: parse, verify, write bytecode.
#include <cerrno>
#include <cstring>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "frontends/cli/commands.h"
#include "ir/bytecode/bytecode.h"

namespace tilert::cli {
namespace {

// IN with its extension replaced by .tbc ("gemm.tile" -> "gemm.tbc").
std::string default_output(const std::string& input) {
  size_t slash = input.find_last_of('/');
  size_t dot = input.find_last_of('.');
  bool has_extension = dot != std::string::npos && (slash == std::string::npos || dot > slash + 1);
  return (has_extension ? input.substr(0, dot) : input) + ".tbc";
}

int run_compile(std::span<const std::string> args) {
  std::string input, output;
  ArgCursor cursor(args);
  while (!cursor.done()) {
    absl::StatusOr<bool> took = cursor.take_option("-o", &output);
    if (!took.ok()) return usage_error(kCompileCommand, took.status());
    if (*took) continue;
    if (cursor.at_option()) {
      return usage_error(kCompileCommand, absl::StrCat("unknown option '", cursor.current(), "'"));
    }
    if (!input.empty()) {
      return usage_error(kCompileCommand,
                         absl::StrCat("unexpected argument '", cursor.current(), "'"));
    }
    input = cursor.take_positional();
  }
  if (input.empty()) return usage_error(kCompileCommand, "missing input file");
  if (output.empty()) output = default_output(input);

  absl::StatusOr<InputModule> in = read_input_module(input);
  if (!in.ok()) return report_error(kExitBadInput, in.status());
  if (absl::Status s = verify_input(*in); !s.ok()) return report_error(kExitBadInput, s);
  std::vector<uint8_t> bytes = write_bytecode(in->module);
  std::ofstream out(output, std::ios::binary | std::ios::trunc);
  if (out) out.write(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  if (!out || !out.flush()) {
    return report_error(kExitFailure,
                        absl::StrCat("cannot write '", output, "': ", std::strerror(errno)));
  }
  return kExitOk;
}

}  // namespace

const Command kCompileCommand = {
    "compile",
    "compile a .tile module to .tbc bytecode",
    "usage: tilert compile IN [-o OUT.tbc]\n"
    "\n"
    "Parses IN (.tile text, or .tbc bytecode), verifies it and writes its bytecode to OUT\n"
    "(default: IN with the extension .tbc). The output depends only on the module, so\n"
    "compiling the output of 'tilert dis' gives back the same bytes.\n",
    run_compile,
};

}  // namespace tilert::cli
