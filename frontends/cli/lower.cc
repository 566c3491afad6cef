// tilert lower IN --target T: print the code a target's lowerer makes of a module.
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "frontends/cli/commands.h"

namespace tilert::cli {
namespace {

bool all_of_class(std::string_view s, bool (*ok)(char)) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!ok(c)) return false;
  }
  return true;
}
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_alnum(char c) { return is_digit(c) || (c >= 'a' && c <= 'z'); }

// Target spellings: ptx:sm_<NN>[a], amdgcn:gfx<id>, spirv[:vulkan1.<N>].
bool is_valid_target(std::string_view t) {
  auto rest_after = [&](std::string_view prefix) { return t.substr(prefix.size()); };
  if (t.starts_with("ptx:sm_")) {
    std::string_view arch = rest_after("ptx:sm_");
    if (arch.ends_with('a')) arch.remove_suffix(1);
    return all_of_class(arch, is_digit);
  }
  if (t.starts_with("amdgcn:gfx")) return all_of_class(rest_after("amdgcn:gfx"), is_alnum);
  if (t == "spirv") return true;
  if (t.starts_with("spirv:vulkan1.")) return all_of_class(rest_after("spirv:vulkan1."), is_digit);
  return false;
}

int run_lower(std::span<const std::string> args) {
  ArgCursor cursor(args);
  std::string input, target;
  while (!cursor.done()) {
    absl::StatusOr<bool> took = cursor.take_option("--target", &target);
    if (!took.ok()) return usage_error(kLowerCommand, took.status());
    if (*took) continue;
    if (cursor.at_option()) {
      return usage_error(kLowerCommand, absl::StrCat("unknown option '", cursor.current(), "'"));
    }
    if (!input.empty()) {
      return usage_error(kLowerCommand,
                         absl::StrCat("unexpected argument '", cursor.current(), "'"));
    }
    input = cursor.take_positional();
  }
  if (input.empty()) return usage_error(kLowerCommand, "missing input file");
  if (target.empty()) return usage_error(kLowerCommand, "missing --target");
  if (!is_valid_target(target)) {
    return usage_error(kLowerCommand, absl::StrCat("unknown target '", target,
                                                   "' (expected ptx:sm_NN[a], amdgcn:gfxNNN or "
                                                   "spirv[:vulkan1.N])"));
  }
  absl::StatusOr<InputModule> in = read_input_module(input);
  if (!in.ok()) return report_error(kExitBadInput, in.status());
  if (absl::Status s = verify_input(*in); !s.ok()) return report_error(kExitBadInput, s);
  return report_error(kExitBadInput, absl::StrCat("no lowerer for ", target, " yet"));
}

}  // namespace

const Command kLowerCommand = {
    "lower",
    "print a module lowered for a target (PTX, AMDGCN, SPIR-V)",
    "usage: tilert lower IN --target T\n"
    "\n"
    "Lowers IN for target T and prints the result. Targets: ptx:sm_NN[a] (ptx:sm_90a),\n"
    "amdgcn:gfxNNN (amdgcn:gfx942), spirv[:vulkan1.N]. No target has a lowerer in this build.\n",
    run_lower,
};

}  // namespace tilert::cli
