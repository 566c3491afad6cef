// tilert dis IN: print a module as .tile text.
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "frontends/cli/commands.h"
#include "frontends/text/printer.h"

namespace tilert::cli {
namespace {

int run_dis(std::span<const std::string> args) {
  ArgCursor cursor(args);
  std::string input;
  while (!cursor.done()) {
    if (cursor.at_option()) {
      return usage_error(kDisCommand, absl::StrCat("unknown option '", cursor.current(), "'"));
    }
    if (!input.empty()) {
      return usage_error(kDisCommand, absl::StrCat("unexpected argument '", cursor.current(), "'"));
    }
    input = cursor.take_positional();
  }
  if (input.empty()) return usage_error(kDisCommand, "missing input file");
  absl::StatusOr<InputModule> in = read_input_module(input);
  if (!in.ok()) return report_error(kExitBadInput, in.status());
  std::string text = print_tile(in->module);
  std::fwrite(text.data(), 1, text.size(), stdout);
  return kExitOk;
}

}  // namespace

const Command kDisCommand = {
    "dis",
    "print a .tbc (or .tile) module as .tile text",
    "usage: tilert dis IN\n"
    "\n"
    "Prints IN (.tbc bytecode or .tile text) in the canonical .tile form on stdout.\n",
    run_dis,
};

}  // namespace tilert::cli
