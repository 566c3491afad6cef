// What every `tilert` subcommand shares: the command table entry, exit codes, error reporting,
// argument walking and reading an input module (.tile text or .tbc bytecode).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/kernel.h"

namespace tilert::cli {

// Exit codes: success; a run or check failed; the input or the command line is wrong.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitBadInput = 2;

struct Command {
  std::string_view name;
  std::string_view summary;  // one line for `tilert --help`
  std::string_view usage;    // the full text of `tilert NAME --help`
  int (*run)(std::span<const std::string> args);
};

// Prints "tilert: <message>" to stderr and returns `exit_code`.
int report_error(int exit_code, std::string_view message);
// A command-line mistake: prints "tilert NAME: <message>" and a pointer to the usage; returns 2.
int usage_error(const Command& command, std::string_view message);
// The same with a status's message.
int report_error(int exit_code, const absl::Status& status);
int usage_error(const Command& command, const absl::Status& status);

// Walks one subcommand's arguments: positionals and `--name VALUE` / `--name=VALUE` options.
class ArgCursor {
 public:
  explicit ArgCursor(std::span<const std::string> args) : args_(args) {}
  bool done() const { return pos_ >= args_.size(); }
  const std::string& current() const { return args_[pos_]; }
  // An option: starts with '-' and is longer than "-" (a lone "-" is a positional).
  bool at_option() const;
  // When the current argument is option `name`, consumes it and its value. Returns false without
  // consuming when it is another argument; an error when the value is missing.
  absl::StatusOr<bool> take_option(std::string_view name, std::string* value);
  // When the current argument is the flag `name`, consumes it.
  bool take_flag(std::string_view name);
  std::string take_positional() { return args_[pos_++]; }

 private:
  std::span<const std::string> args_;
  size_t pos_ = 0;
};

// Parses a non-negative decimal integer option value; errors name the option.
absl::StatusOr<int64_t> parse_count(std::string_view option, const std::string& text);

// An input module as read from disk.
struct InputModule {
  std::string path;
  std::vector<uint8_t> bytes;
  bool is_bytecode = false;  // .tbc magic (the file name's extension does not matter)
  Module module;
};

// Reads and parses `path`. Errors: NotFound "cannot open 'x.tile': No such file or directory",
// and the parser's or bytecode reader's InvalidArgument (which name the line or byte offset).
absl::StatusOr<InputModule> read_input_module(const std::string& path);

// Runs the verifier: InvalidArgument with one "PATH: diagnostic" line per problem.
absl::Status verify_input(const InputModule& input);

// The kernel called `name`, or the module's first kernel when `name` is empty. Errors list the
// kernels the module has.
absl::StatusOr<const Kernel*> select_kernel(const Module& module, const std::string& name,
                                            const std::string& path);

}  // namespace tilert::cli
