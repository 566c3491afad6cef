// tilert dis IN [--insert-barriers]: print a module as .tile text.
#include <cstdio>
#include <string>

#include "absl/strings/str_cat.h"
#include "frontends/cli/commands.h"
#include "frontends/text/printer.h"
#include "ir/passes/insert_barriers.h"

namespace tilert::cli {
namespace {

int run_dis(std::span<const std::string> args) {
  ArgCursor cursor(args);
  std::string input;
  bool barriers = false;
  while (!cursor.done()) {
    if (cursor.take_flag("--insert-barriers")) {
      barriers = true;
      continue;
    }
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
  if (barriers) {
    auto reports = insert_barriers(in->module);
    if (!reports.ok()) return report_error(kExitFailure, reports.status());
    for (const BarrierReport& r : *reports) {
      std::string lines;
      for (uint32_t line : r.removed_lines) absl::StrAppend(&lines, lines.empty() ? " (line " : ", ", line);
      if (!lines.empty()) lines += ")";
      std::fprintf(stderr, "%s: %d barriers inserted, %d removed as redundant%s\n",
                   r.kernel.c_str(), r.inserted, r.removed, lines.c_str());
    }
  }
  std::string text = print_tile(in->module);
  std::fwrite(text.data(), 1, text.size(), stdout);
  return kExitOk;
}

}  // namespace

const Command kDisCommand = {
    "dis",
    "print a .tbc (or .tile) module as .tile text",
    "usage: tilert dis IN [--insert-barriers]\n"
    "\n"
    "Prints IN (.tbc bytecode or .tile text) in the canonical .tile form on stdout.\n"
    "  --insert-barriers  first run the barrier insertion pass; prints one line per kernel on\n"
    "                     stderr: barriers inserted, hand-written ones removed as redundant\n",
    run_dis,
};

}  // namespace tilert::cli
