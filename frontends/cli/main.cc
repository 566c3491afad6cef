// tilert: compile, inspect, verify and run tile modules. One subcommand per file; see commands.h.
#include <cstdio>
#include <string>
#include <vector>

#include "frontends/cli/commands.h"

namespace tilert::cli {
namespace {

constexpr const Command* kCommands[] = {&kCompileCommand, &kDisCommand,     &kVerifyCommand,
                                        &kRunCommand,     &kDevicesCommand, &kLowerCommand,
                                        &kProfileCommand};

void print_overview(std::FILE* out) {
  std::fprintf(out, "usage: tilert COMMAND [ARGS]\n\ncommands:\n");
  for (const Command* c : kCommands) {
    std::fprintf(out, "  %-9.*s %.*s\n", static_cast<int>(c->name.size()), c->name.data(),
                 static_cast<int>(c->summary.size()), c->summary.data());
  }
  std::fprintf(out, "\n'tilert COMMAND --help' describes one command.\n"
                    "Exit status: 0 success, 1 a run or check failed, 2 bad input or usage.\n");
}

bool is_help(const std::string& arg) { return arg == "--help" || arg == "-h"; }

int dispatch(const std::vector<std::string>& args) {
  if (args.empty()) {
    print_overview(stderr);
    return kExitBadInput;
  }
  if (is_help(args[0]) || args[0] == "help") {
    print_overview(stdout);
    return kExitOk;
  }
  for (const Command* c : kCommands) {
    if (c->name != args[0]) continue;
    std::span<const std::string> rest(args.begin() + 1, args.end());
    for (const std::string& a : rest) {
      if (is_help(a)) {
        std::fwrite(c->usage.data(), 1, c->usage.size(), stdout);
        return kExitOk;
      }
    }
    return c->run(rest);
  }
  std::fprintf(stderr, "tilert: unknown command '%s'\n\n", args[0].c_str());
  print_overview(stderr);
  return kExitBadInput;
}

}  // namespace
}  // namespace tilert::cli

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  return tilert::cli::dispatch(args);
}
